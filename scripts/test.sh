#!/usr/bin/env bash
# Installs everything the test suite needs, then runs it. The README's test command.
# torch==2.13.0 is named explicitly so pip takes the CPU build when one is available locally
# instead of resolving a multi-GB CUDA build for the `train` extra.
set -euo pipefail
cd "$(dirname "$0")/.."
python -m pip install --quiet --disable-pip-version-check torch==2.13.0 -e '.[all]'
# Two test processes (pytest-xdist), a file each at a time: the suite's own module fixtures and
# orders hold within a file; the files with slow end-to-end tests start first, in the order
# tests/conftest.py gives them (--no-loadscope-reorder: xdist would otherwise sort files by their
# number of tests). CKD_TEST_WORKERS=0 runs everything in this process.
python -m pytest -n "${CKD_TEST_WORKERS:-2}" --dist loadfile --no-loadscope-reorder "$@"
