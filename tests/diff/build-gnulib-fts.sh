#!/bin/sh
# Build gnulib's fts (test-only reference, never part of the library) and
# the walker against it, into one archive: from the installed gnulib
# package, or from the gnulib tree GNULIB_SRC (a checkout of gnulib's
# repository) if given.
# usage: build-gnulib-fts.sh OUTPUT.a WALKER.c CC [GNULIB_SRC]
set -eu
out=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
walker=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
cc=$3
tool=gnulib-tool
if [ -n "${4:-}" ]; then
	tool=$4/gnulib-tool
	[ -x "$tool" ] || { echo "no gnulib-tool in $4" >&2; exit 1; }
fi
work=${out%.a}.dir
rm -rf "$work"
"$tool" --create-testdir --dir="$work" --without-tests fts >"$work.log" 2>&1
cd "$work"
./configure -q CFLAGS="-O2 -g" >>"$work.log" 2>&1
make -j"$(nproc)" >>"$work.log" 2>&1
cd - >/dev/null
$cc -c -O2 -g -I"$work" -I"$work/gllib" -I"$(dirname "$walker")" \
	-include "$work/config.h" "$walker" -o "$work/walk-gnulib.o"
cp "$work/gllib/libgnu.a" "$out"
ar r "$out" "$work/walk-gnulib.o" 2>/dev/null
