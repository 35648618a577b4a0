#!/bin/sh
# Experiment (doc/benchmarks.md, "io_uring against worker threads"): empty
# a flat directory with bench/fastrm-uring in mode uring:8.
# usage: URING=build/bench/fastrm-uring flat-uring-8.sh DIR   (a fastrm-bench cmd:)
exec "${URING:-fastrm-uring}" uring:8 "$1"
