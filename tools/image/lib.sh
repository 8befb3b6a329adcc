# Helpers shared by tools/image/build.sh and tools/image/test-images.sh (sourced).
# Every image is one layer: a root filesystem directory, normalised, packed by GNU
# tar in a fixed order with fixed times and owners, added to an OCI layout by umoci
# (umoci 0.4.7 gzips a given tar to the same bytes every time, whatever GOMAXPROCS:
# measured), and written as one OCI archive by write-archive.py.

# Progress on stderr: stdout carries only the `image:` and `archive:` lines.
log() {
  echo "[$(basename "$0") ${SECONDS}s] $*" >&2
}

# RFC 3339 UTC time of a Unix epoch, the form the OCI config and annotations use.
iso_time() {
  date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ
}

# Modes that do not depend on the umask or the source: directories 0755, files 0755
# when anyone may execute them, else 0644. Symlinks are left as they are.
normalize_modes() {
  find "$1" -type d -exec chmod 0755 {} +
  find "$1" -type f -perm /111 -exec chmod 0755 {} +
  find "$1" -type f ! -perm /111 -exec chmod 0644 {} +
}

# pack_layer ROOTFS OUT.tar EPOCH: the layer tar, byte for byte the same for the
# same tree: names sorted bytewise, every mtime EPOCH, owner 0:0 by number, no
# atime/ctime/xattr/ACL records. Entries are named without a leading "./".
pack_layer() {
  local rootfs="$1" out="$2" epoch="$3"
  local -a top
  mapfile -t top < <(cd "$rootfs" && LC_ALL=C ls -A | LC_ALL=C sort)
  LC_ALL=C tar --create --file="$out" --directory="$rootfs" \
    --sort=name --format=posix \
    --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime \
    --mtime="@$epoch" --owner=0 --group=0 --numeric-owner \
    --no-acls --no-xattrs --no-selinux \
    "${top[@]}"
}

# add_image LAYOUT TAG LAYER.tar EPOCH CREATED_BY [umoci config flags...]: one image
# with that single layer. umoci records the time of the call unless told otherwise,
# so every time it writes (config created, history created) is the epoch.
add_image() {
  local layout="$1" tag="$2" layer="$3" epoch="$4" created_by="$5"
  shift 5
  local created
  created="$(iso_time "$epoch")"
  [ -d "$layout" ] || umoci init --layout "$layout"
  umoci new --image "$layout:$tag"
  umoci raw add-layer --image "$layout:$tag" \
    --history.created "$created" --history.created_by "$created_by" "$layer"
  umoci config --image "$layout:$tag" --no-history --created "$created" \
    --architecture "$(go_arch)" --os linux "$@"
}

go_arch() {
  case "$(uname -m)" in
    x86_64) echo amd64 ;;
    aarch64 | arm64) echo arm64 ;;
    *) uname -m ;;
  esac
}

# sha256 of a manifest blob, as "sha256:HEX", from the layout's index by tag.
manifest_digest() {
  python3 - "$1" "$2" <<'PY'
import json, sys
index = json.load(open(sys.argv[1] + '/index.json'))
for m in index['manifests']:
    if m.get('annotations', {}).get('org.opencontainers.image.ref.name') == sys.argv[2]:
        print(m['digest'])
        break
else:
    sys.exit('no manifest tagged ' + sys.argv[2])
PY
}
