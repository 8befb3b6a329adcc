#!/usr/bin/env bash
# Builds the krew archive of `kubectl confighash` (.krew.yaml): the compiled CLI,
# its production dependencies and a `kubectl-confighash` launcher that runs it
# with the node on PATH (Node.js >= 20). Prints the archive's path and sha256.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="${1:-$root/dist-krew}"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
cd "$root"
npm run build >/dev/null
mkdir -p "$stage/confighash" "$out"
cp -r dist package.json package-lock.json LICENSE* README.md "$stage/confighash/" 2>/dev/null || true
# No bin links: krew unpacks regular files and directories only, and refuses the whole
# archive at its first symlink (node_modules/.bin/*). The launcher needs none of them.
(cd "$stage/confighash" && npm ci --omit=dev --ignore-scripts --no-bin-links --no-audit --no-fund >/dev/null)
links="$(find "$stage/confighash" -type l | head -3)"
[[ -z "$links" ]] || { echo "krew archive: krew cannot unpack symlinks, and these are: $links" >&2; exit 1; }
cat >"$stage/confighash/kubectl-confighash" <<'LAUNCHER'
#!/bin/sh
# kubectl confighash …: the confighash CLI (plan, explain) with the node on PATH. krew runs
# this through a symlink in its bin/: dist/ is beside the file the links end at.
self="$0"
while [ -L "$self" ]; do
  target="$(readlink "$self")"
  case "$target" in
    /*) self="$target" ;;
    *) self="$(dirname "$self")/$target" ;;
  esac
done
exec node "$(dirname "$self")/dist/main.js" "$@"
LAUNCHER
chmod +x "$stage/confighash/kubectl-confighash"
archive="$out/kubectl-confighash.tar.gz"
tar -C "$stage" --sort=name --owner=0 --group=0 --numeric-owner --mtime='2000-01-01' -czf "$archive" confighash
echo "$archive"
sha256sum "$archive" | cut -d' ' -f1
