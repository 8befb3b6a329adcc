#!/usr/bin/env bash
# The confighash image without Docker, for linux/amd64 and linux/arm64, with the
# contents of the Dockerfile's runtime stage: /app (package.json, dist/, production
# node_modules, and sbom.spdx.json: npm's SPDX SBOM of those dependencies, from the
# lockfile), Node.js at /nodejs/bin/node (npm package node-linux-<arch>, the Dockerfile's
# ARG NODE_VERSION) with the glibc libraries it links (this host's for amd64, Debian's
# *-arm64-cross packages for arm64: the app has no native addons, so nothing is
# emulated to build it), /etc/passwd and /etc/group; no shell. Two outputs:
#   build/images/confighash-VERSION.oci.tar  the image for this machine's architecture, an
#                                            OCI archive that `ctr images import` names
#                                            confighash.local/confighash:VERSION;
#   build/images/confighash-VERSION.oci/     an OCI layout whose one entry, tagged VERSION,
#                                            is the OCI index of both platforms (what
#                                            tools/release/release.sh pushes).
#
# Reproducible: the same commit gives the same digests and the same archive bytes. Every
# time in it is SOURCE_DATE_EPOCH (default: the commit time of HEAD). A build whose inputs
# (the working tree, that time, the Node.js, npm, library and tool versions) match the last
# one's stamp is that build: it is not done again.
#
# usage: tools/image/build.sh   (npm run image)
#   CONFIGHASH_VERSION=V: the version the image is labelled and tagged with (default:
#   package.json's)
# stdout ends with three lines: `layout: /abs/path.oci`, `image: REF` and
# `archive: /abs/path.oci.tar` (last, as every image script's).
set -euo pipefail
umask 022
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=tools/image/lib.sh
. "$repo/tools/image/lib.sh"
cd "$repo"

bash tools/setup-host.sh

readonly ARCHES=(amd64 arm64)
epoch="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct)}"
created="$(iso_time "$epoch")"
# One value a line, so that none may contain a space it would be split at.
{
  read -r version
  read -r license
  read -r title
  read -r description
  read -r source
} < <(node -e '
  const p = require("./package.json");
  const url = typeof p.repository === "string" ? p.repository : (p.repository?.url ?? "");
  const source = url.replace(/^git\+/, "").replace(/\.git$/, "");
  console.log([p.version, p.license, p.name, p.description, source].join("\n"));
')
# A release of another version (tools/release/release.sh --tag) labels the image with it.
version="${CONFIGHASH_VERSION:-$version}"
# package.json names the repository; this is only for a copy that lost it.
source="${source:-https://github.com/confighash/confighash}"
revision="$(git rev-parse HEAD)"
# Anything not committed (changed or untracked, not ignored) can be in the image.
if [ -n "$(git status --porcelain)" ]; then
  revision="$revision-dirty"
fi
ref="confighash.local/confighash:$version"
out_dir="$repo/build/images"
archive="$out_dir/confighash-$version.oci.tar"
layout="$out_dir/confighash-$version.oci"
stamp_file="$out_dir/confighash-$version.stamp"
mkdir -p "$out_dir"

log "node runtimes"
declare -A node_bins=()
for arch in "${ARCHES[@]}"; do
  node_bins[$arch]="$(bash tools/node-runtime.sh "$arch")"
done
node_version="$("${node_bins[$(go_arch)]}" --version)"

stamp="$(build_stamp "$epoch" "$revision" "$node_version $version")"
if [ -f "$archive" ] && [ -f "$layout/index.json" ] && [ "$(cat "$stamp_file" 2>/dev/null)" = "$stamp" ]; then
  log "current (stamp $stamp_file matches): index $(layout_index_digest "$layout")"
  echo "layout: $layout"
  echo "image: $ref"
  echo "archive: $archive"
  exit 0
fi
rm -f "$stamp_file"
work="$(mktemp -d "$out_dir/.build.XXXXXX")"
# dist/ for the image is compiled beside the checkout's, never in its place: npm-release.test.ts
# packs the checkout's dist/ while image.test.ts builds, and must not find it half-written. At
# the repository's root as dist/ is, so that the source maps name the sources by the same
# relative paths; ignored by git (.gitignore: a build beside it is not -dirty) and by biome
# (biome.json: lint runs while the images build).
image_dist="$(mktemp -d "$repo/.image-dist.XXXXXX")"
chmod 755 "$image_dist"
trap 'rm -rf "$work" "$image_dist"' EXIT

log "tsc -p tsconfig.build.json (dist/ for the image)"
npx tsc -p tsconfig.build.json --outDir "$image_dist" >&2

# Production dependencies exactly as the Dockerfile's deps stage installs them, cached
# by the two files that decide them, outside the repository like the other builds: a
# clean clone of an unchanged lockfile installs nothing.
deps_key="$(cat package.json package-lock.json | sha256sum | cut -c1-16)"
deps_cache="${XDG_CACHE_HOME:-$HOME/.cache}/confighash/image-deps"
deps="$deps_cache/deps-$deps_key"
mkdir -p "$deps_cache"
if [ ! -d "$deps/node_modules" ]; then
  log "npm ci --omit=dev (production node_modules, cache $deps)"
  rm -rf "$work/deps"
  mkdir -p "$work/deps"
  cp package.json package-lock.json "$work/deps/"
  # npm on the image's Node, so engine checks see the runtime that will run them.
  (cd "$work/deps" && PATH="$(dirname "${node_bins[$(go_arch)]}"):$PATH" \
    npm ci --omit=dev --ignore-scripts --no-audit --no-fund >&2)
  rm -rf "$deps"
  mv "$work/deps" "$deps"
  find "$deps_cache" -maxdepth 1 -name 'deps-*' ! -name "deps-$deps_key" -exec rm -rf {} +
else
  log "production node_modules from cache $deps"
fi

log "SBOM (npm sbom, from the lockfile)"
write_sbom "$work/sbom.spdx.json" "$epoch" "$source" "$revision"

log "OCI image"
labels=(
  "org.opencontainers.image.source=$source"
  "org.opencontainers.image.revision=$revision"
  "org.opencontainers.image.version=$version"
  "org.opencontainers.image.created=$created"
  "org.opencontainers.image.title=$title"
  "org.opencontainers.image.description=$description"
  "org.opencontainers.image.licenses=$license"
)
config=(
  --config.user 65532:65532
  --config.workingdir /app
  --config.env NODE_ENV=production
  --config.exposedports 8443/tcp
  # The Dockerfile's ENTRYPOINT, flag for flag (it says why the heap is capped).
  --config.entrypoint /nodejs/bin/node --config.entrypoint --max-old-space-size=128
  --config.entrypoint --max-semi-space-size=8
  --config.entrypoint /app/dist/main.js --config.entrypoint serve
)
for label in "${labels[@]}"; do
  config+=(--config.label "$label" --manifest.annotation "$label")
done
for arch in "${ARCHES[@]}"; do
  log "$arch: root filesystem"
  rootfs="$work/rootfs-$arch"
  fill_rootfs "$rootfs" "$arch" "${node_bins[$arch]}" "$image_dist" "$deps/node_modules" \
    "$work/sbom.spdx.json"
  log "$arch: layer"
  pack_layer "$rootfs" "$work/layer-$arch.tar" "$epoch"
  log "$arch: OCI image"
  add_image "$work/oci" "$version-$arch" "$work/layer-$arch.tar" "$epoch" "$arch" \
    "tools/image/build.sh: node $node_version, confighash $version" "${config[@]}"
  log "$arch: manifest digest $(manifest_digest "$work/oci" "$version-$arch"), layer $(du -h "$work/layer-$arch.tar" | cut -f1) uncompressed"
  rm -rf "$rootfs" "$work/layer-$arch.tar"
done
umoci gc --layout "$work/oci"

log "OCI index (linux/${ARCHES[*]})"
annotations=()
for label in "${labels[@]}"; do annotations+=("$label"); done
python3 tools/image/write-index.py "$work/oci" "$work/layout" "$version" \
  "${ARCHES[@]/#/$version-}" -- "${annotations[@]}"
rm -rf "$layout"
mv "$work/layout" "$layout"

python3 tools/image/write-archive.py "$work/oci" "$archive" "$epoch" "$version-$(go_arch)=$ref"
printf '%s\n' "$stamp" >"$stamp_file"
log "index digest $(layout_index_digest "$layout")"
log "archive $(du -h "$archive" | cut -f1) ($(go_arch)), layout $(du -sh "$layout" | cut -f1)"
echo "layout: $layout"
echo "image: $ref"
echo "archive: $archive"
