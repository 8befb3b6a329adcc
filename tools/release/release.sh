#!/usr/bin/env bash
# A release of confighash into any OCI registry (docs/design.md §12):
#   HOST/confighash/confighash:VERSION               the image, an OCI index for linux/amd64
#                                                    and linux/arm64 (tools/image/build.sh)
#   oci://HOST/confighash/charts/confighash VERSION  the chart, its values.yaml pinning that
#                                                    index's digest (image.digest)
#   build/release/VERSION/                           the CLI's npm tarball (tools/release/npm.sh),
#                                                    the krew archive (tools/krew/archive.sh)
#                                                    and the krew manifest with its sha256
#   confighash@VERSION on --npm-registry URL         that tarball, published last (an npm
#                                                    version can never be published again)
# and prints each artefact's reference and digest, one `KIND: REF DIGEST` line each.
#
# Each push is of bytes built before it, and a failed step stops the release with its
# error; a registry is never left with a chart whose image digest it does not hold.
#
# usage: npm run release -- --registry HOST[:PORT] [--tag VERSION] [--plain-http]
#                             [--npm-registry URL]
#   --npm-registry  also publish the CLI there (https://registry.npmjs.org/ for npm's own);
#                 its token from NPM_TOKEN, else npm's own login (tools/release/npm.sh)
#   --tag         default: package.json's version; a SemVer without build metadata (an OCI
#                 tag cannot hold '+')
#   --plain-http  talk HTTP, not HTTPS; the default for a loopback registry (localhost,
#                 127.0.0.0/8, [::1]), which has no certificate to offer
# Credentials are read the standard way: crane and helm both read a registry's login from
# the Docker config ($DOCKER_CONFIG/config.json, default ~/.docker/config.json).
set -euo pipefail
umask 022
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$repo"

log() { echo "[release ${SECONDS}s] $*" >&2; }
die() {
  echo "release: $*" >&2
  exit 2
}
usage="usage: npm run release -- --registry HOST[:PORT] [--tag VERSION] [--plain-http] [--npm-registry URL]"

# A registry host as an image reference takes it: a DNS name or IPv4 address, or an IPv6
# address in brackets, and an optional port.
valid_registry() {
  [[ "$1" =~ ^([A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])(:[0-9]{1,5})?$ ]] || return 1
  local port="${1##*]}"
  [[ "$port" != *:* ]] || ((10#${port##*:} >= 1 && 10#${port##*:} <= 65535))
}

# SemVer 2 without build metadata: Helm's chart version, and a valid OCI tag.
valid_version() {
  [[ "$1" =~ ^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$ ]]
}

is_loopback() {
  local host="$1"
  if [[ "$host" == \[* ]]; then host="${host%%]*}]"; else host="${host%%:*}"; fi
  [[ "$host" == localhost || "$host" == "[::1]" || "$host" =~ ^127\.[0-9]+\.[0-9]+\.[0-9]+$ ]]
}

registry=""
version=""
plain_http=""
npm_registry=""
while (($# > 0)); do
  case "$1" in
    --registry | --tag | --npm-registry)
      (($# >= 2)) || die "$1 needs a value; $usage"
      case "$1" in
        --registry) registry="$2" ;;
        --tag) version="$2" ;;
        --npm-registry) npm_registry="$2" ;;
      esac
      shift 2
      ;;
    --registry=*) registry="${1#*=}" && shift ;;
    --npm-registry=*) npm_registry="${1#*=}" && shift ;;
    --tag=*) version="${1#*=}" && shift ;;
    --plain-http) plain_http=1 && shift ;;
    -h | --help) echo "$usage" && exit 0 ;;
    *) die "unknown argument '$1'; $usage" ;;
  esac
done
[[ -n "$registry" ]] || die "--registry is required; $usage"
valid_registry "$registry" ||
  die "--registry '$registry' is not HOST or HOST:PORT (a DNS name, an IPv4 address or [IPv6], a port 1-65535)"
version="${version:-$(node -p 'require("./package.json").version')}"
valid_version "$version" ||
  die "--tag '$version' is not a version: MAJOR.MINOR.PATCH with an optional -PRERELEASE (no leading v, no +BUILD)"
if [[ -z "$plain_http" ]] && is_loopback "$registry"; then plain_http=1; fi
[[ -z "$npm_registry" || "$npm_registry" =~ ^https?://[^/[:space:]]+(/[^[:space:]]*)?$ ]] ||
  die "--npm-registry '$npm_registry' is not an http:// or https:// URL"

image_repository="$registry/confighash/confighash"
chart_repository="oci://$registry/confighash/charts"
out="$repo/build/release/$version"
rm -rf "$out"
mkdir -p "$out"
crane_flags=()
helm_flags=()
if [[ -n "$plain_http" ]]; then
  crane_flags=(--insecure)
  helm_flags=(--plain-http)
  log "plain HTTP to $registry"
fi

log "tools: crane (go-containerregistry), helm (Helm 4)"
crane="$(bash tools/build-oci-tools.sh)/crane"
helm="$(bash tools/build-helm.sh)/helm4"

log "CLI: krew archive (builds dist/), npm tarball"
mapfile -t krew < <(bash tools/krew/archive.sh "$out")
krew_archive="${krew[0]}" krew_sha256="${krew[1]}"
npm_line="$(bash tools/release/npm.sh pack --out "$out" --version "$version")"
npm_tarball="$(sed -n 's/^npm: \(.*\) sha256:.*/\1/p' <<<"$npm_line")"
[[ -f "$npm_tarball" ]] || die "tools/release/npm.sh printed no tarball: $npm_line"
python3 tools/release/krew-manifest.py .krew.yaml "v$version" "$krew_sha256" >"$out/confighash.yaml"

log "image: build (linux/amd64, linux/arm64)"
layout="$(CONFIGHASH_VERSION="$version" bash tools/image/build.sh | sed -n 's/^layout: //p')"
[[ -d "$layout" ]] || die "tools/image/build.sh printed no layout: line"
image_digest="$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["manifests"][0]["digest"])' "$layout/index.json")"
log "image: push to $image_repository:$version"
pushed="$("$crane" push "${crane_flags[@]}" "$layout" "$image_repository:$version")"
[[ "$pushed" == "$image_repository@$image_digest" ]] ||
  die "crane pushed $pushed, expected $image_repository@$image_digest"

log "chart: package (image.digest $image_digest), push to $chart_repository"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
cp -R charts/confighash "$stage/confighash"
python3 tools/release/pin-chart-values.py "$stage/confighash/values.yaml" \
  "$image_repository" "$version" "$image_digest"
"$helm" package "$stage/confighash" --version "$version" --app-version "$version" \
  --destination "$out/chart" >&2
chart_tarball="$out/chart/confighash-$version.tgz"
pushed="$("$helm" push "$chart_tarball" "$chart_repository" "${helm_flags[@]}" 2>&1)" ||
  die "helm push failed: $pushed"
chart_digest="$(sed -n 's/^Digest: //p' <<<"$pushed")"
[[ "$chart_digest" == sha256:* ]] || die "helm push printed no digest: $pushed"

npm_published=""
if [[ -n "$npm_registry" ]]; then
  log "CLI: publish $npm_tarball to $npm_registry"
  npm_published="$(bash tools/release/npm.sh publish "$npm_tarball" --npm-registry "$npm_registry")"
fi

sha() { echo "sha256:$(sha256sum "$1" | cut -d' ' -f1)"; }
{
  echo "image: $image_repository:$version $image_digest"
  echo "chart: $chart_repository/confighash:$version $chart_digest"
  echo "npm: $npm_tarball $(sha "$npm_tarball")"
  echo "krew: $krew_archive sha256:$krew_sha256"
  echo "krew-manifest: $out/confighash.yaml $(sha "$out/confighash.yaml")"
  if [[ -n "$npm_published" ]]; then echo "$npm_published"; fi
} | tee "$out/artefacts.txt"
