"""The AI CUDA Engineer archive kept verbatim (issue 24, item 4): a local Parquet file in the
archive's schema goes through a real build; each `Correct` row's extension is verified as it is
by the KernelBench verifier (real g++ builds, real sandboxed processes), the passing ones are
kept up to `--per-task`, and the manifest and the report count what became of every row.

The correct extension is the Sakana-form source that tests/validators/kernelbench verifies, so
the content-addressed build cache serves both; one wrong source and one second passing attempt
are the only new builds."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from hf_fixtures import SAKANA_SCHEMA, _sakana_row, write_table

from builder.cli import main
from builder.item import Item
from builder.stages.archive import choose_per_task
from schemas import Provenance, RawRecord, Status, ValidationResult
from sources.hf.sakana import FORM, ArchiveRowError, archive_problem
from validators.kernelbench.answer import emulation_available


def _extension_tests():
    path = Path(__file__).resolve().parents[1] / "validators" / "kernelbench" / "test_verify_extensions.py"
    spec = importlib.util.spec_from_file_location("kb_extension_tests_sakana", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# Exactly the source test_verify_extensions.py checks, in the archive's form (shared build).
KERNEL = _extension_tests().KERNEL


# A distinct second attempt at the same task (another kernel body: dedup keeps it apart).
STRIDED = r'''
#include <torch/extension.h>

__global__ void leaky_strided(const float* __restrict__ x, float* __restrict__ y, float slope,
                              int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        y[i] = fmaxf(x[i], 0.f) + slope * fminf(x[i], 0.f);
    }
}

torch::Tensor forward(torch::Tensor x, double slope) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    const int n = xc.numel();
    leaky_strided<<<4, 64>>>(xc.data_ptr<float>(), y.data_ptr<float>(), (float)slope, n);
    return y;
}
'''


def extension(limit: str = "n", strided: bool = False) -> str:
    src = (STRIDED if strided else
           KERNEL.replace("LIMIT", limit).replace("torch::Tensor leaky(", "torch::Tensor forward("))
    return src + ("\nPYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {\n"
                  "    m.def(\"forward\", &forward, \"leaky relu\");\n}\n")


FUNCTIONAL = """import torch
import torch.nn as nn

def module_fn(x: torch.Tensor, slope: float) -> torch.Tensor:
    return torch.nn.functional.leaky_relu(x, slope)

class Model(nn.Module):
    def __init__(self, slope):
        super().__init__()
        self.slope = slope
    def forward(self, x, fn=module_fn):
        return fn(x, self.slope)
"""

MODULE = """import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, slope):
        super().__init__()
        self.slope = slope
    def forward(self, x):
        return torch.nn.functional.leaky_relu(x, self.slope)

batch_size = 8
dim = 96

def get_inputs():
    return [torch.rand(batch_size, dim)]

def get_init_inputs():
    return [0.1]
"""


def row(kernel: str, cuda: str, correct: bool, runtime: float, **kw: object) -> dict:
    return _sakana_row(1, 20, "20_LeakyReLU", kernel, cuda, MODULE, correct, 0.0,
                       functional=FUNCTIONAL, runtime=runtime, **kw)


def test_problem_is_the_functional_reference_at_the_modules_sizes() -> None:
    functional_own_sizes = FUNCTIONAL + "\nbatch_size = 4096\ndim = 393216\n"
    problem = archive_problem(functional_own_sizes, MODULE)
    ns: dict = {}
    exec(compile(problem, "problem", "exec"), ns)  # noqa: S102 (our own fixture text)
    assert (ns["batch_size"], ns["dim"]) == (8, 96)
    assert list(ns["get_inputs"]()[0].shape) == [8, 96] and ns["get_init_inputs"]() == [0.1]
    # The functional Model (forward takes fn=) stays, the module's own Model does not replace it.
    assert "fn" in ns["Model"].forward.__code__.co_varnames
    with pytest.raises(ArchiveRowError, match="PyTorch_Code_Functional defines no module_fn"):
        archive_problem(MODULE, MODULE)
    with pytest.raises(ArchiveRowError, match="PyTorch_Code_Module defines no get_inputs"):
        archive_problem(FUNCTIONAL, "import torch\n")


def _passing(rid: str, task: str, runtime: str) -> Item:
    raw = RawRecord(id=rid, text="x", provenance=Provenance(source="hf", origin=rid, license="MIT"),
                    meta={"form": FORM, "level": "1", "task_id": task, "cuda_runtime": runtime})
    return Item(raw=raw, validation=ValidationResult(task="t", backend="cpu",
                                                     status=Status.PASSED))


def test_per_task_keeps_the_fastest_recorded_passing_attempts_whatever_the_order() -> None:
    items = [_passing("a", "1", "0.5"), _passing("b", "1", ""), _passing("c", "1", "0.2"),
             _passing("d", "1", "nan"), _passing("e", "2", "9.0"), _passing("f", "1", "0.3")]
    for order in (items, items[::-1]):
        for it in order:
            it.rejection = None
        assert choose_per_task(list(order), 2) == 3
        assert sorted(it.id for it in order if it.alive) == ["c", "e", "f"]
        dropped = {it.id: it.rejection for it in order if not it.alive}
        assert {r.reason for r in dropped.values()} == {"per_task_limit"}
        assert "c (0.2 ms), f (0.3 ms)" in dropped["a"].detail


@pytest.mark.slow  # two new extension builds when cold: 8.7 min wall, 4 CPU-min on 2 busy cores
@pytest.mark.skipif(not emulation_available(),
                    reason="validators.cpu.torch_cuda (CUDA extensions on the CPU) is not available")
def test_archive_rows_are_verified_as_they_are_and_counted(tmp_path, capsys) -> None:
    rows = [
        row("leaky_base", extension(), True, 0.020),
        # The archive's own verdict: refused before anything runs.
        row("leaky_wrong_edit_1", extension(), False, 0.010, error="Output mismatch"),
        # Marked correct, but the last five outputs are never written (poisoned memory).
        row("leaky_short_edit_2", extension(limit="n - 5"), True, 0.005),
        # A second distinct passing attempt, recorded faster: with --per-task 1 it wins.
        row("leaky_strided_base", extension(strided=True), True, 0.015),
        # The first attempt again under another name, recorded slower: not distinct.
        row("leaky_copy_edit_3", extension(), True, 0.030),
    ]
    path = write_table(tmp_path / "archive" / "level_1.parquet", rows, SAKANA_SCHEMA)
    out = tmp_path / "dataset"
    code = main(["run", "--sources", "hf", "--hf-dataset", str(path), "--per-task", "1",
                 "--backend", "cpu", "--quick", "--executor", "local", "--no-progress",
                 "--out", str(out)])
    capsys.readouterr()
    assert code == 0
    rejections = {r["id"].rsplit("/", 1)[-1]: r
                  for r in map(json.loads, (out / "rejections.jsonl").read_text().splitlines())}
    assert rejections["1"]["reason"] == "not_correct"  # refused rows keep their row key
    assert rejections["leaky_short_edit_2"]["reason"] == "validation_failed"
    assert rejections["leaky_copy_edit_3"]["reason"] == "duplicate_exact"
    assert rejections["leaky_base"]["reason"] == "per_task_limit"
    assert "leaky_strided_base" in rejections["leaky_base"]["detail"]

    kept = pq.read_table(out / "data" / "train-00000-of-00001.parquet").to_pylist()
    assert [r["id"] for r in kept] == ["hf/sakana/L1/20/leaky_strided_base"]
    assert kept[0]["response"] == extension(strided=True)  # verbatim
    assert "module_fn" in kept[0]["prompt"]

    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["archive"] == {
        "rows": 5, "refused:not_correct": 1, "not_verified:duplicate_exact": 1,
        "verified": 3, "passed": 2, "failed:failed": 1, "per_task_limit": 1, "kept": 1,
    }
    report = (out / "build_report.md").read_text()
    assert "## AI CUDA Engineer archive" in report and "| failed:failed | 1 |" in report
