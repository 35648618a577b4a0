#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# GNU coreutils 9.1's own tests of rm (tests/rm/*: 50 scripts), run with
# frm in place of rm: as a plain user (uid 65534) for the tests that need
# one, and as root for those that need root (each test says which, and
# skips otherwise).  Every test works in a directory of its own that the
# coreutils harness makes (mktemp) under the build tree, which this script
# makes with mktemp too.
#
# usage: tests/gnu/coreutils-rm.sh FRM [FRM-OPTION]...
#   e.g. tests/gnu/coreutils-rm.sh build/tools/frm/frm --jobs=1
# Environment: COREUTILS_TARBALL, a coreutils-9.1.tar.xz already fetched
# (else it is fetched from Debian's archive and checked against its
# SHA-256); FASTRM_KEEP=1 keeps the work directory.
# Exit status: 0 when no test failed in either run, 1 otherwise, 77 when
# it cannot run (not root, no network and no tarball, no compiler).
set -euo pipefail

frm=$(realpath "$1")
shift
opts=("$@")
url=http://deb.debian.org/debian/pool/main/c/coreutils/coreutils_9.1.orig.tar.xz
sha=61a1f410d78ba7e7f37a5a4f50e6d1320aca33375484a3255eddf17a38580423
nobody=65534

if [ "$(id -u)" != 0 ]; then
	echo "SKIP: needs root (the tests run as root and as uid $nobody)"
	exit 77
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/fastrm-coreutils.XXXXXX")
cleanup() {
	[ "${FASTRM_KEEP:-}" = 1 ] || rm -rf -- "$work"
}
trap cleanup EXIT
chmod 755 "$work"

tarball=${COREUTILS_TARBALL:-$work/coreutils_9.1.orig.tar.xz}
if [ ! -f "$tarball" ] && ! curl -sf -o "$tarball" "$url"; then
	echo "SKIP: cannot fetch $url"
	exit 77
fi
echo "$sha  $tarball" | sha256sum -c --quiet -
tar -C "$work" -xf "$tarball"
src=$work/coreutils-9.1
cd "$src"
echo "building coreutils 9.1 in $src (about 2 minutes on 2 CPUs)"
FORCE_UNSAFE_CONFIGURE=1 ./configure --quiet --disable-nls >"$work/configure.log" 2>&1
make -j"$(nproc)" >"$work/make.log" 2>&1

# rm is frm, invoked as "rm" (GNU rm's messages start with its name);
# make check would link GNU rm again: its recipe becomes a no-op
rm -f src/rm
if [ ${#opts[@]} -eq 0 ]; then
	ln -s "$frm" src/rm
else
	printf '#!/bin/bash\nexec -a rm %q' "$frm" >src/rm
	printf ' %q' "${opts[@]}" >>src/rm
	printf ' "$@"\n' >>src/rm
	chmod 755 src/rm
fi
printf '\n# fastrm: src/rm is frm\nsrc/rm$(EXEEXT): ; @:\n' >>Makefile
chown -R "$nobody:$nobody" "$src"

tests=$(ls tests/rm/*.sh tests/rm/*.pl tests/rm/*.xpl | tr '\n' ' ')
status=0
summary() { # LOG WHO
	grep -E '^(PASS|FAIL|ERROR|XPASS): ' "$1" | sed "s/^/$2: /" || true
	grep -E '^# (PASS|SKIP|FAIL|ERROR):' "$1" | tr '\n' ' ' | sed "s/^/$2: /"
	echo
	grep -qE '^# (FAIL|ERROR|XPASS): +[1-9]' "$1" && status=1
	return 0
}
setpriv --reuid=$nobody --regid=$nobody --clear-groups \
	env HOME="$work" RUN_EXPENSIVE_TESTS=yes RUN_VERY_EXPENSIVE_TESTS=yes \
	make check TESTS="$tests" SUBDIRS=. VERBOSE=yes >"$work/check-user.log" 2>&1 || true
summary "$work/check-user.log" "as uid $nobody"
env RUN_EXPENSIVE_TESTS=yes RUN_VERY_EXPENSIVE_TESTS=yes \
	make check TESTS="$tests" SUBDIRS=. VERBOSE=yes >"$work/check-root.log" 2>&1 || true
summary "$work/check-root.log" "as root"
# the tests ran frm, not a GNU rm that make built again
if ! src/rm --version | grep -q '^frm '; then
	echo "FAIL: src/rm is not frm after the runs: $(src/rm --version | head -1)"
	exit 1
fi
# a test passes if it passed in one run and failed in neither; say why
# the others skipped (in the root run)
passed=$(cat "$work"/check-*.log | grep -E '^PASS: ' | sort -u | wc -l)
for t in $tests; do
	grep -qE "^PASS: $t\$" "$work"/check-*.log && continue
	why=$(grep -h 'skipped test:' "${t%.*}.log" | tail -1 | sed 's/.*skipped test: //')
	echo "skipped in both runs: $t: $why"
done
failed=$(cat "$work"/check-*.log | grep -cE '^(FAIL|ERROR|XPASS): ' || true)
echo "frm ${opts[*]:-(default options)}: $passed of 50 coreutils 9.1 rm tests passed" \
     "(as root or as uid $nobody), $failed failed"
exit $status
