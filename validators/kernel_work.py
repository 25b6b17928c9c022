"""The kernel-work check: did the kernels compute the outputs, or the host?

One case runs once more with the device seeing other inputs than the host: the runtime
(`validators/cpu/runtime/kernel_inputs.h`, shared with the cuda backend's interposer) replaces
every run of an input's bytes that the host copies to the device with a second draw of that
input (same case, another seed), and gives the host its own bytes back whenever it copies them
from the device. Outputs computed by the kernels follow the second draw; outputs computed on the
host follow the first, whatever the program combines them with (a kernel-written mask of ones,
a kernel-written zero), however it uploads its answer (whole or in pieces), and whatever it
knows about the run.

Verdicts (`Verdict.kind`):
- `device`: the outputs match the reference on the inputs the device saw: the kernels did the
  work;
- `host`: they match the reference on the host's inputs, which differs from the device's: the
  outputs were computed on the host (rejected); or, matching neither whole, most of the
  elements the two references tell apart follow the host's inputs (a kernel computing one row
  while the host computes the rest);
- `unknown`: the check cannot tell (no input reached the device by a copy: mapped or managed
  memory, inputs transformed on the host before the upload; the outputs follow neither input
  set: the host uses its inputs too; the program did not finish; the outputs do not change with
  the inputs replaced; the task's answer is a copy of an input that the host read back). The
  engine then falls back to the no-launch run, and says so; for a program that names a library
  (`anticheat.LIBRARY_FEATURES`: cuBLAS, CUB, Thrust, ...), whose calls may compute without a
  launch, it leaves the no-launch run out instead, and says so, where the run did library work
  (the cpu runtime notes it: `Engine._library_fallback`). Naming a library waives nothing
  else: this run, and the rejections below, judge such a program as any other.

When no run of an input reached the device (the host converted its inputs before the upload, or
the device got nothing from them: a mask of ones, a sentinel kernel), the program runs once more
with the host reading the second draw, and the runtime notes a hash of everything the device
receives (copies, constant-memory copies, kernel arguments passed by value, the memory kernels
read in place at each launch). If nothing differs while the reference outputs do, the device
never received anything that depends on the inputs: the host computed the outputs (rejected).
Otherwise (an honest conversion on the host) the check cannot tell. Library copies count as
uploads where the runtime sees them: the cpu shim's cuBLAS copies (`cublasSetVector`,
`cublasSetMatrix`, and their reads back) are replaced and noted as `cudaMemcpy`'s are; Thrust's
device storage, which the shim keeps in host memory filled by host copies, cannot be replaced,
so what it holds is noted when it is freed (`cpu/include/cudashim/thrust_storage.h`): a Thrust
program whose device storage holds nothing that depends on its inputs is rejected, one whose
storage does is one the check cannot tell about.

What stays open, and is said in `ValidationResult.kernel_check` when it happens: a program the
check cannot tell about is judged by the older no-launch run, which a program can detect (a
sentinel kernel). A program gets there by keeping every run of its inputs off the device while
sending it something that changes with them, or, inputs uploaded as they are, by detecting this
run itself: a kernel computes a checksum of what it received, the host compares it with its own
and stops (or writes garbage) when they differ; without kernels the checksum differs too, which
reads as "the kernels matter". An honest program that checks its device's results against a
host computation and exits non-zero behaves the same in both runs, which is why neither a stop
nor outputs that follow neither input set is held against a program here. A program whose
kernels receive an encoding of the inputs (not their bytes) and whose host decodes what the
kernels send back is not told apart from one whose kernels did the work. The cpu backend shares
the host's address space: a program that undoes the runtime's memory protection can read the
second draw, and so can another host thread while a kernel runs (device memory is open then);
a kernel may also store into pageable host memory, as a GPU with HMM allows; on the cuda
backend the second draw lives on the device (managed memory holds it during launches).

Which inputs are replaced: the floating-point arrays of more than one element (the data a
kernel computes on), or, when there are none, the integer arrays. Sizes, scalars and (in
float tasks) integer structure (indices, offsets) stay the host's: a host legitimately reads
them to plan its launches, and replacing them would only make the check say `unknown`.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

import numpy as np

from schemas import InputCase, Task

from .compare import compare_arrays

INPUTS_FILE = ".ckd-kernel-inputs"
LOG_FILE = ".ckd-kernel-inputs.log"
MAGIC = b"CKDSUB1\n"
NOTHING_UPLOADED = ("outputs do not depend on the kernels: nothing the device received changed "
                    "when the host read other inputs (case {case}), yet the outputs follow the "
                    "inputs (computed on the host)")
SEED_MIX = 0x5851F42D
"""The second draw's seed is derived from the case's (reproducible from `fresh_seed`)."""


@dataclass
class Plan:
    """The inputs replaced on the device (`names`, in file order) and their second draw."""

    names: list[str]
    second: dict[str, np.ndarray]
    reason: str = ""
    """Why no input can be replaced (then `names` is empty)."""


@dataclass
class Verdict:
    kind: str  # device | host | unknown
    note: str
    replaced: dict[str, float] = field(default_factory=dict)
    """Share of each replaced input's bytes that reached the device as the second draw."""


HOST_MAJORITY = 2 / 3
"""Share of the told-apart output elements that must follow the host's inputs for outputs
that follow neither draw whole to be judged host work."""


def second_case(case: InputCase) -> InputCase:
    seed = (case.seed * SEED_MIX + 1) % (2**31)
    return case.model_copy(update={"seed": seed, "name": f"{case.name}+device"})


def plan(task: Task, case: InputCase, inputs: dict[str, np.ndarray],
         second: dict[str, np.ndarray]) -> Plan:
    """Which inputs to replace, given the case's inputs and a second draw of the same case."""
    def differs(name: str) -> bool:
        a, b = inputs[name], second.get(name)
        return (b is not None and a.size > 1 and a.shape == b.shape and a.dtype == b.dtype
                and a.tobytes() != b.tobytes())

    floats = [t.name for t in task.inputs if t.name in inputs and inputs[t.name].dtype.kind == "f"
              and differs(t.name)]
    names = floats or [t.name for t in task.inputs if t.name in inputs
                       and inputs[t.name].dtype.kind in "iub" and differs(t.name)]
    if not names:
        return Plan([], {}, reason="no input array changes with the seed")
    return Plan(names, {n: second[n] for n in names})


def inputs_file(plan: Plan, inputs: dict[str, np.ndarray]) -> bytes:
    """The runtime's file (format in runtime/kernel_inputs.h `parse`): A is the input file's
    bytes exactly as the program reads them, B the second draw."""
    parts = [MAGIC, struct.pack("<I", len(plan.names))]
    for name in plan.names:
        a = np.ascontiguousarray(inputs[name]).tobytes()
        b = np.ascontiguousarray(plan.second[name]).tobytes()
        parts += [struct.pack("<IQ", inputs[name].dtype.itemsize, len(a)), a, b]
    return b"".join(parts)


def parse_log(text: str, plan: Plan) -> tuple[dict[str, list[tuple[int, int]]], int]:
    """(byte ranges of each input the device got from the second draw, bytes given back)."""
    ranges: dict[str, list[tuple[int, int]]] = {n: [] for n in plan.names}
    returned = 0
    for line in text.splitlines():
        parts = line.split()
        try:
            if parts[0] == "up" and len(parts) == 4:
                ranges[plan.names[int(parts[1])]].append((int(parts[2]), int(parts[3])))
            elif parts[0] == "down" and len(parts) >= 3:
                returned += int(parts[2])
        except (IndexError, ValueError):
            continue  # a torn line: what it would have said is in the others
    return ranges, returned


def device_inputs(inputs: dict[str, np.ndarray], plan: Plan,
                  ranges: dict[str, list[tuple[int, int]]]) -> tuple[dict[str, np.ndarray], dict[str, float]]:
    """The inputs as the kernels saw them (the host's bytes, with the ranges replaced), and
    the share of each replaced input's bytes that was replaced."""
    seen = dict(inputs)
    share: dict[str, float] = {}
    for name in plan.names:
        a = np.ascontiguousarray(inputs[name])
        buf = bytearray(a.tobytes())
        b = np.ascontiguousarray(plan.second[name]).tobytes()
        covered = np.zeros(len(buf), dtype=bool)
        for lo, hi in ranges.get(name, []):
            lo, hi = max(0, lo), min(len(buf), hi)
            if hi > lo:
                buf[lo:hi] = b[lo:hi]
                covered[lo:hi] = True
        share[name] = float(covered.mean()) if len(buf) else 0.0
        seen[name] = np.frombuffer(bytes(buf), dtype=a.dtype).reshape(a.shape)
    return seen, share


def _matches(task: Task, outputs: dict[str, np.ndarray], refs: dict[str, np.ndarray]) -> bool:
    for spec in task.outputs:
        out = outputs[spec.name]
        ref = refs[spec.name].reshape(out.shape)
        if not compare_arrays(spec.name, out, ref, task.tolerance_for(spec.name)).ok:
            return False
    return True


def _windows(data: bytes, step: int) -> np.ndarray:
    """A hash of each 16-byte window of `data` starting every `step` bytes."""
    raw = np.frombuffer(data[: len(data) - len(data) % 8], dtype="<u8")
    if raw.size < 2:
        return np.zeros(0, dtype=np.uint64)
    words = step // 8 if step >= 8 and step % 8 == 0 else 1
    pairs = np.stack([raw[:-1], raw[1:]], axis=1)[::words]
    with np.errstate(over="ignore"):
        return pairs[:, 0] * np.uint64(0x9E3779B97F4A7C15) ^ pairs[:, 1]


def copies_an_input(refs: dict[str, np.ndarray], device: dict[str, np.ndarray], plan: Plan) -> bool:
    """Whether the task's own answer holds long runs of a replaced input's bytes (a copy,
    a gather, a concatenation): giving the host its bytes back then changes an honest answer."""
    known = np.concatenate([_windows(device[n].tobytes(), 64) for n in plan.names] or
                           [np.zeros(0, dtype=np.uint64)])
    if known.size == 0:
        return False
    for arr in refs.values():
        if np.isin(_windows(np.ascontiguousarray(arr).tobytes(), 8), known).any():
            return True
    return False


def judge(task: Task, outputs: dict[str, np.ndarray], refs_host: dict[str, np.ndarray],
          refs_device: dict[str, np.ndarray], device: dict[str, np.ndarray], plan: Plan,
          share: dict[str, float], returned: int, case: str,
          host_inputs: dict[str, np.ndarray] | None = None) -> Verdict:
    replaced = ", ".join(f"{n} ({share[n]:.0%})" for n in plan.names if share[n] > 0)
    where = f"case {case}; the device saw another draw of {replaced}"
    if _matches(task, refs_device, refs_host) and _matches(task, refs_host, refs_device):
        return Verdict("unknown", f"{where}, which leaves the reference outputs unchanged", share)
    if _matches(task, outputs, refs_device):
        return Verdict("device", f"outputs depend on the kernels: they follow the inputs the kernels "
                       f"saw ({where})", share)
    if _matches(task, outputs, refs_host):
        if returned and copies_an_input(refs_device, device, plan):
            return Verdict("unknown", f"{where}: the answer copies an input, which the host read "
                           "back from the device", share)
        return Verdict("host", (
            f"outputs do not depend on the kernels: when the device saw other inputs than the "
            f"host ({where}), the outputs still followed the host's inputs (computed on the "
            f"host{'; it read its inputs back from the device' if returned else ''})"), share)
    if returned and host_inputs is not None and _matches(
            task, _given_back(outputs, refs_host, refs_device, host_inputs, plan), refs_device):
        return Verdict("device", f"outputs depend on the kernels: they follow the inputs the kernels "
                       f"saw, except elements that copy an input, which the host got back as its "
                       f"own ({where})", share)
    judged = (_given_back(outputs, refs_host, refs_device, host_inputs, plan)
              if returned and host_inputs is not None else outputs)
    host, device_ = _elements_following(task, judged, refs_host, refs_device)
    # A clear majority only: an even split (one output from raw uploads, another from inputs the
    # host transformed first) tips either way when a few elements of one draw happen to land
    # within tolerance of the other's, which fresh seeds make a matter of chance.
    if host + device_ > 0 and host >= HOST_MAJORITY * (host + device_):
        return Verdict("host", (
            f"outputs do not depend on the kernels: when the device saw other inputs than the "
            f"host ({where}), {host} of the {host + device_} output elements that the two tell "
            f"apart followed the host's inputs and {device_} the device's (most of the outputs "
            "computed on the host)"), share)
    return Verdict("unknown", f"{where}: the outputs follow neither input set (the host uses or "
                   "transforms its inputs too)", share)


def _elements_following(task: Task, outputs: dict[str, np.ndarray],
                        refs_host: dict[str, np.ndarray], refs_device: dict[str, np.ndarray]
                        ) -> tuple[int, int]:
    """How many output elements follow the host's reference and how many the device's, among
    the elements where the two references differ beyond the tolerance: a kernel that computes
    a row while the host computes the rest follows neither whole, but its elements say who did
    the work."""
    host = device = 0
    for spec in task.outputs:
        out = np.asarray(outputs[spec.name])
        ref_h = np.asarray(refs_host[spec.name]).reshape(out.shape)
        ref_d = np.asarray(refs_device[spec.name]).reshape(out.shape)
        tol = task.tolerance_for(spec.name)

        def near(a: np.ndarray, b: np.ndarray, tol: object = tol) -> np.ndarray:
            if tol.mode == "exact" or a.dtype.kind not in "fc":
                return a == b
            x, y = a.astype(np.float64), b.astype(np.float64)
            if tol.mode == "max_abs":
                return np.abs(x - y) <= tol.max_abs
            return np.isclose(x, y, atol=tol.atol, rtol=tol.rtol, equal_nan=True)

        apart = ~near(ref_h, ref_d) & ~near(ref_d, ref_h)
        host += int((apart & near(out, ref_h)).sum())
        device += int((apart & near(out, ref_d)).sum())
    return host, device


def _given_back(outputs: dict[str, np.ndarray], refs_host: dict[str, np.ndarray],
                refs_device: dict[str, np.ndarray], host_inputs: dict[str, np.ndarray],
                plan: Plan) -> dict[str, np.ndarray]:
    """`outputs` with each element that equals the host's reference bit for bit *and* is one of
    the host's input values put back to the device's reference: where the answer copies an
    input (a stencil's boundary), the runtime gave the host its own bytes for the copy. Values
    a host computed are no copy of an input value, and stay."""
    seen: dict[str, np.ndarray] = {}
    for name, out in outputs.items():
        ref_h = refs_host[name].reshape(out.shape)
        ref_d = refs_device[name].reshape(out.shape)
        values = np.concatenate([host_inputs[n].ravel() for n in plan.names]).astype(out.dtype)
        copy = (out == ref_h.astype(out.dtype)) & np.isin(out, values)
        seen[name] = np.where(copy, ref_d.astype(out.dtype), out)
    return seen
