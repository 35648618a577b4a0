#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# GNU coreutils 9.1 and GNU findutils 4.9.0 relinked against libfastrm's
# fts, and their own test suites run on both builds: each package is
# built twice from its release tarball, once as released (gnulib's fts)
# and once with gnulib's fts replaced by libfastrm's compat header and
# library (the change a coreutils-like tool makes: its include and its
# link line), and the tests of every program that walks with fts are run
# on both, as root and as a plain user (uid 65534):
#   coreutils: rm, du, chmod, chown, chgrp (fts), mv (rm's remove.c);
#   findutils: find (find/testsuite, DejaGnu, and tests/find).
# Passes when every test has the same outcome in both builds (but for the
# known differences, see known() below, each said) and none fails on
# libfastrm that passes on gnulib's fts; each difference is printed, and so
# is a test that fails on both alike (the machine's doing, not fts's).
#
# usage: tests/gnu/relink-fts.sh BUILD      e.g. tests/gnu/relink-fts.sh build
#   BUILD: a meson build directory of this tree (its lib/libfastrm.so).
# Environment: COREUTILS_TARBALL, FINDUTILS_TARBALL (release tarballs
# already fetched; else they are fetched from Debian's archive, and either
# way checked against their SHA-256), COREUTILS_SRC, FINDUTILS_SRC (a
# source tree instead of the release: a checkout of the package's
# repository after its ./bootstrap, for the package as it is now; copied,
# never built in place), RELINK_PACKAGES (default
# "coreutils findutils"), FASTRM_KEEP=1 keeps the work directory,
# RELINK_WORK=DIR uses the builds a kept work directory holds (the tests
# run again).
# Needs: root (the tests run as root and as uid 65534), a compiler,
# runtest (Debian's dejagnu) for find/testsuite.
# Takes about 25 minutes on 2 CPUs (four builds, eight test runs).
# Exit status: 0 when the outcomes match, 1 otherwise, 77 when it cannot
# run (not root, no runtest, no tarball and no network).
set -euo pipefail

here=$(cd "$(dirname "$0")/../.." && pwd)
build=$(realpath "${1:?usage: relink-fts.sh BUILD}")
lib=$build/lib
[ -f "$lib/libfastrm.so" ] || { echo "no $lib/libfastrm.so: build first"; exit 1; }
nobody=65534
packages=${RELINK_PACKAGES:-coreutils findutils}

if [ "$(id -u)" != 0 ]; then
	echo "SKIP: needs root (the tests run as root and as uid $nobody)"
	exit 77
fi
if [[ " $packages " == *" findutils "* ]] && ! command -v runtest >/dev/null; then
	echo "SKIP: findutils' find/testsuite needs runtest (apt-get install dejagnu)"
	exit 77
fi
if [ -n "${RELINK_WORK:-}" ]; then
	work=$(realpath "$RELINK_WORK")
	FASTRM_KEEP=1
else
	work=$(mktemp -d "${TMPDIR:-/tmp}/fastrm-relink.XXXXXX")
fi
cleanup() {
	[ "${FASTRM_KEEP:-}" = 1 ] || rm -rf -- "$work"
}
trap cleanup EXIT
chmod 755 "$work"
jobs=$(nproc)

# fetch PACKAGE: the path of its release tarball, checked, or of the
# source tree given instead
fetch() {
	local pkg=$1 url sha var tarball tree
	case $pkg in
	coreutils) tree=${COREUTILS_SRC:-} ;;
	findutils) tree=${FINDUTILS_SRC:-} ;;
	esac
	if [ -n "$tree" ]; then
		[ -x "$tree/configure" ] || { echo "FAIL: no configure in $tree (run its ./bootstrap)" >&2; exit 1; }
		realpath "$tree"
		return 0
	fi
	case $pkg in
	coreutils)
		url=http://deb.debian.org/debian/pool/main/c/coreutils/coreutils_9.1.orig.tar.xz
		sha=61a1f410d78ba7e7f37a5a4f50e6d1320aca33375484a3255eddf17a38580423
		var=${COREUTILS_TARBALL:-} ;;
	findutils)
		url=http://deb.debian.org/debian/pool/main/f/findutils/findutils_4.9.0.orig.tar.xz
		sha=a2bfb8c09d436770edc59f50fa483e785b161a3b7b9d547573cb08065fd462fe
		var=${FINDUTILS_TARBALL:-} ;;
	esac
	tarball=${var:-$work/${url##*/}}
	if [ ! -f "$tarball" ] && ! curl -sf -o "$tarball" "$url"; then
		echo "SKIP: cannot fetch $url" >&2
		exit 77
	fi
	echo "$sha  $tarball" | sha256sum -c --quiet - >&2
	echo "$tarball"
}

# The change a program makes to move from gnulib's fts to libfastrm's:
# its fts header includes <fastrm/compat/fts.h>, gnulib's fts.c is left
# out, and it links -lfastrm.
use_fastrm() { # GNULIB-LIB-DIR
	rm -f "$1/fts_.h" "$1/fts.c"
	cat >"$1/fts_.h" <<-'EOF'
	/* fastrm relink: gnulib's fts replaced by libfastrm's */
	#ifndef FASTRM_RELINK_FTS_H
	#define FASTRM_RELINK_FTS_H
	#include <dirent.h>
	#include <fastrm/compat/fts.h>
	#endif
	EOF
	# newer gnulib makes fts_.h from fts.in.h: that is replaced too
	[ ! -e "$1/fts.in.h" ] || { rm -f "$1/fts.in.h" && cp "$1/fts_.h" "$1/fts.in.h" && touch "$1/fts_.h"; }
	printf '/* fastrm relink: fts is libfastrm'"'"'s */\ntypedef int fastrm_relink_unused;\n' >"$1/fts.c"
}

# build PACKAGE VARIANT TARBALL: configure and make in $work/VARIANT
build_pkg() {
	local pkg=$1 variant=$2 tarball=$3 src p
	src=$(echo "$work/$variant/$pkg"-*)
	p=$(programs "$pkg")
	if [ -x "$src/${p%% *}" ]; then
		echo "$pkg ($variant fts): built in $src"
		return 0
	fi
	mkdir -p "$work/$variant"
	if [ -d "$tarball" ]; then
		# -L: a tree made by ./bootstrap --gnulib-srcdir holds
		# links into the gnulib tree, never to be written through
		cp -aL "$tarball" "$work/$variant/$pkg-tree"
		# a source tree, not a checkout: maint.mk's checks of a git
		# checkout (its submodule's commit) are not the tests
		rm -rf "$work/$variant/$pkg-tree/.git"
	else
		tar -C "$work/$variant" -xf "$tarball"
	fi
	src=$(echo "$work/$variant/$pkg"-*)
	local env=(FORCE_UNSAFE_CONFIGURE=1)
	if [ "$variant" = fastrm ]; then
		case $pkg in
		coreutils) use_fastrm "$src/lib" ;;
		findutils) use_fastrm "$src/gl/lib" ;;
		esac
		env+=("CPPFLAGS=-I$here/include -I$build/include"
		      "LDFLAGS=-L$lib -Wl,-rpath,$lib" "LIBS=-lfastrm")
	fi
	echo "building $pkg ($variant fts) in $src"
	(cd "$src" && env "${env[@]}" ./configure --quiet --disable-nls \
		>"$work/$pkg-$variant-configure.log" 2>&1 &&
	 make -j"$jobs" >"$work/$pkg-$variant-make.log" 2>&1) || {
		echo "FAIL: building $pkg ($variant): see the tail of its log"
		tail -30 "$work/$pkg-$variant-make.log" 2>/dev/null ||
			tail -30 "$work/$pkg-$variant-configure.log"
		return 1
	}
	chown -R "$nobody:$nobody" "$src"
}

# programs PACKAGE: the programs built from fts (relative to the source)
programs() {
	case $1 in
	coreutils) echo src/rm src/du src/chmod src/chown src/chgrp src/mv ;;
	findutils) echo find/find ;;
	esac
}

# check_linked PACKAGE SRC: the relinked programs call libfastrm's fts and
# hold no fts of their own
check_linked() {
	local p bad=0 dyn all
	for p in $(programs "$1"); do
		# (whole outputs first: grep -q would end nm early, and pipefail)
		dyn=$(nm -D "$2/$p")
		all=$(nm "$2/$p" 2>/dev/null || true)
		if ! grep -qE ' U fastrm_fts_open(@|$)' <<<"$dyn"; then
			echo "FAIL: $1 $p does not call libfastrm's fastrm_fts_open"; bad=1
		fi
		if grep -qE ' T (rpl_)?fts_(open|read)$' <<<"$all"; then
			echo "FAIL: $1 $p still holds an fts of its own"; bad=1
		fi
	done
	[ "$bad" = 0 ] && echo "$1: $(programs "$1" | wc -w) programs call libfastrm's fts"
	return "$bad"
}

# as WHO CMD...: run as root or as uid 65534
as() {
	local who=$1
	shift
	if [ "$who" = root ]; then
		env HOME="$work" "$@"
	else
		setpriv --reuid=$nobody --regid=$nobody --clear-groups env HOME="$work" "$@"
	fi
}

# run_tests PACKAGE SRC WHO OUT: every test's outcome, one "OUTCOME: name"
# line each, into OUT
run_tests() {
	local pkg=$1 src=$2 who=$3 out=$4 log
	log=$work/$pkg-$(basename "$(dirname "$src")")-$who
	: >"$out"
	case $pkg in
	coreutils)
		local tests
		tests=$(cd "$src" && shopt -s nullglob &&
			echo tests/{rm,du,chmod,chown,chgrp,mv}/*.{sh,pl,xpl})
		(cd "$src" && as "$who" env RUN_EXPENSIVE_TESTS=yes RUN_VERY_EXPENSIVE_TESTS=yes \
			make check TESTS="$tests" SUBDIRS=. VERBOSE=yes) >"$log.log" 2>&1 || true
		grep -E '^(PASS|FAIL|SKIP|XFAIL|XPASS|ERROR): ' "$log.log" | sort -u >>"$out" || true
		;;
	findutils)
		local tests
		tests=$(cd "$src" && shopt -s nullglob && echo tests/find/*.sh)
		(cd "$src" && as "$who" make check TESTS="$tests" SUBDIRS=. VERBOSE=yes) \
			>"$log.log" 2>&1 || true
		grep -E '^(PASS|FAIL|SKIP|XFAIL|XPASS|ERROR): ' "$log.log" | sort -u >>"$out" || true
		(cd "$src/find/testsuite" && as "$who" make check) >"$log-dejagnu.log" 2>&1 || true
		if [ ! -f "$src/find/testsuite/find.sum" ]; then
			echo "ERROR: find/testsuite (no find.sum)" >>"$out"
		else
			grep -E '^(PASS|FAIL|UNRESOLVED|UNTESTED|UNSUPPORTED|XFAIL|XPASS|KFAIL|KPASS|ERROR): ' \
				"$src/find/testsuite/find.sum" | sed 's/^/dejagnu /' | sort >>"$out" || true
		fi
		;;
	esac
}

# tally FILE: counts of each outcome
tally() {
	sed -E 's/^(dejagnu )?([A-Z]+):.*/\2/' "$1" | sort | uniq -c | awk '{printf "%s %s, ", $1, $2}' |
		sed 's/, $//'
}

# Known differences: tests that skip themselves on libfastrm by design.
# rm-readdir-fail.sh makes readdir() fail through an LD_PRELOAD shim;
# libfastrm reads directories with getdents64, not readdir, so the shim is
# never called and the test skips itself ("maybe LD_PRELOAD doesn't
# work?").  libfastrm's handling of a failing directory read is tested by
# e2e.faults (getdents64 failing with EIO and ENOMEM, injected).
declare -A known_skips=(
	[tests/rm/rm-readdir-fail.sh]="it replaces readdir(); libfastrm calls getdents64"
)

# known FILE: FILE's outcomes, sorted, each known skip said once and
# counted as the pass it is on gnulib's fts
known() {
	local line
	while read -r line; do
		if [[ $line == "SKIP: "* && -n ${known_skips[${line#SKIP: }]:-} ]]; then
			echo "KNOWN: $line (${known_skips[${line#SKIP: }]})" >&2
			line="PASS: ${line#SKIP: }"
		fi
		echo "$line"
	done <"$1" | sort
}

status=0
for pkg in $packages; do
	tarball=$(fetch "$pkg")
	build_pkg "$pkg" gnulib "$tarball"
	build_pkg "$pkg" fastrm "$tarball"
	ref=$(echo "$work/gnulib/$pkg"-*)
	new=$(echo "$work/fastrm/$pkg"-*)
	check_linked "$pkg" "$new" || status=1
	for who in root user; do
		run_tests "$pkg" "$ref" "$who" "$work/$pkg-gnulib-$who.txt"
		run_tests "$pkg" "$new" "$who" "$work/$pkg-fastrm-$who.txt"
		echo "$pkg as $who: gnulib's fts: $(tally "$work/$pkg-gnulib-$who.txt")"
		echo "$pkg as $who: libfastrm:    $(tally "$work/$pkg-fastrm-$who.txt")"
		if [ ! -s "$work/$pkg-fastrm-$who.txt" ]; then
			echo "FAIL: $pkg as $who: no test ran"; status=1
		fi
		# the outcomes, each known difference put back as gnulib's
		sort "$work/$pkg-gnulib-$who.txt" >"$work/$pkg-gnulib-$who.cmp"
		known "$work/$pkg-fastrm-$who.txt" >"$work/$pkg-fastrm-$who.cmp"
		if ! diff "$work/$pkg-gnulib-$who.cmp" "$work/$pkg-fastrm-$who.cmp" \
			>"$work/$pkg-$who.diff"; then
			echo "DIFFERENT: $pkg as $who (< gnulib's fts, > libfastrm):"
			grep '^[<>]' "$work/$pkg-$who.diff"
			status=1
		fi
		# a test that fails on both builds alike fails for the machine
		# it runs on, not for fts: said, and the outcomes still match
		bad='^(dejagnu )?(FAIL|ERROR|XPASS|UNRESOLVED): '
		if grep -qE "$bad" "$work/$pkg-fastrm-$who.cmp"; then
			grep -E "$bad" "$work/$pkg-gnulib-$who.cmp" >"$work/$pkg-both-$who.txt" || true
			if grep -vxF -f "$work/$pkg-both-$who.txt" "$work/$pkg-fastrm-$who.cmp" |
				grep -qE "$bad"; then
				echo "FAIL: $pkg as $who: failures on libfastrm:"
				grep -vxF -f "$work/$pkg-both-$who.txt" "$work/$pkg-fastrm-$who.cmp" |
					grep -E "$bad"
				status=1
			fi
			if [ -s "$work/$pkg-both-$who.txt" ]; then
				echo "FAILS ON BOTH: $pkg as $who (gnulib's fts too: the machine, not fts):"
				cat "$work/$pkg-both-$who.txt"
			fi
		fi
	done
done
[ "$status" = 0 ] && echo "relink-fts: every test has the same outcome on libfastrm's fts as on gnulib's"
[ "${FASTRM_KEEP:-}" = 1 ] && echo "kept: $work"
exit "$status"
