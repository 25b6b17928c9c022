"""The rules against the reward hacks published for KernelBench-style harnesses.

Each rule has a name, which a `rejected` result carries in `ValidationResult.rule` and at the
start of its reason:

- `torch_fallback`: a forward call launched no kernel of the answer's extensions (PyTorch ops
  did the work, or a try/except fell back to them). `--allow-torch-only` lifts this rule only.
- `inherits_model`: ModelNew inherits from a class named Model, or inherits its forward.
- `torch_result`: the outputs are, to the check's tolerance, tensors PyTorch computed (or the
  host made) in the call from data no kernel wrote (`provenance.py`), and no closer to the
  reference for what the kernels did, in every call where anything was computed, or in some
  calls of a kind of input set where in others the kernels did the work: whatever the kernels
  did (a copy, work thrown away), they did not compute the outputs. `--allow-torch-only`
  lifts it.
- `kernels_not_used`: with every extension kernel launch made a no-op, every output still
  matched the reference: the kernels did not compute them.
- `library_work`: with `allow_library=False` (`--no-library-calls`), a forward call made a
  computing call of a CUDA library (cuBLAS, cuSPARSE, CUB's device-wide algorithms, Thrust's
  device system, cuRAND's host API). KernelBench allows them, so by default they are only
  named in a note: on the cpu backend the library computes in host code, and its result
  counts as the answer's, as cuBLAS's would on a GPU.
- `inputs_read_early`: the answer's process asked the verifier for inputs itself. Each case's
  inputs reach the process only when the harness asks for them, just before that case's
  call, so nothing the answer runs outside a call (its import, `__init__`) can compute the
  result unwatched; an answer that asks on its own is seen in the count of requests.
- `input_mutation`: a forward call changed an input tensor.
- `lazy_output`: an output is not a plain dense torch.Tensor (a subclass, a deferred object,
  a sparse or meta tensor).
- `output_form`: the outputs differ from the reference's in number, dtype or shape.

Not rules of their own, because they end as `failed` through the comparison: stale memory (new
allocations start poisoned, under two byte patterns), results cached across calls (every call
of one process gets its own inputs and its own reference), NaN as a wildcard (NaN only where
the reference has NaN).
"""

from __future__ import annotations

import torch

from schemas import Status, ValidationResult

from .answer import AnswerRun, Call
from .compare import compare_tensor, same_tensor, tolerance_for
from .provenance import INPUT
from .reference import RefCase, RefGroup

RULES = ("torch_fallback", "torch_result", "inherits_model", "kernels_not_used",
         "library_work", "inputs_read_early", "input_mutation", "lazy_output", "output_form")


def call_rule(call: Call, ref: RefCase, *, count_launches: bool) -> tuple[str, str] | None:
    """The first rule one forward call broke, with the reason, or None."""
    if call.form:
        return "lazy_output", "; ".join(call.form)
    outs = call.outputs or []
    if len(outs) != len(ref.outputs):
        return "output_form", (f"forward returned {len(outs)} output(s), the reference "
                               f"{len(ref.outputs)}")
    for k, (o, r) in enumerate(zip(outs, ref.outputs, strict=True)):
        if o.dtype != r.dtype or tuple(o.shape) != tuple(r.shape):
            return "output_form", (f"output {k} is {_desc(o)}, the reference's is {_desc(r)}")
    after = call.inputs_after or {}
    for key, given in ref.inputs.items():
        got = after.get(key)
        if got is None or not same_tensor(got, given):
            return "input_mutation", f"forward changed its input {_arg_name(ref, key)}"
    # A call whose work a library of the answer's extension did (a cuBLAS GEMM, a Thrust
    # transform: computed in host code here, a kernel of the library's on a GPU) is not
    # PyTorch's: `library_rule` names it, or refuses it with --no-library-calls.
    if count_launches and not call.launches and not any(call.library.values()):
        return "torch_fallback", ("forward launched no kernel of the answer's extensions "
                                  "(PyTorch did the work)")
    return None


def launch_rule(run: AnswerRun) -> tuple[str, str] | None:
    """`torch_fallback` for a run whose harness names its launch counter among what the answer
    rebound, or whose calls claim more launches than the emulator's runtime made in the whole
    process (its native counter, written at exit).

    Each call's count is the difference of the runtime's native counter across that call, read
    through a function pointer the harness took before the answer was imported: launches at
    import or in `__init__` are no call's, and a forward that launches nothing counts none
    (`call_rule`). The total is defence in depth: the counts still pass through the answer's
    interpreter. A run without the runtime's count (not emulated) is not held to it."""
    if "harness.launch_count" in run.tampered:
        return "torch_fallback", ("the answer rebound the harness's launch counter (the count "
                                  "was rewritten)")
    if run.native_launches is None:
        return None
    claimed = sum(c.launches or 0 for c in run.calls)
    if claimed <= run.native_launches:
        return None
    return "torch_fallback", (f"the answer's process reported {claimed} kernel launches, the "
                              f"emulator's runtime made {run.native_launches} (the count was "
                              "rewritten)")


def library_rule(runs: list[AnswerRun], result: ValidationResult, *, allow: bool
                 ) -> tuple[Status, str, str] | None:
    """The libraries the answer's forward calls computed with (counted by the emulator's
    runtime, per call): a note naming them and the calls, or, where they are not allowed,
    `library_work`. A library only named, or used only to move data, is no library work."""
    per_library: dict[str, int] = {}
    calls: set[str] = set()
    for run in runs:
        for call in run.calls:
            for name, n in call.library.items():
                per_library[name] = per_library.get(name, 0) + n
                calls.add(call.name)
    if not per_library:
        return None
    named = ", ".join(f"{LIBRARY_NAMES.get(k, k)} ({n} call{'s' * (n != 1)})"
                      for k, n in sorted(per_library.items()))
    if not allow:
        return (Status.REJECTED, "library_work",
                f"forward computed with library calls, not only its own kernels: {named}, in "
                f"{len(calls)} forward call(s) (--no-library-calls)")
    result.notes.append(f"library work: forward computed with {named} in {len(calls)} forward call(s); "
                        "their results count as the answer's (KernelBench allows library calls; "
                        "--no-library-calls refuses them)")
    return None


LIBRARY_NAMES = {"cublas": "cuBLAS", "cusparse": "cuSPARSE", "cub": "CUB", "thrust": "Thrust",
                 "curand": "cuRAND", "cufft": "cuFFT", "other": "another library"}


def torch_result_rule(run: AnswerRun, refs: dict[str, RefCase], atol: float | None = None,
                      rtol: float | None = None) -> tuple[str, str] | None:
    """`torch_result` for a run that followed the data (`run_answer(follow=True)`) where the
    kernels' work shows in no call while PyTorch's does, or where the calls of one kind of input
    set are the kernels' in one call and PyTorch's in another, or where the answer moved, altered
    or blinded the dispatch mode that follows it, or changed what the harness runs (a function
    or method replaced, a signal handler, a kernel registered for an ATen op: the harness puts
    it back and names it).

    Each call is judged on its own: it is *torch's* when every output matches, to the check's
    tolerance, a result torch computed in the call from data no kernel wrote (or a tensor made
    from host data: numpy's work) and the kernels' difference (if any) did not bring it closer
    to the reference: a copy, or a nudge below the tolerance, is torch's work; a kernel whose
    small step is the reference's own (BatchNorm in eval mode after torch's conv, nearly an
    identity) is not. It is an *input*'s when its outputs are torch's or bit for bit one of the
    call's own inputs or parameters (a ReLU of `torch.rand` values changes nothing: no work of
    anyone's shows); otherwise it is the *kernels'*.

    - No call the kernels': torch computed what the kernels handed on, on every input set
      where anything was computed.
    - A kind of input set (`get_inputs()`, N(0, 1)) with calls of both: an honest answer runs the
      same code on every call, so the kernels' work on one call and torch's on another of the
      same kind is an answer that changes what computes after a warm-up.
    A kernel whose work is an identity on every input set of one kind (the ReLU above after
    torch's op) leaves torch's result in place there alone; the other kind shows its work."""
    calls = [c for c in run.calls if c.outputs is not None]
    for c in calls:
        if c.torch_lost:
            why = c.lost_why or ("took the harness's dispatch mode off the stack, altered it or "
                                 "hid ops from it during forward")
            return "torch_result", (f"case {c.name}: the answer {why} (what PyTorch computed "
                                    "could not be followed)")
    if not calls or any(c.torch_results is None for c in calls):
        return None
    kinds: dict[str, tuple[str, str]] = {}  # call -> (torch | input | kernels, what it saw)
    near = 0  # outputs of torch's calls that are torch's to the tolerance only
    for c in calls:
        ref = refs.get(c.name)
        outs = c.outputs or []
        if ref is None or len(outs) != len(ref.outputs) or not outs:
            return None
        said, hows = [], []
        for k, (out, want) in enumerate(zip(outs, ref.outputs, strict=True)):
            torch_out, op = (c.torch_results or {}).get(k, (None, ""))
            if op == INPUT:
                how = "input" if torch_out is not None and same_tensor(out, torch_out) else ""
            else:
                how = _torch_made(out, torch_out, want, atol, rtol)
            hows.append(how)
            if how and how != "input":
                said.append(f"output {k} is {_origin(op)}, {how}")
        kind = ("kernels" if not all(hows) else
                "torch" if any(h != "input" for h in hows) else "input")
        kinds[c.name] = (kind, f"case {c.name}: " + "; ".join(said))
        if kind == "torch":
            near += hows.count("to the tolerance")
    torch_calls = [n for n, (k, _) in kinds.items() if k == "torch"]
    if not torch_calls:
        return None
    first = kinds[torch_calls[0]][1]
    if near:
        first += f"; {near} output(s) of {len(torch_calls)} calls to the tolerance only"
    if not any(k == "kernels" for k, _ in kinds.values()):
        rest = len(kinds) - len(torch_calls)
        return "torch_result", (
            f"{len(torch_calls)} of {len(kinds)} calls returned outputs computed in forward "
            f"without the kernels ({first})" + (f", the other {rest} returned one of their inputs"
                                                if rest else "") + ": the kernels did not "
            "compute them")
    labels = {c.name: refs[c.name].label for c in calls}
    for label in dict.fromkeys(labels.values()):
        mine = [n for n in kinds if labels[n] == label]
        theirs = [n for n in mine if kinds[n][0] == "torch"]
        ours = [n for n in mine if kinds[n][0] == "kernels"]
        if theirs and ours:
            return "torch_result", (
                f"on the {label!r} input sets the kernels computed the outputs in {len(ours)} "
                f"call(s) (case {ours[0]}) and not in {len(theirs)} ({kinds[theirs[0]][1]}): "
                "the answer changes what computes from call to call")
    return None


def _origin(op: str) -> str:
    return op if op.startswith("host data") else f"the result of PyTorch's {op}"


def _torch_made(out: torch.Tensor, torch_out: torch.Tensor | None, ref: torch.Tensor,
                atol: float | None, rtol: float | None) -> str:
    """"bit for bit", "to the tolerance" or "" (not torch's): see `torch_result_rule`."""
    if torch_out is None or out.dtype != torch_out.dtype or out.shape != torch_out.shape:
        return ""
    if same_tensor(out, torch_out):
        return "bit for bit"
    tol = tolerance_for(out.dtype, atol, rtol)
    if tol.mode == "exact" or not compare_tensor("out", out, torch_out, tol).ok:
        return ""
    if ref.shape != out.shape or _error(torch_out, ref, tol) > _error(out, ref, tol):
        return ""  # the kernels brought it closer to the reference: their step is real work
    return "to the tolerance"


def _error(x: torch.Tensor, ref: torch.Tensor, tol: object) -> float:
    """The largest error of `x` against `ref` in units of the tolerance (NaN against NaN is 0,
    against a number infinite)."""
    a = x.detach().to(torch.float64)
    r = ref.detach().to(torch.float64)
    both_nan = torch.isnan(a) & torch.isnan(r)
    same_inf = torch.isinf(a) & (a == r)
    diff = (a - r).abs()
    scale = getattr(tol, "atol", 0.0) + getattr(tol, "rtol", 0.0) * r.abs()
    e = torch.where(scale > 0, diff / scale.clamp_min(1e-300),
                    torch.where(diff == 0, 0.0, float("inf")))
    e = e.masked_fill(both_nan | same_inf, 0.0).nan_to_num(nan=float("inf"))
    return float(e.max()) if e.numel() else 0.0


def inherits_rule(run: AnswerRun) -> tuple[str, str] | None:
    return ("inherits_model", run.inherits) if run.inherits else None


def _desc(t: torch.Tensor) -> str:
    return f"{str(t.dtype).replace('torch.', '')} {list(t.shape)}"


def _arg_name(ref: RefCase, key: str) -> str:
    for i, a in enumerate(ref.args):
        if a.get("tensor") == key:
            return f"#{i}"
    return key


def weak_task(groups: list[RefGroup], atol: float | None = None, rtol: float | None = None
              ) -> str:
    """Why the problem cannot tell answers apart (empty when it can): its reference output is
    (near) constant, or does not change with the inputs (as robust-kbench filters them)."""
    cases = [c for g in groups for c in g.cases]
    if not cases or not all(c.outputs for c in cases):
        return ""
    if all(_near_constant(o, atol, rtol) for c in cases for o in c.outputs):
        return "the reference output is (near) constant over every input set"
    # Two input sets of one model (get_inputs and N(0, 1)) isolate the inputs from the
    # parameters; without a float input, the seeds' draws are all there is to compare.
    pairs = [(g.cases[0], c) for g in groups for c in g.cases[1:]]
    if not pairs:
        pairs = [(cases[0], c) for c in cases[1:]]
    if pairs and all(_same_outputs(a, b, atol, rtol) for a, b in pairs):
        return "the reference output does not depend on the inputs"
    return ""


def _near_constant(t: torch.Tensor, atol: float | None, rtol: float | None) -> bool:
    if t.numel() <= 1:
        return False
    f = t.detach().to(torch.float64)
    finite = f[torch.isfinite(f)]
    if finite.numel() < f.numel():
        return bool(torch.isnan(f).all())
    tol = tolerance_for(t.dtype, atol, rtol)
    spread = float(finite.max() - finite.min())
    scale = float(finite.abs().max())
    if tol.mode == "exact":
        return spread == 0
    return spread <= tol.atol + tol.rtol * scale


def _same_outputs(a: RefCase, b: RefCase, atol: float | None, rtol: float | None) -> bool:
    if len(a.outputs) != len(b.outputs):
        return False
    for x, y in zip(a.outputs, b.outputs, strict=True):
        if x.shape != y.shape or x.dtype != y.dtype:
            return False
        tol = tolerance_for(x.dtype, atol, rtol)
        if tol.mode == "exact":
            if not torch.equal(x, y):
                return False
        elif not torch.allclose(x.to(torch.float64), y.to(torch.float64), atol=tol.atol,
                                rtol=tol.rtol, equal_nan=True):
            return False
    return True
