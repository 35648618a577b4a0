#!/bin/bash
# Install what libfastrm needs on Debian 12 (as root), configure and build
# it in ./build, and install frm, libfastrm, its headers and the man pages
# under /usr/local (undo: ninja -C build uninstall && ldconfig), with the
# Python module fastrm for /usr/bin/python3.
set -euo pipefail
cd "$(dirname "$0")"
pkgs=(build-essential meson ninja-build pkg-config libcmocka-dev gnulib
      autoconf automake help2man groff-base libfuse3-dev fuse3 python3 util-linux e2fsprogs xfsprogs btrfs-progs valgrind
      debhelper dpkg-dev lintian git man-db python3-dev dh-python
      python3-venv python3-mesonpy mypy
      libopenmpi-dev openmpi-bin)
install_missing() {
	local missing=() p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
	done
	if [ ${#missing[@]} -gt 0 ]; then
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq
		apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
	fi
}
install_missing "${pkgs[@]}"
# CPython's own tests of shutil.rmtree, run on the Python module fastrm
# (tests/python/cpython_shutil.py), for the python3 the module is built for
install_missing "libpython3.$(/usr/bin/python3 -c 'import sys; print(sys.version_info[1])')-testsuite"
[ -d build ] || meson setup build
# the Python module where /usr/bin/python3 looks under /usr/local (Debian's
# posix_local scheme: /usr/local/lib/python3.X/dist-packages)
site=$(/usr/bin/python3 -c 'import sysconfig; print(sysconfig.get_path("platlib", "posix_local"))')
meson configure build -Dpython.platlibdir="$site" -Dpython.purelibdir="$site"
meson compile -C build
meson install -C build --quiet --no-rebuild
ldconfig
