#!/bin/sh
# Experiment (doc/benchmarks.md, "io_uring against worker threads"): empty
# a flat directory with bench/fastrm-uring in mode serial.
# usage: URING=build/bench/fastrm-uring flat-serial.sh DIR   (a fastrm-bench cmd:)
exec "${URING:-fastrm-uring}" serial "$1"
