#!/bin/sh
# usage: check-exports.sh LIBRARY.so libfastrm.sym
# Fails unless the library defines and exports exactly the global symbols
# that the version script lists.
set -eu
lib=$1 map=$2
want=$(sed -n '/global:/,/local:/p' "$map" | grep -o '[a-z_][a-z0-9_]*;' | tr -d ';' | sort)
have=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRVW]$/ { sub(/@.*/, "", $3); print $3 }' | grep -v '^FASTRM_' | sort)
if [ "$want" != "$have" ]; then
	echo "exported symbols differ from $map:"
	printf '%s\n' "$want" > "${TMPDIR:-/tmp}/want.$$"
	printf '%s\n' "$have" | diff "${TMPDIR:-/tmp}/want.$$" - || true
	rm -f "${TMPDIR:-/tmp}/want.$$"
	exit 1
fi
echo "exports match: $(echo $have)"
