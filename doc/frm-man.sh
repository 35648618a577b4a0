#!/bin/sh
# frm(1) from frm --help and --version (help2man) and doc/frm.h2m; --help's
# pointers into the page ("see PROGRESS in frm(1)") become "see PROGRESS
# below" there, so that the page never refers to itself.
# usage: frm-man.sh HELP2MAN FRM-DIR INCLUDE OUTPUT
set -eu
help2man=$1 dir=$2 include=$3 out=$4
PATH=$dir:/usr/bin:/bin "$help2man" --no-info --no-discard-stderr \
	--include="$include" --name='remove files or directories, fast' \
	--output="$out.tmp" frm
sed 's/ in frm(1)/ below/g' "$out.tmp" >"$out"
rm -f "$out.tmp"
