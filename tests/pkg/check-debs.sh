#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# check-debs.sh SRC: build the Debian packages (libfastrm0, libfastrm-dev,
# frm, python3-fastrm) from a copy of the source tree with dpkg-buildpackage -us -uc -b,
# require lintian to report no error and no warning, then build the two
# consumer programs of this directory with nothing but pkg-config against
# the packages' contents (unpacked into a temporary root) and run them,
# and run the packaged frm.  Skips (77) where the Debian tools are missing.
set -u
src=$1
for tool in dpkg-buildpackage dpkg-checkbuilddeps lintian pkg-config git; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "SKIP: $tool is not installed (Debian packaging tools)"
		exit 77
	fi
done
if ! git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
	echo "SKIP: $src is not a git checkout (the packages are built from its files)"
	exit 77
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/fastrm-debs.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# the files git knows (committed, or new and not ignored): no build tree
mkdir "$work/libfastrm"
(cd "$src" && git ls-files -z --cached --others --exclude-standard) |
	(cd "$src" && tar --null -T - -cf -) | tar -C "$work/libfastrm" -xf - ||
	fail "cannot copy the source tree"
cd "$work/libfastrm" || exit 1
dpkg-checkbuilddeps || { echo "SKIP: build dependencies missing"; exit 77; }
if ! dpkg-buildpackage -us -uc -b >"$work/build.log" 2>&1; then
	tail -40 "$work/build.log"
	fail "dpkg-buildpackage"
fi
cd "$work" || exit 1
ls ./*.deb
lintian --fail-on error,warning ./*.changes 2>&1 | grep -v 'root privileges' ||
	true
lintian --fail-on error,warning ./*.changes >/dev/null 2>&1 ||
	fail "lintian reports errors or warnings (above)"
echo "lintian: no error, no warning"

mkdir root
for p in libfastrm0 libfastrm-dev frm python3-fastrm; do
	dpkg-deb -x "$(ls ./${p}_*.deb)" root || fail "unpack $p"
done
arch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
export PKG_CONFIG_SYSROOT_DIR="$work/root"
export PKG_CONFIG_LIBDIR="$work/root/usr/lib/$arch/pkgconfig"
export LD_LIBRARY_PATH="$work/root/usr/lib/$arch"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck disable=SC2046
cc -Wall -Wextra -Werror -o consumer "$here/consumer.c" \
	$(pkg-config --cflags --libs libfastrm) || fail "build with libfastrm.pc"
./consumer || fail "consumer"
# shellcheck disable=SC2046
cc -Wall -Wextra -Werror -o consumer-compat "$here/consumer-compat.c" \
	$(pkg-config --cflags --libs libfastrm-compat) ||
	fail "build with libfastrm-compat.pc"
mkdir -p t/a && touch t/a/f t/g
[ "$(./consumer-compat t)" = 4 ] || fail "consumer-compat"
echo "consumer-compat: 4 entries"
ldd ./consumer | grep -q "$work/root/usr/lib/$arch/libfastrm.so.0" ||
	fail "consumer did not use the packaged library"
"$work/root/usr/bin/frm" --version | head -1
"$work/root/usr/bin/frm" -r t && [ ! -e t ] || fail "packaged frm"
mkdir -p t/a && touch t/a/f t/g
PYTHONPATH="$work/root/usr/lib/python3/dist-packages" /usr/bin/python3 -c '
import fastrm, os, sys
fastrm.rmtree("t")
sys.exit(os.path.lexists("t") or not fastrm.__file__.startswith(sys.argv[1]))' \
	"$work/root/usr/lib/python3/dist-packages" || fail "packaged Python module"
echo "python3-fastrm: fastrm.rmtree removed a tree"
echo "packages built, lintian-clean, and usable through pkg-config"
