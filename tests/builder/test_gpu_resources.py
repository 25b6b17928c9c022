"""Issue 22, finding 12: a validation task on `cuda` holds a share of a GPU, not a whole one, so
nvcc builds (most of a check) overlap other checks' runs; the share is the operator's."""

from __future__ import annotations

import subprocess
import sys

import pytest

from builder.config import BuildConfig
from builder.pipeline import validation_resources


def test_validation_tasks_ask_for_a_share_of_a_gpu_on_cuda_only():
    assert validation_resources("cuda", BuildConfig())["validate"].num_gpus == 0.25
    assert validation_resources("cuda", BuildConfig(gpu_per_validation=1.0))["validate"].num_gpus == 1.0
    assert validation_resources("cpu", BuildConfig())["validate"].num_gpus == 0.0


@pytest.mark.parametrize("share", ["0", "1.5", "nan"])
def test_a_share_outside_zero_to_one_is_refused_by_name(tmp_path, share):
    out = subprocess.run([sys.executable, "-m", "builder", "run", "--executor", "local",
                          "--out", str(tmp_path / "o"), "--gpu-per-validation", share,
                          "--no-progress"], capture_output=True, text=True, timeout=300)
    assert out.returncode != 0 and f"--gpu-per-validation {float(share)}" in out.stderr, out.stderr
