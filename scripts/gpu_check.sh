#!/usr/bin/env bash
# What only a GPU can confirm about the cuda backend, in one command; prints a table.
# Elsewhere it says "no GPU" and exits 0. See scripts/gpu_check.py for the checks.
set -euo pipefail
cd "$(dirname "$0")/.."
exec python scripts/gpu_check.py "$@"
