#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# check-man.sh SRC BUILD PAGE...: each man page names no path inside the
# source or the build tree (an installed page must not carry the builder's
# directories), and groff renders it with every warning on (-ww) without
# printing one.
set -u
src=$1 build=$2
shift 2
rc=0
for page in "$@"; do
	for tree in "$src" "$build"; do
		if grep -n -F -- "$tree" "$page"; then
			echo "FAIL: $page names a path in $tree (lines above)"
			rc=1
		fi
	done
	warnings=$(groff -ww -z -man "$page" 2>&1)
	if [ -n "$warnings" ]; then
		printf 'FAIL: groff warns on %s:\n%s\n' "$page" "$warnings"
		rc=1
	fi
	[ $rc -eq 0 ] && echo "ok: $page"
done
exit $rc
