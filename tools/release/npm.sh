#!/usr/bin/env bash
# The CLI's npm package, for `npm run release` (release.sh) and the test that installs it
# from a registry (test/e2e/npm-release.test.ts):
#
#   tools/release/npm.sh pack --out DIR --version VERSION
#       packs dist/ (built before) as VERSION; prints `npm: TARBALL sha256:…`
#   tools/release/npm.sh publish TARBALL --npm-registry URL
#       publishes that tarball; prints `npm-published: confighash@VERSION URL`
#
# Two steps because an npm version can never be published twice: release.sh packs with the
# other artefacts and publishes last, once the image and the chart are pushed.
#
# The tarball holds dist/, LICENSE, README.md and the package.json npm requires, nothing
# else: it is packed from a copy holding only those, so package.json is never edited and
# nothing else in the checkout (build/, tests, a stray .npmrc) can slip in.
#
# The registry's token: NPM_TOKEN, named (never written) in an .npmrc of a temporary
# directory removed on exit; without it, npm's own configuration (`npm login --registry URL`).
set -euo pipefail
umask 022
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$repo"

die() {
  echo "release: $*" >&2
  exit 2
}
usage="usage: tools/release/npm.sh pack --out DIR --version VERSION | publish TARBALL --npm-registry URL"

command="${1:-}"
(($# > 0)) && shift
out="" version="" npm_registry="" tarball=""
while (($# > 0)); do
  case "$1" in
    --out | --version | --npm-registry)
      (($# >= 2)) || die "$1 needs a value; $usage"
      case "$1" in
        --out) out="$2" ;;
        --version) version="$2" ;;
        --npm-registry) npm_registry="$2" ;;
      esac
      shift 2
      ;;
    -*) die "unknown argument '$1'; $usage" ;;
    *) [[ -z "$tarball" ]] || die "one tarball; $usage" && tarball="$1" && shift ;;
  esac
done

# A temporary directory of the step (the copy packed, the .npmrc), removed on exit.
stage=""
trap '[[ -z "$stage" ]] || rm -rf "$stage"' EXIT

# valid_npm_registry URL: an http:// or https:// URL, as npm's --registry takes it.
valid_npm_registry() { [[ "$1" =~ ^https?://[^/[:space:]]+(/[^[:space:]]*)?$ ]]; }

pack() {
  [[ -n "$out" && -n "$version" ]] || die "pack needs --out and --version; $usage"
  [[ -f dist/main.js ]] || die "dist/main.js is missing: build first (npm run build)"
  local tarball
  stage="$(mktemp -d)"
  mkdir -p "$stage/package" "$out"
  cp package.json README.md LICENSE "$stage/package/"
  cp -R dist "$stage/package/dist"
  (cd "$stage/package" && npm pkg set version="$version" &&
    npm pack --ignore-scripts --loglevel=warn --pack-destination "$out" >/dev/null)
  tarball="$out/confighash-$version.tgz"
  [[ -f "$tarball" ]] || die "npm pack wrote no $tarball"
  echo "npm: $tarball sha256:$(sha256sum "$tarball" | cut -d' ' -f1)"
}

publish() {
  [[ -f "$tarball" ]] || die "publish needs a tarball that exists; $usage"
  [[ -n "$npm_registry" ]] || die "publish needs --npm-registry; $usage"
  valid_npm_registry "$npm_registry" || die "--npm-registry '$npm_registry' is not an http:// or https:// URL"
  local key flags=(--registry "$npm_registry" --ignore-scripts --loglevel=warn)
  stage="$(mktemp -d)"
  if [[ -n "${NPM_TOKEN:-}" ]]; then
    # npm keys a token by the registry URL without its scheme, ending in '/'.
    key="${npm_registry#*://}"
    # shellcheck disable=SC2016 # npm expands ${NPM_TOKEN} from the environment itself
    printf '//%s/:_authToken=${NPM_TOKEN}\n' "${key%/}" >"$stage/.npmrc"
    flags+=(--userconfig "$stage/.npmrc")
  fi
  local name_version
  name_version="$(tar -xOzf "$tarball" package/package.json | node -e 'const p = JSON.parse(require("fs").readFileSync(0, "utf8")); process.stdout.write(p.name + "@" + p.version)')"
  # npm refuses to publish a prerelease as `latest`; it goes out as `next`.
  [[ "${name_version#*@}" != *-* ]] || flags+=(--tag next)
  npm publish "$tarball" "${flags[@]}" >&2 || die "npm publish to $npm_registry failed"
  echo "npm-published: $name_version $npm_registry"
}

case "$command" in
  pack) pack ;;
  publish) publish ;;
  -h | --help) echo "$usage" ;;
  *) die "say pack or publish; $usage" ;;
esac
