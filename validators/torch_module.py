"""PyTorch module files (KernelBench style) read without running them, and described by running
them in the sandbox.

A module file defines `class Model(nn.Module)`, `get_inputs()` (the forward arguments) and
`get_init_inputs()` (the constructor arguments), with module-level integer constants for the
sizes (`batch_size = 16`). `module_constants` reads those constants from the AST;
`substitute_constants` rewrites their values (the torch reference and `describe_*` use it to run
a module at other sizes); `describe_module` / `describe_many` run the module in the sandbox and
report the forward's argument names and every tensor's shape and dtype, or why it cannot run.

Describing on the `meta` device (`device="meta"`) runs nothing but shape inference: a module
written for 4096 x 393216 inputs is described in milliseconds and without memory (recurrent
layers run two steps of their sequence there, `SHORT_RNN`: every step costs Python shape rules).
The `cpu` device really computes (at sizes the caller has already scaled down).
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import json
import os
import select
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .compare import read_no_follow
from .sandbox import (
    GIB,
    HARNESS_READY,
    READY_LINE,
    Limits,
    harness_failure,
    harness_reached,
    python_executable,
    python_prefixes,
    run_sandboxed,
    workspace,
)

REQUIRED_NAMES = ("get_inputs", "get_init_inputs")

DESCRIBE_LIMITS = Limits(cpu_seconds=240, wall_seconds=300, memory_bytes=16 * GIB,
                         file_size_bytes=256 << 20, max_processes=64, output_bytes=256 << 10,
                         disk_bytes=1 * GIB)
"""Address space is generous because importing torch maps several GiB of virtual memory it never
touches (measured: peak RSS of an import plus a small op is about 230 MB)."""

TORCH_ENV = {"PYTHONDONTWRITEBYTECODE": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
             "OPENBLAS_NUM_THREADS": "1", "TORCH_NUM_THREADS": "1"}
TORCH_PREIMPORT = ("torch", "safetensors.torch", "torch._inductor.config")
"""What every torch harness imports first: its runs fork from a zygote that already did
(`validators.zygote`), instead of paying torch's import each. `torch._inductor.config` is what
`torch.use_deterministic_algorithms` (every harness's `load_module`) imports, and with it
torch._dynamo: 1.5-2 CPU-s per run, most of a small reference's time, when the zygote had not."""

# --- reading the AST ------------------------------------------------------------------------

_INT_OPS: dict[type, Any] = {
    ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
    ast.FloorDiv: lambda a, b: a // b, ast.Pow: lambda a, b: a ** b,
    ast.LShift: lambda a, b: a << b, ast.RShift: lambda a, b: a >> b,
}


def _int_value(node: ast.expr) -> int | None:
    """The value of an integer literal expression (`4096`, `2048 * 2`, `1 << 20`), else None.

    Names are not followed: a constant computed from another constant moves with it when that
    one is substituted, so only the independent ones are sizes."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _int_value(node.operand)
        return None if v is None else (-v if isinstance(node.op, ast.USub) else v)
    if isinstance(node, ast.BinOp) and type(node.op) in _INT_OPS:
        a, b = _int_value(node.left), _int_value(node.right)
        if a is None or b is None:
            return None
        if isinstance(node.op, ast.Pow) and not 0 <= b <= 64:
            return None
        if isinstance(node.op, (ast.LShift, ast.RShift)) and not 0 <= b <= 64:
            return None
        if isinstance(node.op, ast.FloorDiv) and b == 0:
            return None
        return _INT_OPS[type(node.op)](a, b)
    return None


@dataclass(frozen=True)
class _Binding:
    """One module-level integer constant as the AST binds it: `name` to the int expression
    `node` of value `value`. `chained` is the statement `a = b = <int>` it came from, whose one
    value node all its names share (None for `NAME = <int>`, `NAME: int = <int>` and an element
    of `a, b = <int>, <int>`, where `node` is this name's own)."""

    name: str
    node: ast.expr
    value: int
    chained: ast.Assign | None = None


def _paired(target: ast.expr, value: ast.expr) -> list[tuple[ast.Name, ast.expr]]:
    """(name, value node) for each name an unpacking assignment binds to a literal element:
    `a, b = 1, 2`, `[a, b] = (1, 2)`, `(a, b), c = (1, 2), 3`. Names without an element of
    their own (`a, *b = ...`, `a, b = pair`) bind nothing here."""
    if isinstance(target, ast.Name):
        return [(target, value)]
    if not (isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List))
            and len(target.elts) == len(value.elts)
            and not any(isinstance(e, ast.Starred) for e in (*target.elts, *value.elts))):
        return []
    out = []
    for t, v in zip(target.elts, value.elts, strict=True):
        out += _paired(t, v)
    return out


def _constant_assignments(tree: ast.Module) -> list[_Binding]:
    """Every module-level binding of a name to an integer literal expression, in order:
    `NAME = <int>`, `NAME: int = <int>`, each name of `a, b = <int>, <int>` (nested and list
    forms too) and each name of the chained `a = b = <int>`."""
    out: list[_Binding] = []
    for stmt in tree.body:
        if isinstance(stmt, ast.AnnAssign) and stmt.value is not None and stmt.simple:
            pairs = _paired(stmt.target, stmt.value)
        elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            pairs = _paired(stmt.targets[0], stmt.value)
        elif isinstance(stmt, ast.Assign) and all(isinstance(t, ast.Name) for t in stmt.targets):
            v = _int_value(stmt.value)
            if v is not None:
                out += [_Binding(t.id, stmt.value, v, stmt) for t in stmt.targets
                        if isinstance(t, ast.Name)]
            continue
        else:
            continue
        for name, node in pairs:
            v = _int_value(node)
            if v is not None:
                out.append(_Binding(name.id, node, v))
    return out


def module_constants(code: str) -> dict[str, int]:
    """Module-level non-negative integer constants (`NAME = <int expression>`, also bound by
    `a, b = <int>, <int>` or `a = b = <int>`), by name, in order of appearance (the last
    assignment wins). Nothing is executed. Raises SyntaxError."""
    found: dict[str, int] = {}
    for b in _constant_assignments(ast.parse(code)):
        if b.value >= 0:
            found[b.name] = b.value
        else:
            found.pop(b.name, None)
    return found


def substitute_constants(code: str, sizes: dict[str, int]) -> str:
    """`code` with the value of every module-level constant named in `sizes` replaced by the
    size (the rest of the text, comments included, untouched). Names in `sizes` that the code
    does not define are ignored (they are derived sizes the code computes).

    A chained assignment (`height = width = 256`) gives each name its own statement on the same
    line when one of them changes (`height = 64; width = 256`), so that the names change apart;
    line numbers stay as they were."""
    tree = ast.parse(code)
    lines = code.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(line: int, col: int | None) -> int:
        return starts[line - 1] + _byte_col(lines[line - 1], col)

    edits = []
    chained: dict[int, tuple[ast.Assign, list[_Binding]]] = {}
    for b in _constant_assignments(tree):
        if b.chained is not None:
            chained.setdefault(id(b.chained), (b.chained, []))[1].append(b)
        elif b.name in sizes:
            edits.append((offset(b.node.lineno, b.node.col_offset),
                          offset(b.node.end_lineno or b.node.lineno, b.node.end_col_offset),
                          str(int(sizes[b.name]))))
    for stmt, bindings in chained.values():
        if not any(b.name in sizes for b in bindings):
            continue
        begin = offset(stmt.lineno, stmt.col_offset)
        end = offset(stmt.end_lineno or stmt.lineno, stmt.end_col_offset)
        # Every name at its value as an int (`1 << 10` becomes 1024 for the names not in sizes).
        values = [str(int(sizes.get(b.name, b.value))) for b in bindings]
        lost = code[begin:end].count("\n")
        if lost:  # a statement over several lines keeps them (inside parentheses)
            values[-1] = "(" + values[-1] + "\n" * lost + ")"
        text = "; ".join(f"{b.name} = {v}" for b, v in zip(bindings, values, strict=True))
        edits.append((begin, end, text))
    for begin, end, text in sorted(edits, reverse=True):
        code = code[:begin] + text + code[end:]
    return code


def _byte_col(line: str, col: int | None) -> int:
    """ast columns count UTF-8 bytes; string slicing counts characters."""
    return len(line.encode("utf-8")[: col or 0].decode("utf-8", "replace"))


def module_problems(code: str, entrypoint: str = "Model") -> str:
    """Why `code` is not a module file (empty when it is): a syntax error, or a missing class
    or function. AST only."""
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        return f"syntax error: {exc.msg} (line {exc.lineno})"
    classes = {s.name for s in tree.body if isinstance(s, ast.ClassDef)}
    funcs = {s.name for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
    missing = ([f"class {entrypoint}"] if entrypoint not in classes else []) + [
        f"function {n}()" for n in REQUIRED_NAMES if n not in funcs]
    return f"defines no {', no '.join(missing)}" if missing else ""


# --- running inside the sandbox -------------------------------------------------------------

GUARD = r'''
def _ckd_install_guard(prefixes, allow_processes=False, libraries=()):
    # Defence in depth on top of the sandbox (which already has no network and hides the
    # caller's files): the module may read the Python installation and its work directory,
    # and may not open sockets, start processes or load other native libraries.
    # allow_processes: torch's real extension builder (the cuda backend) runs ninja and nvcc;
    # the sandbox, not this hook, is what holds those processes.
    # libraries: the answer's own extensions, which `load_inline(..., is_python_module=False)`
    # loads through ctypes (torch.ops.load_library): files the verifier built (cpu), or the
    # folder torch's builder writes them to (cuda: the answer runs nvcc there anyway).
    import os, sys
    own_libs = tuple(os.path.realpath(p) for p in libraries)
    work = os.path.realpath(os.getcwd()).rstrip("/") + "/"
    readable = tuple(os.path.realpath(p).rstrip("/") + "/" for p in prefixes)
    writing = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
    processes = ("subprocess.", "os.system", "os.exec", "os.posix_spawn", "os.spawn",
                 "os.fork", "os.forkpty")
    blocked = ("socket.", "pty.", "ctypes.dlopen", "os.kill", "os.killpg",
               "webbrowser.", "urllib.", "http.", "ftplib.", "smtplib.", "os.chroot")
    if not allow_processes:
        blocked += processes
    def own_library(args):
        name = args[0] if args else None
        if not isinstance(name, (str, bytes)):
            return False
        p = os.path.realpath(os.fsdecode(name))
        return any(p == lib or p.startswith(lib + "/") for lib in own_libs)
    def hook(event, args):
        if event == "ctypes.dlopen" and own_library(args):
            return
        if event.startswith(blocked):
            raise PermissionError("the reference may not use %s" % event)
        if event == "open":
            path, mode, flags = args
            if isinstance(path, int):
                return
            p = os.path.realpath(os.fsdecode(path))
            if (p + "/").startswith(work):
                return
            wants_write = (any(c in mode for c in "wax+") if isinstance(mode, str)
                           else bool((flags or 0) & writing))
            if not wants_write and p.startswith(readable):
                return
            raise PermissionError("the reference may not open %s" % os.fsdecode(path))
    sys.addaudithook(hook)
'''

COMMON = r'''
import torch
torch.set_num_threads(1)
try:
    torch.set_num_interop_threads(1)
except RuntimeError:
    pass

DTYPE_NAMES = {torch.float32: "float32", torch.float64: "float64", torch.float16: "float16",
               torch.bfloat16: "bfloat16", torch.int8: "int8", torch.int16: "int16",
               torch.int32: "int32", torch.int64: "int64", torch.uint8: "uint8",
               torch.bool: "bool", torch.complex64: "complex64", torch.complex128: "complex128"}
for _n in ("uint16", "uint32", "uint64"):
    if hasattr(torch, _n):
        DTYPE_NAMES[getattr(torch, _n)] = _n

def dtype_name(dt):
    return DTYPE_NAMES.get(dt, str(dt).replace("torch.", ""))

def load_module(src, entry, seed):
    """Seed, run the module file, build the model (eval mode) from get_init_inputs(), then draw
    get_inputs(): the parameters' initialisation consumes the seeded generator first."""
    torch.manual_seed(seed)
    try:
        torch.use_deterministic_algorithms(True, warn_only=True)
    except Exception:
        pass
    ns = {"__name__": "reference_module"}
    exec(compile(src, "module.py", "exec"), ns)
    cls = ns.get(entry)
    if not (isinstance(cls, type) and issubclass(cls, torch.nn.Module)):
        raise NameError("module defines no nn.Module class %r" % entry)
    for fn in ("get_inputs", "get_init_inputs"):
        if not callable(ns.get(fn)):
            raise NameError("module defines no function %s()" % fn)
    return ns, cls

def named_tensors(model):
    """Parameters then buffers, dots as underscores (conv.weight -> conv_weight)."""
    out = {}
    for n, p in model.named_parameters():
        out[n.replace(".", "_")] = p
    for n, b in model.named_buffers():
        out.setdefault(n.replace(".", "_"), b)
    return out

def as_list(result):
    if isinstance(result, (tuple, list)):
        return list(result)
    return [result]

def error_kind(exc):
    text = "%s: %s" % (type(exc).__name__, exc)
    low = text.lower()
    if "cuda" in low or "nccl" in low or "cudnn" in low:
        return "needs_cuda"
    if isinstance(exc, ImportError):
        return "import_error"
    if isinstance(exc, MemoryError) or "can't allocate memory" in low or "out of memory" in low:
        return "memory"
    if isinstance(exc, SyntaxError):
        return "syntax_error"
    if isinstance(exc, NameError) and "module defines no" in str(exc):
        return "not_a_module"
    if "complex" in low:
        return "unsupported_dtype"
    return "error"
'''

SHORT_RNN = r'''
RNN_SHORT_STEPS = 2

class ShortRNN:
    """torch._VF as nn.RNN, nn.LSTM and nn.GRU call it, for a forward on the meta device: the
    recurrence runs over the first RNN_SHORT_STEPS steps only, and the output gets the full
    sequence's shape in the layout the full run gives it. On meta every step costs ~1.5 ms of
    Python shape rules (512 steps x 6 layers: 5 s a describe); the shapes and dtypes, and every
    check the op makes (all per step), are those of the full run. Packed sequences, other
    devices, or an output laid out otherwise than expected run the real op."""

    def __init__(self, vf):
        self._vf = vf

    def __getattr__(self, name):
        op = getattr(self._vf, name)
        if name not in ("lstm", "gru", "rnn_tanh", "rnn_relu"):
            return op

        def run(*args, **kwargs):
            # (input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
            # batch_first); the packed form has batch_sizes second and no batch_first.
            if (kwargs or len(args) != 9 or not isinstance(args[0], torch.Tensor)
                    or args[0].device.type != "meta" or args[0].dim() != 3
                    or not isinstance(args[3], bool) or not isinstance(args[8], bool)):
                return op(*args, **kwargs)
            x, seq = args[0], (1 if args[8] else 0)
            steps = x.shape[seq]
            if steps <= RNN_SHORT_STEPS:
                return op(*args)
            short = op(x.narrow(seq, 0, RNN_SHORT_STEPS), *args[1:])
            out = short[0]

            def layout(n):  # computed time-major, then transposed for batch_first
                t = torch.empty((n, out.shape[1 - seq], out.shape[-1]), dtype=out.dtype,
                                device=out.device)
                return t.transpose(0, 1) if seq else t

            if (out.dim() != 3 or layout(RNN_SHORT_STEPS).shape != out.shape
                    or layout(RNN_SHORT_STEPS).stride() != out.stride()):
                return op(*args)
            return (layout(steps), *short[1:])
        return run

@contextlib.contextmanager
def short_rnns(device):
    import torch.nn.modules.rnn as rnn
    real = rnn._VF
    if device == "meta":
        rnn._VF = ShortRNN(real)
    try:
        yield
    finally:
        rnn._VF = real
'''
"""The describe harness's shortcut for recurrent layers on the meta device (`ShortRNN`,
`short_rnns`): their shapes without running every step of the sequence."""

_DESCRIBE_FUNCS = COMMON + GUARD + r'''
import contextlib, inspect, json, os, sys, traceback
spec = json.load(open("describe.json"))
_ckd_install_guard(spec["prefixes"])
''' + READY_LINE + SHORT_RNN + r'''

def jsonable(v):
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, (list, tuple)) and all(jsonable(x) is not NotImplemented for x in v):
        return [jsonable(x) for x in v]
    return NotImplemented

def forward_names(cls, n):
    names = []
    rest = None
    params = list(inspect.signature(cls.forward).parameters.values())[1:]
    for p in params:
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            names.append(p.name)
        elif p.kind == p.VAR_POSITIONAL:
            rest = p.name
            break
    while len(names) < n:
        names.append("%s%d" % (rest or "arg", len(names)))
    return names[:max(n, len(names))]

def tensor_info(name, t):
    return {"name": name, "shape": list(t.shape), "dtype": dtype_name(t.dtype)}

def describe(src, device):
    d = {"ok": False, "reason": "", "kind": ""}
    try:
        ns, cls = load_module(src, spec["entrypoint"], spec["seed"])
        where = torch.device("meta") if device == "meta" else contextlib.nullcontext()
        with where:
            init = list(ns["get_init_inputs"]())
            model = cls(*init)
            model.eval()
            drawn = list(ns["get_inputs"]())
        d["init_inputs"] = [jsonable(v) if jsonable(v) is not NotImplemented else repr(v)
                            for v in init]
        names = forward_names(cls, len(drawn))
        d["forward_args"] = names
        inputs = []
        for i, a in enumerate(drawn):
            if isinstance(a, torch.Tensor):
                inputs.append(dict(tensor_info(names[i], a), constant=None, tensor=True))
            else:
                c = jsonable(a)
                if c is NotImplemented:
                    raise TypeError("get_inputs() item %d (%s) is a %s, neither a tensor nor a "
                                    "constant" % (i, names[i], type(a).__name__))
                inputs.append({"name": names[i], "tensor": False, "constant": c})
        d["inputs"] = inputs
        d["parameters"] = [tensor_info(n, t) for n, t in named_tensors(model).items()]
        with torch.no_grad(), where, short_rnns(device):
            result = model(*drawn)
        outs = []
        for i, r in enumerate(as_list(result)):
            if not isinstance(r, torch.Tensor):
                raise TypeError("forward output %d is a %s, not a tensor" % (i, type(r).__name__))
            outs.append(tensor_info("out%d" % i, r))
        d["outputs"] = outs
        d["ok"] = True
    except BaseException as exc:
        tb = traceback.format_exc().strip().splitlines()
        d["reason"] = ("%s: %s" % (type(exc).__name__, exc))[:800]
        d["kind"] = error_kind(exc)
        d["traceback"] = "\n".join(tb[-4:])[:1500]
    return d

os.makedirs("out", exist_ok=True)
'''

DESCRIBE_HARNESS = _DESCRIBE_FUNCS + r'''
results = []
for i in range(len(spec["variants"])):
    results.append(describe(open("module_%d.py" % i).read(), spec["device"]))
    with open("out/describe.json.tmp", "w") as f:
        json.dump(results, f)
    os.replace("out/describe.json.tmp", "out/describe.json")
'''

SESSION_HARNESS = _DESCRIBE_FUNCS + r'''
# Requests, one JSON line each on stdin, answered in out/answer_<n>.json: after every variant
# (what was done survives a crash), the last with "done". Ends when stdin closes. The module's
# own standard input is an empty pipe, as /dev/null is to a describe_many run.
_requests = os.fdopen(os.dup(0), "r")
_r, _w = os.pipe()
os.close(_w)
os.dup2(_r, 0)
os.close(_r)
for line in _requests:
    req = json.loads(line)
    results = []
    for i, src in enumerate(req["modules"]):
        results.append(describe(src, req["device"]))
        with open("out/answer.tmp", "w") as f:
            json.dump({"done": i + 1 == len(req["modules"]), "results": results}, f)
        os.replace("out/answer.tmp", "out/answer_%d.json" % req["n"])
    if not req["modules"]:
        with open("out/answer.tmp", "w") as f:
            json.dump({"done": True, "results": []}, f)
        os.replace("out/answer.tmp", "out/answer_%d.json" % req["n"])
'''


@dataclass(frozen=True)
class TensorInfo:
    """One tensor a module takes, holds or returns: its name, shape and torch dtype name
    (`float32`, `bool`, `float16`, `complex64`, ...)."""

    name: str
    shape: tuple[int, ...]
    dtype: str

    @property
    def elements(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n


@dataclass(frozen=True)
class InputInfo:
    """One item of `get_inputs()`: a tensor, or a Python constant passed to forward as is."""

    name: str
    tensor: TensorInfo | None = None
    constant: Any = None


@dataclass
class ModuleDescription:
    """What running a module at one size assignment showed. `reason` is empty when it ran;
    otherwise `kind` classifies it (`syntax_error`, `not_a_module`, `import_error`,
    `needs_cuda`, `unsupported_dtype`, `timeout`, `memory`, `error`) and `reason` says it."""

    sizes: dict[str, int]
    device: str = "cpu"
    reason: str = ""
    kind: str = ""
    forward_args: list[str] = field(default_factory=list)
    inputs: list[InputInfo] = field(default_factory=list)
    parameters: list[TensorInfo] = field(default_factory=list)
    outputs: list[TensorInfo] = field(default_factory=list)
    init_inputs: list[Any] = field(default_factory=list)
    traceback: str = ""

    @property
    def ok(self) -> bool:
        return not self.reason

    @property
    def tensor_inputs(self) -> list[TensorInfo]:
        return [i.tensor for i in self.inputs if i.tensor is not None]

    def tensors(self) -> list[TensorInfo]:
        """Every tensor: forward inputs, parameters and buffers, outputs."""
        return [*self.tensor_inputs, *self.parameters, *self.outputs]

    def max_elements(self) -> int:
        return max((t.elements for t in self.tensors()), default=0)


def _tensor(d: dict) -> TensorInfo:
    return TensorInfo(name=d["name"], shape=tuple(int(x) for x in d["shape"]), dtype=d["dtype"])


def _from_json(sizes: dict[str, int], device: str, d: dict) -> ModuleDescription:
    if not d.get("ok"):
        return ModuleDescription(sizes=sizes, device=device, reason=d.get("reason") or "failed",
                                 kind=d.get("kind") or "error", traceback=d.get("traceback", ""))
    desc = ModuleDescription(
        sizes=sizes, device=device, forward_args=list(d["forward_args"]),
        inputs=[InputInfo(name=i["name"], tensor=_tensor(i) if i["tensor"] else None,
                          constant=i.get("constant")) for i in d["inputs"]],
        parameters=[_tensor(p) for p in d["parameters"]],
        outputs=[_tensor(o) for o in d["outputs"]],
        init_inputs=list(d.get("init_inputs", [])),
    )
    bad = [t for t in desc.tensors() if t.dtype.startswith("complex")]
    if bad:
        desc.reason = f"tensor {bad[0].name!r} is {bad[0].dtype}; complex dtypes are not supported"
        desc.kind = "unsupported_dtype"
    return desc


def describe_many(code: str, variants: list[dict[str, int]], *, entrypoint: str = "Model",
                  seed: int = 0, device: str = "cpu", limits: Limits | None = None
                  ) -> list[ModuleDescription]:
    """Describe the module at each size assignment (one sandboxed process for all of them, so
    torch is imported once). Never raises for what the module does: a failure is the `reason`
    of the variants it affected."""
    if device not in ("cpu", "meta"):
        raise ValueError(f"device must be 'cpu' or 'meta', not {device!r}")
    problem = module_problems(code, entrypoint)
    if problem:
        kind = "syntax_error" if problem.startswith("syntax error") else "not_a_module"
        return [ModuleDescription(sizes=dict(s), device=device, reason=problem, kind=kind)
                for s in variants]
    if not variants:
        return []
    with workspace(limits, prefix="ckd-describe-") as d:
        work = Path(d) / "work"
        work.mkdir()
        for i, sizes in enumerate(variants):
            (work / f"module_{i}.py").write_text(substitute_constants(code, sizes))
        prefixes = [str(p) for p in python_prefixes()]
        (work / "describe.json").write_text(json.dumps({
            "entrypoint": entrypoint, "seed": seed, "device": device,
            "variants": [dict(s) for s in variants], "prefixes": prefixes}))
        out = run_sandboxed([python_executable(), "-I", "-c", DESCRIBE_HARNESS], work,
                            limits=limits or DESCRIBE_LIMITS, env=TORCH_ENV,
                            expose=python_prefixes(), preimport=TORCH_PREIMPORT)
        try:
            found = json.loads(read_no_follow(work / "out" / "describe.json", root=work, max_bytes=1 << 24))
            if not isinstance(found, list):
                found = []
        except (OSError, ValueError):
            found = []
    return _described(variants, device, found, out)


def _described(variants: list[dict[str, int]], device: str, found: list[Any], out: Any
               ) -> list[ModuleDescription]:
    """The descriptions a describe process wrote (`found`), the rest failed as its outcome says;
    HarnessError when our harness never reached the module."""
    results = [_from_json(dict(s), device, r) for s, r in zip(variants, found, strict=False)
               if isinstance(r, dict)]
    if len(results) < len(variants) and not harness_reached(out.stderr):
        raise harness_failure("module describe", out.stderr, out.exit_code)
    if len(results) < len(variants):
        kind, why = _run_failure(out)
        results += [ModuleDescription(sizes=dict(s), device=device, reason=why, kind=kind)
                    for s in variants[len(results):]]
    return results


SESSION_REQUESTS = 12
"""Calls one session process serves before a fresh one starts: its CPU and wall limits are this
many times one describe's (each call still has one describe's wall time)."""


class DescribeSession:
    """`describe_many` for a caller that describes the same module many times (the size plan of
    `module_task` and `scale_module`: 3 to 8 calls, each depending on the last): one sandboxed
    process, with torch imported once, answers every call with the same entrypoint and seed,
    instead of a process per call (about 3 CPU-s each, most of it importing torch).

    The process only ever runs the module the caller is planning, so calls share nothing another
    module could see. Each call keeps one describe's wall time (past it the process is killed and
    the call reports the timeout). When the process dies during a call after it has answered
    others (its limits are shared by the calls, as is its memory), that call is described again
    in a process of its own, so each call's outcome is the one `describe_many` would give.
    A context manager; `processes` counts the sandboxed processes started."""

    def __init__(self, limits: Limits | None = None) -> None:
        self.limits = limits or DESCRIBE_LIMITS
        self.processes = 0
        self._key: tuple[str, int] | None = None
        self._served = 0
        self._n = 0
        self._stack: contextlib.ExitStack | None = None
        self._thread: threading.Thread | None = None
        self._outcome: Any = None
        self._error: BaseException | None = None
        self._write_fd: int | None = None
        self._cancel = threading.Event()
        self._work: Path | None = None

    def __enter__(self) -> DescribeSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __call__(self, code: str, variants: list[dict[str, int]], *, entrypoint: str = "Model",
                 seed: int = 0, device: str = "cpu") -> list[ModuleDescription]:
        if device not in ("cpu", "meta"):
            raise ValueError(f"device must be 'cpu' or 'meta', not {device!r}")
        problem = module_problems(code, entrypoint)
        if problem or not variants:
            return describe_many(code, variants, entrypoint=entrypoint, seed=seed, device=device,
                                 limits=self.limits)
        if self._key != (entrypoint, seed) or self._served >= SESSION_REQUESTS or self._thread is None:
            self.close()
            self._start(entrypoint, seed)
        assert self._work is not None
        self._n += 1
        name = f"answer_{self._n}.json"
        request = json.dumps({"n": self._n, "device": device,
                              "modules": [substitute_constants(code, s) for s in variants]}) + "\n"
        deadline = time.monotonic() + self.limits.wall_seconds
        answer: dict[str, Any] = {}
        if self._send(request.encode(), deadline):
            while True:
                answer = self._read(name)
                if answer.get("done") or self._thread is None or not self._thread.is_alive():
                    answer = answer if answer.get("done") else self._read(name)
                    break
                if time.monotonic() >= deadline:
                    self._cancel.set()
                    break
                time.sleep(0.01)
        found = answer.get("results") if isinstance(answer.get("results"), list) else []
        if answer.get("done") and len(found) == len(variants):
            self._served += 1
            return [_from_json(dict(s), device, r) if isinstance(r, dict)
                    else ModuleDescription(sizes=dict(s), device=device, kind="error",
                                           reason="the describe process answered nothing for it")
                    for s, r in zip(variants, found, strict=True)]
        served = self._served
        out, error = self._stop()
        if error is not None:
            raise error
        if served:
            # Limits or memory the earlier calls used up may be what ended it: alone, as ever.
            return describe_many(code, variants, entrypoint=entrypoint, seed=seed, device=device,
                                 limits=self.limits)
        return _described(variants, device, found, out)

    def close(self) -> None:
        """End the process (it exits when its input closes) and remove its workspace."""
        if self._thread is not None:
            self._stop(grace=30.0)

    def _start(self, entrypoint: str, seed: int) -> None:
        stack = contextlib.ExitStack()
        n = SESSION_REQUESTS
        limits = dataclasses.replace(self.limits, cpu_seconds=self.limits.cpu_seconds * n,
                                     wall_seconds=self.limits.wall_seconds * n)
        try:
            work = Path(stack.enter_context(workspace(limits, prefix="ckd-describe-"))) / "work"
            work.mkdir()
            (work / "describe.json").write_text(json.dumps({
                "entrypoint": entrypoint, "seed": seed,
                "prefixes": [str(p) for p in python_prefixes()]}))
            read_fd, write_fd = os.pipe()
            stack.callback(os.close, read_fd)
        except BaseException:
            stack.close()
            raise
        self._stack, self._work, self._write_fd = stack, work, write_fd
        self._key, self._served, self._n = (entrypoint, seed), 0, 0
        self._outcome, self._error = None, None
        self._cancel = threading.Event()
        os.set_blocking(write_fd, False)

        def run() -> None:
            try:
                self._outcome = run_sandboxed(
                    [python_executable(), "-I", "-c", SESSION_HARNESS], work, limits=limits,
                    env=TORCH_ENV, expose=python_prefixes(), stdin=read_fd, cancel=self._cancel,
                    preimport=TORCH_PREIMPORT)
            except BaseException as exc:  # the sandbox's own failure: the caller's to raise
                self._error = exc

        self._thread = threading.Thread(target=run, name="ckd-describe-session", daemon=True)
        self._thread.start()
        self.processes += 1

    def _send(self, data: bytes, deadline: float) -> bool:
        """Write the request, never blocking past the deadline (a module may stop reading)."""
        assert self._write_fd is not None
        view = memoryview(data)
        while view:
            if time.monotonic() >= deadline or self._thread is None or not self._thread.is_alive():
                self._cancel.set()
                return False
            try:
                view = view[os.write(self._write_fd, view):]
            except BlockingIOError:
                select.select([], [self._write_fd], [], 0.05)
            except BrokenPipeError:
                return False
        return True

    def _read(self, name: str) -> dict[str, Any]:
        assert self._work is not None
        path = self._work / "out" / name
        if not path.exists():
            return {}
        try:
            found = json.loads(read_no_follow(path, root=self._work, max_bytes=1 << 24))
        except (OSError, ValueError):
            return {}
        return found if isinstance(found, dict) else {}

    def _stop(self, grace: float = 0.0) -> tuple[Any, BaseException | None]:
        """Close the process's input, wait `grace` seconds for it to end, then kill it; returns
        its outcome (or the sandbox's error) and clears the session."""
        if self._write_fd is not None:
            os.close(self._write_fd)
            self._write_fd = None
        if self._thread is not None:
            self._thread.join(grace)
            if self._thread.is_alive():
                self._cancel.set()
                self._thread.join()
        if self._stack is not None:
            self._stack.close()
        out, error = self._outcome, self._error
        self._thread, self._stack, self._work, self._key = None, None, None, None
        return out, error


def _run_failure(out: Any) -> tuple[str, str]:
    if out.timed_out or out.limit_hit == "cpu":
        return "timeout", f"ran out of time ({out.seconds:.0f}s, sandbox {out.limit_hit or 'wall'} limit)"
    if out.limit_hit == "memory" or (out.signal == 9 and not out.limit_hit):
        return "memory", f"ran out of memory (sandbox {out.limit_hit or 'kill'})"
    if out.limit_hit:
        return "error", f"hit the sandbox {out.limit_hit} limit"
    lines = [ln for ln in out.stderr.strip().splitlines() if ln.strip() != HARNESS_READY]
    tail = (lines or [f"exit code {out.exit_code}"])[-1]
    return "error", f"the describe process failed: {tail[:300]}"


def describe_module(code: str, sizes: dict[str, int], *, entrypoint: str = "Model",
                    seed: int = 0, device: str = "cpu") -> ModuleDescription:
    """Describe the module at one size assignment (see `describe_many`)."""
    return describe_many(code, [sizes], entrypoint=entrypoint, seed=seed, device=device)[0]


# --- sizes written as literals ----------------------------------------------------------------

LITERAL_MIN = 8
"""Literals up to this value (RGB channels, kernel sizes, a `dim` index) are never named: the
scaling rule neither shrinks nor varies sizes this small (builder.modules' MIN_SCALED)."""

_SHAPE_ARGS: dict[str, str] = {
    # torch factory -> which positional arguments are the shape: "all" (each a dimension or one
    # tuple of them), "first", "last" (randint's size follows low/high), "end" (arange(end)).
    "rand": "all", "randn": "all", "zeros": "all", "ones": "all", "empty": "all",
    "full": "first", "randint": "last", "randperm": "first", "eye": "all", "arange": "end",
    "empty_strided": "first",
}
INPUT_FUNCTIONS = ("get_inputs", "get_init_inputs")


@dataclass(frozen=True)
class LiteralSize:
    """One integer literal that a module file writes where a size goes, named for scaling:
    `value` at `line`:`col` (1-based line, 0-based column of the original file), inside
    `where` (`get_inputs`, `get_init_inputs` or the module-level assignment it belongs to);
    `text` is that line's code. Equal values share one `name` (`literal_<value>`)."""

    name: str
    value: int
    line: int
    col: int
    where: str
    text: str
    tied: bool = False
    """Written as an existing constant of the same value (the two could not change apart)."""


def _shape_nodes(call: ast.Call) -> list[ast.expr]:
    """The argument nodes of a torch factory call that are dimensions (tuples unpacked)."""
    f = call.func
    attr = f.attr if isinstance(f, ast.Attribute) else None
    if not (attr in _SHAPE_ARGS and isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)
            and f.value.id == "torch"):
        return []
    how = _SHAPE_ARGS[attr]
    args = [a for a in call.args if not isinstance(a, ast.Starred)]
    picked: list[ast.expr] = []
    if how == "all":
        picked = list(args)
    elif how == "first" and args:
        picked = [args[0]]
    elif how == "last" and args:
        picked = [args[-1]] if (len(args) >= 2 and isinstance(args[-1], (ast.Tuple, ast.List))
                                ) or len(args) == 3 else []
    elif how == "end" and len(args) == 1:
        picked = [args[0]]
    picked += [k.value for k in call.keywords if k.arg == "size"]
    out: list[ast.expr] = []
    for node in picked:
        out.extend(node.elts if isinstance(node, (ast.Tuple, ast.List)) else [node])
    return out


def _sequence_elements(node: ast.expr) -> list[ast.expr]:
    """The element nodes of a literal tuple or list expression: `(4096,)`, `[64, 128]`, and the
    repeated or joined forms `[1024] * 16`, `16 * [1024]`, `[64] * 2 + [128]` (each element
    written once, so naming it names every copy). Anything else has none."""
    if isinstance(node, (ast.Tuple, ast.List)):
        return list(node.elts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        for seq, count in ((node.left, node.right), (node.right, node.left)):
            if _int_value(count) is not None:
                found = _sequence_elements(seq)
                if found:
                    return found
        return []
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _sequence_elements(node.left), _sequence_elements(node.right)
        return left + right if left and right else []
    return []


def _literal_candidates(tree: ast.Module) -> list[tuple[ast.expr, int, str]]:
    """(node, value, where) for every integer literal above LITERAL_MIN that is written as a
    tensor dimension: a shape argument of a torch factory in get_inputs()/get_init_inputs(), an
    element of the list get_init_inputs() returns (constructor arguments: the perturbation
    analysis later keeps only those that turn out to be dimensions), or an element of a
    module-level tuple or list of integers (`input_shape = (4096,)`, splatted into a shape;
    `layer_sizes = [1024] * 16`)."""
    found: list[tuple[ast.expr, int, str]] = []

    def take(node: ast.expr, where: str) -> None:
        if isinstance(node, ast.Name):
            return
        v = _int_value(node)
        if v is not None and v > LITERAL_MIN:
            found.append((node, v, where))

    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef) and stmt.name in INPUT_FUNCTIONS:
            for node in ast.walk(stmt):
                if isinstance(node, ast.Call):
                    for arg in _shape_nodes(node):
                        take(arg, stmt.name)
                if (stmt.name == "get_init_inputs" and isinstance(node, ast.Return)
                        and isinstance(node.value, (ast.List, ast.Tuple))):
                    for elt in node.value.elts:
                        take(elt, stmt.name)
        elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(
                stmt.targets[0], ast.Name):
            for elt in _sequence_elements(stmt.value):
                take(elt, stmt.targets[0].id)
    # A node can be reached twice (a factory call inside the returned list).
    seen: set[tuple[int, int]] = set()
    unique = []
    for node, v, where in found:
        key = (node.lineno, node.col_offset)
        if key not in seen:
            seen.add(key)
            unique.append((node, v, where))
    return sorted(unique, key=lambda t: (t[0].lineno, t[0].col_offset))


def name_literal_sizes(code: str, keep: set[int] | None = None,
                       tie: dict[int, str] | None = None) -> tuple[str, list[LiteralSize]]:
    """`code` with each integer literal written as a tensor dimension (see
    `_literal_candidates`) replaced by a module-level constant `literal_<value>` (one per value,
    defined just before the first statement that uses it), so that `module_constants` sees it
    and `substitute_constants` can change it; and the record of what was named. `keep` limits
    the naming to those values; `tie` maps a value to an existing module-level constant that
    its literals are written as instead (a literal that must stay equal to that constant).
    Code without such literals comes back unchanged. Raises SyntaxError."""
    tree = ast.parse(code)
    cands = [c for c in _literal_candidates(tree) if keep is None or c[1] in keep]
    if not cands:
        return code, []
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | set(module_constants(code))
    names: dict[int, str] = dict(tie or {})
    for _, v, _ in cands:
        if v not in names:
            name = f"literal_{v}"
            while name in used:
                name += "_"
            names[v] = name
    lines = code.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    record: list[LiteralSize] = []
    edits: list[tuple[int, int, str]] = []
    for node, v, where in cands:
        ln, end_ln = node.lineno, node.end_lineno or node.lineno
        begin = starts[ln - 1] + _byte_col(lines[ln - 1], node.col_offset)
        end = starts[end_ln - 1] + _byte_col(lines[end_ln - 1], node.end_col_offset)
        edits.append((begin, end, names[v]))
        record.append(LiteralSize(name=names[v], value=v, line=ln,
                                  col=_byte_col(lines[ln - 1], node.col_offset), where=where,
                                  text=lines[ln - 1].strip(), tied=v in (tie or {})))
    # The constants must exist before anything at module level evaluates them: define them
    # just before the first top-level statement holding a named literal.
    first_line = min(r.line for r in record)
    stmt = next(s for s in tree.body if s.lineno <= first_line <= (s.end_lineno or s.lineno))
    at = stmt.lineno
    for dec in getattr(stmt, "decorator_list", []):
        at = min(at, dec.lineno)
    new = {v: n for v, n in names.items() if v not in (tie or {})}
    block = ("# Sizes the file wrote as literals, named so that they can be scaled:\n"
             + "".join(f"{n} = {v}\n" for v, n in new.items())) if new else ""
    edits.append((starts[at - 1], starts[at - 1], block))
    for begin, end, text in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        code = code[:begin] + text + code[end:]
    return code, record


def describe_literals(record: list[LiteralSize]) -> str:
    """What was named, for a task's description: each value, its name, and where it stood."""
    by_name: dict[str, dict[tuple[int, str, str], int]] = {}
    for r in record:
        spots = by_name.setdefault(r.name, {})
        spots[(r.line, r.where, r.text)] = spots.get((r.line, r.where, r.text), 0) + 1
    values = {r.name: r.value for r in record}
    tied = {r.name for r in record if r.tied}
    parts = []
    for name, spots in by_name.items():
        where = "; ".join(f"line {ln} in {w} `{text}`" + (f" ({n} times)" if n > 1 else "")
                          for (ln, w, text), n in spots.items())
        how = (f" (tied to the constant {name} of the same value: neither can change alone)"
               if name in tied else "")
        parts.append(f"{values[name]} became {name}{how} ({where})")
    return "Sizes written as literals, named for scaling: " + ", ".join(parts) + "."
