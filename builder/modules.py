"""Turn a PyTorch module file (KernelBench style) into a `schemas.Task` with a torch reference.

`module_task(name, code)` describes the module in the sandbox (`validators.torch_module`),
scales its sizes down for CPU validation, and builds the task: inputs, outputs, sizes, five
cases, tolerances, a level-1 style description and `Reference(language="torch", code=...)`,
the file as written or, when it writes sizes as literals, with those literals named. It raises
`ModuleTaskError(reason, detail)` when the module cannot become a task.

Which integers are sizes and how they shrink is `validators.module_scaling`'s rule (shared with
the KernelBench verifier): module-level integer constants, and integer literals written as
tensor dimensions (`torch.rand(batch_size, 8, 256, 256)`, `return [3, 96, 11]` in
get_init_inputs, `input_shape = (4096,)`), which are first named `literal_<value>`; a size is a
constant whose change turns some tensor dimension into the new value (decided on the `meta`
device). Every tensor (forward inputs, parameters and buffers, outputs) must have at most
`max_elements` elements in every case; the defaults aim at a quarter of that, so that a larger
case still fits; the largest constant feeding the largest tensor is halved, never below 8
unless nothing else fits, and constants of 8 or less (kernel sizes, RGB channels) never. The
task records it: `original_sizes`, and `scaling` (and the description) say which literal at
which line became which size and what was scaled. A module whose tensors stay over
`max_elements` at the smallest sizes (a dimension that no size feeds, or that the module cannot
change) is `too_large`.

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

from schemas import InputCase, Reference, Task, TensorSpec, Tolerance, ValueDistribution
from validators.module_scaling import (  # noqa: F401  (re-exported: the builder's names)
    DEFAULT_MAX_ELEMENTS,
    DEFAULT_SHARE,
    MIN_SCALED,
    PROBE_LIMIT,
    Describer,
    ModuleTaskError,
    ShapeAnalysis,
    SizePlan,
    keyed_tensors,
    plan_sizes,
    scaling_record,
)
from validators.torch_module import (
    DescribeSession,
    ModuleDescription,
    TensorInfo,
    describe_literals,
    describe_many,
    module_problems,
    substitute_constants,
)

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


SIGNED_CASE = "small"
"""The case whose float forward arguments are signed N(0, 1) values rather than get_inputs()'s."""




# --- the conversion -------------------------------------------------------------------------

def module_task(name: str, code: str, *, describe: Describer = describe_many,
                max_elements: int = DEFAULT_MAX_ELEMENTS, description: str | None = None,
                entrypoint: str = "Model") -> Task:
    """The task a module file defines (see the module docstring for every rule).

    `describe` runs the module (default: in the sandbox, one process for the whole plan);
    `description` replaces the generated one. Raises ModuleTaskError."""
    if describe is describe_many:
        with DescribeSession() as session:
            return module_task(name, code, describe=session, max_elements=max_elements,
                               description=description, entrypoint=entrypoint)
    problem = module_problems(code, entrypoint)
    if problem:
        raise ModuleTaskError("syntax_error" if problem.startswith("syntax") else "not_a_module",
                              problem)
    seeds = _seeds(name)

    def describe_code(text: str, variants: list[dict[str, int]], device: str
                      ) -> list[ModuleDescription]:
        return describe(text, variants, entrypoint=entrypoint, seed=seeds[0], device=device)

    plan = plan_sizes(code, describe_code, max_elements=max_elements, check=_check_dtypes)
    # From here on the module is the one with its literal dimensions named: the reference runs
    # it, the description shows it, and its named literals are sizes like the constants.
    code, original, shapes, scaled = plan.code, plan.original, plan.shapes, plan.sizes
    sizes_consts = plan.size_constants

    def run(variants: list[dict[str, int]], device: str) -> list[ModuleDescription]:
        return describe_code(code, variants, device)

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
                  seeds, max_elements, description, plan)


def _seeds(name: str) -> list[int]:
    base = zlib.crc32(name.encode()) % 100_000
    return [base * 10 + i for i in range(5)]


def _check_dtypes(desc: ModuleDescription) -> None:
    for t in [*desc.tensor_inputs, *desc.parameters]:
        if t.dtype not in INPUT_DTYPES and t.name not in UNUSED_BUFFERS:
            raise ModuleTaskError("unsupported_dtype",
                                  f"input {t.name!r} is {t.dtype}; tasks take float32/float64 "
                                  "or integer arrays")
    for t in desc.outputs:
        if t.dtype not in INPUT_DTYPES | {"float16", "bfloat16"}:
            raise ModuleTaskError("unsupported_dtype", f"output {t.name} is {t.dtype}")



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
    ka, kb = keyed_tensors(a), keyed_tensors(b)
    return ka.keys() == kb.keys() and all(
        len(ka[k].shape) == len(kb[k].shape) and ka[k].dtype == kb[k].dtype for k in ka)


def _task_dtype(t: TensorInfo, output: bool) -> str:
    if t.dtype == "bool":
        return "uint8"
    if output and t.dtype in ("float16", "bfloat16"):
        return "float32"
    return t.dtype


def _build(name: str, code: str, entrypoint: str, original: dict[str, int],
           defaults: dict[str, int], shapes: ShapeAnalysis, case_sizes: list[dict[str, int]],
           case_descs: list[ModuleDescription], seeds: list[int], max_elements: int,
           description: str | None, plan: SizePlan) -> Task:
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
            values = [keyed_tensors(d)[key].shape[i] for d in case_descs]
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
    if plan.literals:
        # Which literal of the file became which size is part of the task, not only of the code.
        scaling = " ".join(filter(None, [describe_literals(plan.literals), scaling]))
    task = Task(
        name=name, description="placeholder", inputs=inputs, outputs=outputs, sizes=sizes,
        cases=cases, reference=Reference(language="torch", code=code, entrypoint=entrypoint),
        tolerance=tolerance, tolerances=tolerances, tags=["kind:module", "reference:torch"],
        original_sizes={c: original[c] for c in defaults}, scaling=scaling,
    )
    text = description or _description(name, code, task, defaults, d0, plan)
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
                 d0: ModuleDescription, plan: SizePlan) -> str:
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
    lines.append(sizes_line)
    if plan.literals:
        lines.append(describe_literals(plan.literals))
    lines += ["", "The module, with the default sizes:", "```python",
              substitute_constants(code, defaults).strip(), "```", "", FILE_CONVENTION]
    return "\n".join(lines)
