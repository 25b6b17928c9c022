#!/usr/bin/env bash
# Installs everything the test suite needs, then runs it. The README's test command.
# torch==2.13.0 is named explicitly so pip takes the CPU build when one is available locally
# instead of resolving a multi-GB CUDA build for the `train` extra.
set -euo pipefail
cd "$(dirname "$0")/.."
python -m pip install --quiet --disable-pip-version-check torch==2.13.0 -e '.[all]'
# Three test processes (pytest-xdist) on the two-core CI machine, a file each at a time: many
# tests wait (servers on loopback, programs run to their time limits, Ray's start-up), and with
# two processes a core sat idle through those waits (254 of 2,265 CPU-seconds of a cold run; 87
# with three, and the run 10% shorter on the same machine). The suite's own module fixtures and
# orders hold within a file; the files with slow end-to-end tests start first, in the order
# tests/conftest.py gives them (--no-loadscope-reorder: xdist would otherwise sort files by their
# number of tests). CKD_TEST_WORKERS=0 runs everything in this process.
# --durations: the suite's time budget (15 minutes cold on two cores) is watched from CI's log.
# nvcc's front-end check of cpu builds (validators/cpu/execution_spaces.py) doubles the build time
# of a program on this machine: off for the suite's hundreds of builds, on in its own tests
# (tests/validators/test_cpu_execution_spaces.py, which also passes every built-in solution).
export CKD_NVCC_CHECK="${CKD_NVCC_CHECK:-0}"
python -m pytest -n "${CKD_TEST_WORKERS:-3}" --dist loadfile --no-loadscope-reorder --durations=25 "$@"
