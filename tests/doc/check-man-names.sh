#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# check-man-names.sh LIBFASTRM.SYM PAGE...: every symbol the library exports
# is named in the NAME line of one of the pages, so that man finds it.
set -u
map=$1
shift
names=$(for page in "$@"; do
	sed -n '/^\.SH NAME/{n;p;}' "$page"
done | sed 's/\\-.*//' | tr ',' '\n' | tr -d ' ')
rc=0
for sym in $(sed -n '/global:/,/local:/p' "$map" | grep -o '[a-z_][a-z0-9_]*;' | tr -d ';'); do
	if ! printf '%s\n' "$names" | grep -qx "$sym"; then
		echo "FAIL: $sym is in no NAME line"
		rc=1
	fi
done
[ $rc = 0 ] && echo "every exported symbol has a NAME line"
exit $rc
