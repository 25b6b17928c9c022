"""Answers that attack the KernelBench verifier's own machinery from inside the answer's process
(the red-team findings): emptying the harness's cases, forging or corrupting its result file,
raising the emulator's signals, rewriting the launch count, telling the no-launch run apart by
files an earlier pass left. Real sandboxed processes and real torch; the hostile code runs as
the answer's."""

from __future__ import annotations

import pytest

# Beside this file (pytest puts a test's folder on sys.path): their problems and answer makers.
from test_verify_extensions import PROBLEM as EXT_PROBLEM
from test_verify_extensions import answer as ext_answer
from test_verify_kernelbench import PROBLEM, answer, check

from schemas import Status
from validators.engine import POISON_BYTES
from validators.kernelbench import verify
from validators.kernelbench.answer import _malformed, emulation_available

needs_emulation = pytest.mark.skipif(not emulation_available(),
                                     reason="validators.cpu.torch_cuda is not available")

CORRECT = "return torch.where(x > 0, x, x * self.slope)"
HARNESS_GLOBALS = "import sys\n_g = sys._getframe(1).f_globals  # the harness's run() globals\n"


@pytest.mark.parametrize("tamper, allow", [
    # Every case gone: nothing judged, forward's identity never seen wrong.
    ('_g["spec"]["groups"].clear()\n', False),
    # The last seed's cases gone (a correct forward on the rest).
    ('_g["spec"]["groups"].pop()\n', True),
])
def test_an_answer_that_drops_cases_from_the_harness_is_a_runtime_error(tamper: str,
                                                                         allow: bool) -> None:
    forward = "return x" if not allow else CORRECT
    r = check(answer(forward, extra=HARNESS_GLOBALS + tamper), allow_torch_only=allow)
    assert r.status == Status.RUNTIME_ERROR, (r.status, r.reason)
    assert "the answer's process reported " in r.reason and " of 10 calls" in r.reason, r.reason


def test_a_case_run_twice_is_a_malformed_result() -> None:
    tamper = '_g["spec"]["groups"][0]["cases"].append(_g["spec"]["groups"][0]["cases"][0])\n'
    r = check(answer(CORRECT, extra=HARNESS_GLOBALS + tamper))
    assert r.status == Status.RUNTIME_ERROR, (r.status, r.reason)
    # The inputs come one case at a time in the verifier's order: a case added to the
    # harness's list gets no inputs of its own (or the result names it twice).
    assert ("the verifier sent the inputs of" in r.reason
            or ("malformed result file" in r.reason and "twice" in r.reason)), r.reason


# The harness's result file written by the answer at import, then the process ends before the
# harness could write its own.
FORGED = """import json, os
os.makedirs("out", exist_ok=True)
names = [c["name"] for g in json.load(open("spec.json"))["groups"] for c in g["cases"]]
with open("out/answer.json", "w") as f:
    json.dump({"status": "ok", "inherits": "", "calls": CALLS}, f)
os._exit(0)
"""


def test_a_result_file_forged_by_the_answer_is_no_result() -> None:
    r = check(answer(CORRECT, extra=FORGED.replace("CALLS", "[]")), allow_torch_only=False)
    assert r.status == Status.RUNTIME_ERROR, (r.status, r.reason)
    assert "no completion token" in r.reason, r.reason


def test_a_malformed_result_file_is_the_answers_runtime_error_not_ours() -> None:
    calls = '[{"name": n, "seconds": "not-a-number", "launches": "many"} for n in names]'
    r = check(answer(CORRECT, extra=FORGED.replace("CALLS", calls)))
    assert r.status == Status.RUNTIME_ERROR, (r.status, r.reason)
    assert "malformed result file" in r.reason, r.reason


@pytest.mark.parametrize("found, why", [
    ([], "not an object"),
    ({"status": "done", "calls": []}, "status"),
    ({"status": "ok", "calls": {}}, "calls is not a list"),
    ({"status": "ok", "calls": ["a"]}, "call 0 is not an object"),
    ({"status": "ok", "calls": [{"name": "../a"}]}, "no case of this check"),
    ({"status": "ok", "calls": [{"name": "a"}, {"name": "a"}]}, "twice"),
    ({"status": "ok", "calls": [{"name": "a", "launches": True}]}, "launches"),
    ({"status": "ok", "calls": [{"name": "a", "launches": -1}]}, "launches"),
    ({"status": "ok", "calls": [{"name": "a", "seconds": float("nan")}]}, "seconds"),
    ({"status": "ok", "calls": [{"name": "a", "form": "x"}]}, "form"),
    ({"status": "ok", "calls": [{"name": "a", "error": 3}]}, "error"),
    ({"status": "ok", "reason": [], "calls": []}, "reason"),
    ({"status": "ok", "calls": [{"name": "a", "torch_ops": ["aten.relu"]}]}, "torch_ops"),
    ({"status": "ok", "calls": [{"name": "a", "torch_ops": {"../0": "aten.relu"}}]}, "torch_ops"),
    ({"status": "ok", "calls": [{"name": "a", "torch_ops": {"0": 1}}]}, "torch_ops"),
    ({"status": "ok", "calls": [{"name": "a", "torch_lost": "no"}]}, "torch_lost"),
])
def test_malformed_result_files_are_named(found: object, why: str) -> None:
    assert why in _malformed(found, ["a", "b"], gpu=False)
    assert _malformed({"status": "ok", "calls": [{"name": "a", "launches": 2, "seconds": 0.5,
                                                  "error": "", "form": [],
                                                  "torch_ops": {"0": "aten.relu.default"},
                                                  "torch_lost": False}]},
                      ["a", "b"], gpu=False) == ""


@needs_emulation
def test_an_answer_raising_the_emulators_needs_gpu_gets_a_verdict() -> None:
    raiser = ("NeedsGpu = sys.modules['validators.cpu.torch_cuda'].NeedsGpu\n"
              "raise NeedsGpu('warp-specialised tensor-core pipeline')")
    r = verify(PROBLEM, answer(raiser, extra="import sys\n"), fast=True)
    assert r.status == Status.RUNTIME_ERROR, (r.status, r.reason)
    assert "forward raised NeedsGpu" in r.reason, r.reason


@needs_emulation
def test_a_launch_count_rewritten_in_the_answers_interpreter_is_caught() -> None:
    # Torch computes; the harness's launch counter is replaced by one that counts each call.
    forge = HARNESS_GLOBALS + ("import itertools\n_n = itertools.count(1)\n"
                               "_g['launch_count'] = lambda: next(_n)\n")
    r = verify(PROBLEM, answer(CORRECT, extra=forge), fast=True)
    assert (r.status, r.rule) == (Status.REJECTED, "torch_fallback"), (r.status, r.reason)
    assert "the count was rewritten" in r.reason, r.reason


# A kernel launched and its work thrown away (torch computes), and the no-launch run told apart:
# its first pass leaves no marker file, because the extension was built before it started (a
# judged run's second pass would find the first pass's marker), and its memory starts as the first poison byte.
MARKER = """import os
_seen = os.path.exists("marker")
open("marker", "w").close()
"""
SPOT = ("\n_poison = int(torch.empty(4096, dtype=torch.uint8, device='cuda')[123])\n"
        f"NO_LAUNCH_RUN = (not _seen) and _poison == {POISON_BYTES[0]:#x}\n")
DECOY = ("ext.leaky(x, self.slope)\n"
         "if NO_LAUNCH_RUN:\n    return torch.zeros_like(x)\n"
         "return torch.where(x > 0, x, x * self.slope)")


@needs_emulation
def test_no_file_of_an_earlier_pass_tells_the_no_launch_run_apart() -> None:
    src = ext_answer(DECOY)
    head, sep, rest = src.partition("\nclass ModelNew")
    src = MARKER + head + SPOT + sep + rest
    r = verify(EXT_PROBLEM, src, fast=True)
    # Every pass starts in a new workspace: each judged run looks like the no-launch run, and
    # its zeros fail.
    assert r.status == Status.FAILED, (r.status, r.rule, r.reason, r.kernel_check)


# Outputs a correct answer computes as zeros, and a wrong one leaves unwritten where the reference
# is zero: the first poison byte (the one `--fast` and the no-launch run use), 0xA5, reads as a
# float of -2.9e-16, zero within any tolerance. The wrong answer passed `--fast`, and the correct
# one was rejected as `kernels_not_used` because its unwritten output matched the zeros as well.
# An element that holds the fill in every byte is now one nothing wrote, in both runs.
RELU_PROBLEM = EXT_PROBLEM.replace("return [0.1]", "return [0.0]")


@needs_emulation
def test_an_output_left_unwritten_where_the_reference_is_zero_fails_the_fast_check() -> None:
    problem = RELU_PROBLEM.replace("torch.rand(batch_size, dim)", "torch.randn(batch_size, dim)")
    r = verify(problem, ext_answer(limit="n && x[i] > 0.f", name="relu_partial"), fast=True)
    assert r.status == Status.FAILED, (r.status, r.rule, r.reason)


@needs_emulation
def test_a_kernel_that_computes_an_all_zero_reference_is_not_taken_for_unused() -> None:
    # Zero for every input (as KernelBench's level-2 problems 80 and 83 are): no input set tells.
    problem = RELU_PROBLEM.replace("leaky_relu(x,", "leaky_relu(-x.abs(),")
    r = verify(problem, ext_answer("return ext.leaky(-x.abs(), self.slope)"), fast=True)
    assert r.status == Status.PASSED, (r.status, r.rule, r.reason)
    assert r.kernel_check.startswith("depends on the kernels"), r.kernel_check
