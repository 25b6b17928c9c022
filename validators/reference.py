"""Reference outputs: run a task's NumPy reference inside the sandbox and read its outputs.

The reference is untrusted (LLM-written), so it never runs in this process: a separate
Python process in its own sandbox directory loads the inputs, calls the entry point and
saves each output as `.npy` (no pickles). The outputs are validated here (names, shapes,
dtypes) and cached by a content hash of the reference code, the inputs, the sizes and the
output specs, in a 0700 directory outside any program's sandbox.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

from schemas import InputCase, Task, TensorSpec

from .build_cache import BuildCache, cache_root
from .cases import arrays_digest, little_endian, write_arrays
from .compare import read_no_follow
from .sandbox import Limits, python_prefixes, run_sandboxed

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

REFERENCE_LIMITS = Limits(cpu_seconds=60, wall_seconds=90, memory_bytes=8 << 30,
                          file_size_bytes=2 << 30, max_processes=64, output_bytes=256 << 10,
                          disk_bytes=8 << 30)


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


def reference_key(task: Task, case: InputCase, inputs: dict[str, np.ndarray]) -> str:
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

    def __init__(self, root: Path | None = None, limits: Limits | None = None) -> None:
        self.root = Path(root) if root is not None else cache_root() / "references"
        self.limits = limits or REFERENCE_LIMITS

    def outputs(self, task: Task, case: InputCase, inputs: dict[str, np.ndarray]
                ) -> tuple[dict[str, np.ndarray], bool]:
        """(outputs by name, whether they came from the cache). Raises ReferenceError."""
        key = reference_key(task, case, inputs)
        entry = self.root / key[:2] / key
        cached = self._load(entry, task, case)
        if cached is not None:
            return cached, True
        outs = self._run(task, case, inputs)
        self._store(entry, outs)
        return outs, False

    def _load(self, entry: Path, task: Task, case: InputCase) -> dict[str, np.ndarray] | None:
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
        except (OSError, ValueError):
            return None
        if arrays_digest(outs) != info["digest"]:
            return None
        return outs

    def _store(self, entry: Path, outs: dict[str, np.ndarray] | None, error: str = "") -> None:
        entry.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(self.root, 0o700)
        tmp = Path(tempfile.mkdtemp(prefix=".ref-", dir=entry.parent))
        try:
            if outs is not None:
                for name, arr in outs.items():
                    np.save(tmp / f"{name}.npy", arr, allow_pickle=False)
            meta = {"digest": arrays_digest(outs) if outs is not None else None, "error": error}
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
        with tempfile.TemporaryDirectory(prefix="ckd-ref-") as d:
            work = Path(d) / "ref"
            work.mkdir()
            write_arrays(inputs, work)
            (work / "reference.py").write_text(task.reference.code)
            (work / "ref.json").write_text(json.dumps(_spec_json(task, case)))
            env = {"PYTHONDONTWRITEBYTECODE": "1", "OMP_NUM_THREADS": "1",
                   "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
            out = run_sandboxed([sys.executable, "-I", "-c", HARNESS], work, limits=self.limits,
                                env=env, expose=python_prefixes())
            if out.timed_out:
                raise ReferenceError(f"reference timed out after {out.seconds:.1f}s")
            if out.limit_hit:
                raise ReferenceError(f"reference hit the sandbox {out.limit_hit} limit")
            if out.exit_code != 0:
                msg = _error_line(out.stderr) or f"reference exited with code {out.exit_code}"
                if out.exit_code == 3:  # deterministic failure of the code itself: cache it
                    key = reference_key(task, case, inputs)
                    self._store(self.root / key[:2] / key, None, error=msg)
                raise ReferenceError(msg)
            result: dict[str, np.ndarray] = {}
            for spec in task.outputs:
                path = work / "out" / f"{spec.name}.npy"
                if not path.is_file() and not path.is_symlink():
                    raise ReferenceError(f"reference returned no output {spec.name!r}")
                try:  # a link the reference planted is never followed
                    arr = np.load(io.BytesIO(read_no_follow(path)), allow_pickle=False)
                except (ValueError, OSError) as exc:
                    raise ReferenceError(f"reference output {spec.name!r} unreadable: {exc}") from None
                result[spec.name] = _check_output(spec, sizes, arr)
            return result


def _error_line(stderr: str) -> str:
    for line in stderr.splitlines():
        if line.startswith("REFERENCE-ERROR: "):
            return "reference failed: " + line.removeprefix("REFERENCE-ERROR: ")[:500]
    tail = stderr.strip().splitlines()[-1:] if stderr.strip() else []
    return ("reference failed: " + tail[0][:500]) if tail else ""
