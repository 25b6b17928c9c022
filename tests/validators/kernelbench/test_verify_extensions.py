"""The KernelBench verifier with real load_inline answers on the cpu backend: the rules that
need custom kernels (a launch per forward, kernel dependence, poisoned memory) and a correct
answer through every checking variant. Real g++ builds in the build sandbox, real sandboxed
processes."""

from __future__ import annotations

from pathlib import Path

import pytest

from schemas import Status
from validators.kernelbench import verify
from validators.kernelbench.answer import emulation_available

pytestmark = pytest.mark.skipif(not emulation_available(),
                                reason="validators.cpu.torch_cuda (CUDA extensions on the CPU) "
                                       "is not available")

PROBLEM = """import torch
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

KERNEL = r'''
#include <torch/extension.h>

__global__ void leaky_kernel(const float* x, float* y, float slope, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < LIMIT) {
        float v = x[i];
        y[i] = v > 0.f ? v : v * slope;
    }
}

torch::Tensor leaky(torch::Tensor x, double slope) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "x must be float32");
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    int n = xc.numel();
    leaky_kernel<<<(n + 127) / 128, 128>>>(xc.data_ptr<float>(), y.data_ptr<float>(),
                                           (float)slope, n);
    return y;
}
'''


def answer(forward: str = "return ext.leaky(x, self.slope)", limit: str = "n",
           name: str = "leaky_ext") -> str:
    return (
        "import torch\nimport torch.nn as nn\nfrom torch.utils.cpp_extension import load_inline\n"
        f"SRC = {KERNEL.replace('LIMIT', limit)!r}\n"
        "ext = load_inline(name=" + repr(name) + ", cpp_sources='torch::Tensor leaky(torch::Tensor x, "
        "double slope);', cuda_sources=SRC, functions=['leaky'], verbose=False)\n\n"
        "class ModelNew(nn.Module):\n    def __init__(self, slope):\n        super().__init__()\n"
        "        self.slope = slope\n    def forward(self, x):\n"
        + "".join(f"        {ln}\n" for ln in forward.splitlines()))


def test_correct_load_inline_answer_passes_every_variant() -> None:
    times: dict[str, float] = {}
    r = verify(PROBLEM, answer(), timings=times)
    assert r.status == Status.PASSED, r.reason
    # One process per checking variant, and one more for the first (which learns what the
    # answer builds); none more where this process has run the answer before.
    assert times["answer_processes"] in (3, 4), times
    assert r.kernel_check.startswith("depends on the kernels")
    assert r.compile is not None and r.compile.ok
    assert {s for c in r.cases for s in c.schedules} == {"forward", "reverse"}


def test_torch_only_answer_is_rejected_unless_allowed() -> None:
    torch_only = ("import torch\nimport torch.nn as nn\n\nclass ModelNew(nn.Module):\n"
                  "    def __init__(self, slope):\n        super().__init__()\n"
                  "        self.slope = slope\n    def forward(self, x):\n"
                  "        return torch.where(x > 0, x, x * self.slope)\n")
    r = verify(PROBLEM, torch_only, fast=True)
    assert (r.status, r.rule) == (Status.REJECTED, "torch_fallback")
    assert verify(PROBLEM, torch_only, fast=True, allow_torch_only=True).status == Status.PASSED
    # Where no extension can run (no emulator, no GPU), torch-only answers are what is checked:
    # neither launch counting nor following the data applies.
    r = verify(PROBLEM, torch_only, fast=True, emulate=False)
    assert r.status == Status.PASSED, r.reason


def test_try_except_fallback_to_torch_is_rejected() -> None:
    # The kernel refuses float64 (TORCH_CHECK); the answer catches that and lets torch work.
    fallback = ("try:\n    return ext.leaky(x.double(), self.slope).float()\n"
                "except Exception:\n    return torch.where(x > 0, x, x * self.slope)")
    r = verify(PROBLEM, answer(fallback), fast=True)
    assert (r.status, r.rule) == (Status.REJECTED, "torch_fallback")


def test_kernel_whose_work_is_thrown_away_is_rejected() -> None:
    # A kernel is launched (the launch rule is met) but torch computes the returned output.
    decoy = "ext.leaky(x, self.slope)\nreturn torch.where(x > 0, x, x * self.slope)"
    r = verify(PROBLEM, answer(decoy), fast=True)
    assert (r.status, r.rule) == (Status.REJECTED, "torch_result"), r.reason
    assert "aten.where" in r.reason and "bit for bit" in r.reason


def test_kernel_that_only_copies_what_torch_computed_is_rejected() -> None:
    # The kernel does write the output (with the launch a no-op it would be poison, so the
    # no-launch run says "depends on the kernels"), but what it writes is torch's result: a
    # leaky ReLU of slope 1 is a copy.
    copy = "r = torch.where(x > 0, x, x * self.slope)\nreturn ext.leaky(r, 1.0)"
    r = verify(PROBLEM, answer(copy), fast=True)
    assert (r.status, r.rule) == (Status.REJECTED, "torch_result"), r.reason
    # The same copy, nudged by the kernel below the tolerance (negative values scaled by
    # 0.9999), is still torch's result: bit for bit on torch.rand's inputs, to the tolerance on
    # the signed ones.
    nudged = "r = torch.where(x > 0, x, x * self.slope)\nreturn ext.leaky(r, 0.9999)"
    r = verify(PROBLEM, answer(nudged), fast=True)
    assert (r.status, r.rule) == (Status.REJECTED, "torch_result"), r.reason
    assert "calls to the tolerance only" in r.reason
    assert verify(PROBLEM, answer(copy), fast=True, allow_torch_only=True).status == Status.PASSED


def test_torch_around_a_kernel_that_does_the_work_passes() -> None:
    # PyTorch before the kernel (a scaling of the input) and after it (the scaling undone):
    # the output comes from the kernel's result, which no torch op computed.
    r = verify(PROBLEM, answer("return ext.leaky(x * 2.0, self.slope) / 2.0"), fast=True)
    assert r.status == Status.PASSED, r.reason


def test_a_kernel_that_is_an_identity_on_one_input_set_passes() -> None:
    # A leaky ReLU changes nothing on get_inputs()'s torch.rand values, so there the output is
    # bit for bit torch's `x * 1.0`; the signed set shows the kernel's work.
    r = verify(PROBLEM, answer("return ext.leaky(x * 1.0, self.slope)"), fast=True)
    assert r.status == Status.PASSED, r.reason


def test_taking_the_dispatch_mode_off_the_stack_is_rejected() -> None:
    hide = ("from torch.utils._python_dispatch import _get_current_dispatch_mode_stack, _pop_mode\n"
            "while _get_current_dispatch_mode_stack():\n    _pop_mode()\n"
            "return ext.leaky(x, self.slope)")
    r = verify(PROBLEM, answer(hide), fast=True)
    assert (r.status, r.rule) == (Status.REJECTED, "torch_result"), r.reason
    assert "dispatch mode" in r.reason
    # Left on the stack but blinded: its dispatch swapped for a plain call.
    blind = ("from torch.utils._python_dispatch import _get_current_dispatch_mode_stack\n"
             "for m in _get_current_dispatch_mode_stack():\n"
             "    type(m).__torch_dispatch__ = lambda self, f, t, a=(), k=None: f(*a, **(k or {}))\n"
             "return ext.leaky(torch.where(x > 0, x, x * self.slope), 1.0)")
    r = verify(PROBLEM, answer(blind), fast=True)
    assert (r.status, r.rule) == (Status.REJECTED, "torch_result"), r.reason
    assert "altered" in r.reason


def test_torch_work_hidden_from_the_mode_is_still_seen() -> None:
    # Torch's helper that lifts every dispatch mode for a while, then puts them back.
    lifted = ("from torch.utils._python_dispatch import _disable_current_modes\n"
              "with _disable_current_modes():\n"
              "    r = torch.where(x > 0, x, x * self.slope)\n"
              "return ext.leaky(r, 1.0)")
    r = verify(PROBLEM, answer(lifted), fast=True)
    assert (r.status, r.rule) == (Status.REJECTED, "torch_result"), r.reason
    assert "dispatch mode" in r.reason
    # Another thread (the mode stack is per thread), from a pool kept across calls.
    threaded = ("import concurrent.futures\n"
                "global POOL\n"
                "POOL = globals().get('POOL') or concurrent.futures.ThreadPoolExecutor(1)\n"
                "r = POOL.submit(lambda: torch.where(x > 0, x, x * self.slope)).result()\n"
                "return ext.leaky(r, 1.0)")
    r = verify(PROBLEM, answer(threaded), fast=True)
    assert (r.status, r.rule) == (Status.REJECTED, "torch_result"), r.reason


def test_torch_called_from_the_extension_s_cpp_is_followed() -> None:
    # at::leaky_relu in the extension's C++, then a kernel that copies its result.
    source = KERNEL.replace("LIMIT", "n").replace(
        "auto xc = x.contiguous();", "auto xc = at::leaky_relu(x, slope).contiguous();").replace(
        "y[i] = v > 0.f ? v : v * slope;", "y[i] = v;")
    assert "at::leaky_relu" in source and "v * slope" not in source
    cpp_copy = (
        "import torch\nimport torch.nn as nn\nfrom torch.utils.cpp_extension import load_inline\n"
        f"SRC = {source!r}\n"
        "ext = load_inline(name='leaky_cpp_copy', cpp_sources='torch::Tensor leaky(torch::Tensor x, "
        "double slope);', cuda_sources=SRC, functions=['leaky'], verbose=False)\n\n"
        "class ModelNew(nn.Module):\n    def __init__(self, slope):\n        super().__init__()\n"
        "        self.slope = slope\n    def forward(self, x):\n"
        "        return ext.leaky(x, self.slope)\n")
    r = verify(PROBLEM, cpp_copy, fast=True)
    assert (r.status, r.rule) == (Status.REJECTED, "torch_result"), r.reason
    assert "aten.leaky_relu" in r.reason


def test_kernel_result_that_cannot_matter_is_rejected_by_the_no_launch_run() -> None:
    # The kernel's result enters far below the tolerance, and torch computes from the sum: no
    # torch result equals the output, but with every launch a no-op it still matches.
    tiny = ("z = x + 1e-5 * ext.leaky(x, self.slope)\n"
            "return torch.where(z > 0, z, z * self.slope)")
    r = verify(PROBLEM, answer(tiny), fast=True)
    assert (r.status, r.rule) == (Status.REJECTED, "kernels_not_used"), r.reason


def test_output_left_partly_uninitialised_fails_under_poison() -> None:
    # torch::empty_like whose last elements the kernel never writes: new memory is poisoned.
    r = verify(PROBLEM, answer(limit="n - 5"), fast=True)
    assert r.status == Status.FAILED, r.reason


FUNCTIONAL_PROBLEM = """import torch
import torch.nn as nn

def module_fn(x: torch.Tensor, slope: float) -> torch.Tensor:
    return torch.nn.functional.leaky_relu(x, slope)

class Model(nn.Module):
    def __init__(self, slope):
        super().__init__()
        self.slope = slope
    def forward(self, x, fn=module_fn):
        return fn(x, self.slope)

batch_size = 8
dim = 96

def get_inputs():
    return [torch.rand(batch_size, dim)]

def get_init_inputs():
    return [0.1]
"""


def test_sakana_extension_source_against_a_functional_problem() -> None:
    # The archive's form: one extension source whose PYBIND11_MODULE binds `forward`.
    source = (KERNEL.replace("LIMIT", "n").replace("torch::Tensor leaky(", "torch::Tensor forward(")
              + "\nPYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {\n"
                "    m.def(\"forward\", &forward, \"leaky relu\");\n}\n")
    r = verify(FUNCTIONAL_PROBLEM, source, fast=True)
    assert r.status == Status.PASSED, r.reason
    assert r.kernel_check.startswith("depends on the kernels")


# The bad answers of answers/bad (see its README) that need the emulator's own reasons, on their
# KernelBench level-1 problems, at small sizes (the scaling rule of sources/kernelbench).
REPO = Path(__file__).resolve().parents[3]
LEVEL1 = REPO.parent / "shared" / "data" / "kernelbench_level1"
BAD = Path(__file__).resolve().parent / "answers" / "bad"


def bad_verdict(answer_file: str, problem: str):
    found = sorted(LEVEL1.rglob(f"{problem}.py")) if LEVEL1.is_dir() else []
    if not found:
        pytest.skip("../shared/data/kernelbench_level1 is not here")
    return verify(found[0].read_text(), (BAD / answer_file).read_text(), max_elements=4096)


def test_a_read_racing_a_write_fails_as_schedule_dependent() -> None:
    # A tree reduction without __syncthreads(): reads race writes, which the lost-update
    # detector does not track; the two schedules' outputs differ, as a program's would.
    r = bad_verdict("race__4_Matrix_vector_multiplication_.py", "4_Matrix_vector_multiplication_")
    assert r.status == Status.FAILED, r.reason
    assert r.reason.startswith("schedule-dependent: case "), r.reason
    assert "between plain/forward and plain/reverse (a race or a missing barrier?)" in r.reason, r.reason


def test_reading_unwritten_shared_memory_is_an_uninitialised_read_naming_it() -> None:
    r = bad_verdict("uninit_shared__38_L1Norm_.py", "38_L1Norm_")
    assert r.status == Status.FAILED, r.reason
    assert r.reason.startswith("reads uninitialised memory: dynamic shared memory (kernel "
                               "l1_norm_kernel) (outputs change when device and shared memory "
                               "start as 0x5a instead of 0xa5: case "), r.reason


def test_bad_answers_that_let_torch_work_behind_a_launch() -> None:
    r = bad_verdict("torch_result__24_LogSoftmax.py", "24_LogSoftmax")
    assert (r.status, r.rule) == (Status.REJECTED, "torch_result"), r.reason
    r = bad_verdict("kernels_not_used__24_LogSoftmax.py", "24_LogSoftmax")
    # On an input set where the kernel's 1e-9-scaled term changes no bit of x, torch's result
    # is the input's own and the call is torch's: then `torch_result` (the answer changes what
    # computes from call to call) rejects it first. Which input sets do that depends on the
    # drawn inputs; both rules reject.
    assert r.status == Status.REJECTED and r.rule in ("kernels_not_used", "torch_result"), r.reason
