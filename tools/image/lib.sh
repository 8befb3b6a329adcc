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

# add_image LAYOUT TAG LAYER.tar EPOCH ARCH CREATED_BY [umoci config flags...]: one
# linux/ARCH image with that single layer. umoci records the time of the call unless
# told otherwise, so every time it writes (config created, history created) is the epoch.
add_image() {
  local layout="$1" tag="$2" layer="$3" epoch="$4" arch="$5" created_by="$6"
  shift 6
  local created
  created="$(iso_time "$epoch")"
  [ -d "$layout" ] || umoci init --layout "$layout"
  umoci new --image "$layout:$tag"
  umoci raw add-layer --image "$layout:$tag" \
    --history.created "$created" --history.created_by "$created_by" "$layer"
  umoci config --image "$layout:$tag" --no-history --created "$created" \
    --architecture "$arch" --os linux "$@"
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

# sha256 of the one index a release layout holds (tools/image/write-index.py).
layout_index_digest() {
  python3 -c 'import json, sys; print(json.load(open(sys.argv[1] + "/index.json"))["manifests"][0]["digest"])' "$1"
}

# build_stamp EPOCH REVISION NODE_VERSION: everything an image build reads, as one hash:
# the working tree as git would commit it (untracked files too, ignored ones not), the
# time and revision it records, and the versions of what it copies or runs.
build_stamp() {
  local index tree
  index="$(mktemp)"
  cp "$(git rev-parse --git-path index)" "$index" 2>/dev/null || true
  tree="$(GIT_INDEX_FILE="$index" git add -A . && GIT_INDEX_FILE="$index" git write-tree)"
  rm -f "$index"
  {
    printf 'tree %s\nepoch %s\nrevision %s\nnode %s\nnpm %s\n' "$tree" "$1" "$2" "$3" "$(npm --version)"
    dpkg-query -W -f='${Package} ${Version}\n' libc6 libstdc++6 libgcc-s1 \
      libc6-arm64-cross libstdc++6-arm64-cross libgcc-s1-arm64-cross umoci tar
  } | sha256sum | cut -c1-64
}

# write_sbom OUT EPOCH SOURCE REVISION: npm's SPDX SBOM of the production dependencies,
# from the lockfile, with the two fields npm makes up on each run (its creation time and
# a random document namespace) fixed: the epoch, and a namespace naming the revision.
write_sbom() {
  npm sbom --sbom-format spdx --omit dev --package-lock-only |
    node -e '
      const [epoch, source, revision] = process.argv.slice(1);
      let text = "";
      process.stdin.on("data", (chunk) => { text += chunk; });
      process.stdin.on("end", () => {
        const sbom = JSON.parse(text);
        sbom.creationInfo.created = new Date(Number(epoch) * 1000).toISOString();
        sbom.documentNamespace = `${source}/sbom/${revision}`;
        process.stdout.write(JSON.stringify(sbom, null, 2) + "\n");
      });
    ' "$2" "$3" "$4" >"$1"
}

# The glibc libraries a node binary of ARCH links, as "SOURCE DEST" lines: for this
# machine's architecture what its dynamic loader resolves (each at the path ldd names),
# for arm64 on another machine the NEEDED closure from Debian's *-arm64-cross packages,
# at the paths Debian's arm64 loader searches.
node_libraries() {
  local arch="$1" node="$2"
  if [ "$arch" = "$(go_arch)" ]; then
    ldd "$node" | awk '$2 == "=>" && $3 ~ /^\// { print $3, $3 } $1 ~ /^\// { print $1, $1 }'
    return
  fi
  [ "$arch" = arm64 ] || { echo "no $arch libraries on $(go_arch)" >&2; return 1; }
  local cross=/usr/aarch64-linux-gnu/lib interp
  interp="$(readelf -l "$node" | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p')"
  printf '%s %s\n' "$cross/$(basename "$interp")" "$interp"
  local -a todo=("$node") seen=()
  while [ "${#todo[@]}" -gt 0 ]; do
    local file="${todo[0]}" lib
    todo=("${todo[@]:1}")
    while read -r lib; do
      [ "$lib" = "$(basename "$interp")" ] && continue
      case " ${seen[*]} " in *" $lib "*) continue ;; esac
      seen+=("$lib")
      [ -f "$cross/$lib" ] || { echo "$lib (needed by $file) is not in $cross" >&2; return 1; }
      printf '%s %s\n' "$cross/$lib" "/lib/aarch64-linux-gnu/$lib"
      todo+=("$cross/$lib")
    done < <(readelf -d "$file" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  done
}

# fill_rootfs ROOTFS ARCH NODE DIST NODE_MODULES SBOM: the runtime stage's files for ARCH.
fill_rootfs() {
  local rootfs="$1" arch="$2" node="$3" dist="$4" node_modules="$5" sbom="$6" from to
  mkdir -p "$rootfs/app" "$rootfs/nodejs/bin" "$rootfs/etc"
  cp package.json "$sbom" "$rootfs/app/"
  cp -R "$dist" "$rootfs/app/dist"
  cp -R "$node_modules" "$rootfs/app/node_modules"
  cp "$node" "$rootfs/nodejs/bin/node"
  while read -r from to; do
    mkdir -p "$rootfs$(dirname "$to")"
    cp -L "$from" "$rootfs$to"
  done < <(node_libraries "$arch" "$node")
  printf '%s\n' 'root:x:0:0:root:/root:/sbin/nologin' \
    'nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin' >"$rootfs/etc/passwd"
  printf '%s\n' 'root:x:0:' 'nonroot:x:65532:' >"$rootfs/etc/group"
  normalize_modes "$rootfs"
}
