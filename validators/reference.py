"""Reference outputs: run a task's reference (NumPy or PyTorch) inside the sandbox and read its
outputs.

The reference is untrusted (LLM-written, or a third party's module file), so it never runs in
this process: a separate Python process in its own sandbox directory loads the inputs, calls the
entry point and saves each output as `.npy` (no pickles). The outputs are validated here (names,
shapes, dtypes) and cached by a content hash of the reference code, the inputs, the sizes and the
output specs, in a 0700 directory outside any program's sandbox.

Torch references (`Reference.language == "torch"`, a KernelBench-style module file) run in
this order, which fixes what a case seed produces:
1. the module's constants named in the case's sizes are replaced by the case's values (AST);
2. `torch.manual_seed(case.seed)`, one thread, deterministic algorithms (warn only);
3. the module file runs; `model = Model(*get_init_inputs())`, in eval mode (its parameter
   initialisation draws from the seeded generator first);
4. `args = get_inputs()` (drawn next, from the same generator);
5. task inputs named like a parameter or buffer (`conv.weight` -> `conv_weight`) are loaded
   into the model, the other task inputs replace the tensors of `args` in order (non-tensor
   items of `args` are passed as they are); an input whose case distribution is `reference`
   keeps the value the code drew, and that value is written out for the program to read;
   given values take the dtype the module drew (a `uint8` array becomes `bool` where the
   module drew a mask);
6. `forward(*args)` under `torch.no_grad()`; its tensor, or tuple/list of tensors, are the
   task's outputs in order.
Dtypes must match the task's exactly, with two conversions: `bool` -> `uint8`, and
`float16`/`bfloat16` -> `float32` when the task says `float32`. Anything else (complex, a
float64 result for a float32 output, ...) is a ReferenceError naming the tensor. Outputs and
drawn inputs are cached together (`ReferenceRunner.case_data`).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Callable
from functools import cache
from importlib import metadata
from pathlib import Path

import numpy as np

from schemas import InputCase, Task, TensorSpec

from .build_cache import BuildCache, cache_root
from .cases import arrays_digest, drawn_by_reference, little_endian, materialize, write_arrays
from .compare import read_no_follow
from .sandbox import (
    READY_LINE,
    Limits,
    harness_failure,
    harness_reached,
    python_executable,
    python_prefixes,
    run_sandboxed,
    workspace,
)
from .torch_module import COMMON, GUARD, TORCH_ENV, TORCH_PREIMPORT, substitute_constants

NUMPY_PREIMPORT = ("numpy",)
"""What a NumPy reference's harness imports first: its runs fork from a zygote that already did
(`validators.zygote`), as torch runs do. NumPy's import is most of a small reference's CPU time
(about 0.15 of 0.2 CPU-s), and a thorough check starts two such processes (its cases, then the
fresh case)."""

HARNESS_VERSION = 1

# Runs inside the sandbox (`python -I -c`: a script path would be made absolute, and the
# directories above the work dir are covered there). Reads ref.json and data/, writes out/.
HARNESS = r'''
import json, sys, traceback
import numpy as np
spec = json.load(open("ref.json"))
inputs = {}
for t in spec["inputs"]:
    a = np.fromfile("data/%s.bin" % t["name"], dtype=np.dtype(t["dtype"]).newbyteorder("<"))
    inputs[t["name"]] = a.reshape(t["shape"])
namespace = {"__name__": "reference"}
''' + READY_LINE + r'''
try:
    exec(compile(open("reference.py").read(), "reference.py", "exec"), namespace)
    fn = namespace.get(spec["entrypoint"])
    if not callable(fn):
        raise NameError("reference code defines no function %r" % spec["entrypoint"])
    result = fn(inputs, dict(spec["sizes"]))
except BaseException as exc:
    tb = traceback.format_exc().strip().splitlines()
    sys.stderr.write("REFERENCE-ERROR: %s: %s\n" % (type(exc).__name__, exc))
    sys.stderr.write("\n".join(tb[-6:]) + "\n")
    sys.exit(3)
if not isinstance(result, dict):
    sys.stderr.write("REFERENCE-ERROR: returned %s, not a dict of arrays\n" % type(result).__name__)
    sys.exit(3)
import os
os.makedirs("out", exist_ok=True)
for name, value in result.items():
    if not isinstance(name, str) or not name.isidentifier():
        continue
    try:
        np.save("out/%s.npy" % name, np.asarray(value), allow_pickle=False)
    except Exception as exc:
        sys.stderr.write("REFERENCE-ERROR: output %r is not an array: %s\n" % (name, exc))
        sys.exit(3)
'''

# Runs inside the sandbox like HARNESS, for several cases of one task: numpy is imported once,
# then each case directory (cases.json) gets a forked child that runs HARNESS there alone, with
# its own CPU and wall limits and its own stdout/stderr files. A fork per case keeps the cases
# apart as separate runs would (module state, numpy settings, a case that never ends).
BATCH_HARNESS = r"""
import json, os, resource, signal, sys
import numpy as np
cases = json.load(open("cases.json"))
code = compile(open("harness.py").read(), "harness.py", "exec")
for c in cases:
    pid = os.fork()
    if pid == 0:
        try:
            os.chdir(c["dir"])
            fd = os.open("stderr.txt", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(fd, 2)
            os.dup2(os.open("stdout.txt", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), 1)
            resource.setrlimit(resource.RLIMIT_CPU, (c["cpu"], c["cpu"] + 1))
            signal.alarm(c["wall"])
            exec(code, {"__name__": "__main__"})
        except SystemExit as e:
            os._exit(e.code if isinstance(e.code, int) else 1)
        except BaseException:
            os._exit(4)
        sys.stdout.flush()
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    with open(os.path.join(c["dir"], "status.txt"), "w") as f:
        f.write(str(os.waitstatus_to_exitcode(status)))
"""

TORCH_HARNESS_VERSION = 1

# Runs inside the sandbox like HARNESS. ref.json gives the seed, the inputs (with `drawn` for a
# `reference` distribution) and the outputs; module.py is the module with the case's sizes.
TORCH_HARNESS = COMMON + GUARD + r'''
import json, os, sys, traceback
import numpy as np
spec = json.load(open("ref.json"))
given = {}
for t in spec["inputs"]:
    if not t["drawn"]:
        a = np.fromfile("data/%s.bin" % t["name"], dtype=np.dtype(t["dtype"]).newbyteorder("<"))
        given[t["name"]] = a.reshape(t["shape"])
src = open("module.py").read()
_ckd_install_guard(spec["prefixes"])

class Bad(Exception):
    pass

def to_numpy(t, want, what):
    have = dtype_name(t.dtype)
    t = t.detach().cpu()
    if have == want:
        return t.contiguous().numpy()
    if have == "bool" and want == "uint8":
        return t.to(torch.uint8).contiguous().numpy()
    if have in ("float16", "bfloat16") and want == "float32":
        return t.to(torch.float32).contiguous().numpy()
    raise Bad("%s is %s, the task says %s" % (what, have, want))

def run():
    ns, cls = load_module(src, spec["entrypoint"], spec["seed"])
    model = cls(*list(ns["get_init_inputs"]()))
    model.eval()
    args = list(ns["get_inputs"]())
    named = named_tensors(model)
    drawn = {}
    forward = [t for t in spec["inputs"] if t["name"] not in named]
    slots = [i for i, a in enumerate(args) if isinstance(a, torch.Tensor)]
    if len(slots) != len(forward):
        raise Bad("get_inputs() returns %d tensors but the task has %d forward inputs (%s)"
                  % (len(slots), len(forward), ", ".join(t["name"] for t in forward) or "none"))
    for t, i in zip(forward, slots):
        if t["drawn"]:
            drawn[t["name"]] = to_numpy(args[i], t["dtype"], "input %r" % t["name"])
        else:
            v = torch.from_numpy(given[t["name"]].copy())
            args[i] = (v != 0) if args[i].dtype == torch.bool else v.to(args[i].dtype)
    for t in spec["inputs"]:
        if t["name"] not in named:
            continue
        p = named[t["name"]]
        if t["drawn"]:
            drawn[t["name"]] = to_numpy(p, t["dtype"], "parameter %r" % t["name"])
            continue
        v = torch.from_numpy(given[t["name"]].copy())
        if tuple(v.shape) != tuple(p.shape):
            raise Bad("input %r has shape %s, the model's parameter has %s"
                      % (t["name"], list(v.shape), list(p.shape)))
        if dtype_name(p.dtype) != t["dtype"]:
            raise Bad("input %r is %s, the model's parameter is %s"
                      % (t["name"], t["dtype"], dtype_name(p.dtype)))
        with torch.no_grad():
            p.copy_(v)
    with torch.no_grad():
        result = as_list(model(*args))
    if len(result) != len(spec["outputs"]):
        raise Bad("forward returned %d value(s), the task has %d output(s) (%s)"
                  % (len(result), len(spec["outputs"]),
                     ", ".join(t["name"] for t in spec["outputs"])))
    outs = {}
    for t, r in zip(spec["outputs"], result):
        if not isinstance(r, torch.Tensor):
            raise Bad("forward output %r is a %s, not a tensor" % (t["name"], type(r).__name__))
        outs[t["name"]] = to_numpy(r, t["dtype"], "output %r" % t["name"])
    return outs, drawn

''' + READY_LINE + r'''
try:
    outs, drawn = run()
except BaseException as exc:
    tb = traceback.format_exc().strip().splitlines()
    sys.stderr.write("REFERENCE-ERROR: %s: %s\n" % (type(exc).__name__, exc))
    sys.stderr.write("\n".join(tb[-6:]) + "\n")
    sys.exit(3)
os.makedirs("out", exist_ok=True)
os.makedirs("drawn", exist_ok=True)
for name, a in outs.items():
    np.save("out/%s.npy" % name, a, allow_pickle=False)
for name, a in drawn.items():
    np.save("drawn/%s.npy" % name, a, allow_pickle=False)
'''

REFERENCE_LIMITS = Limits(cpu_seconds=60, wall_seconds=90, memory_bytes=8 << 30,
                          file_size_bytes=2 << 30, max_processes=64, output_bytes=256 << 10,
                          disk_bytes=8 << 30)


BATCH_INPUT_BYTES = 256 << 20
"""Inputs one `prefetch` process takes at most (the rest run alone)."""
MEMORY_BYTES = 256 << 20
"""Reference outputs a runner keeps in memory at most (the most recent first)."""


class ReferenceError(RuntimeError):
    """The reference could not produce valid outputs; the message says why."""


def _spec_json(task: Task, case: InputCase) -> dict:
    sizes = task.case_sizes(case)
    return {
        "entrypoint": task.reference.entrypoint,
        "sizes": sizes,
        "inputs": [{"name": t.name, "dtype": t.dtype, "shape": list(t.resolve_shape(sizes))}
                   for t in task.inputs],
        "outputs": [{"name": t.name, "dtype": t.dtype, "shape": list(t.resolve_shape(sizes))}
                    for t in task.outputs],
    }


def torch_entrypoint(task: Task) -> str:
    """The module class a torch reference names. `Reference.entrypoint` defaults to the NumPy
    default `reference`; for a torch module that defines no such class it means `Model`."""
    entry = task.reference.entrypoint
    if entry == "reference" and f"class {entry}" not in task.reference.code:
        return "Model"
    return entry


def _torch_spec_json(task: Task, case: InputCase) -> dict:
    spec = _spec_json(task, case)
    spec["entrypoint"] = torch_entrypoint(task)
    drawn = drawn_by_reference(task, case)
    for t in spec["inputs"]:
        t["drawn"] = t["name"] in drawn
    spec["seed"] = case.seed
    return spec


@cache
def _torch_version() -> str:
    try:
        return metadata.version("torch")
    except metadata.PackageNotFoundError:
        return "absent"


def reference_key(task: Task, case: InputCase, inputs: dict[str, np.ndarray]) -> str:
    if task.reference.language == "torch":
        # Only the inputs the task gives enter the key: the drawn ones follow from the seed, so
        # the key is the same before (case_data) and after (outputs) they are known.
        drawn = drawn_by_reference(task, case)
        given = {k: v for k, v in inputs.items() if k not in drawn}
        return BuildCache.key(
            harness=TORCH_HARNESS_VERSION, language="torch", code=task.reference.code,
            spec=_torch_spec_json(task, case), inputs=arrays_digest(given),
            numpy=np.__version__, torch=_torch_version(),
        )
    return BuildCache.key(
        harness=HARNESS_VERSION, language=task.reference.language, code=task.reference.code,
        spec=_spec_json(task, case), inputs=arrays_digest(inputs), numpy=np.__version__,
    )


def _check_output(spec: TensorSpec, sizes: dict[str, int], arr: np.ndarray) -> np.ndarray:
    shape = spec.resolve_shape(sizes)
    want = little_endian(spec.dtype)
    n = int(np.prod(shape, dtype=np.int64)) if shape else 1
    if arr.size != n:
        raise ReferenceError(
            f"reference output {spec.name!r} has {arr.size} elements {tuple(arr.shape)}, "
            f"expected {n} {tuple(shape)}"
        )
    if arr.dtype.kind not in "biuf":
        raise ReferenceError(f"reference output {spec.name!r} has dtype {arr.dtype}, not numeric")
    if want.kind in "iu" and arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)) or not np.array_equal(arr, np.rint(arr)):
            raise ReferenceError(
                f"reference output {spec.name!r} is {arr.dtype} with non-integer values, "
                f"expected {spec.dtype}"
            )
    return np.asarray(arr).astype(want).reshape(shape)


class ReferenceRunner:
    """Computes (and caches) reference outputs for a task's cases."""

    def __init__(self, root: Path | None = None, limits: Limits | None = None, *,
                 persist: Callable[[Task, InputCase], bool] | None = None) -> None:
        """`persist(task, case)`: whether a case's outputs go to the disk cache (default:
        every case). A service that draws a fresh case per check keeps only the published
        cases: the others would never be read again, and would fill the disk."""
        self.root = Path(root) if root is not None else cache_root() / "references"
        self.limits = limits or REFERENCE_LIMITS
        self.persist = persist
        self._memory: OrderedDict[str, dict[str, np.ndarray]] = OrderedDict()
        self._lock = threading.Lock()

    def outputs(self, task: Task, case: InputCase, inputs: dict[str, np.ndarray]
                ) -> tuple[dict[str, np.ndarray], bool]:
        """(outputs by name, whether they came from the cache). Raises ReferenceError.

        For a torch task, `inputs` may hold the drawn inputs too (as `case_data` returned
        them): only the given ones are used."""
        if task.reference.language == "torch":
            _, outs, cached = self._torch_case(task, case, inputs)
            return outs, cached
        key = reference_key(task, case, inputs)
        with self._lock:
            remembered = self._memory.get(key)
            if remembered is not None:
                self._memory.move_to_end(key)
        if remembered is not None:
            return remembered, True
        entry = self.root / key[:2] / key
        cached = self._load(entry, task, case)
        if cached is not None:
            return cached, True
        outs = self._run(task, case, inputs)
        self._remember(key, outs)
        if self._keeps(task, case):
            self._store(entry, outs)
        return outs, False

    def prefetch(self, task: Task, items: list[tuple[InputCase, dict[str, np.ndarray]]]) -> int:
        """Compute the uncached outputs of several cases of a NumPy task in one sandboxed
        process (Python and NumPy start once, not once per case); returns how many it stored.

        Only an optimisation: a case that fails there in any way (an error, a limit, a harness
        that could not start) is left to `outputs`, which runs it alone and reports exactly
        what it always did. Each case runs in a forked child with the single run's CPU and
        wall limits."""
        if task.reference.language == "torch":
            return self._prefetch_torch(task, items)
        if task.reference.language != "numpy":
            return 0
        todo = []
        budget = BATCH_INPUT_BYTES
        for case, inputs in items:
            key = reference_key(task, case, inputs)
            entry = self.root / key[:2] / key
            if key in self._memory or (entry / "meta.json").is_file():
                continue
            size = sum(int(a.nbytes) for a in inputs.values())
            if size > budget:
                continue
            budget -= size
            todo.append((case, inputs, key, entry))
        if len(todo) < 2:
            return 0
        limits, cpu, wall = self._batch_limits(len(todo))
        stored = 0
        with workspace(limits, prefix="ckd-ref-",
                       reserve_bytes=BATCH_INPUT_BYTES - budget) as d:
            work = Path(d) / "ref"
            work.mkdir()
            listing = []
            for i, (case, inputs, _, _) in enumerate(todo):
                sub = work / f"case{i}"
                sub.mkdir()
                write_arrays(inputs, sub)
                (sub / "reference.py").write_text(task.reference.code)
                (sub / "ref.json").write_text(json.dumps(_spec_json(task, case)))
                listing.append({"dir": sub.name, "cpu": cpu, "wall": wall})
            (work / "cases.json").write_text(json.dumps(listing))
            (work / "harness.py").write_text(HARNESS)
            env = {"PYTHONDONTWRITEBYTECODE": "1", "OMP_NUM_THREADS": "1",
                   "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
            run_sandboxed([python_executable(), "-I", "-c", BATCH_HARNESS], work, limits=limits,
                          env=env, expose=python_prefixes(), preimport=NUMPY_PREIMPORT)
            for i, (case, _, key, entry) in enumerate(todo):
                sub = work / f"case{i}"
                try:
                    if read_no_follow(sub / "status.txt", root=work).strip() != b"0":
                        continue
                    outs = {spec.name: _check_output(spec, task.case_sizes(case),
                                                     _read_npy(sub / "out", spec.name, "output"))
                            for spec in task.outputs}
                except (OSError, ValueError, ReferenceError):
                    continue  # `outputs` runs it alone and says why
                self._remember(key, outs)
                if self._keeps(task, case):
                    self._store(entry, outs)
                stored += 1
        return stored

    def _prefetch_torch(self, task: Task, items: list[tuple[InputCase, dict[str, np.ndarray]]]
                        ) -> int:
        """`prefetch` for a torch reference: torch is imported once (about two CPU-seconds a
        process) and each case runs in a child forked from it, under the same harness, guard and
        limits as `_run_torch`, its drawn inputs stored with its outputs for `_torch_case`.
        Cases whose results are not persisted (a service's fresh case) are left to their run."""
        todo = []
        budget = BATCH_INPUT_BYTES
        for case, inputs in items:
            if not self._keeps(task, case):
                continue
            drawn_names = drawn_by_reference(task, case)
            given = {t.name: inputs[t.name] for t in task.inputs
                     if t.name not in drawn_names and t.name in inputs}
            key = reference_key(task, case, given)
            entry = self.root / key[:2] / key
            if (entry / "meta.json").is_file():
                continue
            size = sum(int(a.nbytes) for a in given.values())
            if size > budget:
                continue
            try:
                code = substitute_constants(task.reference.code, task.case_sizes(case))
            except SyntaxError:
                continue  # `_torch_case` reports it
            budget -= size
            todo.append((case, given, code, entry))
        if len(todo) < 2:
            return 0
        limits, cpu, wall = self._batch_limits(len(todo))
        prefixes = [str(p) for p in python_prefixes()]
        stored = 0
        with workspace(limits, prefix="ckd-ref-",
                       reserve_bytes=BATCH_INPUT_BYTES - budget) as d:
            work = Path(d) / "ref"
            work.mkdir()
            listing = []
            for i, (case, given, code, _) in enumerate(todo):
                sub = work / f"case{i}"
                sub.mkdir()
                write_arrays(given, sub)
                (sub / "module.py").write_text(code)
                spec = _torch_spec_json(task, case)
                spec["prefixes"] = prefixes
                (sub / "ref.json").write_text(json.dumps(spec))
                listing.append({"dir": sub.name, "cpu": cpu, "wall": wall})
            (work / "cases.json").write_text(json.dumps(listing))
            (work / "harness.py").write_text(TORCH_HARNESS)
            run_sandboxed([python_executable(), "-I", "-c", "import torch\n" + BATCH_HARNESS],
                          work, limits=limits, env=TORCH_ENV, expose=python_prefixes(),
                          preimport=TORCH_PREIMPORT)
            for i, (case, _, _, entry) in enumerate(todo):
                sub = work / f"case{i}"
                sizes = task.case_sizes(case)
                try:
                    if read_no_follow(sub / "status.txt", root=work).strip() != b"0":
                        continue
                    drawn = {t.name: _check_drawn(t, sizes, _read_npy(sub / "drawn", t.name,
                                                                      "drawn input"))
                             for t in task.inputs if t.name in drawn_by_reference(task, case)}
                    outs = {spec.name: _check_output(spec, sizes, _read_npy(sub / "out", spec.name,
                                                                            "output"))
                            for spec in task.outputs}
                except (OSError, ValueError, ReferenceError):
                    continue  # `_torch_case` runs it alone and says why
                self._store(entry, outs, drawn=drawn)
                stored += 1
        return stored

    def _batch_limits(self, n: int) -> tuple[Limits, int, int]:
        """The limits of a process running `n` cases one after another, and each case's own CPU
        and wall seconds (the single run's), which the batch harness sets in its children."""
        limits = self.limits.with_overrides(
            cpu_seconds=None if self.limits.cpu_seconds is None else self.limits.cpu_seconds * n,
            wall_seconds=self.limits.wall_seconds * n)
        return limits, int(self.limits.cpu_seconds or 3600), int(self.limits.wall_seconds)

    def _remember(self, key: str, outs: dict[str, np.ndarray]) -> None:
        """Keep recent outputs in memory: a check asks for one case's outputs several times,
        and a case that is not persisted (a service's fresh case) would run again each time."""
        for a in outs.values():
            a.setflags(write=False)  # shared by every caller from now on
        with self._lock:
            self._memory[key] = outs
            self._memory.move_to_end(key)
            total = sum(sum(int(a.nbytes) for a in o.values()) for o in self._memory.values())
            while len(self._memory) > 1 and total > MEMORY_BYTES:
                _, dropped = self._memory.popitem(last=False)
                total -= sum(int(a.nbytes) for a in dropped.values())

    def case_data(self, task: Task, case: InputCase
                  ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], bool]:
        """(every input of the case in the task's order, the reference outputs, whether they came
        from the cache). Inputs with a `reference` distribution are the ones the torch reference
        drew; the others are materialised (`validators.cases`). Raises ReferenceError."""
        given = materialize(task, case)
        if task.reference.language != "torch":
            outs, cached = self.outputs(task, case, given)
            return given, outs, cached
        return self._torch_case(task, case, given)

    def draws_inputs(self, task: Task, case: InputCase) -> bool:
        """Whether the reference must run before the case's inputs are known."""
        return bool(drawn_by_reference(task, case))

    def _torch_case(self, task: Task, case: InputCase, inputs: dict[str, np.ndarray]
                    ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], bool]:
        drawn_names = drawn_by_reference(task, case)
        given = {t.name: inputs[t.name] for t in task.inputs
                 if t.name not in drawn_names and t.name in inputs}
        key = reference_key(task, case, given)
        entry = self.root / key[:2] / key
        loaded = self._load(entry, task, case, extra=sorted(drawn_names))
        if loaded is not None:
            outs, drawn = loaded
            cached = True
        else:
            outs, drawn = self._run_torch(task, case, given)
            if self._keeps(task, case):
                self._store(entry, outs, drawn=drawn)
            cached = False
        full = {t.name: (drawn[t.name] if t.name in drawn_names else given[t.name])
                for t in task.inputs}
        return full, outs, cached

    def _keeps(self, task: Task, case: InputCase) -> bool:
        return self.persist is None or self.persist(task, case)

    def _load(self, entry: Path, task: Task, case: InputCase, extra: list[str] | None = None):
        """Cached outputs (and, with `extra`, `(outputs, drawn inputs)`), or None."""
        meta = entry / "meta.json"
        if not meta.is_file():
            return None
        try:
            info = json.loads(meta.read_text())
            if info.get("error"):
                raise ReferenceError(info["error"])
            if info.get("digest") is None:
                return None
            outs = {t.name: np.load(entry / f"{t.name}.npy", allow_pickle=False)
                    for t in task.outputs}
            drawn = {n: np.load(entry / f"{n}.npy", allow_pickle=False) for n in extra or []}
        except (OSError, ValueError):
            return None
        if arrays_digest(outs) != info["digest"]:
            return None
        if extra is None:
            return outs
        if arrays_digest(drawn) != info.get("drawn_digest"):
            return None
        return outs, drawn

    def _store(self, entry: Path, outs: dict[str, np.ndarray] | None, error: str = "",
               drawn: dict[str, np.ndarray] | None = None) -> None:
        entry.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(self.root, 0o700)
        tmp = Path(tempfile.mkdtemp(prefix=".ref-", dir=entry.parent))
        try:
            if outs is not None:
                for name, arr in {**(drawn or {}), **outs}.items():
                    np.save(tmp / f"{name}.npy", arr, allow_pickle=False)
            meta = {"digest": arrays_digest(outs) if outs is not None else None, "error": error}
            if drawn is not None:
                meta["drawn_digest"] = arrays_digest(drawn)
            (tmp / "meta.json").write_text(json.dumps(meta))
            try:
                os.rename(tmp, entry)
            except OSError:
                pass  # another writer published the same content first
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def _run(self, task: Task, case: InputCase, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        if task.reference.language != "numpy":
            raise ReferenceError(f"reference language {task.reference.language!r} is not supported")
        sizes = task.case_sizes(case)
        with workspace(self.limits, prefix="ckd-ref-") as d:
            work = Path(d) / "ref"
            work.mkdir()
            write_arrays(inputs, work)
            (work / "reference.py").write_text(task.reference.code)
            (work / "ref.json").write_text(json.dumps(_spec_json(task, case)))
            env = {"PYTHONDONTWRITEBYTECODE": "1", "OMP_NUM_THREADS": "1",
                   "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
            out = run_sandboxed([python_executable(), "-I", "-c", HARNESS], work, limits=self.limits,
                                env=env, expose=python_prefixes(), preimport=NUMPY_PREIMPORT)
            self._raise_for(out, task, case, inputs)
            result: dict[str, np.ndarray] = {}
            for spec in task.outputs:
                path = work / "out" / f"{spec.name}.npy"
                if not path.is_file() and not path.is_symlink():
                    raise ReferenceError(f"reference returned no output {spec.name!r}")
                try:  # a link the reference planted is never followed
                    arr = np.load(io.BytesIO(read_no_follow(path, root=work)), allow_pickle=False)
                except (ValueError, OSError) as exc:
                    raise ReferenceError(f"reference output {spec.name!r} unreadable: {exc}") from None
                result[spec.name] = _check_output(spec, sizes, arr)
            return result


    def _run_torch(self, task: Task, case: InputCase, given: dict[str, np.ndarray]
                   ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
        sizes = task.case_sizes(case)
        spec = _torch_spec_json(task, case)
        spec["prefixes"] = [str(p) for p in python_prefixes()]
        try:
            code = substitute_constants(task.reference.code, sizes)
        except SyntaxError as exc:
            raise ReferenceError(f"reference failed: SyntaxError: {exc.msg} (line {exc.lineno})"
                                 ) from None
        with workspace(self.limits, prefix="ckd-ref-") as d:
            work = Path(d) / "ref"
            work.mkdir()
            write_arrays(given, work)
            (work / "module.py").write_text(code)
            (work / "ref.json").write_text(json.dumps(spec))
            out = run_sandboxed([python_executable(), "-I", "-c", TORCH_HARNESS], work,
                                limits=self.limits, env=TORCH_ENV, expose=python_prefixes(),
                                preimport=TORCH_PREIMPORT)
            self._raise_for(out, task, case, given)
            drawn = {}
            for t in task.inputs:
                if t.name in drawn_by_reference(task, case):
                    arr = _read_npy(work / "drawn", t.name, "drawn input")
                    drawn[t.name] = _check_drawn(t, sizes, arr)
            outs = {spec.name: _check_output(spec, sizes, _read_npy(work / "out", spec.name,
                                                                     "output"))
                    for spec in task.outputs}
            return outs, drawn

    def _raise_for(self, out, task: Task, case: InputCase, inputs: dict[str, np.ndarray]) -> None:
        """ReferenceError for a reference that failed; HarnessError (the validator's failure)
        for a harness that never reached the reference's code."""
        failed = out.timed_out or out.limit_hit or out.exit_code != 0
        if failed and not harness_reached(out.stderr):
            raise harness_failure("reference", out.stderr, out.exit_code)
        if out.timed_out:
            raise ReferenceError(f"reference timed out after {out.seconds:.1f}s")
        if out.limit_hit:
            raise ReferenceError(f"reference hit the sandbox {out.limit_hit} limit")
        if out.exit_code != 0:
            msg = _error_line(out.stderr) or f"reference exited with code {out.exit_code}"
            if out.exit_code == 3 and self._keeps(task, case):  # deterministic: cache it
                key = reference_key(task, case, inputs)
                self._store(self.root / key[:2] / key, None, error=msg)
            raise ReferenceError(msg)


def _read_npy(folder: Path, name: str, what: str) -> np.ndarray:
    path = folder / f"{name}.npy"
    if not path.is_file() and not path.is_symlink():
        raise ReferenceError(f"reference returned no {what} {name!r}")
    try:  # a link the reference planted is never followed
        return np.load(io.BytesIO(read_no_follow(path, root=folder.parent)), allow_pickle=False)
    except (ValueError, OSError) as exc:
        raise ReferenceError(f"reference {what} {name!r} unreadable: {exc}") from None


def _check_drawn(spec: TensorSpec, sizes: dict[str, int], arr: np.ndarray) -> np.ndarray:
    """A drawn input must have exactly the task's shape and dtype: the program reads it raw."""
    shape = spec.resolve_shape(sizes)
    if tuple(arr.shape) != tuple(shape):
        raise ReferenceError(f"input {spec.name!r} drawn by the reference has shape "
                             f"{list(arr.shape)}, the task says {list(shape)}")
    if arr.dtype.newbyteorder("=") != little_endian(spec.dtype).newbyteorder("="):
        raise ReferenceError(f"input {spec.name!r} drawn by the reference is {arr.dtype}, "
                             f"the task says {spec.dtype}")
    return np.ascontiguousarray(arr.astype(little_endian(spec.dtype)))


def _error_line(stderr: str) -> str:
    for line in stderr.splitlines():
        if line.startswith("REFERENCE-ERROR: "):
            return "reference failed: " + line.removeprefix("REFERENCE-ERROR: ")[:500]
    tail = stderr.strip().splitlines()[-1:] if stderr.strip() else []
    return ("reference failed: " + tail[0][:500]) if tail else ""
