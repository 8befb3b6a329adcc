# Shared by build-control-plane.sh and build-node.sh (sourced, not run): build
# one Go command into OUT_DIR under a temporary name, check that it runs, then
# rename it into place, so an interrupted build never leaves a half-written
# binary. The caller sets OUT_DIR and a `log` function, and sources this file.

# Builds are static, reproducible and use exactly the committed go.sum files.
export CGO_ENABLED=0
export GOWORK=off
export GOFLAGS="-mod=readonly -buildvcs=false"

CURRENT_TMP=""
CURRENT_PID=""
cleanup() {
  if [[ -n "$CURRENT_PID" ]]; then kill "$CURRENT_PID" 2>/dev/null || true; wait "$CURRENT_PID" 2>/dev/null || true; fi
  if [[ -n "$CURRENT_TMP" ]]; then rm -f "$CURRENT_TMP"; fi
}
trap cleanup EXIT
trap 'log "interrupted"; exit 130' INT TERM

die() { log "ERROR: $*"; exit 1; }

declare -a TIMINGS=()

# has_all_binaries DIR NAME... : every NAME is an executable file in DIR.
has_all_binaries() {
  local dir=$1 b
  shift
  for b in "$@"; do
    [[ -f "$dir/$b" && -x "$dir/$b" ]] || return 1
  done
}

# Serialise concurrent callers (e.g. parallel test workers) on one build of OUT_DIR;
# returns 0 at once when, after waiting, the binaries are all there.
lock_out_dir() {
  command -v flock >/dev/null 2>&1 || return 1
  exec 9>"$OUT_DIR/.lock"
  if ! flock -n 9; then
    log "another build is running in $OUT_DIR; waiting for it"
    flock 9
  fi
  has_all_binaries "$OUT_DIR" "$@"
}

# build_one NAME MODULE_DIR PACKAGE LDFLAGS [TAGS] [VERSION_FLAG]
build_one() {
  local name=$1 moddir=$2 pkg=$3 ldflags=$4 tags=${5:-} version_flag=${6:---version}
  local dest="$OUT_DIR/$name"
  if [[ -f "$dest" && -x "$dest" ]]; then
    log "$name: already built ($dest), skipping"
    return 0
  fi

  CURRENT_TMP="$OUT_DIR/.$name.tmp.$$"
  rm -f "$CURRENT_TMP"
  log "$name: building $pkg (module dir ${moddir#"$TOOLS_DIR"/}) ..."
  local start=$SECONDS last_report=$SECONDS
  (cd "$moddir" && exec go build -trimpath -tags "$tags" -ldflags "$ldflags" -o "$CURRENT_TMP" "$pkg") &
  CURRENT_PID=$!
  while kill -0 "$CURRENT_PID" 2>/dev/null; do
    sleep 1
    if (( SECONDS - last_report >= 30 )); then
      last_report=$SECONDS
      log "$name: still building, $((SECONDS - start))s elapsed"
    fi
  done
  local rc=0
  wait "$CURRENT_PID" || rc=$?
  CURRENT_PID=""
  local elapsed=$((SECONDS - start))
  (( rc == 0 )) || die "$name: go build failed (exit $rc) after ${elapsed}s"
  [[ -s "$CURRENT_TMP" ]] || die "$name: go build produced no binary"

  local version_out
  version_out=$("$CURRENT_TMP" "$version_flag" 2>&1) || die "$name: built binary does not run: $version_out"
  version_out=${version_out%%$'\n'*}
  chmod 0755 "$CURRENT_TMP"
  mv -f "$CURRENT_TMP" "$dest"
  CURRENT_TMP=""
  local size
  size=$(du -h "$dest" | cut -f1)
  log "$name: built in ${elapsed}s ($size) -> $dest [$version_out]"
  TIMINGS+=("$name=${elapsed}s")
}

# Version stamps of a Kubernetes command built outside its own Makefile.
kube_ldflags() {
  local version=$1 major=$2 minor=$3 flags="-s -w" pkgpath
  for pkgpath in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    flags+=" -X '$pkgpath.gitVersion=$version'"
    flags+=" -X '$pkgpath.gitMajor=$major'"
    flags+=" -X '$pkgpath.gitMinor=$minor'"
    flags+=" -X '$pkgpath.gitTreeState=clean'"
  done
  printf '%s' "$flags"
}

# sources_sum DIR : one checksum of the Go sources and go.{mod,sum} under DIR — the stamp of a
# main of this repository's own, so that a cached binary built from another version of it is
# recognised.
sources_sum() {
  (cd "$1" && find . -name '*.go' -o -name 'go.*' | LC_ALL=C sort | xargs cat) | sha256sum | cut -d' ' -f1
}

# cache_dir NAME : ${XDG_CACHE_HOME:-$HOME/.cache}/confighash/NAME, created, absolute.
cache_dir() {
  local root=${XDG_CACHE_HOME:-}
  [[ -n "$root" ]] || root="${HOME:?HOME is not set}/.cache"
  mkdir -p "$root/confighash/$1"
  (cd "$root/confighash/$1" && pwd -P)
}

check_go() {
  command -v go >/dev/null 2>&1 || die "go is not on PATH (Go >= 1.26 is needed to build $1)"
  local go_minor
  go_minor=$(go env GOVERSION | sed -nE 's/^go1\.([0-9]+).*/\1/p')
  if [[ -z "$go_minor" || "$go_minor" -lt 26 ]]; then
    # k8s.io/kubernetes v1.36 declares `go 1.26.0`; with GOTOOLCHAIN=local an
    # older go refuses to build it.
    log "warning: $(go env GOVERSION) found; $1 needs go >= 1.26"
  fi
}
