#!/bin/bash
# Install what libfastrm needs on Debian 12 (as root), configure and build
# it in ./build, and install frm, libfastrm, its headers and the man pages
# under /usr/local (undo: ninja -C build uninstall && ldconfig).
set -euo pipefail
cd "$(dirname "$0")"
pkgs=(build-essential meson ninja-build pkg-config libcmocka-dev gnulib
      autoconf automake help2man groff-base libfuse3-dev fuse3 python3 util-linux e2fsprogs xfsprogs btrfs-progs valgrind
      debhelper dpkg-dev lintian git man-db)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
[ -d build ] || meson setup build
meson compile -C build
meson install -C build --quiet --no-rebuild
ldconfig
