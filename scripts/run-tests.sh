#!/bin/bash
# Every test suite: the normal build (including the Debian packages, suite
# 'pkg'), then the same suites built with AddressSanitizer and
# UndefinedBehaviorSanitizer (not 'pkg': the packages are built with the
# distribution's flags), then the unit suite
# under valgrind, then the threaded code (suite 'threads': the unlinker,
# the tree removal pool, frm --jobs) under ThreadSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."

# The tests make their trees under $TMPDIR (else /dev/shm when it has room,
# else /tmp: tests/common/fixture.c).  As root, without TMPDIR, they get a
# tmpfs of their own, so that neither a small /dev/shm (64 MiB in many
# containers) nor what else uses it can fill it under them.
if [ -z "${TMPDIR:-}" ] && [ "$(id -u)" = 0 ]; then
	tmp=$(mktemp -d /tmp/fastrm-tests.XXXXXX)
	if mount -t tmpfs -o mode=1777 fastrm-tests "$tmp" 2>/dev/null; then
		trap 'umount "$tmp" && rmdir "$tmp"' EXIT
		export TMPDIR=$tmp
		echo "run-tests: test trees in a tmpfs of their own at $tmp"
	else
		rmdir "$tmp"
	fi
fi
[ -d build ] || meson setup build
meson compile -C build
meson test -C build --print-errorlogs

[ -d build-san ] || meson setup build-san -Db_sanitize=address,undefined \
	-Db_lundef=false -Dc_args=-fno-sanitize-recover=all
meson compile -C build-san
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	meson test -C build-san --no-suite pkg --print-errorlogs

meson test -C build --setup=valgrind --suite unit --suite api --no-suite slow \
	--print-errorlogs

[ -d build-tsan ] || meson setup build-tsan -Db_sanitize=thread -Dgnulib_ref=disabled
meson compile -C build-tsan
TSAN_OPTIONS=halt_on_error=1 \
	meson test -C build-tsan --suite threads --print-errorlogs
