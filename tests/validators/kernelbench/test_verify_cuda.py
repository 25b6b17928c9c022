"""The cuda backend's path for KernelBench answers, as far as a machine without a GPU can show
it: the answer's real sandboxed process (real torch, real torch.utils.cpp_extension, the cuda
sandbox profile), the settings it is started with, and that a missing GPU is `needs_gpu`, never
a verdict. The GPU half (builds with nvcc, poisoned allocations) runs in scripts/gpu_check.py."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from schemas import Status
from validators.kernelbench import answer as answer_mod
from validators.kernelbench import gpu, verify
from validators.kernelbench.reference import run_reference
from validators.kernelbench.verify import _judge_run, plan_variants
from validators.sandbox import Limits

PROBLEM = """import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, slope):
        super().__init__()
        self.slope = slope
    def forward(self, x):
        return torch.nn.functional.leaky_relu(x, self.slope)

batch_size = 4
dim = 16

def get_inputs():
    return [torch.rand(batch_size, dim)]

def get_init_inputs():
    return [0.1]
"""

TORCH_ONLY = ("import torch\nimport torch.nn as nn\n\nclass ModelNew(nn.Module):\n"
              "    def __init__(self, slope):\n        super().__init__()\n"
              "        self.slope = slope\n    def forward(self, x):\n"
              "        return torch.where(x > 0, x, x * self.slope)\n")

# What the answer's process was given, printed at import (the process stops after the import
# here: CUDA does not start without a GPU). Every probe is guarded: a failure is a finding.
SPY = r'''import json, os, resource, subprocess, sys
import torch
import torch.utils.cpp_extension as ce
facts = {}
def probe(name, fn):
    try:
        facts[name] = fn()
    except BaseException as exc:
        facts[name] = "raised %s: %s" % (type(exc).__name__, exc)
probe("load_inline", lambda: ce.load_inline.__module__ + "." + ce.load_inline.__qualname__)
probe("load", lambda: ce.load.__module__ + "." + ce.load.__qualname__)
probe("is_available", lambda: torch.cuda.is_available.__module__)
probe("shim_loaded", lambda: "validators.cpu.torch_cuda" in sys.modules)
probe("env", lambda: {k: v for k, v in os.environ.items()
                      if k.startswith(("CUDA", "TORCH_", "CUDASHIM", "MAX_JOBS"))})
probe("cwd", lambda: os.path.realpath(os.getcwd()))
probe("as_limit", lambda: resource.getrlimit(resource.RLIMIT_AS)[0])
probe("ninja", lambda: subprocess.run(["ninja", "--version"], capture_output=True).returncode)
probe("nvcc", lambda: subprocess.run(["nvcc", "--version"], capture_output=True).returncode)
probe("header", lambda: len(open(os.path.join(os.environ["CUDA_HOME"], "include",
                                              "cuda_runtime.h")).read()) > 0)
def sock():
    import socket
    socket.socket(socket.AF_UNIX)
    return "opened"
probe("socket", sock)
print("SPY " + json.dumps(facts), file=sys.stderr, flush=True)
''' + TORCH_ONLY


@pytest.fixture(scope="module")
def groups():
    return run_reference(PROBLEM, [1, 2])


def needs_toolkit() -> None:
    if gpu.toolkit_root() is None:
        pytest.skip("no CUDA toolkit (nvcc) here: the profile exposes it")


def test_no_gpu_is_needs_gpu_naming_why_never_a_verdict(tmp_path: Path) -> None:
    r = verify(PROBLEM, TORCH_ONLY, backend="cuda", fast=True)
    assert r.status == Status.NEEDS_GPU, r.reason
    assert r.reason.startswith("the cuda backend needs a GPU: ")
    assert r.reason.removeprefix("the cuda backend needs a GPU: ") == gpu.gpu_unavailable()
    assert not r.cases
    # The CLI: exit 1 with the same result (as a program's needs_gpu).
    (tmp_path / "p.py").write_text(PROBLEM)
    (tmp_path / "a.py").write_text(TORCH_ONLY)
    proc = subprocess.run([sys.executable, "-m", "validators", "check", "--task",
                           str(tmp_path / "p.py"), "--program", str(tmp_path / "a.py"),
                           "--backend", "cuda", "--json", "--fast"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    assert data["status"] == "needs_gpu" and data["reason"] == r.reason


def test_a_triton_answer_is_not_refused_up_front_on_cuda() -> None:
    # Triton runs on a GPU: on cuda only a missing GPU stops it, not the cpu backend's refusal.
    triton = "import triton\nimport triton.language as tl\n" + TORCH_ONLY
    assert "triton" in verify(PROBLEM, triton, backend="cpu").reason
    r = verify(PROBLEM, triton, backend="cuda")
    assert r.status == Status.NEEDS_GPU and "triton" not in r.reason


def test_gpu_variants_are_the_poison_bytes_without_emulator_schedules() -> None:
    thorough = plan_variants(fast=False, emulate=False, gpu=True)
    assert [(v.build, v.schedule) for v in thorough] == [("plain", "device")] * 2
    assert len({v.poison for v in thorough}) == 2 and None not in {v.poison for v in thorough}
    assert len(plan_variants(fast=True, emulate=False, gpu=True)) == 1


def test_the_gpu_profile_is_the_cuda_backends_plus_torchs_builder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    drivers = tmp_path / "driver"
    drivers.mkdir()
    monkeypatch.setenv("CKD_CUDA_DRIVER_DIRS", str(drivers))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3")
    base = Limits(memory_bytes=16 << 30)
    p = gpu.gpu_profile(tmp_path / "work", base, arch="9.0")
    assert p.limits.memory_bytes is None and p.limits.gpu == "3"
    assert p.limits.wall_seconds == base.wall_seconds
    assert p.env["CUDA_VISIBLE_DEVICES"] == "3" and p.env["CUDA_CACHE_DISABLE"] == "1"
    assert p.env["TORCH_EXTENSIONS_DIR"] == str(tmp_path / "work" / "build" / "torch_extensions")
    assert p.env["TORCH_CUDA_ARCH_LIST"] == "9.0"
    assert p.env["LD_LIBRARY_PATH"] == str(drivers) and drivers in p.expose
    root = gpu.toolkit_root()
    if root is not None:
        assert p.env["CUDA_HOME"] == str(root) and root in p.expose
        assert p.env["PATH"].split(":")[0] == str(root / "bin")


def test_poison_block_covers_the_largest_tensor_within_bounds() -> None:
    assert gpu.poison_large_bytes(0) == gpu.POISON_LARGE_MIN
    assert gpu.poison_large_bytes(100 << 20) == 400 << 20
    assert gpu.poison_large_bytes(10 << 30) == gpu.POISON_LARGE_MAX


def test_the_answer_process_gets_real_torch_and_the_cuda_profile(groups) -> None:
    needs_toolkit()
    run = answer_mod.run_answer(SPY, groups, poison=0xA5, emulate=False, gpu=True)
    # No GPU here: CUDA did not start, which ends the run without a verdict.
    assert run.status == "no_gpu", (run.status, run.reason)
    line = next(ln for ln in run.stderr_tail.splitlines() if ln.startswith("SPY "))
    facts = json.loads(line.removeprefix("SPY "))
    # Nothing replaced: torch's own builder and torch.cuda.
    assert facts["load_inline"] == "torch.utils.cpp_extension.load_inline"
    assert facts["load"] == "torch.utils.cpp_extension.load"
    assert facts["is_available"] == "torch.cuda" and facts["shim_loaded"] is False
    env = facts["env"]
    assert not any(k.startswith("CUDASHIM") for k in env)
    assert env["CUDA_CACHE_DISABLE"] == "1" and env["CUDA_VISIBLE_DEVICES"]
    assert env["TORCH_EXTENSIONS_DIR"].startswith(facts["cwd"] + "/")
    # The cuda backend's profile: no address-space limit (the driver maps a huge range).
    assert facts["as_limit"] == resource.RLIM_INFINITY
    # What torch's builder needs: ninja and nvcc run, the toolkit's headers are readable.
    assert facts["ninja"] == 0 and facts["nvcc"] == 0 and facts["header"] is True
    # The rest of the guard stands.
    assert str(facts["socket"]).startswith("raised PermissionError")
    # The probe answered and CUDA then did not start in the process: needs_gpu, no verdict.
    status, _, reason = _judge_run(run, groups, {}, count_launches=False, atol=None, rtol=None)
    assert status == Status.NEEDS_GPU
    assert reason.startswith("the GPU the probe found did not answer in the answer's process")


def test_gpu_check_covers_every_answer_with_the_cpu_verdicts_the_readme_states(
        tmp_path: Path) -> None:
    # scripts/gpu_check.py runs the cpu tests' answers on cuda: each must have an expectation,
    # and the cpu verdict it compares against is the one answers/bad/README.md states.
    import importlib.util

    root = Path(__file__).resolve().parents[3]
    spec = importlib.util.spec_from_file_location("gpu_check", root / "scripts" / "gpu_check.py")
    assert spec is not None and spec.loader is not None
    gc = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gc)
    answers = gc.KB_ANSWERS
    stems = {a.stem for a in answers.glob("*.py")} | {
        a.stem.partition("__")[2] for a in (answers / "bad").glob("*.py")}
    for stem in stems:
        (tmp_path / f"{stem}.py").write_text("")
    pairs = gc.kb_pairs(tmp_path)
    assert len(pairs) == len(list(answers.glob("*.py"))) + len(list((answers / "bad").glob("*.py")))
    readme = (answers / "bad" / "README.md").read_text()
    for name, _, answer, defence in pairs:
        if not defence:
            assert gc.kb_expected(defence)[0] == "passed"
            continue
        assert defence in gc.KB_EXPECTED, name
        row = next(ln for ln in readme.splitlines() if f"`{answer.name}`" in ln)
        cpu_verdict = row.split("|")[3].strip().split()[0].strip("`,:")
        assert gc.KB_EXPECTED[defence][0] == cpu_verdict, (name, row)
