#!/bin/sh
# usage: check-values.sh TABLE LIBFASTRM_FTS_H [GNULIB_FTS_IN_H]
# Fails unless TABLE (tests/gnulib/fts-values.h) names exactly the FTS_*
# macros that libfastrm's <fastrm/fts.h> defines, and, given gnulib's
# lib/fts.in.h, unless every FTS_* value there is TABLE's.
set -eu
table=$1 ours=$2 gnulib=${3:-}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fts-values.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
sed -n 's/^GNULIB(\(FTS_[A-Z_]*\), *\([^)]*\)).*/\1 \2/p' "$table" | sort > "$tmp/table"
[ -s "$tmp/table" ] || { echo "no values read from $table"; exit 1; }
sed -n 's/^# *define \(FTS_[A-Z_]*\)[ 	].*/\1/p' "$ours" | sort -u > "$tmp/ours"
cut -d' ' -f1 "$tmp/table" > "$tmp/names"
if ! diff "$tmp/names" "$tmp/ours" > "$tmp/d"; then
	echo "FTS_* names of $ours and of $table differ (< table only, > header only):"
	cat "$tmp/d"
	exit 1
fi
echo "$(wc -l < "$tmp/names") FTS_* names: $table and $ours agree"
if [ -n "$gnulib" ]; then
	# gnulib's defines: "# define FTS_NAME  VALUE  /* ... */"
	sed -n 's/^# *define \(FTS_[A-Z_]*\)[ 	]\{1,\}\([-(0-9a-fx)]\{1,\}\).*/\1 \2/p' "$gnulib" |
		tr -d '()' | sort > "$tmp/gnulib"
	if ! diff "$tmp/table" "$tmp/gnulib" > "$tmp/d"; then
		echo "$table and $gnulib differ (< table, > gnulib):"
		cat "$tmp/d"
		exit 1
	fi
	echo "$(wc -l < "$tmp/gnulib") values: $table equals $gnulib"
fi
