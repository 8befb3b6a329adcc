#!/usr/bin/env bash
# The confighash image without Docker: an OCI archive that `ctr images import` names
# confighash.local/confighash:VERSION, with the contents of the Dockerfile's runtime
# stage: /app (package.json, dist/, production node_modules), Node.js at
# /nodejs/bin/node (npm package node-linux-<arch>, the Dockerfile's ARG NODE_VERSION)
# with the glibc libraries it links, /etc/passwd and /etc/group; no shell.
#
# Reproducible: the same commit gives the same manifest digest and the same archive
# bytes. Every time in it is SOURCE_DATE_EPOCH (default: the commit time of HEAD).
#
# usage: tools/image/build.sh   (npm run image)
# stdout ends with two lines: `image: REF` and `archive: /abs/path.oci.tar`.
set -euo pipefail
umask 022
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=tools/image/lib.sh
. "$repo/tools/image/lib.sh"
cd "$repo"

bash tools/setup-host.sh

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
mkdir -p "$out_dir"
work="$(mktemp -d "$out_dir/.build.XXXXXX")"
trap 'rm -rf "$work"' EXIT

log "node runtime"
node_bin="$(bash tools/node-runtime.sh)"
node_version="$("$node_bin" --version)"

log "npm run build (dist/)"
rm -rf dist
npm run build >&2

# Production dependencies exactly as the Dockerfile's deps stage installs them, cached
# by the two files that decide them.
deps_key="$(cat package.json package-lock.json | sha256sum | cut -c1-16)"
deps="$out_dir/deps-$deps_key"
if [ ! -d "$deps/node_modules" ]; then
  log "npm ci --omit=dev (production node_modules, cache $deps)"
  rm -rf "$work/deps"
  mkdir -p "$work/deps"
  cp package.json package-lock.json "$work/deps/"
  # npm on the image's Node, so engine checks see the runtime that will run them.
  (cd "$work/deps" && PATH="$(dirname "$node_bin"):$PATH" \
    npm ci --omit=dev --ignore-scripts --no-audit --no-fund >&2)
  rm -rf "$deps"
  mv "$work/deps" "$deps"
  find "$out_dir" -maxdepth 1 -name 'deps-*' ! -name "deps-$deps_key" -exec rm -rf {} +
else
  log "production node_modules from cache $deps"
fi

log "root filesystem"
rootfs="$work/rootfs"
mkdir -p "$rootfs/app" "$rootfs/nodejs/bin" "$rootfs/etc"
cp package.json "$rootfs/app/"
cp -R dist "$rootfs/app/dist"
cp -R "$deps/node_modules" "$rootfs/app/node_modules"
cp "$node_bin" "$rootfs/nodejs/bin/node"
# Exactly what the dynamic loader resolves for node here (the same glibc the
# distroless base ships: Debian 12), each at the path ldd names.
while read -r lib; do
  mkdir -p "$rootfs$(dirname "$lib")"
  cp -L "$lib" "$rootfs$lib"
done < <(ldd "$node_bin" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }')
printf '%s\n' 'root:x:0:0:root:/root:/sbin/nologin' \
  'nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin' >"$rootfs/etc/passwd"
printf '%s\n' 'root:x:0:' 'nonroot:x:65532:' >"$rootfs/etc/group"
normalize_modes "$rootfs"

log "layer"
pack_layer "$rootfs" "$work/layer.tar" "$epoch"

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
  --config.entrypoint /app/dist/main.js --config.entrypoint serve
)
for label in "${labels[@]}"; do
  config+=(--config.label "$label" --manifest.annotation "$label")
done
add_image "$work/oci" "$version" "$work/layer.tar" "$epoch" \
  "tools/image/build.sh: node $node_version, confighash $version" "${config[@]}"
umoci gc --layout "$work/oci"
digest="$(manifest_digest "$work/oci" "$version")"

python3 tools/image/write-archive.py "$work/oci" "$archive" "$epoch" "$version=$ref"
log "manifest digest $digest"
log "archive $(du -h "$archive" | cut -f1), layer $(du -h "$work/layer.tar" | cut -f1) uncompressed"
echo "image: $ref"
echo "archive: $archive"
