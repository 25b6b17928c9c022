"""Turn a PyTorch module file (KernelBench style) into a `schemas.Task` with a torch reference.

`module_task(name, code)` describes the module in the sandbox (`validators.torch_module`),
scales its size constants down for CPU validation, and builds the task: inputs, outputs,
sizes, five cases, tolerances, a level-1 style description and
`Reference(language="torch", code=<the original file>)`. It raises `ModuleTaskError(reason,
detail)` when the module cannot become a task.

Which constants are sizes. A module-level integer constant (`module_constants`) is a *size*
when doubling it (or adding one) turns some tensor dimension from its value into the new value:
`batch_size`, `dim`, `in_channels`, `kernel_size` are sizes; `reduce_dim = 1`, `stride`,
`groups` are not (they change shapes, but never into themselves). A constant whose change
alters a dimension in any way *feeds* that dimension. This is decided on the `meta` device, so
the module's original GPU-sized constants cost nothing; a module whose ops have no meta kernels
is probed on the CPU at small sizes (every constant above 32 set to 32) instead.

Scaling rule (recorded in each task's `scaling` and `original_sizes`): every tensor (forward
inputs, parameters and buffers, outputs) must have at most `max_elements` elements in every
case; the defaults aim at a quarter of that, so that a larger case still fits. While the
estimated largest tensor is over the aim, the largest constant feeding it is halved, never
below 8 (and constants of 8 or less, such as kernel sizes, never); only when that cannot bring
the tensors under `max_elements` may the constants above 8 go down to 1. Constants that feed no
tensor are never touched. Estimates scale each
dimension linearly with the constants feeding it; every step is then checked by describing the
module (meta) at it, a step that makes the module fail freezes that constant, and the loop goes
on from the real shapes. A module whose tensors stay over `max_elements` at the smallest
sizes (shapes written as literals, e.g. `torch.rand(batch, 3, 224, 224)`) is `too_large`.

Cases (inputs drawn by the reference: `ValueDistribution(kind="reference")`, so values come
from `get_inputs()` and the model's own initialisation under each case's seed; except that the
`small` case draws the float forward arguments from N(0, 1), because `get_inputs()` mostly
draws torch.rand in [0, 1) and would never exercise negative values): `default` (the
scaled sizes), `odd` (every varied constant made odd: never a multiple of 32), `small` (halved),
`large` (doubled, not above the original or the cap), `odd_large` (x1.25, odd). Only constants
above 8 in the original vary; kernel sizes and channel counts of 3 stay. Each variant is
described for real on the CPU in the sandbox; one that fails (or breaks the cap) is replaced by
a seed-only variant of the defaults.

Shapes: a dimension equal to a size constant in every case is symbolic (`["batch_size",
"dim"]`); any other dimension that varies between cases (a convolution's output length) becomes
its own size parameter `<tensor>_dim<i>`, whose value per case comes from describing that case
(so the program gets it as a `-D` macro too); a dimension that never varies is an integer.

Tolerance: float outputs compare with allclose atol=1e-4, rtol=1e-3 (a float CUDA kernel vs
torch on the CPU: different summation orders and fused multiply-adds); when an output is a
reduction (fewer elements than the largest input, e.g. a sum, a norm, a loss) atol is 1e-3.
float64 outputs use atol=1e-8, rtol=1e-7 (the float64 bound of `schemas.TOLERANCE_BOUNDS` is
1e-6). Integer outputs (argmax, masks) are exact.
"""

from __future__ import annotations

import ast
import zlib
from collections.abc import Callable
from dataclasses import dataclass

from schemas import InputCase, Reference, Task, TensorSpec, Tolerance, ValueDistribution
from validators.torch_module import (
    ModuleDescription,
    TensorInfo,
    describe_many,
    module_constants,
    module_problems,
    substitute_constants,
)

DEFAULT_MAX_ELEMENTS = 1 << 18
"""At most 262144 elements (1 MiB of float32) per tensor: a CPU-emulated CUDA run over five
cases, two thread schedules and an AddressSanitizer build stays within seconds."""
DEFAULT_SHARE = 4
"""The defaults aim at max_elements / DEFAULT_SHARE so the `large` case can grow."""
MIN_SCALED = 8
"""A halved constant never goes below min(original, MIN_SCALED); constants up to this value
(kernel sizes, RGB channels) are never scaled or varied."""
PROBE_LIMIT = 32
"""CPU probe sizes (for modules without meta kernels): every constant capped at this value."""
MAX_ROUNDS = 6

FLOAT_TOLERANCE = Tolerance(atol=1e-4, rtol=1e-3)
REDUCTION_TOLERANCE = Tolerance(atol=1e-3, rtol=1e-3)
FLOAT64_TOLERANCE = Tolerance(atol=1e-8, rtol=1e-7)
"""Both sides compute in float64; float32 slack would exceed schemas.TOLERANCE_BOUNDS."""

INPUT_DTYPES = {"float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16",
                "uint32", "uint64", "bool"}
UNUSED_BUFFERS = ("num_batches_tracked",)
"""Buffers a module in eval mode never reads (a program would be rejected for not reading an
input it was given)."""

FILE_CONVENTION = (
    "File convention: the program reads each input from data/<name>.bin and writes each output "
    "to data/<name>.bin (raw little-endian arrays, row-major, paths relative to the working "
    "directory). Each size is a compile-time macro declared as #ifndef / #define <default> / "
    "#endif, so other sizes can be set with -D."
)

Describer = Callable[..., list[ModuleDescription]]
"""`validators.torch_module.describe_many`'s signature: (code, variants, *, entrypoint, seed,
device) -> one description per variant."""


SIGNED_CASE = "small"
"""The case whose float forward arguments are signed N(0, 1) values rather than get_inputs()'s."""


class ModuleTaskError(ValueError):
    """A module that cannot become a task: `reason` is a short code (`syntax_error`,
    `not_a_module`, `import_error`, `needs_cuda`, `unsupported_dtype`, `too_large`,
    `timeout`, `memory`, `bad_names`, `error`), `detail` says why."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


# --- tensors of a description, keyed so that descriptions at other sizes line up ----------

def _keyed(desc: ModuleDescription) -> dict[tuple[str, str], TensorInfo]:
    out: dict[tuple[str, str], TensorInfo] = {}
    for t in desc.tensor_inputs:
        out[("input", t.name)] = t
    for t in desc.parameters:
        out[("param", t.name)] = t
    for t in desc.outputs:
        out[("output", t.name)] = t
    return out


@dataclass
class _Shapes:
    """What the perturbed descriptions showed: per (tensor, dim), the constant it equals and
    the constants that feed it; with the base sizes and shapes the estimates start from."""

    base_sizes: dict[str, int]
    base: dict[tuple[str, str], TensorInfo]
    direct: dict[tuple[tuple[str, str], int], str]
    feeds: dict[tuple[tuple[str, str], int], set[str]]

    def estimate(self, sizes: dict[str, int]) -> dict[tuple[str, str], float]:
        out = {}
        for key, t in self.base.items():
            n = 1.0
            for i, d in enumerate(t.shape):
                c = self.direct.get((key, i))
                if c is not None:
                    n *= sizes[c]
                    continue
                v = float(d)
                for f in self.feeds.get((key, i), ()):
                    v *= sizes[f] / max(self.base_sizes[f], 1)
                n *= max(v, 1.0)
            out[key] = n
        return out

    def feeding(self, key: tuple[str, str]) -> set[str]:
        t = self.base[key]
        found: set[str] = set()
        for i in range(len(t.shape)):
            found |= self.feeds.get((key, i), set())
        return found

    def rebase(self, sizes: dict[str, int], desc: ModuleDescription) -> None:
        self.base_sizes = dict(sizes)
        self.base = _keyed(desc)


def _perturbations(sizes: dict[str, int]) -> list[tuple[str, dict[str, int]]]:
    out = []
    for c, v in sizes.items():
        out.append((c, {**sizes, c: v * 2 if v > 0 else 1}))
        out.append((c, {**sizes, c: v + 1}))
    return out


def _analyse(base: ModuleDescription, perturbed: list[tuple[str, ModuleDescription]]) -> _Shapes:
    keyed = _keyed(base)
    direct: dict[tuple[tuple[str, str], int], str] = {}
    feeds: dict[tuple[tuple[str, str], int], set[str]] = {}
    for c, desc in perturbed:
        if not desc.ok:
            continue
        old_v, new_v = base.sizes[c], desc.sizes[c]
        other = _keyed(desc)
        for key, t in keyed.items():
            o = other.get(key)
            if o is None or len(o.shape) != len(t.shape):
                for i in range(len(t.shape)):
                    feeds.setdefault((key, i), set()).add(c)
                continue
            for i, (a, b) in enumerate(zip(t.shape, o.shape, strict=True)):
                if a != b:
                    feeds.setdefault((key, i), set()).add(c)
                    if a == old_v and b == new_v:
                        direct.setdefault((key, i), c)
    return _Shapes(dict(base.sizes), keyed, direct, feeds)


# --- the conversion -------------------------------------------------------------------------

def module_task(name: str, code: str, *, describe: Describer = describe_many,
                max_elements: int = DEFAULT_MAX_ELEMENTS, description: str | None = None,
                entrypoint: str = "Model") -> Task:
    """The task a module file defines (see the module docstring for every rule).

    `describe` runs the module (default: in the sandbox); `description` replaces the generated
    one. Raises ModuleTaskError."""
    problem = module_problems(code, entrypoint)
    if problem:
        raise ModuleTaskError("syntax_error" if problem.startswith("syntax") else "not_a_module",
                              problem)
    seeds = _seeds(name)
    original = module_constants(code)

    def run(variants: list[dict[str, int]], device: str, seed: int = seeds[0]
            ) -> list[ModuleDescription]:
        return describe(code, variants, entrypoint=entrypoint, seed=seed, device=device)

    shapes, device = _sensitivity(original, run)
    sizes_consts = sorted(set(shapes.direct.values()), key=list(original).index)
    fed = sorted({c for s in shapes.feeds.values() for c in s}, key=list(original).index)
    try:
        scaled = _scale(original, shapes, fed, device, max_elements, run, MIN_SCALED)
    except ModuleTaskError as exc:
        if exc.reason != "too_large":
            raise
        # Too large at the usual floors: let the constants above them go down to 1 (a batch of
        # 4 is still a batch; kernel sizes and the like stay as they are).
        shapes, device = _sensitivity(original, run)
        scaled = _scale(original, shapes, fed, device, max_elements, run, 1)
    varied = [c for c in sizes_consts if original[c] > MIN_SCALED]
    # Constants the reference must substitute: the sizes, and any other constant scaling moved.
    task_consts = [c for c in original if c in sizes_consts or scaled.get(c) != original[c]]
    defaults = {c: scaled[c] for c in task_consts}

    slots = _case_variants(defaults, varied, {c: original[c] for c in task_consts})
    # Every candidate is at most a few times the defaults (themselves a quarter of the cap), so
    # they all run for real in one CPU pass; the first of each slot that fits is kept.
    flat = [v for slot in slots for v in slot]
    descs = run([defaults, *flat], "cpu")
    if not descs[0].ok:
        raise ModuleTaskError(descs[0].kind or "error",
                              f"does not run at the scaled sizes {defaults}: {descs[0].reason}")
    case_descs = [descs[0]]
    case_sizes = [defaults]
    found = iter(descs[1:])
    for slot in slots:
        pick: tuple[dict[str, int], ModuleDescription] = (defaults, descs[0])
        for v in slot:
            d = next(found)
            if (pick[0] is defaults and v != defaults and d.ok
                    and d.max_elements() <= max_elements and _same_structure(descs[0], d)):
                pick = (v, d)
        case_sizes.append(pick[0])
        case_descs.append(pick[1])
    return _build(name, code, entrypoint, original, defaults, shapes, case_sizes, case_descs,
                  seeds, max_elements, description)


def _seeds(name: str) -> list[int]:
    base = zlib.crc32(name.encode()) % 100_000
    return [base * 10 + i for i in range(5)]


def _sensitivity(original: dict[str, int], run: Callable[..., list[ModuleDescription]]
                 ) -> tuple[_Shapes, str]:
    """Describe at the original sizes and at each constant perturbed (meta; CPU probe when the
    module has ops without meta kernels)."""
    pert = _perturbations(original)
    descs = run([original, *[p for _, p in pert]], "meta")
    device = "meta"
    if not descs[0].ok:
        if descs[0].kind in ("syntax_error", "not_a_module", "import_error", "needs_cuda",
                             "unsupported_dtype"):
            raise ModuleTaskError(descs[0].kind, descs[0].reason)
        probe = {c: min(v, PROBE_LIMIT) for c, v in original.items()}
        pert = _perturbations(probe)
        descs = run([probe, *[p for _, p in pert]], "cpu")
        device = "cpu"
        if not descs[0].ok:
            raise ModuleTaskError(descs[0].kind or "error", descs[0].reason)
    _check_dtypes(descs[0])
    return _analyse(descs[0], [(c, d) for (c, _), d in zip(pert, descs[1:], strict=True)]), device


def _check_dtypes(desc: ModuleDescription) -> None:
    for t in [*desc.tensor_inputs, *desc.parameters]:
        if t.dtype not in INPUT_DTYPES and t.name not in UNUSED_BUFFERS:
            raise ModuleTaskError("unsupported_dtype",
                                  f"input {t.name!r} is {t.dtype}; tasks take float32/float64 "
                                  "or integer arrays")
    for t in desc.outputs:
        if t.dtype not in INPUT_DTYPES | {"float16", "bfloat16"}:
            raise ModuleTaskError("unsupported_dtype", f"output {t.name} is {t.dtype}")


def _scale(original: dict[str, int], shapes: _Shapes, fed: list[str], device: str,
           max_elements: int, run: Callable[..., list[ModuleDescription]], floor: int
           ) -> dict[str, int]:
    """Halve constants until the largest tensor fits (see the module docstring). A constant
    above MIN_SCALED goes down to `floor` at the lowest; the others are not halved."""

    def lowest(c: str) -> int:
        return original[c] if original[c] <= MIN_SCALED else max(1, min(floor, original[c]))

    aim = max(1, max_elements // DEFAULT_SHARE)
    cur = dict(original)
    if shapes.base_sizes != original:  # a CPU probe: start from the probe, which is known to run
        cur = {c: min(v, PROBE_LIMIT) for c, v in original.items()}
    frozen: set[str] = set()
    last: ModuleDescription | None = None
    for _ in range(MAX_ROUNDS):
        ladder = [dict(cur)]
        halved: list[str] = []
        while True:
            est = shapes.estimate(cur)
            over = sorted((k for k in est if est[k] > aim), key=lambda k: -est[k])
            pick = None
            for key in over:
                cands = [c for c in fed if c in shapes.feeding(key) and c not in frozen
                         and cur[c] > lowest(c)]
                if cands:
                    pick = max(cands, key=lambda c: (cur[c], -fed.index(c)))
                    break
            if pick is None:
                break
            cur[pick] = max(lowest(pick), cur[pick] // 2)
            halved.append(pick)
            ladder.append(dict(cur))
        # Meta runs cost nothing: check every step. On the CPU only the last one.
        steps = ladder if device == "meta" else ladder[-1:]
        descs = run(steps, device)
        good = max((i for i, d in enumerate(descs) if d.ok), default=None)
        if good is None:
            if last is None and device == "meta" and descs and descs[0].ok is False:
                raise ModuleTaskError(descs[0].kind or "error", descs[0].reason)
            if device != "meta":
                raise ModuleTaskError(descs[-1].kind or "error",
                                      f"does not run at the scaled sizes: {descs[-1].reason}")
        if device == "meta" and good is not None and good < len(descs) - 1:
            # The step after the last good one broke the module: keep that constant.
            frozen.add(halved[good])
            cur = dict(ladder[good])
            last = descs[good]
            shapes.rebase(cur, last)
            continue
        last = descs[-1]
        if last.max_elements() <= aim:
            return cur
        shapes.rebase(cur, last)
        if not halved:
            break
    if last is not None and last.max_elements() <= max_elements:
        return cur
    biggest = max(last.tensors(), key=lambda t: t.elements) if last is not None else None
    what = (f"tensor {biggest.name!r} {list(biggest.shape)} has {biggest.elements} elements"
            if biggest else "the module")
    raise ModuleTaskError("too_large", f"{what} at the smallest sizes {cur}, over the cap of "
                          f"{max_elements}: no constant feeding it can shrink further (its "
                          "other dimensions are literals, or the module fails when they change)")


def _odd(v: int) -> int:
    return v if v % 2 else max(1, v - 1)


def _case_variants(defaults: dict[str, int], varied: list[str], original: dict[str, int]
                   ) -> list[list[dict[str, int]]]:
    """Per case slot (odd, small, large, odd_large), candidate sizes in preference order."""
    if not varied:
        return [[], [], [], []]

    def each(f: Callable[[int, int], int], only: list[str] | None = None) -> dict[str, int]:
        return {**defaults, **{c: max(1, f(defaults[c], original[c])) for c in (only or varied)}}

    # After the variants of every varied constant, the same change to one constant at a time
    # (largest first): grouped convolutions or group norms need some constants divisible by
    # others, and a convolution needs its input at least as large as its kernel.
    one_by_one = sorted(varied, key=lambda c: -defaults[c])
    odd = [each(lambda v, o: _odd(v)), each(lambda v, o: min(o, v + 1 if v % 2 == 0 else v + 2)),
           *[each(lambda v, o: _odd(v), [c]) for c in one_by_one]]
    small = [each(lambda v, o: v // 2), each(lambda v, o: _odd(v // 2)),
             *[each(lambda v, o: v // 2, [c]) for c in one_by_one]]
    large = [each(lambda v, o: min(o, 2 * v)),
             *[each(lambda v, o: min(o, 2 * v), [c]) for c in one_by_one],
             each(lambda v, o: min(o, v + v // 2))]
    odd_large = [each(lambda v, o: min(o, (v + v // 4) | 1)),
                 each(lambda v, o: min(o, (v + v // 8) | 1)),
                 each(lambda v, o: min(o, v | 1)),
                 *[each(lambda v, o: min(o, (v + v // 4) | 1), [c]) for c in one_by_one]]
    return [odd, small, large, odd_large]


def _same_structure(a: ModuleDescription, b: ModuleDescription) -> bool:
    ka, kb = _keyed(a), _keyed(b)
    return ka.keys() == kb.keys() and all(
        len(ka[k].shape) == len(kb[k].shape) and ka[k].dtype == kb[k].dtype for k in ka)


def _task_dtype(t: TensorInfo, output: bool) -> str:
    if t.dtype == "bool":
        return "uint8"
    if output and t.dtype in ("float16", "bfloat16"):
        return "float32"
    return t.dtype


def _build(name: str, code: str, entrypoint: str, original: dict[str, int],
           defaults: dict[str, int], shapes: _Shapes, case_sizes: list[dict[str, int]],
           case_descs: list[ModuleDescription], seeds: list[int], max_elements: int,
           description: str | None) -> Task:
    d0 = case_descs[0]
    tensors: list[tuple[tuple[str, str], str, TensorInfo]] = []  # (key, task name, info)
    for t in d0.tensor_inputs:
        tensors.append((("input", t.name), t.name, t))
    for t in d0.parameters:
        if t.name.endswith(UNUSED_BUFFERS):
            continue
        tensors.append((("param", t.name), t.name, t))
    outs = d0.outputs
    for i, t in enumerate(outs):
        tensors.append((("output", t.name), "out" if len(outs) == 1 else f"out{i}", t))
    names = [n for _, n, _ in tensors]
    dup = sorted({n for n in names if names.count(n) > 1})
    bad = [n for n in names if not n.isidentifier()]
    if dup or bad:
        raise ModuleTaskError("bad_names", f"tensor names clash or are not identifiers: "
                              f"{dup or bad}")
    module_names = _module_names(code)
    sizes: dict[str, int] = dict(defaults)
    per_case: list[dict[str, int]] = [dict(s) for s in case_sizes]
    specs: dict[str, TensorSpec] = {}
    for key, tname, info in tensors:
        shape: list[int | str] = []
        for i, dim in enumerate(info.shape):
            values = [_keyed(d)[key].shape[i] for d in case_descs]
            c = shapes.direct.get((key, i))
            if c is not None and c in sizes and all(
                    v == cs[c] for v, cs in zip(values, case_sizes, strict=True)):
                shape.append(c)
            elif len(set(values)) == 1:
                shape.append(int(dim))
            else:
                derived = f"{tname}_dim{i}"
                while derived in sizes or derived in module_names:
                    derived += "_"
                sizes[derived] = int(dim)
                for cs, v in zip(per_case, values, strict=True):
                    cs[derived] = int(v)
                shape.append(derived)
        is_out = key[0] == "output"
        specs[tname] = TensorSpec(name=tname, dtype=_task_dtype(info, is_out), shape=shape,
                                  description=_tensor_role(key, info, len(outs)))
    inputs = [specs[n] for (k, n, _) in tensors if k[0] != "output"]
    outputs = [specs[n] for (k, n, _) in tensors if k[0] == "output"]
    drawn = ValueDistribution(kind="reference")
    # get_inputs() mostly draws torch.rand, all in [0, 1): a kernel that mishandles negative
    # values (a LeakyReLU answered with a ReLU) would pass every such case. One case draws the
    # float forward arguments from N(0, 1) instead; parameters stay the model's own.
    signed = {n for (k, n, _) in tensors if k[0] == "input"} & {
        t.name for t in inputs if t.dtype in ("float32", "float64")}
    cases = []
    labels = ["default", "odd", "small", "large", "odd_large"]
    for i, (label, cs) in enumerate(zip(labels, per_case, strict=True)):
        own = {k: v for k, v in cs.items() if v != sizes.get(k)}
        seed_only = i > 0 and not own
        dists = {t.name: drawn for t in inputs}
        text = ("the default sizes with another seed (the size variant did not run)"
                if seed_only else _case_text(label, own))
        if label == SIGNED_CASE and signed:
            dists.update({n: ValueDistribution(kind="normal", mean=0.0, std=1.0) for n in signed})
            text += f"; {', '.join(sorted(signed))} drawn from N(0, 1) (signed values), not get_inputs()"
        cases.append(InputCase(
            name=f"{label}_seed" if seed_only else label, seed=seeds[i], sizes=own,
            distributions=dists, description=text,
        ))
    tolerance, tolerances = _tolerances(d0, outputs)
    scaled = {c: v for c, v in defaults.items() if v != original.get(c)}
    scaling = _scaling_text(original, defaults, scaled, max_elements)
    task = Task(
        name=name, description="placeholder", inputs=inputs, outputs=outputs, sizes=sizes,
        cases=cases, reference=Reference(language="torch", code=code, entrypoint=entrypoint),
        tolerance=tolerance, tolerances=tolerances, tags=["kind:module", "reference:torch"],
        original_sizes={c: original[c] for c in defaults}, scaling=scaling,
    )
    text = description or _description(name, code, task, defaults, d0)
    return task.model_copy(update={"description": text})


def _module_names(code: str) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Name):
            names.add(node.id)
    return names


def _tensor_role(key: tuple[str, str], info: TensorInfo, n_outputs: int) -> str:
    kind, name = key
    extra = f" (the module's {info.dtype}, stored as uint8 0/1)" if info.dtype == "bool" else ""
    if kind == "input":
        return f"forward argument `{name}`, drawn by get_inputs(){extra}"
    if kind == "param":
        return f"the model's parameter or buffer {name} (dots as underscores), as initialised"
    if n_outputs == 1:
        return f"the forward's return value{extra}"
    return f"element {name.removeprefix('out')} of the forward's returned tuple{extra}"


def _case_text(label: str, own: dict[str, int]) -> str:
    what = {"default": "the scaled default sizes", "odd": "odd sizes (not multiples of 32)",
            "small": "smaller sizes", "large": "larger sizes", "odd_large": "larger odd sizes"}
    sizes = ", ".join(f"{k}={v}" for k, v in own.items())
    return what[label] + (f": {sizes}" if sizes else "")


def _tolerances(d0: ModuleDescription, outputs: list[TensorSpec]
                ) -> tuple[Tolerance | None, dict[str, Tolerance]]:
    biggest_input = max((t.elements for t in d0.tensor_inputs), default=0)
    per: dict[str, Tolerance] = {}
    for spec, info in zip(outputs, d0.outputs, strict=True):
        if spec.dtype == "float64":
            per[spec.name] = FLOAT64_TOLERANCE
        elif spec.dtype == "float32" and info.elements < biggest_input:
            per[spec.name] = REDUCTION_TOLERANCE
    return FLOAT_TOLERANCE, per


def _scaling_text(original: dict[str, int], defaults: dict[str, int], scaled: dict[str, int],
                  max_elements: int) -> str:
    if not scaled:
        return ""
    moves = ", ".join(f"{c} {original[c]} -> {v}" for c, v in scaled.items())
    return (f"Sizes scaled down for CPU validation: {moves}. Rule: every tensor (inputs, "
            f"parameters, outputs) has at most {max_elements} elements in every case, the "
            f"defaults at most {max_elements // DEFAULT_SHARE}; the largest constant feeding "
            f"the largest tensor is halved until that holds, never below {MIN_SCALED} unless "
            f"nothing else fits; constants of {MIN_SCALED} or less and constants that change no "
            f"tensor shape are kept.")


def _docstring(code: str, entrypoint: str) -> str:
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return ""
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == entrypoint:
            doc = ast.get_docstring(node) or ""
            return " ".join(doc.strip().split("\n\n")[0].split())
    return ""


def _fmt_shape(spec: TensorSpec) -> str:
    return "[" + ", ".join(str(d) for d in spec.shape) + "]"


def _description(name: str, code: str, task: Task, defaults: dict[str, int],
                 d0: ModuleDescription) -> str:
    title = name.replace("_", " ").strip().capitalize()
    doc = _docstring(code, task.reference.entrypoint)
    lines = [f"{title}.", ""]
    if doc and doc[-1] not in ".!?":
        doc += "."
    lines.append((doc + " " if doc else "") +
                 "Compute what the PyTorch module below returns from its forward pass, with "
                 "the model as constructed from get_init_inputs() and in eval mode.")
    constants = [i for i in d0.inputs if i.tensor is None]
    if constants:
        lines.append("Forward arguments that are constants: " + ", ".join(
            f"`{i.name}` = {i.constant!r}" for i in constants) + ".")
    lines += ["", "Inputs:"]
    lines += [f"- `{t.name}`: {t.dtype} array of shape {_fmt_shape(t)}, {t.description}"
              for t in task.inputs]
    lines.append("Outputs:")
    lines += [f"- `{t.name}`: {t.dtype} array of shape {_fmt_shape(t)}, {t.description}"
              for t in task.outputs]
    own = ", ".join(f"{k} = {v}" for k, v in task.sizes.items() if k in defaults)
    derived = ", ".join(f"{k} = {v}" for k, v in task.sizes.items() if k not in defaults)
    sizes_line = f"Sizes (defaults): {own or 'none'}."
    if derived:
        sizes_line += f" Derived sizes (they follow from the others): {derived}."
    lines += [sizes_line, "", "The module, with the default sizes:", "```python",
              substitute_constants(code, defaults).strip(), "```", "", FILE_CONVENTION]
    return "\n".join(lines)
