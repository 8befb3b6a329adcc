# The one skeleton of every tools/build-*.sh (sourced, not run). A script pins its
# versions, names its output directory (out_dir), declares its binaries (go_binary,
# c_binary, npm_binary) and ends with `build_declared "$@"`; everything else is done here, the same
# way for every script:
#
#   preamble  strict mode; TOOLS_DIR; `log` to stderr, prefixed with the script's name;
#             static, reproducible Go builds from exactly the committed go.sum files.
#   stamp     beside each binary, NAME.stamp: a sha256 of what the binary is built from
#             (its module's go.mod, go.sum and own .go files, or its C source) and of how
#             (package, ldflags with the pinned versions, tags, compiler and flags). A
#             binary is current only when its stamp matches, so bumping a pin, a
#             dependency or our own main rebuilds it and nothing else does.
#   lock      one flock per output directory: concurrent callers (parallel test workers,
#             build-all.sh) wait for one build instead of racing it, then find it done.
#   output    stdout is exactly one line, the absolute directory holding the binaries;
#             progress, timings and errors go to stderr.
#
# Why a directory rather than a line per binary: every caller needs the directory — the
# node's goes on PATH (containerd finds its shim there), cert-manager's holds crds.yaml
# beside the binaries, the control plane's is what KUBEBUILDER_ASSETS names — and one
# line is the same shape for one binary or six, so no caller picks lines apart.
#
# `SCRIPT --find` prints the directory only when every binary is current and otherwise
# exits 1, building nothing (for tests that skip rather than spend minutes building).
#
# Each binary is built under a temporary name, checked to run, then renamed into place,
# so an interrupted build never leaves a half-written binary. Several commands of one
# module with the same flags are built by one `go build`, which shares the action graph
# and links them in parallel. CONFIGHASH_BUILD_JOBS=N passes -p N to go build (build-all.sh
# runs two builds at once with -p 1 each, so two cores are never asked for four compiles).

set -euo pipefail

TOOLS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
readonly TOOLS_DIR
BUILD_SCRIPT_NAME=$(basename "$0" .sh)
readonly BUILD_SCRIPT_NAME
log() { printf '[%s] %s\n' "$BUILD_SCRIPT_NAME" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

export CGO_ENABLED=0
export GOWORK=off
export GOFLAGS="-mod=readonly -buildvcs=false"
# The flags every Go binary is built with, and so part of every Go stamp. They are the
# same for every script on purpose: the Go build cache shares a compiled package
# between modules only when its dependencies' versions and these flags match exactly.
readonly GO_BUILD_FLAGS=(-trimpath)

CURRENT_TMP=""
CURRENT_PID=""
cleanup() {
  if [[ -n "$CURRENT_PID" ]]; then kill "$CURRENT_PID" 2>/dev/null || true; wait "$CURRENT_PID" 2>/dev/null || true; fi
  if [[ -n "$CURRENT_TMP" ]]; then rm -rf "$CURRENT_TMP"; fi
}
trap cleanup EXIT
trap 'log "interrupted"; exit 130' INT TERM

# cache_dir NAME : ${XDG_CACHE_HOME:-$HOME/.cache}/confighash/NAME, created, absolute.
cache_dir() {
  local root=${XDG_CACHE_HOME:-}
  [[ -n "$root" ]] || root="${HOME:?HOME is not set}/.cache"
  mkdir -p "$root/confighash/$1"
  (cd "$root/confighash/$1" && pwd -P)
}

# out_dir NAME : sets OUT_DIR, the script's cache directory (NAME carries the pinned versions).
out_dir() {
  OUT_DIR=$(cache_dir "$1")
  readonly OUT_DIR
}

# pinned MODULE_DIR MODULE VERSION : the version in OUT_DIR's name and ldflags is the one
# go.mod builds.
pinned() {
  grep -Eq "^[[:space:]]*(require[[:space:]]+)?$2 $3([[:space:]]|$)" "$1/go.mod" ||
    die "${1#"$TOOLS_DIR"/}/go.mod does not require $2 $3"
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

# has_all_binaries DIR NAME... : every NAME is an executable file in DIR.
has_all_binaries() {
  local dir=$1 b
  shift
  for b in "$@"; do
    [[ -f "$dir/$b" && -x "$dir/$b" ]] || return 1
  done
}

# --- declarations ----------------------------------------------------------------------

declare -a B_NAME=() B_KIND=() B_DIR=() B_PKG=() B_FLAGS=() B_TAGS=() B_VERSION_ARG=() B_STAMP=()

# go_binary NAME MODULE_DIR PACKAGE LDFLAGS [TAGS] [VERSION_ARG] : NAME is built from
# PACKAGE of the Go module in MODULE_DIR; `NAME VERSION_ARG` (default --version) must run.
go_binary() {
  B_NAME+=("$1") B_KIND+=(go) B_DIR+=("$2") B_PKG+=("$3") B_FLAGS+=("$4")
  B_TAGS+=("${5:-}") B_VERSION_ARG+=("${6:---version}") B_STAMP+=("")
}

# npm_binary NAME PACKAGE_DIR BIN [VERSION_ARG] : NAME runs BIN (a path under node_modules)
# of the npm packages that PACKAGE_DIR's package.json and package-lock.json pin, installed
# by `npm ci` (no install scripts) into OUT_DIR/NAME.d; NAME itself is a wrapper script.
npm_binary() {
  B_NAME+=("$1") B_KIND+=(npm) B_DIR+=("$2") B_PKG+=("$3") B_FLAGS+=("")
  B_TAGS+=("") B_VERSION_ARG+=("${4:---version}") B_STAMP+=("")
}

# c_binary NAME SOURCE CFLAGS : NAME is gcc's build of the one C file SOURCE.
c_binary() {
  B_NAME+=("$1") B_KIND+=(c) B_DIR+=("$(dirname "$2")") B_PKG+=("$2") B_FLAGS+=("$3")
  B_TAGS+=("") B_VERSION_ARG+=("") B_STAMP+=("")
}

# The sources of binary I, each file's name and content: a module's go.mod, go.sum and
# own .go files (its dependencies' sources are pinned by go.sum), or the C file.
stamp_inputs() {
  local i=$1
  if [[ ${B_KIND[i]} == c ]]; then
    printf '%s\n' "${B_PKG[i]}"
  elif [[ ${B_KIND[i]} == npm ]]; then
    printf '%s\n' "${B_DIR[i]}/package.json" "${B_DIR[i]}/package-lock.json"
  else
    (cd "${B_DIR[i]}" && find . \( -name '*.go' -o -name go.mod -o -name go.sum \) -type f | LC_ALL=C sort) |
      sed "s|^\./|${B_DIR[i]}/|"
  fi
}

# The recipe of binary I: everything besides its sources that the binary depends on.
stamp_recipe() {
  local i=$1
  if [[ ${B_KIND[i]} == c ]]; then
    printf 'gcc %s\ncflags %s\n' "$(gcc -dumpfullversion 2>/dev/null || echo none)" "${B_FLAGS[i]}"
  elif [[ ${B_KIND[i]} == npm ]]; then
    # The Node major: a package's engines (and any native part) are chosen for it.
    printf 'node %s\nbin %s\n' "$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo none)" "${B_PKG[i]}"
  else
    printf 'go %s %s/%s\nenv CGO_ENABLED=%s GOFLAGS=%s\nflags %s\npackage %s\nldflags %s\ntags %s\n' \
      "$GO_VERSION" "$(uname -s)" "$(uname -m)" "$CGO_ENABLED" "$GOFLAGS" "${GO_BUILD_FLAGS[*]}" \
      "${B_PKG[i]}" "${B_FLAGS[i]}" "${B_TAGS[i]}"
  fi
}

compute_stamps() {
  local i file
  GO_VERSION=$(go env GOVERSION 2>/dev/null || echo none)
  for i in "${!B_NAME[@]}"; do
    B_STAMP[i]=$({
      stamp_recipe "$i"
      while IFS= read -r file; do
        # Named within the module: where a checkout or a copy of it lies is not what it builds.
        printf 'file %s %s\n' "${file#"${B_DIR[i]}"/}" "$(sha256sum <"$file" | cut -d' ' -f1)"
      done < <(stamp_inputs "$i")
    } | sha256sum | cut -d' ' -f1)
  done
}

is_current() {
  local i=$1 dest="$OUT_DIR/${B_NAME[$1]}"
  [[ -f "$dest" && -x "$dest" && "$(cat "$dest.stamp" 2>/dev/null)" == "${B_STAMP[i]}" ]]
}

# Indices of the declared binaries that are not current.
stale_binaries() {
  local i
  for i in "${!B_NAME[@]}"; do is_current "$i" || printf '%s\n' "$i"; done
}

# --- building --------------------------------------------------------------------------

declare -a TIMINGS=()

# run_watched LABEL COMMAND... : runs COMMAND in the background, saying every 30 s that
# it is still running (a cold Kubernetes build is silent for minutes otherwise).
run_watched() {
  local label=$1 start=$SECONDS last_report=$SECONDS rc=0
  shift
  "$@" &
  CURRENT_PID=$!
  while kill -0 "$CURRENT_PID" 2>/dev/null; do
    sleep 1
    if ((SECONDS - last_report >= 30)); then
      last_report=$SECONDS
      log "$label: still building, $((SECONDS - start))s elapsed"
    fi
  done
  wait "$CURRENT_PID" || rc=$?
  CURRENT_PID=""
  return "$rc"
}

# The name `go build -o DIR/` gives PACKAGE's command (cmd/go's DefaultExecName).
exec_name() {
  local base=${1##*/}
  if [[ "$1" == */* && "$base" =~ ^v[0-9]+$ ]]; then base=${1%/*} base=${base##*/}; fi
  printf '%s' "$base"
}

# install_built I FILE : checks that FILE runs, then renames it into place with its stamp.
install_built() {
  local i=$1 file=$2 name=${B_NAME[$1]} dest="$OUT_DIR/${B_NAME[$1]}" version_out=""
  [[ -s "$file" ]] || die "$name: the build produced no binary"
  if [[ -n "${B_VERSION_ARG[i]}" ]]; then
    version_out=$("$file" "${B_VERSION_ARG[i]}" 2>&1) || die "$name: built binary does not run: $version_out"
    version_out=" [${version_out%%$'\n'*}]"
  fi
  chmod 0755 "$file"
  rm -f "$dest.stamp"
  mv -f "$file" "$dest"
  printf '%s\n' "${B_STAMP[i]}" >"$dest.stamp"
  log "$name: -> $dest ($(du -h "$dest" | cut -f1))$version_out"
}

# build_group I... : one compiler run for binaries I... (one C file, or Go commands of one
# module with the same flags).
build_group() {
  local first=$1 names="" i pkgs=() jobs=()
  for i in "$@"; do names+="${names:+, }${B_NAME[i]}" pkgs+=("${B_PKG[i]}"); done
  CURRENT_TMP="$OUT_DIR/.build.$$"
  rm -rf "$CURRENT_TMP"
  mkdir -p "$CURRENT_TMP"
  local start=$SECONDS rc=0
  if [[ ${B_KIND[first]} == npm ]]; then
    local name=${B_NAME[first]}
    log "$names: npm ci of ${B_DIR[first]#"$TOOLS_DIR"/} ..."
    cp "${B_DIR[first]}/package.json" "${B_DIR[first]}/package-lock.json" "$CURRENT_TMP/"
    # npm's summary to stderr: stdout is the one line of the output directory.
    run_watched "$names" bash -c 'exec npm "$@" >&2' _ ci --prefix "$CURRENT_TMP" \
      --ignore-scripts --omit=dev --no-audit --no-fund --loglevel=error || rc=$?
    if ((rc == 0)); then
      # The tree in place first: the wrapper, checked to run before it is installed, names it.
      rm -rf "$OUT_DIR/$name.d"
      mkdir -p "$OUT_DIR/$name.d"
      mv "$CURRENT_TMP/node_modules" "$CURRENT_TMP/package.json" "$CURRENT_TMP/package-lock.json" "$OUT_DIR/$name.d/"
      printf '#!/bin/sh\nexec node %q "$@"\n' "$OUT_DIR/$name.d/node_modules/${B_PKG[first]}" >"$CURRENT_TMP/$name"
      chmod 0755 "$CURRENT_TMP/$name"
    fi
  elif [[ ${B_KIND[first]} == c ]]; then
    command -v gcc >/dev/null 2>&1 || die "gcc is not on PATH (needed to build ${B_NAME[first]})"
    log "$names: building ${B_PKG[first]#"$TOOLS_DIR"/} ..."
    # shellcheck disable=SC2086 # CFLAGS are words
    run_watched "$names" gcc ${B_FLAGS[first]} -o "$CURRENT_TMP/${B_NAME[first]}" "${B_PKG[first]}" || rc=$?
  else
    [[ -n "${CONFIGHASH_BUILD_JOBS:-}" ]] && jobs=(-p "$CONFIGHASH_BUILD_JOBS")
    # One package: -o names the file. Several: -o DIR/ names each after its package.
    local out="$CURRENT_TMP/${B_NAME[first]}"
    (($# > 1)) && out="$CURRENT_TMP/"
    log "$names: building ${pkgs[*]} (module ${B_DIR[first]#"$TOOLS_DIR"/}) ..."
    run_watched "$names" bash -c 'cd "$1" && shift && exec go build "$@"' _ "${B_DIR[first]}" \
      "${jobs[@]}" "${GO_BUILD_FLAGS[@]}" -tags "${B_TAGS[first]}" -ldflags "${B_FLAGS[first]}" \
      -o "$out" "${pkgs[@]}" || rc=$?
  fi
  local elapsed=$((SECONDS - start))
  ((rc == 0)) || die "$names: build failed (exit $rc) after ${elapsed}s"
  log "$names: built in ${elapsed}s"
  for i in "$@"; do
    if (($# > 1)); then
      install_built "$i" "$CURRENT_TMP/$(exec_name "${B_PKG[i]}")"
    else
      install_built "$i" "$CURRENT_TMP/${B_NAME[i]}"
    fi
  done
  rm -rf "$CURRENT_TMP"
  CURRENT_TMP=""
  TIMINGS+=("${names// /}=${elapsed}s")
}

# Binary J joins binary I's `go build`: same module and flags, distinct command names.
same_build() {
  local i=$1 j=$2
  [[ ${B_KIND[i]} == go && ${B_KIND[j]} == go && ${B_DIR[i]} == "${B_DIR[j]}" ]] &&
    [[ ${B_FLAGS[i]} == "${B_FLAGS[j]}" && ${B_TAGS[i]} == "${B_TAGS[j]}" ]] &&
    [[ ${B_PKG[i]} != . && ${B_PKG[j]} != . ]] &&
    [[ "$(exec_name "${B_PKG[i]}")" != "$(exec_name "${B_PKG[j]}")" ]]
}

# build_stale I... : the stale binaries, grouped into as few compiler runs as their
# modules and flags allow, in declaration order.
build_stale() {
  local -a todo=("$@") group
  local i j
  while ((${#todo[@]} > 0)); do
    group=("${todo[0]}")
    local -a rest=()
    for j in "${todo[@]:1}"; do
      local joins=1
      for i in "${group[@]}"; do same_build "$i" "$j" || joins=0; done
      if ((joins)); then group+=("$j"); else rest+=("$j"); fi
    done
    build_group "${group[@]}"
    todo=("${rest[@]}")
  done
}

# Serialise concurrent builds of OUT_DIR; the build waited for may leave nothing to do.
lock_out_dir() {
  command -v flock >/dev/null 2>&1 || return 0
  exec 9>"$OUT_DIR/.lock"
  if ! flock -n 9; then
    log "another build is running in $OUT_DIR; waiting for it"
    flock 9
  fi
}

# use_prebuilt VAR : if the environment variable VAR names a directory holding every
# declared binary, that directory is the output as is (nothing is built or checked).
use_prebuilt() {
  local dir=${!1:-}
  [[ -n "$dir" ]] || return 0
  if [[ -d "$dir" ]] && has_all_binaries "$dir" "${B_NAME[@]}"; then
    log "using $1=$dir"
    (cd "$dir" && pwd -P)
    exit 0
  fi
  log "$1=$dir lacks one of: ${B_NAME[*]}; building from source instead"
}

# build_declared [--find] : the script's last step; see the top of this file.
build_declared() {
  case "${1:-}" in
    "" | --find) ;;
    *) die "usage: $0 [--find]" ;;
  esac
  compute_stamps
  local -a stale
  mapfile -t stale < <(stale_binaries)
  if ((${#stale[@]} > 0)) && [[ "${1:-}" == --find ]]; then
    log "not built (or built from other sources) in $OUT_DIR: $(for i in "${stale[@]}"; do printf '%s ' "${B_NAME[i]}"; done)"
    exit 1
  fi
  if ((${#stale[@]} > 0)); then
    lock_out_dir
    mapfile -t stale < <(stale_binaries)
  fi
  if ((${#stale[@]} == 0)); then
    log "all current in $OUT_DIR: ${B_NAME[*]}"
    printf '%s\n' "$OUT_DIR"
    return 0
  fi
  local i
  for i in "${stale[@]}"; do
    if [[ ${B_KIND[i]} == go ]]; then check_go "${B_NAME[*]}"; break; fi
  done
  local total_start=$SECONDS
  build_stale "${stale[@]}"
  mapfile -t stale < <(stale_binaries)
  ((${#stale[@]} == 0)) || die "binaries still missing from $OUT_DIR after the build"
  log "build durations: ${TIMINGS[*]} (total $((SECONDS - total_start))s)"
  printf '%s\n' "$OUT_DIR"
}
