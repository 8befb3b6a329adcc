#!/usr/bin/env bash
# Debian packages the project's tools need on the host: umoci and busybox-static
# (tools/image/), runc, the CNI plugins, iproute2 and util-linux (the node harness);
# Debian's arm64 glibc, libstdc++ and libgcc (the *-arm64-cross packages, which install
# beside the host's own, no foreign dpkg architecture) for the arm64 image, and
# qemu-user-static, which runs that image's node in the tests.
# Idempotent: when everything is installed it only asks dpkg, and apt-get runs
# (update, then install) only for what is missing.
set -euo pipefail

packages=(umoci busybox-static runc containernetworking-plugins iproute2 util-linux
  libc6-arm64-cross libstdc++6-arm64-cross libgcc-s1-arm64-cross qemu-user-static)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null | grep -qx installed; then
    missing+=("$p")
  fi
done
if [ "${#missing[@]}" -eq 0 ]; then
  exit 0
fi

echo "setup-host: installing ${missing[*]}" >&2
sudo=()
if [ "$(id -u)" -ne 0 ]; then
  sudo=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update >&2
"${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}" >&2
