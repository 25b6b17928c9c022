"""The answer's process after forward returns, and what it can learn about its run: code the
answer leaves behind (a replaced function, a mode on the stack, an exit handler) must not run
between forward and the harness's judgement, nor change what the harness wrote; the answer must
not tell the race build from the plain one; launch counts are the runtime's own, per call.
Real sandboxed processes, real load_inline answers built on the cpu backend."""

from __future__ import annotations

import json
import re

import pytest

# Beside this file (pytest puts a test's folder on sys.path): the problem and answer maker.
from test_verify_extensions import PROBLEM, answer

from schemas import Status
from validators.engine import POISON_BYTES
from validators.kernelbench import verify
from validators.kernelbench.answer import emulation_available, run_answer
from validators.kernelbench.reference import run_reference

pytestmark = pytest.mark.skipif(not emulation_available(),
                                reason="validators.cpu.torch_cuda (CUDA extensions on the CPU) "
                                       "is not available")

LEAKY = "torch.nn.functional.leaky_relu"

# The kernel copies x (slope 1: right only where x >= 0); torch puts the leaky ReLU into the
# output later, from code the answer left for the harness to run after forward.
COPY_THEN_LATER = ("y = ext.leaky(x, 1.0)\nPENDING.append((y, self.slope))\nreturn y")
LATER = f"""
PENDING = []
def _finish_later():
    while PENDING:
        y, s = PENDING.pop()
        y.copy_({LEAKY}(y, s))
"""

AFTER_FORWARD = {
    # The red team's: the harness synchronised through the function the answer can replace.
    "cuda_synchronize": LATER + (
        "def _sync(device=None):\n    _finish_later()\n"
        "torch.cuda.synchronize = _sync\n"),
    # The context manager the harness called forward in, looked up on torch at each call.
    "no_grad_exit": LATER + (
        "_real_no_grad = torch.no_grad\n"
        "class _NoGrad(_real_no_grad):\n"
        "    def __exit__(self, *exc):\n        _finish_later()\n"
        "        return super().__exit__(*exc)\n"
        "torch.no_grad = _NoGrad\n"),
    # A method of torch.Tensor the harness calls on the output to save it.
    "tensor_method": LATER + (
        "_real_detach = torch.Tensor.detach\n"
        "def _detach(self):\n    _finish_later()\n    return _real_detach(self)\n"
        "torch.Tensor.detach = _detach\n"),
    # A builtin the harness calls after forward, replaced in the builtins module.
    "builtin": LATER + (
        "import builtins\n_real_enumerate = builtins.enumerate\n"
        "def _enumerate(*a, **k):\n    _finish_later()\n    return _real_enumerate(*a, **k)\n"
        "builtins.enumerate = _enumerate\n"),
    # A tracer set in forward: it runs in every function the harness calls afterwards.
    "tracer": LATER + (
        "import sys\n"
        "def _tracer(frame, event, arg):\n"
        "    if PENDING and not torch._C._len_torch_dispatch_stack():\n"
        "        _finish_later()\n"
        "    return _tracer\n"),
    # A TorchFunctionMode left on the stack: it sees every torch call the harness makes.
    "function_mode": LATER + (
        "from torch.overrides import TorchFunctionMode\n"
        "class _Later(TorchFunctionMode):\n"
        "    def __torch_function__(self, func, types, args=(), kwargs=None):\n"
        "        if PENDING and not torch._C._len_torch_dispatch_stack():\n"
        "            _finish_later()\n"
        "        return func(*args, **(kwargs or {}))\n"
        "_Later().__enter__()\n"),
}


@pytest.mark.parametrize("hook", sorted(AFTER_FORWARD))
def test_code_left_to_run_after_forward_cannot_make_the_output(hook: str) -> None:
    forward = COPY_THEN_LATER
    if hook == "tracer":
        forward = "sys.settrace(_tracer)\n" + forward
    r = verify(PROBLEM, answer(forward).replace(
        "\nclass ModelNew", AFTER_FORWARD[hook] + "\nclass ModelNew", 1), fast=True)
    # The kernel's copy is wrong on the N(0, 1) inputs; torch's fix, if it ran at all, ran
    # where the harness sees it.
    assert r.status in (Status.FAILED, Status.REJECTED), (hook, r.status, r.reason)


# The red team's second answer: torch computes, the kernel copies, and a hook run after the
# call's integrity check swaps the watch's `nearest` for one that finds nothing (put back at
# the start of the next call). The watch is found through torch's own dispatch stack.
BLIND = """
def _blind(device=None):
    W = globals().get("WATCH")
    if W is not None:
        W.nearest = lambda self, o: None
torch.cuda.synchronize = _blind
"""
BLIND_FORWARD = ("global WATCH, ORIGINAL\nif torch._C._len_torch_dispatch_stack():\n"
                 "    WATCH = type(torch._C._get_dispatch_stack_at(0))\n"
                 "    ORIGINAL = globals().get('ORIGINAL') or WATCH.nearest\n"
                 "    WATCH.nearest = ORIGINAL\n"
                 "r = torch.where(x > 0, x, x * self.slope)\nreturn ext.leaky(r, 1.0)")


def test_the_judgement_of_a_call_is_made_before_the_answer_can_blind_it() -> None:
    src = answer(BLIND_FORWARD).replace("\nclass ModelNew", BLIND + "\nclass ModelNew", 1)
    r = verify(PROBLEM, src, fast=True)
    assert (r.status, r.rule) == (Status.REJECTED, "torch_result"), (r.status, r.reason)


# Torch computes, the kernel copies; after the harness's final result, an exit handler takes
# what the watch found out of it.
REWRITE_RESULT = """
import atexit, json as _json
def _clean():
    try:
        with open("out/answer.json") as f:
            data = _json.load(f)
        inner = _json.loads(data["body"]) if "body" in data else data
        for c in inner.get("calls", []):
            c.pop("torch_ops", None)
            c["torch_lost"] = False
        with open("out/answer.json", "w") as f:
            _json.dump(inner if "body" in data else data, f)
    except Exception:
        pass
atexit.register(_clean)
"""


def test_a_result_rewritten_after_the_harness_finished_is_no_result() -> None:
    src = answer("r = torch.where(x > 0, x, x * self.slope)\nreturn ext.leaky(r, 1.0)")
    src = src.replace("\nclass ModelNew", REWRITE_RESULT + "\nclass ModelNew", 1)
    r = verify(PROBLEM, src, fast=True)
    assert r.status != Status.PASSED, r.reason
    assert "no completion token" in r.reason, r.reason


# The kernel copies x; at exit, the outputs the harness saved are replaced by torch's leaky ReLU
# of the saved inputs, except where a canary kernel wrote nothing (the no-launch run).
REWRITE_OUTPUTS = """
import atexit, glob
_c = ext.leaky(torch.full((4,), -1.0, device="cuda"), 0.5)
NO_LAUNCH = not bool((_c == -0.5).all())
def _rewrite():
    from safetensors.torch import load_file, save_file
    if NO_LAUNCH:
        return
    for path in glob.glob("inputs/*.safetensors"):
        name = path.split("/")[-1]
        x = load_file(path)["a0"]
        save_file({"out0": torch.nn.functional.leaky_relu(x, 0.1)}, "out/outputs-" + name)
atexit.register(_rewrite)
"""


def test_outputs_rewritten_after_the_harness_saved_them_are_no_outputs() -> None:
    src = answer("return ext.leaky(x, 1.0)").replace(
        "\nclass ModelNew", REWRITE_OUTPUTS + "\nclass ModelNew", 1)
    r = verify(PROBLEM, src, fast=True)
    assert r.status != Status.PASSED, r.reason


# --- the race build --------------------------------------------------------------------------

ROWSUM = """import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self):
        super().__init__()
    def forward(self, x):
        return torch.sum(x, dim=1)

def get_inputs():
    return [torch.rand(8, 512)]

def get_init_inputs():
    return []
"""

ROWSUM_KERNEL = r'''
#include <torch/extension.h>
__global__ void rowsum_kernel(const float* x, float* out, int rows, int cols, int atomic) {
    int r = blockIdx.x;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        float v = x[r * cols + c];
        if (atomic) atomicAdd(&out[r], v);
        else out[r] += v;
    }
}
torch::Tensor rowsum(torch::Tensor x, int64_t atomic) {
    auto xc = x.contiguous();
    auto out = torch::zeros({xc.size(0)}, xc.options());
    rowsum_kernel<<<xc.size(0), 128>>>(xc.data_ptr<float>(), out.data_ptr<float>(),
                                       xc.size(0), xc.size(1), (int)atomic);
    return out;
}
'''

# Everything in the process that named the build: the spec the harness wrote, the runtime's
# marker beside its library, the emulator's own state, the harness's globals.
SNOOP = r'''
import json, os, sys

def _said_race():
    seen = []
    try:
        seen.append(json.load(open("spec.json")).get("variant"))
    except Exception:
        pass
    try:
        seen.append(open("build/lib/variant").read().strip())
    except Exception:
        pass
    tc = sys.modules.get("validators.cpu.torch_cuda")
    seen.append(getattr(tc, "_state", {}).get("variant"))
    g = sys._getframe(2).f_globals
    seen.append((g.get("spec") or {}).get("variant"))
    return "race" in seen
'''


def rowsum_answer(atomic: str) -> str:
    return ("import torch\nimport torch.nn as nn\nfrom torch.utils.cpp_extension import load_inline\n"
            + SNOOP +
            f"SRC = {ROWSUM_KERNEL!r}\n"
            "ext = load_inline(name='rowsum_told', cpp_sources='torch::Tensor rowsum(torch::Tensor x, "
            "int64_t atomic);', cuda_sources=SRC, functions=['rowsum'], verbose=False)\n"
            f"ATOMIC = {atomic}\n\n"
            "class ModelNew(nn.Module):\n    def forward(self, x):\n"
            "        return ext.rowsum(x, ATOMIC)\n")


def test_atomics_only_where_the_process_says_race_build_fail_as_a_race() -> None:
    r = verify(ROWSUM, rowsum_answer("1 if _said_race() else 0"))
    assert r.status == Status.FAILED, (r.status, r.reason)
    assert "race" in r.reason, r.reason


# What a process of the answer can see of its run, paths made relative, printed to stderr as a
# digest per kind (the harness keeps only the tail of stderr).
OBSERVE = r"""
import hashlib, json, os, sys
def _observe():
    work = os.getcwd()
    def digest(v):
        text = json.dumps(v, sort_keys=True, default=repr).replace(work, "<work>")
        return hashlib.sha256(text.encode()).hexdigest()[:16]
    seen = {}
    files = []
    for root, dirs, names in os.walk("."):
        dirs.sort()
        files += sorted(os.path.join(root, n) for n in names)
    seen["file names"] = digest(files)
    for f in files:
        if f.endswith((".json", "variant")):
            try:
                seen[f] = digest(open(f).read())
            except Exception as exc:
                seen[f] = type(exc).__name__
    seen["environment"] = digest(dict(os.environ))
    seen["arguments"] = digest(list(getattr(sys, "orig_argv", sys.argv)))
    seen["descriptors"] = digest(sorted(os.listdir("/proc/self/fd")))
    tc = sys.modules.get("validators.cpu.torch_cuda")
    seen["emulator"] = digest(getattr(tc, "_state", {}).get("variant"))
    g = sys._getframe(2).f_globals
    seen["harness"] = digest({k: repr(v) for k, v in g.items() if not k.startswith("__")
                              and isinstance(v, (dict, list, str, int, float, bool, type(None)))})
    sys.stderr.write("OBSERVED " + json.dumps(seen, sort_keys=True) + "\n")
_observe()
"""


def test_the_answer_sees_the_same_process_in_the_plain_and_race_builds() -> None:
    src = ("import torch\nimport torch.nn as nn\nfrom torch.utils.cpp_extension import load_inline\n"
           + OBSERVE + f"SRC = {ROWSUM_KERNEL!r}\n"
           "ext = load_inline(name='rowsum_seen', cpp_sources='torch::Tensor rowsum(torch::Tensor "
           "x, int64_t atomic);', cuda_sources=SRC, functions=['rowsum'], verbose=False)\n\n"
           "class ModelNew(nn.Module):\n    def forward(self, x):\n"
           "        return ext.rowsum(x, 1)\n")
    groups = run_reference(ROWSUM, [11, 12])
    seen = {}
    for variant, poison in (("plain", POISON_BYTES[0]), ("race", POISON_BYTES[1])):
        run = run_answer(src, groups, variant=variant, poison=poison, follow=True)
        assert run.status == "ok", (variant, run.status, run.reason, run.stderr_tail)
        lines = re.findall(r"^OBSERVED (.*)$", run.stderr_tail, re.M)
        assert lines, run.stderr_tail
        seen[variant] = json.loads(lines[-1])
    plain, race = seen["plain"], seen["race"]
    for key in sorted(set(plain) | set(race)):
        assert plain.get(key) == race.get(key), (key, plain.get(key), race.get(key))


# --- launch counts ---------------------------------------------------------------------------

# Kernels launched at import (the runtime's total covers whatever is claimed later); forward
# launches none and torch computes; the count the harness reads is made to say one per call.
PAD = """
import sys
_w = torch.full((4,), -1.0, device="cuda")
for _ in range(64):
    _c = ext.leaky(_w, 0.5)
"""
FORGE = {
    # The harness's own global, rebound.
    "harness_global": ("_g = sys._getframe(1).f_globals\n_n = [0]\n"
                       "def _fake():\n    _n[0] += 1\n    return _n[0]\n"
                       "_g['launch_count'] = _fake\n"),
    # The emulator's handle on its runtime, replaced by one whose counter says one per call
    # (the watch reads it too, and is told nothing moved).
    "runtime_handle": ("_tc = sys.modules['validators.cpu.torch_cuda']\n"
                       "class _Lib:\n    n = 0\n"
                       "    def __getattr__(self, name):\n"
                       "        def count():\n"
                       "            caller = sys._getframe(2).f_globals.get('__name__', '')\n"
                       "            if not caller.endswith('provenance'):\n"
                       "                _Lib.n += 1\n"
                       "            return _Lib.n\n"
                       "        return count\n"
                       "_tc._state['lib'] = _Lib()\n"),
}


@pytest.mark.parametrize("how", sorted(FORGE))
def test_a_forward_that_launches_no_kernel_is_torch_fallback_whatever_the_count_says(
        how: str) -> None:
    src = answer("return torch.where(x > 0, x, x * self.slope)").replace(
        "\nclass ModelNew", PAD + FORGE[how] + "\nclass ModelNew", 1)
    r = verify(PROBLEM, src, fast=True)
    assert (r.status, r.rule) == (Status.REJECTED, "torch_fallback"), (how, r.status, r.reason)
