#!/bin/bash
# frm's main job on a built-in demo: build a tree of 200,000 files in a
# fresh temporary directory, remove it with frm -r --stats, show it is gone.
# usage: scripts/demo.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
frm=$(realpath "$build/tools/frm/frm")
base=/tmp
# /dev/shm (a tmpfs) when it has room for the tree: 1 GiB and 400,000
# inodes free (a container's is often 64 MiB)
if [ -w /dev/shm ] && [ $(($(stat -f -c '%a * %S' /dev/shm))) -ge $((1 << 30)) ] &&
	[ "$(stat -f -c %d /dev/shm)" -ge 400000 ]; then
	base=/dev/shm
fi
demo=$(mktemp -d "$base/frm-demo.XXXXXX")
trap 'rm -rf -- "$demo"' EXIT
echo "demo: creating 200,000 files in 20 directories under $demo"
python3 - "$demo" <<'PY'
import os, sys
root = os.path.join(sys.argv[1], "tree")
for d in range(20):
    p = os.path.join(root, "dir%02d" % d, "sub")
    os.makedirs(p)
    for i in range(10000):
        open(os.path.join(p if i % 2 else os.path.dirname(p), "file%05d" % i), "w").close()
PY
echo "demo: $frm -r --stats $demo/tree"
"$frm" -r --stats "$demo/tree"
if [ -e "$demo/tree" ]; then
	echo "demo: FAILED, $demo/tree is still there" >&2
	exit 1
fi
echo "demo: $demo/tree is gone"
if /usr/bin/python3 -c 'import fastrm' 2>/dev/null; then
	# the Python module, as installed by setup.sh
	mkdir -p "$demo/py/a/b" && touch "$demo/py/f" "$demo/py/a/g" "$demo/py/a/b/h"
	/usr/bin/python3 -c 'import fastrm, sys; fastrm.rmtree(sys.argv[1])' "$demo/py"
	if [ -e "$demo/py" ]; then
		echo "demo: FAILED, $demo/py is still there" >&2
		exit 1
	fi
	echo "demo: the Python module too: python3 -c 'import fastrm; fastrm.rmtree(PATH)' removed $demo/py"
fi
if command -v frm >/dev/null 2>&1; then
	echo "demo: frm is installed as $(command -v frm): try 'frm --help' and 'man frm'"
fi
