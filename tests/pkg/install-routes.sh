#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# install-routes.sh SRC VERSION: the ways in that README gives, each from a
# copy of the source tree in a directory of this test's own (mktemp):
#  1. a build without the tests (-Dtests=disabled: cmocka is not needed)
#     installed into a prefix of a plain user's (as uid 65534 when root),
#     whose frm then removes a tree and whose pkg-config file builds a
#     program against the installed library;
#  2. the Python module into a venv (python3 -m venv --system-site-packages,
#     pip install --no-build-isolation: meson-python, pyproject.toml):
#     dist-info whose version is VERSION, the module imports from the venv,
#     mypy type-checks a program that uses it (where mypy is), and
#     CPython's own TestRmTree passes with shutil.rmtree replaced.
# Skips (77), saying why, where a tool a route needs is missing.
set -u
src=$1
version=$2
fail() { echo "FAIL: $*"; exit 1; }
for tool in meson ninja cc pkg-config git; do
	command -v "$tool" >/dev/null 2>&1 || { echo "SKIP: $tool is missing"; exit 77; }
done
git -C "$src" rev-parse --git-dir >/dev/null 2>&1 ||
	{ echo "SKIP: $src is not a git checkout (its files are copied)"; exit 77; }
work=$(mktemp -d "${TMPDIR:-/tmp}/fastrm-routes.XXXXXX")
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
# the files git knows (committed, or new and not ignored): no build tree
mkdir "$work/src"
(cd "$src" && git ls-files -z --cached --others --exclude-standard) |
	(cd "$src" && tar --null -T - -cf -) | tar -C "$work/src" -xf - ||
	fail "cannot copy the source tree"

# 1. a plain user's prefix, no tests
as_user=""
if [ "$(id -u)" = 0 ]; then
	command -v setpriv >/dev/null 2>&1 || { echo "SKIP: setpriv is missing"; exit 77; }
	as_user="setpriv --reuid=65534 --regid=65534 --clear-groups"
fi
mkdir "$work/user"
[ -z "$as_user" ] || chown -R 65534:65534 "$work/user" "$work/src"
u=$work/user
$as_user env HOME="$u" sh -c '
	set -e
	cd "$1"
	meson setup b "$2" -Dtests=disabled -Dpython=disabled -Dmpi=disabled \
		-Dgnulib_ref=disabled --prefix="$1/prefix" >setup.log 2>&1
	grep -q "tests: off (-Dtests=disabled)" setup.log
	meson compile -C b >compile.log 2>&1
	meson install -C b --quiet >install.log 2>&1
	' sh "$u" "$work/src" || {
	tail -20 "$u"/*.log; fail "a plain user's build and install into a prefix"; }
prefix=$u/prefix
frm=$prefix/bin/frm
[ -x "$frm" ] || fail "no frm in the prefix"
pc=$(find "$prefix" -name libfastrm.pc | head -n 1)
[ -n "$pc" ] || fail "no libfastrm.pc in the prefix"
libdir=$(dirname "$(dirname "$pc")")
mkdir -p "$u/tree/a/b" && touch "$u/tree/a/f" "$u/tree/a/b/g"
[ -z "$as_user" ] || chown -R 65534:65534 "$u/tree"
$as_user "$frm" -r "$u/tree" || fail "the prefix's frm -r"
[ ! -e "$u/tree" ] || fail "the prefix's frm left the tree"
PKG_CONFIG_PATH=$(dirname "$pc") cc -o "$u/consumer" "$work/src/tests/pkg/consumer.c" \
	$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --cflags --libs libfastrm) ||
	fail "a program built against the prefix's library"
mkdir -p "$u/t2/x" && touch "$u/t2/x/y"
LD_LIBRARY_PATH=$libdir "$u/consumer" "$u/t2" >/dev/null || fail "the consumer program"
echo "ok: a plain user's build without the tests, installed into $prefix"

# 2. the Python module into a venv, with pip
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3)
if ! "$py" -c 'import mesonpy, venv, ensurepip' 2>/dev/null; then
	echo "SKIP: meson-python or venv missing for $py (python3-mesonpy, python3-venv)"
	exit 77
fi
"$py" -m venv --system-site-packages "$work/venv" || fail "python3 -m venv"
v=$work/venv/bin
mkdir "$work/pysrc"
(cd "$src" && git ls-files -z --cached --others --exclude-standard) |
	(cd "$src" && tar --null -T - -cf -) | tar -C "$work/pysrc" -xf -
"$v/pip" install --no-build-isolation --no-index "$work/pysrc" >"$work/pip.log" 2>&1 ||
	{ tail -30 "$work/pip.log"; fail "pip install --no-build-isolation ."; }
cd "$work" || exit 1
got=$(env -u PYTHONPATH "$v/python" -c '
import importlib.metadata, os, sys, fastrm
assert fastrm.__file__.startswith(sys.prefix), fastrm.__file__
print(importlib.metadata.version("fastrm"), fastrm.__version__)') ||
	fail "import fastrm in the venv"
[ "$got" = "$version $version" ] ||
	fail "the venv's fastrm says '$got', the library is $version"
echo "ok: pip install into a venv: fastrm $version, dist-info and module"
if command -v mypy >/dev/null 2>&1; then
	cat >"$work/use.py" <<'EOF'
import fastrm
fastrm.rmtree("does-not-exist", ignore_errors=True, jobs=2, order="auto")
r = fastrm.remove(["a", "b"], missing_ok=True)
removed: int = r.stats["removed"]
for path, err in r.left:
    print(path, err.errno)
EOF
	cat >"$work/misuse.py" <<'EOF'
import fastrm
fastrm.rmtree("x", jobs="many")
EOF
	env -u PYTHONPATH mypy --no-incremental --python-executable "$v/python" "$work/use.py" ||
		fail "mypy on a program that uses fastrm"
	if env -u PYTHONPATH mypy --no-incremental --python-executable "$v/python" \
		"$work/misuse.py" >/dev/null; then
		fail "mypy found nothing wrong with jobs=\"many\": the types are not seen"
	fi
	echo "ok: mypy checks programs against the venv's fastrm"
else
	echo "(mypy is not installed: the types are not checked)"
fi
env -u PYTHONPATH "$v/python" "$work/pysrc/tests/python/cpython_shutil.py"
rc=$?
[ "$rc" = 0 ] || [ "$rc" = 77 ] || fail "CPython's TestRmTree with the venv's fastrm"
echo "ok: the venv's fastrm passes CPython's TestRmTree (exit $rc)"
exit 0
