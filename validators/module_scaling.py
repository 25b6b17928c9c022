"""How far a PyTorch module file (KernelBench style) must shrink to run on a CPU, and which of its
integers are sizes: the scaling rule shared by the builder (`builder.modules.module_task`, which
turns a module into a task) and the KernelBench verifier (which runs a problem and an answer at
the sizes `scale_module` picks).

Which integers are sizes. A module-level integer constant (`module_constants`: `NAME = <int>`,
also each name of `a, b = <int>, <int>` and of `a = b = <int>`) is a *size* when doubling it
(or adding one) turns some tensor dimension from its value into the new value:
`batch_size`, `dim`, `in_channels`, `kernel_size` are sizes; `reduce_dim = 1`, `stride`,
`groups` are not (they change shapes, but never into themselves). A constant whose change
alters a dimension in any way *feeds* that dimension. This is decided on the `meta` device, so
GPU-sized originals cost nothing; a module whose ops have no meta kernels is probed on the CPU
at small sizes (every constant above 32 set to 32) instead.

Literal dimensions. Sizes written as integer literals (`torch.rand(batch_size, 8, 256, 256)`,
`return [3, 96, 11]` in get_init_inputs, `input_shape = (4096,)`) are first named
(`validators.torch_module.name_literal_sizes`: every literal above 8 in a shape argument of a
torch factory in get_inputs/get_init_inputs, in the list get_init_inputs returns, or in a
module-level tuple or list of integers, `[1024] * 16` included, becomes the constant
`literal_<value>`, one per value), then analysed like the constants; a named literal that the
analysis does not show to be a size (a constructor argument that is no dimension) is put back
as written. When the sizes stay too large because a literal cannot change apart from a size
constant of the same value (broadcasting ties `torch.rand(batch_size, 2048)` to
`torch.rand(batch_size)` with batch_size = 2048), the literal is tried written as that constant.
What was named, where, is recorded (`ScaledModule.literals`, `describe_literals`).

Scaling rule: every tensor (forward inputs, parameters and buffers, outputs) must have at most
`max_elements` elements; the sizes aim at `aim` (the builder: a quarter of the cap, so that a
larger case still fits). While the estimated largest tensor is over the aim, the largest
constant feeding it is halved, never below 8 (and constants of 8 or less, such as kernel sizes,
never); only when that cannot bring the tensors under `max_elements` may the constants above 8
go down to 1. Constants that feed no tensor are never touched. Estimates scale each dimension
linearly with the constants feeding it; every step is then checked by describing the module
(meta) at it, a step that makes the module fail freezes that constant, and the loop goes on
from the real shapes. A module whose tensors stay over `max_elements` at the smallest sizes is
`too_large`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from .torch_module import (
    DescribeSession,
    LiteralSize,
    ModuleDescription,
    TensorInfo,
    describe_literals,
    describe_many,
    module_constants,
    module_problems,
    name_literal_sizes,
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


class ModuleTaskError(ValueError):
    """A module that cannot be scaled or become a task: `reason` is a short code (`syntax_error`,
    `not_a_module`, `import_error`, `needs_cuda`, `unsupported_dtype`, `too_large`,
    `timeout`, `memory`, `bad_names`, `error`), `detail` says why."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail



# --- tensors of a description, keyed so that descriptions at other sizes line up ----------

def keyed_tensors(desc: ModuleDescription) -> dict[tuple[str, str], TensorInfo]:
    out: dict[tuple[str, str], TensorInfo] = {}
    for t in desc.tensor_inputs:
        out[("input", t.name)] = t
    for t in desc.parameters:
        out[("param", t.name)] = t
    for t in desc.outputs:
        out[("output", t.name)] = t
    return out


@dataclass
class ShapeAnalysis:
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
                    # A constant left as it was leaves the dimension as it was, whatever its
                    # value: a `padding = 0` feeding an output length must not zero it.
                    if sizes[f] != self.base_sizes[f]:
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
        self.base = keyed_tensors(desc)


def _perturbations(sizes: dict[str, int]) -> list[tuple[str, dict[str, int]]]:
    out = []
    for c, v in sizes.items():
        out.append((c, {**sizes, c: v * 2 if v > 0 else 1}))
        out.append((c, {**sizes, c: v + 1}))
    return out


def _analyse(base: ModuleDescription, perturbed: list[tuple[str, ModuleDescription]]) -> ShapeAnalysis:
    keyed = keyed_tensors(base)
    direct: dict[tuple[tuple[str, str], int], str] = {}
    feeds: dict[tuple[tuple[str, str], int], set[str]] = {}
    for c, desc in perturbed:
        if not desc.ok:
            continue
        old_v, new_v = base.sizes[c], desc.sizes[c]
        other = keyed_tensors(desc)
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
    return ShapeAnalysis(dict(base.sizes), keyed, direct, feeds)

# --- scaling ----------------------------------------------------------------------------------

def _sensitivity(original: dict[str, int], run: Callable[..., list[ModuleDescription]],
                 check: Callable[[ModuleDescription], None] | None = None
                 ) -> tuple[ShapeAnalysis, str]:
    """Describe at the original sizes and at each constant perturbed (meta; CPU probe when the
    module has ops without meta kernels). `check` may refuse the module from its description."""
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
            kept = _kept_probe(original, probe, descs[0], run)
            if kept is not None:
                probe, pert = kept, _perturbations(kept)
                descs = run([probe, *[p for _, p in pert]], "cpu")
        if not descs[0].ok:
            raise ModuleTaskError(descs[0].kind or "error", descs[0].reason)
    if check is not None:
        check(descs[0])
    return _analyse(descs[0], [(c, d) for (c, _), d in zip(pert, descs[1:], strict=True)]), device


def _kept_probe(original: dict[str, int], probe: dict[str, int], failed: ModuleDescription,
                run: Callable[..., list[ModuleDescription]]) -> dict[str, int] | None:
    """The CPU probe with one clamped constant kept at its own value, when the module refused
    the probe. Some constants are not free: an `image_size` the model also takes from its own
    default (Swin's "Input image size (32*32) doesn't match model (224*224)") must stay as
    written; the sensitivity analysis then shows that it cannot be scaled."""
    if failed.kind in ("syntax_error", "not_a_module", "import_error", "needs_cuda",
                       "unsupported_dtype", "memory", "timeout"):
        return None
    clamped = [c for c, v in original.items() if v > probe[c]]
    kept = [{**probe, c: original[c]} for c in clamped]
    fine = [(k, d.max_elements()) for k, d in zip(kept, run(kept, "cpu"), strict=True) if d.ok]
    return min(fine, key=lambda kd: kd[1])[0] if fine else None


def _scale(original: dict[str, int], shapes: ShapeAnalysis, fed: list[str], device: str,
           max_elements: int, run: Callable[..., list[ModuleDescription]], floor: int,
           aim: int) -> dict[str, int]:
    """Halve constants until the largest tensor fits (see the module docstring). A constant
    above MIN_SCALED goes down to `floor` at the lowest; the others are not halved."""

    def lowest(c: str) -> int:
        return original[c] if original[c] <= MIN_SCALED else max(1, min(floor, original[c]))

    aim = max(1, aim)
    cur = dict(original)
    if shapes.base_sizes != original:  # a CPU probe: start from the probe, which is known to run
        cur = dict(shapes.base_sizes)
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



# --- the plan ---------------------------------------------------------------------------------

Describer = Callable[..., list[ModuleDescription]]
"""`validators.torch_module.describe_many`'s signature: (code, variants, *, entrypoint, seed,
device) -> one description per variant."""


@dataclass
class SizePlan:
    """What the scaling decided for one module file (`plan_sizes`)."""

    code: str
    """The file with its literal dimensions named (the original text when there were none)."""
    original: dict[str, int]
    """Every integer constant of `code` at its original value (named literals included)."""
    sizes: dict[str, int]
    """Every integer constant of `code` at the value to use (equal to `original` when the
    module fits as it is)."""
    shapes: ShapeAnalysis
    literals: list[LiteralSize] = field(default_factory=list)
    """The literals that were named (only those the analysis shows to be sizes)."""

    @property
    def size_constants(self) -> list[str]:
        """The constants that are sizes (equal some dimension), in order of appearance."""
        return sorted(set(self.shapes.direct.values()), key=list(self.original).index)

    @property
    def scaled(self) -> dict[str, int]:
        """The constants that moved, at their new values."""
        return {c: v for c, v in self.sizes.items() if v != self.original.get(c)}


def plan_sizes(code: str, run: Callable[[str, list[dict[str, int]], str], list[ModuleDescription]],
               *, max_elements: int = DEFAULT_MAX_ELEMENTS, aim: int | None = None,
               check: Callable[[ModuleDescription], None] | None = None) -> SizePlan:
    """Name the literal dimensions, find the sizes, scale them (the module docstring's rule).
    `run(code, variants, device)` describes `code` at each variant. Raises ModuleTaskError."""
    target = max_elements // DEFAULT_SHARE if aim is None else min(aim, max_elements)
    try:
        return _plan(code, run, max_elements, target, check, None)
    except ModuleTaskError as exc:
        if exc.reason != "too_large":
            raise
        # A literal equal to a size constant may be that constant written out, so that neither
        # can change alone (`torch.rand(batch_size, *input_shape) * torch.randint(.., (batch_size,))`
        # with input_shape = (32768,) and batch_size = 32768). Try them tied together.
        constants = module_constants(code)
        literals = name_literal_sizes(code)[1]
        tie: dict[int, str] = {}
        for r in literals:
            same = [c for c, v in constants.items() if v == r.value]
            if same and r.value not in tie:
                tie[r.value] = same[0]
        if not tie:
            raise
        try:
            return _plan(code, run, max_elements, target, check, tie)
        except ModuleTaskError:
            raise exc from None


def _plan(code: str, run: Callable[[str, list[dict[str, int]], str], list[ModuleDescription]],
          max_elements: int, target: int, check: Callable[[ModuleDescription], None] | None,
          tie: dict[int, str] | None) -> SizePlan:
    named, literals = name_literal_sizes(code, tie=tie)

    def bound(text: str) -> Callable[..., list[ModuleDescription]]:
        return lambda variants, device: run(text, variants, device)

    original = module_constants(named)
    shapes, device = _sensitivity(original, bound(named), check)
    if literals:
        # Only literals that the analysis shows to be dimensions stay named: a constructor
        # argument that is a count of something else, or that the module cannot change, goes
        # back to the text as written.
        direct = set(shapes.direct.values())
        keep = {r.value for r in literals if r.name in direct}
        if keep != {r.value for r in literals}:
            named, literals = name_literal_sizes(
                code, keep, {v: n for v, n in (tie or {}).items() if v in keep})
            original = module_constants(named)
            shapes, device = _sensitivity(original, bound(named), check)
    fed = sorted({c for s in shapes.feeds.values() for c in s}, key=list(original).index)
    try:
        scaled = _scale(original, shapes, fed, device, max_elements, bound(named), MIN_SCALED,
                        target)
    except ModuleTaskError as exc:
        if exc.reason != "too_large":
            raise
        # Too large at the usual floors: let the constants above them go down to 1 (a batch of
        # 4 is still a batch; kernel sizes and the like stay as they are).
        shapes, device = _sensitivity(original, bound(named), check)
        scaled = _scale(original, shapes, fed, device, max_elements, bound(named), 1, target)
    return SizePlan(code=named, original=original, sizes=scaled, shapes=shapes,
                    literals=literals)


@dataclass(frozen=True)
class ScaledModule:
    """A module file at the sizes to run it at (`scale_module`)."""

    code: str
    """The file at those sizes: literal dimensions named, size constants substituted. Runs as
    the original does (same classes and functions), only smaller."""
    named_code: str
    """The file with its literal dimensions named, at the original values."""
    original_sizes: dict[str, int]
    """The size constants (named literals included) as the file wrote them."""
    sizes: dict[str, int]
    """The same constants at the sizes used."""
    literals: tuple[LiteralSize, ...]
    """Which literal, at which line, became which named size."""
    record: str
    """What was renamed and scaled, in words (empty when the file runs as written)."""

    @property
    def scaled(self) -> bool:
        return self.sizes != self.original_sizes


def scale_module(code: str, *, max_elements: int = DEFAULT_MAX_ELEMENTS,
                 aim: int | None = None, entrypoint: str = "Model",
                 describe: Describer = describe_many, seed: int = 0) -> ScaledModule:
    """The module file `code` at the sizes to validate it at on a CPU: the original sizes when
    every tensor has at most `aim` elements (default: `max_elements`), otherwise the sizes the
    scaling rule (module docstring) gives, literal dimensions included. Every tensor then has at
    most `max_elements` elements. Describing runs in the sandbox (meta device: nothing is
    computed at the original sizes). Raises ModuleTaskError (`too_large`, `needs_cuda`,
    `syntax_error`, `not_a_module`, `import_error`, `timeout`, `memory`, `error`)."""
    problem = module_problems(code, entrypoint)
    if problem:
        raise ModuleTaskError("syntax_error" if problem.startswith("syntax") else "not_a_module",
                              problem)
    if describe is describe_many:  # one sandboxed process for the whole plan
        with DescribeSession() as session:
            return scale_module(code, max_elements=max_elements, aim=aim, entrypoint=entrypoint,
                                describe=session, seed=seed)

    def run(text: str, variants: list[dict[str, int]], device: str) -> list[ModuleDescription]:
        return describe(text, variants, entrypoint=entrypoint, seed=seed, device=device)

    plan = plan_sizes(code, run, max_elements=max_elements,
                      aim=max_elements if aim is None else aim)
    keys = [c for c in plan.original if c in plan.size_constants or c in plan.scaled]
    original = {c: plan.original[c] for c in keys}
    sizes = {c: plan.sizes[c] for c in keys}
    return ScaledModule(
        code=substitute_constants(plan.code, plan.scaled) if plan.scaled else plan.code,
        named_code=plan.code, original_sizes=original, sizes=sizes,
        literals=tuple(plan.literals), record=scaling_record(plan, max_elements))


def scaling_record(plan: SizePlan, max_elements: int, aim: int | None = None) -> str:
    """The named literals and the scaled constants, in words (empty when nothing moved)."""
    parts = []
    if plan.literals:
        parts.append(describe_literals(plan.literals))
    if plan.scaled:
        moves = ", ".join(f"{c} {plan.original[c]} -> {v}" for c, v in plan.scaled.items())
        parts.append(f"Sizes scaled down for CPU validation: {moves} (every tensor at most "
                     f"{max_elements} elements{f', aiming at {aim}' if aim else ''}).")
    return " ".join(parts)
