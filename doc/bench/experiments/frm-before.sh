#!/bin/sh
# Another build of frm at its default, for a side-by-side run against the
# current one (doc/benchmarks.md, "Trees: a window around each small
# directory": the build before the windows, commit 50dcec3).
# usage: FRM_BEFORE=/path/to/old/frm frm-before.sh DIR   (a fastrm-bench cmd:)
exec "${FRM_BEFORE:?set FRM_BEFORE to the other build's frm}" -rf "$@"
