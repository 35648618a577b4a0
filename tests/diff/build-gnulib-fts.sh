#!/bin/sh
# Build gnulib's fts from the installed gnulib package (test-only reference,
# never part of the library) and the walker against it, into one archive.
# usage: build-gnulib-fts.sh OUTPUT.a WALKER.c CC
set -eu
out=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
walker=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
cc=$3
work=$(dirname "$out")/gnulib-ref
rm -rf "$work"
gnulib-tool --create-testdir --dir="$work" --without-tests fts >"$work.log" 2>&1
cd "$work"
./configure -q CFLAGS="-O2 -g" >>"$work.log" 2>&1
make -j"$(nproc)" >>"$work.log" 2>&1
cd - >/dev/null
$cc -c -O2 -g -I"$work" -I"$work/gllib" -I"$(dirname "$walker")" \
	-include "$work/config.h" "$walker" -o "$work/walk-gnulib.o"
cp "$work/gllib/libgnu.a" "$out"
ar r "$out" "$work/walk-gnulib.o" 2>/dev/null
