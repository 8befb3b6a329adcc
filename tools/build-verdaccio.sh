#!/usr/bin/env bash
# Installs Verdaccio, an npm registry, for the release test that publishes the CLI to a
# registry on loopback and installs it from there (test/node/npm-release.test.ts).
#
#   tools/build-verdaccio.sh [--find]   -> prints the directory holding `verdaccio`
#
# Installed to ${XDG_CACHE_HOME:-$HOME/.cache}/confighash/verdaccio-6.8.0/ by `npm ci` of
# tools/verdaccio/package-lock.json (no install scripts) and kept there while current;
# tools/lib/go-build.sh is the skeleton (stamp, lock, output). 6.8 is the last Verdaccio
# that runs on Node 20; 6.10 and later need Node 22.
set -euo pipefail
# shellcheck source=lib/go-build.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/go-build.sh"

readonly VERDACCIO_VERSION=6.8.0

grep -q "\"verdaccio\": \"$VERDACCIO_VERSION\"" "$TOOLS_DIR/verdaccio/package.json" ||
  die "tools/verdaccio/package.json does not pin verdaccio $VERDACCIO_VERSION"
out_dir "verdaccio-$VERDACCIO_VERSION"

npm_binary verdaccio "$TOOLS_DIR/verdaccio" verdaccio/bin/verdaccio --version

build_declared "$@"
