#!/usr/bin/env bash
# The two small images the node tests run, in ONE OCI archive:
#   confighash.local/pause:1    a static pause (tools/image/pause.c, gcc -static), the
#                               sandbox image containerd is configured with
#   confighash.local/busybox:1  Debian's static busybox at /bin/busybox, with sh, echo,
#                               cat, sleep, env, ls, printf, wget, httpd linked to it;
#                               entrypoint /bin/sh; runs as root or any uid (no User
#                               set, everything world-readable, /tmp is 1777)
#
# usage: tools/image/test-images.sh   (npm run image:test-images)
# stdout ends with three lines: `image: confighash.local/busybox:1`,
# `image: confighash.local/pause:1`, `archive: /abs/path.oci.tar`.
#
# Reproducible like tools/image/build.sh; the default SOURCE_DATE_EPOCH is the time
# of the last commit that changed tools/image/, so other commits reuse the archive.
# The archive is cached under build/images by a hash of every input (sources, the
# busybox binary, gcc and umoci versions, the epoch): a rerun prints the same lines
# at once.
set -euo pipefail
umask 022
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=tools/image/lib.sh
. "$repo/tools/image/lib.sh"
cd "$repo"

bash tools/setup-host.sh

busybox=/usr/bin/busybox
applets=(sh echo cat sleep env ls printf wget httpd)
pause_ref=confighash.local/pause:1
busybox_ref=confighash.local/busybox:1
epoch="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct -- tools/image/)}"
if [ -z "$epoch" ]; then
  # tools/image/ not committed yet.
  epoch="$(git log -1 --format=%ct)"
fi

key="$(
  {
    echo "epoch $epoch"
    echo "applets ${applets[*]}"
    sha256sum tools/image/pause.c tools/image/test-images.sh tools/image/lib.sh \
      tools/image/write-archive.py "$busybox" | cut -d' ' -f1
    gcc --version | head -1
    umoci --version
    tar --version | head -1
    python3 --version
  } | sha256sum | cut -c1-16
)"
out_dir="$repo/build/images"
archive="$out_dir/test-images-$key.oci.tar"

if [ -f "$archive" ]; then
  log "cached: $archive"
else
  mkdir -p "$out_dir"
  work="$(mktemp -d "$out_dir/.test-images.XXXXXX")"
  trap 'rm -rf "$work"' EXIT

  log "pause"
  mkdir -p "$work/pause/rootfs"
  # Compiled from a copy under a fixed relative name: the file name is in the symbols.
  cp tools/image/pause.c "$work/pause/pause.c"
  (cd "$work/pause" && gcc -static -O2 -s -Wall -Wextra -Werror -o rootfs/pause pause.c)
  normalize_modes "$work/pause/rootfs"
  pack_layer "$work/pause/rootfs" "$work/pause/layer.tar" "$epoch"
  add_image "$work/oci" pause "$work/pause/layer.tar" "$epoch" "$(go_arch)" \
    "tools/image/test-images.sh: gcc -static pause.c" \
    --config.entrypoint /pause

  log "busybox"
  rootfs="$work/busybox/rootfs"
  mkdir -p "$rootfs/bin" "$rootfs/tmp"
  cp "$busybox" "$rootfs/bin/busybox"
  for applet in "${applets[@]}"; do
    ln -s busybox "$rootfs/bin/$applet"
  done
  normalize_modes "$rootfs"
  chmod 1777 "$rootfs/tmp"
  pack_layer "$rootfs" "$work/busybox/layer.tar" "$epoch"
  add_image "$work/oci" busybox "$work/busybox/layer.tar" "$epoch" "$(go_arch)" \
    "tools/image/test-images.sh: $("$busybox" | head -1 | cut -d' ' -f1-2)" \
    --config.entrypoint /bin/sh

  umoci gc --layout "$work/oci"
  for tag in pause busybox; do
    log "$tag manifest digest $(manifest_digest "$work/oci" "$tag")"
  done
  python3 tools/image/write-archive.py "$work/oci" "$archive" "$epoch" \
    "pause=$pause_ref" "busybox=$busybox_ref"
  # Archives of older inputs are never used again.
  find "$out_dir" -maxdepth 1 -name 'test-images-*.oci.tar' ! -name "test-images-$key.oci.tar" \
    -delete
fi
echo "image: $busybox_ref"
echo "image: $pause_ref"
echo "archive: $archive"
