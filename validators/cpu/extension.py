"""PyTorch CUDA extensions (`torch.utils.cpp_extension.load_inline` / `load`) built for the cpu
backend: the CUDA sources go through the shim's rewrite and g++, against the shim's headers and
torch's C++ headers, into a Python module whose kernels run on the cudashim emulator.

Two passes, because an answer is untrusted and its sources may only be compiled in the build
sandbox, which the answer's own sandbox cannot start:

1. the answer runs (sandboxed) with `torch_cuda.install(build_root)`; each `load_inline`/`load`
   whose module is not built yet writes a `BuildRequest` to `build_root/requests/<key>.json`
   and stops the pass (`torch_cuda.ExtensionNotBuilt`);
2. the orchestrator calls `build_pending(build_root, variant)`: every request is compiled in the
   build sandbox (content-addressed in the build cache) and its module, or its failure, placed
   under `build_root/ext/<key>/`; the runtime library goes to `build_root/lib/`;
3. the answer runs again, and `load_inline` imports the built module.

The runtime (`runtime/cudashim_runtime.cpp`) is built once per variant as a shared library
(`-DCUDASHIM_LIBRARY`), loaded with RTLD_GLOBAL before any extension, so every extension of a
process shares one runtime: one worker pool, one launch count, one set of settings.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sysconfig
import tempfile
import time
import warnings
from dataclasses import asdict, dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from . import bindings, diagnostics, toolchain
from .rewrite import program_identity_macros

if TYPE_CHECKING:
    from ..build_cache import BuildCache

HERE = Path(__file__).resolve().parent
TORCH_INCLUDE_DIR = HERE / "include_torch"
PRELUDE = TORCH_INCLUDE_DIR / "cudashim_torch.h"
VARIANTS = ("plain", "race")
"""The ASan build is not offered for extensions: see README, "PyTorch CUDA extensions"."""

LIBRARY_NAME = "libcudashim.so"
REQUESTS = "requests"
EXT = "ext"
LIB = "lib"
MODULE_FILE = "module.so"
FAILURE_FILE = "failure.json"
COMPILE_SECONDS = 600.0
"""One extension's build: torch's headers are heavy even behind the precompiled header."""

_CUDA_SUFFIXES = (".cu", ".cuh")


class ExtensionError(ValueError):
    """A build request that cannot be read (a malformed request file): names the file and why."""


@dataclass(frozen=True)
class BuildRequest:
    """One `load_inline`/`load` call, as the answer made it (sources as text, not paths: the
    orchestrator never reads the answer's file system)."""

    name: str
    cpp_sources: list[str]
    cuda_sources: list[str]
    functions: dict[str, str] | None = None
    with_pytorch_error_handling: bool = True
    extra_cflags: list[str] = field(default_factory=list)
    extra_cuda_cflags: list[str] = field(default_factory=list)
    is_python_module: bool = True
    inline: bool = True
    """load_inline (torch adds `#include <torch/extension.h>` and the bindings) or load."""
    variant: str = "plain"

    def key(self) -> str:
        """The request's own content key (what the answer's process can compute)."""
        blob = json.dumps(asdict(self), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()[:32]

    @staticmethod
    def parse(text: str, origin: str) -> BuildRequest:
        try:
            data = json.loads(text)
            req = BuildRequest(**data)
        except (ValueError, TypeError) as exc:
            raise ExtensionError(f"extension build request {origin}: {exc}") from exc
        def texts(v: object) -> bool:
            return isinstance(v, list) and all(isinstance(x, str) for x in v)

        if not isinstance(req.name, str) or not all(
                texts(getattr(req, f)) for f in ("cpp_sources", "cuda_sources", "extra_cflags",
                                                 "extra_cuda_cflags")):
            raise ExtensionError(f"extension build request {origin}: the name must be a string and "
                                 "sources and flags lists of strings")
        if req.functions is not None and not (isinstance(req.functions, dict) and all(
                isinstance(k, str) and isinstance(v, str) for k, v in req.functions.items())):
            raise ExtensionError(f"extension build request {origin}: functions must map names to "
                                 "docstrings")
        if not req.name.isidentifier():
            raise ExtensionError(
                f"extension build request {origin}: module name {req.name!r} is not a Python identifier")
        if req.variant not in VARIANTS:
            raise ExtensionError(
                f"extension build request {origin}: variant {req.variant!r} is not one of {VARIANTS}")
        return req


@dataclass
class ExtensionBuild:
    key: str
    name: str
    ok: bool
    diagnostics: str
    needs_gpu: str | None
    seconds: float
    cached: bool


def module_generation(req: BuildRequest) -> str:
    """The translation unit torch's load_inline writes as main.cpp: the C++ sources after
    `#include <torch/extension.h>`, then the bindings of `functions` (torch's own text)."""
    parts = list(req.cpp_sources)
    if req.inline:
        parts.insert(0, "#include <torch/extension.h>")
        if req.functions is not None:
            parts.append("PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {")
            for fname, doc in req.functions.items():
                target = f"torch::wrap_pybind_function({fname})" if req.with_pytorch_error_handling else fname
                parts.append(f'm.def("{fname}", {target}, "{doc}");')
            parts.append("}")
    return "\n".join(parts)


def cuda_generation(source: str, inline: bool) -> str:
    if not inline:
        return source
    return "\n".join(["#include <torch/types.h>", "#include <cuda.h>", "#include <cuda_runtime.h>", source])


# --- the shared pieces: runtime library and precompiled header --------------------------------

@cache
def torch_build_info() -> dict[str, object]:
    """Include dirs, library dir and ABI flags of the installed torch (what its extension
    builder passes), read once."""
    import torch
    from torch.utils import cpp_extension as ce

    abi: list[str] = []
    for getter in ("_get_pybind11_abi_build_flags", "_get_glibcxx_abi_build_flags"):
        fn = getattr(ce, getter, None)
        if fn is not None:
            # torch's builder still passes them (deprecated for the pybind11 one since 2.9).
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                abi.extend(fn())
    return {
        "version": torch.__version__,
        "include": [str(Path(p).resolve()) for p in ce.include_paths()],
        "python_include": str(Path(sysconfig.get_paths()["include"]).resolve()),
        "lib": str(Path(torch.__file__).resolve().parent / "lib"),
        "abi_flags": abi,
    }


def _flags(variant: str) -> list[str]:
    info = torch_build_info()
    return [
        *toolchain.program_flags(variant, torch_unit=True),
        "-fPIC",
        "-DTORCH_API_INCLUDE_EXTENSION_H",
        *info["abi_flags"],  # type: ignore[misc]
    ]


def _include_flags(full: bool = False) -> list[str]:
    """Ours first: torch's own ATen/cuda and c10/cuda headers would pull in NVIDIA's libraries;
    the slim build's torch/extension.h stands for the real one (`full` keeps the real one)."""
    info = torch_build_info()
    slim = [] if full else [TORCH_INCLUDE_DIR / "slim"]
    dirs = [*slim, TORCH_INCLUDE_DIR, toolchain.INCLUDE_DIR, *info["include"], info["python_include"]]  # type: ignore[misc]
    return [f"-I{d}" for d in dirs] + (["-DCUDASHIM_TORCH_FULL"] if full else [])


# Errors that say the extension needs torch's C++ frontend, which the slim header leaves out.
_NEEDS_FULL_TORCH = re.compile(
    r"is not a member of [‘'`]torch(?:::\w+)*[’'`]|[‘'`]torch::(?:nn|optim|data|jit|serialize)\b"
    r"|[‘'`](?:nn|optim|data|jit)[’'`] (?:is not a member of|has not been declared)")


def shim_version() -> str:
    h = hashlib.sha256(toolchain.shim_version().encode())
    for f in sorted(TORCH_INCLUDE_DIR.rglob("*.h")):
        h.update(str(f.relative_to(TORCH_INCLUDE_DIR)).encode() + b"\0" + f.read_bytes())
    h.update(Path(__file__).read_bytes())
    h.update((HERE / "bindings.py").read_bytes())
    h.update(str(torch_build_info()["version"]).encode())
    return h.hexdigest()[:16]


def _ext_shim_dir(variant: str) -> Path:
    root = os.environ.get("CKD_SHIM_DIR")
    return (Path(root) if root else toolchain.cache_root() / "cpu-shim") / "torch-ext" / shim_version() / variant


def runtime_library(variant: str) -> Path:
    """libcudashim.so for `variant`, built once per shim version (ours: built unsandboxed)."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown extension build variant {variant!r} (expected one of {', '.join(VARIANTS)})")

    def build(target: Path) -> None:
        tmp = target.with_suffix(f".tmp{os.getpid()}")
        toolchain._run(
            [toolchain.gxx(), *toolchain.flags(variant), "-fPIC", "-DCUDASHIM_LIBRARY",
             f"-I{toolchain.INCLUDE_DIR}", "-shared", str(toolchain.RUNTIME_SOURCE), "-o", str(tmp)],
            "the cudashim runtime library")
        tmp.replace(target)

    return toolchain._locked_build(_ext_shim_dir(variant) / LIBRARY_NAME, build)


POISON_LIBRARY_NAME = "libcudashim_torch.so"
POISON_SOURCE = HERE / "runtime" / "torch_poison.cpp"


def poison_library() -> Path:
    """The poisoning CPU allocator for torch (runtime/torch_poison.cpp), built once."""

    def build(target: Path) -> None:
        info = torch_build_info()
        tmp = target.with_suffix(f".tmp{os.getpid()}")
        toolchain._run(
            [toolchain.gxx(), "-std=c++20", "-O2", "-w", "-fPIC", "-shared", *info["abi_flags"],  # type: ignore[misc]
             *[f"-I{d}" for d in info["include"]], str(POISON_SOURCE), "-o", str(tmp),  # type: ignore[union-attr]
             f"-L{info['lib']}", "-lc10"],
            "the torch poisoning allocator")
        tmp.replace(target)

    return toolchain._locked_build(_ext_shim_dir("plain") / POISON_LIBRARY_NAME, build)


BIND_DEFINE = "-DCUDASHIM_TORCH_BIND"
"""Selects the prelude with pybind11 and torch's Python casters (cudashim_torch.h)."""

# What only a unit that binds to Python uses: pybind11, torch's Python glue (torch/python.h,
# torch/csrc/..., THP* objects, its error-handling macros). Such a unit gets the binding
# prelude; any other is compiled without pybind11, which costs every unit that includes it
# ~6 s of CPU emitting pybind11's own code, used or not.
_BINDS = re.compile(r"\bPYBIND11_|\bpybind11\b|\bpy::|torch/python\.h|torch/csrc/(?!api/)|\bTHP[A-Z]\w*"
                    r"|\b(?:END_)?HANDLE_TH_ERRORS\b|\bwrap_pybind_function\b|\bpython_error\b")
# Errors of a unit built without the binding prelude that say it needed it after all (names the
# scan above cannot see, from a macro or an included file): the unit is compiled again with it.
_NEEDS_BIND = re.compile(r"[‘'`](?:py|pybind11|PYBIND11_\w+|THP\w+|(?:END_)?HANDLE_TH_ERRORS|"
                         r"wrap_pybind_function|python_error)[’'`]|pybind11/")


def binds_to_python(text: str) -> bool:
    """Whether a translation unit's text uses pybind11 or torch's Python glue."""
    return _BINDS.search(text) is not None


# The header of the units that do not bind to Python is built once for both variants, from the
# plain build's flags with the race build's debug level: g++ takes a header built with -g1 in a
# build without debug information, and the race build's instrumentation comes after parsing, so
# one header serves both (a 460 MB header and ~30 CPU-s less per cache).
_CORE_PCH_FLAGS = ["-g1"]


def prelude_pch(variant: str, bind: bool = True) -> Path:
    """The forced include of every extension translation unit, precompiled (torch's headers
    take tens of seconds per unit without it): with pybind11 (`bind`, for units that bind to
    Python; one per variant) or without (one for every variant). Returns the header next to
    its `.gch`."""
    built_for = variant if bind else "plain"
    extra = [] if bind else _CORE_PCH_FLAGS

    def build(target: Path) -> None:
        work = Path(tempfile.mkdtemp(dir=target.parent))
        header = work / PRELUDE.name
        header.write_text(PRELUDE.read_text())
        toolchain._run(
            [toolchain.gxx(), *_flags(built_for), *extra, *_include_flags(), *([BIND_DEFINE] if bind else []),
             "-x", "c++-header", str(header), "-o", str(work / (PRELUDE.name + ".gch"))],
            "the torch extension precompiled header" + (" (binding)" if bind else ""))
        for name in (PRELUDE.name + ".gch", PRELUDE.name):
            (work / name).replace(target.parent / name)
        work.rmdir()

    return toolchain._locked_build(_ext_shim_dir(built_for) / ("bind" if bind else "core") / PRELUDE.name,
                                   build)


def prepare_runtime(build_root: Path, variant: str = "plain") -> Path:
    """Copy the runtime library and the poisoning allocator into `build_root/lib/` (the
    answer's sandbox sees build_root), building them first if needed."""
    lib = Path(build_root) / LIB
    lib.mkdir(parents=True, exist_ok=True)
    target = lib / LIBRARY_NAME
    src = runtime_library(variant)
    marker = lib / "variant"
    if not target.exists() or not marker.exists() or marker.read_text() != variant:
        shutil.copyfile(src, target)
        os.chmod(target, 0o755)
        marker.write_text(variant)
    if not (lib / POISON_LIBRARY_NAME).exists():
        shutil.copyfile(poison_library(), lib / POISON_LIBRARY_NAME)
        os.chmod(lib / POISON_LIBRARY_NAME, 0o755)
    return target


# --- building one request -------------------------------------------------------------------

def _torch_paths() -> list[Path]:
    info = torch_build_info()
    return [Path(p) for p in info["include"]] + [Path(str(info["python_include"])), Path(str(info["lib"]))]  # type: ignore[union-attr]


def compile_request(req: BuildRequest, out_dir: Path, *, runner: toolchain.Runner = toolchain.run_local,
                    cache: BuildCache | None = None) -> tuple[bool, str, list[str]]:
    """Compile `req` into `out_dir/module.so`; returns (ok, diagnostics, commands). Never raises
    for a bad extension. The slim, precompiled torch header first; an extension whose errors
    show it uses torch's C++ frontend is built again with the whole torch/extension.h (parsed
    for every unit: about three times the time). With `cache`, the host unit (main.cpp) is
    built once for every variant and every request of the same text (`_shared_host_unit`), and
    load_inline's bindings once for every request whose declarations differ only by the
    functions' names (`bindings`)."""
    ok, diag, commands = _compile_request(req, out_dir, runner=runner, full=False, cache=cache)
    if not ok and _NEEDS_FULL_TORCH.search(diag):
        first = next((ln for ln in diag.splitlines() if "error" in ln), "").strip()
        ok, diag, more = _compile_request(req, out_dir, runner=runner, full=True, cache=cache)
        diag = f"cudashim: built again with the whole torch/extension.h ({first})\n" + diag
        commands += more
    # g++ quotes the rewritten units; a split source keeps its lines (its bindings are blanked),
    # so the answer's own text stands for every CUDA unit.
    own = {f"cuda{i}.cu": cuda_generation(src, req.inline) for i, src in enumerate(req.cuda_sources)}
    return ok, diagnostics.program_quotes(diag, own), commands


def _compile_request(req: BuildRequest, out_dir: Path, *, runner: toolchain.Runner, full: bool,
                     cache: BuildCache | None = None) -> tuple[bool, str, list[str]]:
    out_dir.mkdir(parents=True, exist_ok=True)
    expose = [toolchain.INCLUDE_DIR, TORCH_INCLUDE_DIR, *_torch_paths()]
    common = [toolchain.gxx(), *_flags(req.variant), *_include_flags(full),
              f"-DTORCH_EXTENSION_NAME={req.name}"]

    def prelude(bind: bool) -> list[str]:
        # Built here, in our process, before the untrusted unit is compiled in the sandbox.
        pch = PRELUDE if full else prelude_pch(req.variant, bind)
        if pch.parent not in expose:
            expose.append(pch.parent)
        return [*([BIND_DEFINE] if bind else []), "-include", str(pch)]

    def forced(bind: bool, library: list[str]) -> list[str]:
        if not library:
            return prelude(bind)
        # A unit using Thrust or libcu++: their headers must see a host compiler (library mode,
        # as for programs), which the precompiled prelude was not built for: its header is
        # parsed for this unit.
        cccl = toolchain.cccl_dir()
        if cccl is not None and cccl.resolve() not in expose:
            expose.append(cccl.resolve())
        return [*([BIND_DEFINE] if bind else []), "-include", str(PRELUDE), *library]

    units: list[tuple[str, str]] = [("main.cpp", module_generation(req))]
    notes: list[str] = []
    # A CUDA source that binds its own functions (the AI CUDA Engineer's form): its kernels
    # without pybind11, its bindings as a shared unit (`bindings.split_module`), checked at the
    # link; the source as it is wherever that cannot stand for it.
    split: tuple[int, bindings.SplitModule] | None = None
    for i, src in enumerate(req.cuda_sources):
        if (split is None and cache is not None and not full and req.inline and req.functions is None
                and binds_to_python(src) and _sharing_bindings()):
            parts = bindings.split_module(src)
            if parts is not None and not binds_to_python(parts.kernels):
                split = (i + 1, parts)
                src = parts.kernels
        rw = toolchain.rewrite(cuda_generation(src, req.inline), filename=f"cuda{i}.cu")
        notes.extend(f"cudashim rewrite: {w}" for w in rw.warnings)
        units.append((f"cuda{i}.cu", rw.text))
    host_flags = _host_flags(req.extra_cflags, notes) + _host_flags(req.extra_cuda_cflags, notes)
    commands: list[str] = []
    output = ""
    objects: list[str] = []
    aliases: list[str] = []
    shared = False
    shared_text: tuple[bindings.SharedBindings, str, list[str]] | None = None
    for i, (fname, text) in enumerate(units):
        library = toolchain.thrust_flags() if i and toolchain.uses_host_library(text) else []
        if library:
            text = program_identity_macros(text)
        (out_dir / fname).write_text(text, encoding="utf-8", errors="surrogatepass")
        obj = fname + ".o"
        bind = full or (i == 0 and req.inline and req.functions is not None) or binds_to_python(text)
        if i == 0 and cache is not None:
            # The slim header even when the CUDA units need the whole one (the C++ frontend is
            # what kernels' launchers use, rarely the declarations): one unit less parsing it.
            generic = _generic_bindings(req, text)
            name = HOST_UNIT_NAME if generic else req.name
            pch = prelude_pch("plain", bind)
            if pch.parent not in expose:
                expose.append(pch.parent)
            cmd = _host_unit_command(name, bind, pch, host_flags, fname)
            placeholders = bindings.shared_bindings(req.cpp_sources, req.functions,
                                                    req.with_pytorch_error_handling) \
                if generic and _sharing_bindings() else None
            if placeholders is not None:
                # Compiled here, checked at the link (the CUDA units must define each function);
                # torch's own text below wherever it cannot stand for it.
                res = _shared_host_unit(placeholders.text, cmd, out_dir, runner=runner, cache=cache,
                                        expose=expose)
                if res.returncode == 0 and not res.timed_out:
                    shared_text = (placeholders, text, cmd)
                    commands.append(" ".join(cmd) + "  # load_inline's bindings, names from a table")
                    aliases += [f"-Wl,--defsym=PyInit_{req.name}=PyInit_{HOST_UNIT_NAME}"]
                    objects.append(obj)
                    shared = True
                    continue
            res = _shared_host_unit(text, cmd, out_dir, runner=runner, cache=cache, expose=expose)
            if res.returncode == 0 and not res.timed_out:
                commands.append(" ".join(cmd))
                aliases += [f"-Wl,--defsym=PyInit_{req.name}=PyInit_{HOST_UNIT_NAME}"] if generic else []
                output += res.output
                objects.append(obj)
                shared = True
                continue
            if not full:
                commands.append(" ".join(cmd))
                output += res.output
                return False, "\n".join(notes) + ("\n" if notes else "") + output, commands
            # With the whole header: the host unit itself needs it, compiled so below.
        # A CUDA unit that never names the module is the same object under any module name: it
        # is built once in the build cache for every answer of that text (answers that differ
        # only in their Python, or in the name they give load_inline).
        reusable = (i > 0 and cache is not None and not library and "TORCH_EXTENSION_NAME" not in text
                    and not any(f.startswith(("-I", "-include", "-isystem", "-iquote")) for f in host_flags))
        unit_common = ([*common[:-1], f"-DTORCH_EXTENSION_NAME={HOST_UNIT_NAME}"] if reusable else common)
        unit_cache = cache if reusable else None
        cmd = [*unit_common, *forced(bind, library), *host_flags, "-x", "c++", "-c", fname, "-o", obj]
        commands.append(" ".join(cmd))
        res = _unit(text, cmd, out_dir, runner=runner, cache=unit_cache, expose=expose)
        if not bind and res.returncode != 0 and not res.timed_out and _NEEDS_BIND.search(res.output):
            first = next((ln for ln in res.output.splitlines() if "error" in ln), "").strip()
            notes.append(f"cudashim: {fname} compiled again with pybind11's headers ({first})")
            cmd = [*unit_common, *forced(True, library), *host_flags, "-x", "c++", "-c", fname, "-o", obj]
            commands.append(" ".join(cmd))
            res = _unit(text, cmd, out_dir, runner=runner, cache=unit_cache, expose=expose)
        output += res.output
        if res.returncode != 0 or res.timed_out:
            return False, "\n".join(notes) + ("\n" if notes else "") + output, commands
        objects.append(obj)
    if shared_text is not None:
        placeholders, text, cmd = shared_text
        linked = _bind_placeholders(placeholders, objects, out_dir, runner=runner, expose=expose)
        if linked is None:
            # The shared unit cannot stand for torch's text here: that text, as torch builds it.
            res = _shared_host_unit(text, cmd, out_dir, runner=runner, cache=cache, expose=expose)
            commands[0] = " ".join(cmd)
            output = res.output + output
            if res.returncode != 0 or res.timed_out:
                return False, "\n".join(notes) + ("\n" if notes else "") + output, commands
        else:
            more, table, table_cmd = linked
            aliases += more
            objects.append(table)
            commands.append(" ".join(table_cmd))
    if split is not None:
        index, parts = split
        bind_pch = prelude_pch("plain", True)
        if bind_pch.parent not in expose:
            expose.append(bind_pch.parent)
        cmd = _host_unit_command(HOST_UNIT_NAME, True, bind_pch, host_flags, BIND_UNIT)
        res = _shared_host_unit(parts.bindings.text, cmd, out_dir, runner=runner, cache=cache, expose=expose)
        linked = None
        if res.returncode == 0 and not res.timed_out:
            linked = _bind_placeholders(parts.bindings, [BIND_UNIT + ".o", *objects[1:]], out_dir,
                                        runner=runner, expose=expose)
        if linked is not None:
            more, table, table_cmd = linked
            aliases += [*more, f"-Wl,--defsym=PyInit_{req.name}=PyInit_{HOST_UNIT_NAME}"]
            objects += [BIND_UNIT + ".o", table]
            commands += [" ".join(cmd) + "  # the source's PYBIND11_MODULE, names from a table",
                         " ".join(table_cmd)]
        else:
            # The source as it is, bindings and all (with pybind11's headers).
            fname = f"cuda{index - 1}.cu"
            rw = toolchain.rewrite(cuda_generation(req.cuda_sources[index - 1], req.inline), filename=fname)
            (out_dir / fname).write_text(rw.text, encoding="utf-8", errors="surrogatepass")
            cmd = [*common, *prelude(True), *host_flags, "-x", "c++", "-c", fname, "-o", fname + ".o"]
            commands.append(" ".join(cmd))
            res = runner(cmd, out_dir, expose)
            output += res.output
            if res.returncode != 0 or res.timed_out:
                return False, "\n".join(notes) + ("\n" if notes else "") + output, commands
    info = torch_build_info()
    # The CUDA units first: where they and the shared host unit (built without the variant's
    # instrumentation) hold the same inline function, the linker keeps the first copy.
    if shared:
        objects = objects[1:] + objects[:1]
    link = [toolchain.gxx(), "-shared", *objects, *aliases, "-o", MODULE_FILE, f"-L{info['lib']}",
            "-lc10", "-ltorch", "-ltorch_cpu", "-ltorch_python"]
    commands.append(" ".join(link))
    res = runner(link, out_dir, expose)
    output += res.output
    ok = res.returncode == 0 and (out_dir / MODULE_FILE).is_file()
    return ok, "\n".join(notes) + ("\n" if notes else "") + output, commands


HOST_UNIT_NAME = "cudashim_host_unit"
"""The module name a generated binding unit is compiled under, so that every extension with
the same declarations and bindings shares one object; the link names the module's entry point
after the extension (`PyInit_<name>`, an alias). pybind11 initialises modules in phases, taking
the module's name from the import, so Python sees the extension's own name."""


def _sharing_bindings() -> bool:
    """`CKD_SHARED_BINDINGS=0` compiles every binding text as it is (side-by-side measurements)."""
    return os.environ.get("CKD_SHARED_BINDINGS", "1") != "0"


def _host_unit_command(name: str, bind: bool, pch: Path, host_flags: list[str], fname: str) -> list[str]:
    """A unit built once with the plain variant's flags and linked by every variant (no kernel in
    it): the host unit, or a self-binding source's bindings. -Og: binding glue, run a few times
    per call; g++ emits pybind11's inline code in every binding unit, and at -O2 optimising it is
    a third of the unit's cost (10 CPU-s to 7 for an empty one). -O0 would not take the -O2
    precompiled header."""
    return [toolchain.gxx(), *_flags("plain"), "-Og", *_include_flags(), f"-DTORCH_EXTENSION_NAME={name}",
            *([BIND_DEFINE] if bind else []), "-include", str(pch), *host_flags,
            "-x", "c++", "-c", fname, "-o", fname + ".o"]


NAMES_UNIT = "cudashim_bound_names.cpp"
BIND_UNIT = "cudashim_bind.cpp"


def _bind_placeholders(placeholders: bindings.SharedBindings, objects: list[str], out_dir: Path, *,
                       runner: toolchain.Runner, expose: list[Path],
                       ) -> tuple[list[str], str, list[str]] | None:
    """The link's aliases from the shared host unit's placeholders (`objects[0]`) to the
    functions the CUDA units define, and the extension's table of names, compiled; None when
    the shared unit cannot stand for torch's text (see `bindings`)."""
    nm = shutil.which("nm")
    if nm is None:
        return None
    listed = runner([nm, "-P", "-g", "-A", *objects], out_dir, expose)
    if listed.returncode != 0 or listed.timed_out:
        return None
    per_file: dict[str, list[str]] = {}
    for line in listed.output.splitlines():
        head, sep, rest = line.partition(": ")
        if sep and head in objects:
            per_file.setdefault(head, []).append(rest)
    host_undefined, host_defined = bindings.nm_symbols("\n".join(per_file.get(objects[0], [])))
    cuda_defined: set[str] = set()
    for obj in objects[1:]:
        cuda_defined |= bindings.nm_symbols("\n".join(per_file.get(obj, [])))[1]
    pairs = bindings.aliases(placeholders, host_undefined, host_defined, cuda_defined)
    if pairs is None:
        return None
    (out_dir / NAMES_UNIT).write_text(bindings.names_table_source(placeholders), encoding="utf-8")
    table = NAMES_UNIT + ".o"
    cmd = [toolchain.gxx(), "-fPIC", "-c", "-x", "c++", NAMES_UNIT, "-o", table]
    done = runner(cmd, out_dir, expose)
    if done.returncode != 0 or done.timed_out:
        return None
    return [f"-Wl,--defsym={p}" for p in pairs], table, cmd


def _generic_bindings(req: BuildRequest, text: str) -> bool:
    """Whether the host unit is load_inline's own bindings over sources that never name the
    module themselves (then the unit does not depend on the extension's name)."""
    return (req.inline and req.functions is not None
            and "TORCH_EXTENSION_NAME" not in "\n".join(req.cpp_sources))


def _shared_host_unit(text: str, cmd: list[str], out_dir: Path, *, runner: toolchain.Runner,
                      cache: BuildCache, expose: list[Path]) -> toolchain.CommandResult:
    """The host unit's object (main.cpp: the C++ sources and their bindings), from the build
    cache or built there, copied to `out_dir`. It holds no kernel (torch compiles these sources
    with the host compiler), so every variant links the plain build of it: the race build's
    instrumentation observes kernel threads only. pybind11 makes this unit the costliest of an
    extension (about 12 CPU-s of a ~20 s build), and a thorough check builds two variants."""
    return _cached_unit(text, cmd, out_dir, runner=runner, cache=cache, expose=expose,
                        kind="torch-ext-host-unit")


def _unit(text: str, cmd: list[str], out_dir: Path, *, runner: toolchain.Runner,
          cache: BuildCache | None, expose: list[Path]) -> toolchain.CommandResult:
    """A CUDA unit's object (its text already at `out_dir / cmd[-3]`): from the build cache
    when `cache` is given, else compiled in place."""
    if cache is None:
        return runner(cmd, out_dir, expose)
    return _cached_unit(text, cmd, out_dir, runner=runner, cache=cache, expose=expose,
                        kind="torch-ext-cuda-unit")


_UNIT_KINDS = {"torch-ext-host-unit": "host unit of torch extensions",
               "torch-ext-cuda-unit": "CUDA unit of torch extensions"}


def _cached_unit(text: str, cmd: list[str], out_dir: Path, *, runner: toolchain.Runner,
                 cache: BuildCache, expose: list[Path], kind: str) -> toolchain.CommandResult:
    """The object `cmd` compiles from `text` (written at `cmd[-3]`), from the build cache or
    built there (keyed on both), copied to `out_dir`."""
    from ..build_cache import BuildCache, TransientBuildError

    obj = cmd[-1]
    key = BuildCache.key(kind=kind, text=text, command=cmd, shim=shim_version(),
                         compiler=toolchain.gxx_version())
    from schemas.validation import CompileInfo

    def build(work: Path) -> CompileInfo:
        t0 = time.monotonic()
        (work / cmd[-3]).write_text(text, encoding="utf-8", errors="surrogatepass")
        res = runner(cmd, work, expose)
        info = CompileInfo(compiler=f"g++ {toolchain.gxx_version()} ({_UNIT_KINDS[kind]})",
                           command=cmd,
                           ok=res.returncode == 0 and not res.timed_out,
                           seconds=time.monotonic() - t0, diagnostics=res.output)
        if res.timed_out:
            raise TransientBuildError(info)
        return info

    path, info = cache.get_or_build(key, build, artifact=obj)
    if path is None:
        timed_out = "timed out after" in info.diagnostics.split("\n", 1)[0]
        return toolchain.CommandResult(1, info.diagnostics, timed_out=timed_out)
    shutil.copyfile(path, out_dir / obj)
    return toolchain.CommandResult(0, info.diagnostics)


def _host_flags(flags: list[str], notes: list[str]) -> list[str]:
    """The extension's flags that reach g++ (the program rules of backends/cpu.py): defines,
    includes, optimisation levels; nvcc's own flags are dropped with a note."""
    from ..backends.cpu import _host_flags as program_host_flags

    kept, dropped = program_host_flags(list(flags))
    notes.extend(dropped)
    # -std=c++17 would undo the shim's C++20; program_host_flags already rewrites it.
    return [f for f in kept if not f.startswith("-l")]


def _sandbox_runner() -> toolchain.Runner:
    from ..sandbox import BUILD_DEVICES, BUILD_MEMORY_BYTES, Limits, run_sandboxed

    limits = Limits(cpu_seconds=COMPILE_SECONDS, wall_seconds=COMPILE_SECONDS,
                    memory_bytes=BUILD_MEMORY_BYTES, file_size_bytes=1 << 30,
                    devices=BUILD_DEVICES)

    def run(cmd: list[str], cwd: Path, expose: list[Path]) -> toolchain.CommandResult:
        bindir = os.path.dirname(cmd[0])
        out = run_sandboxed(cmd, cwd, limits=limits, expose=expose,
                            env={"PATH": f"{bindir}:/usr/local/bin:/usr/bin:/bin"})
        text = out.stderr + ("\n" + out.stdout if out.stdout.strip() else "")
        if out.timed_out:
            text = f"g++ timed out after {out.seconds:.0f}s\n" + text
        return toolchain.CommandResult(out.exit_code, text, timed_out=out.timed_out)

    return run


def pending_requests(build_root: Path) -> list[BuildRequest]:
    """Requests the last answer pass wrote that have no build yet (oldest first); a file that is
    no request (the answer's process can write there) is left out: `build_pending` reports it."""
    return _scan(Path(build_root))[0]


def _scan(build_root: Path) -> tuple[list[BuildRequest], list[str]]:
    folder = build_root / REQUESTS
    if not folder.is_dir():
        return [], []
    out: list[BuildRequest] = []
    bad: list[str] = []
    for p in sorted(folder.glob("*.json"), key=lambda q: q.stat().st_mtime):
        try:
            if p.is_symlink() or not p.is_file():
                raise ExtensionError(f"extension build request {p}: not a regular file")
            req = BuildRequest.parse(p.read_text(errors="replace"), str(p))
        except (OSError, ExtensionError) as exc:
            bad.append(str(exc))
            continue
        if not (build_root / EXT / req.key()).is_dir() and req not in out:
            out.append(req)
    return out, bad


def build_pending(build_root: Path, variant: str = "plain", *, sandboxed: bool = True,
                  cache: BuildCache | None = None) -> list[ExtensionBuild]:
    """Build every pending request of `build_root` (in the build sandbox unless `sandboxed` is
    False, for tests of our own sources) and place the results where `torch_cuda` finds them."""
    from ..build_cache import BuildCache

    prepare_runtime(build_root, variant)
    cache = cache or BuildCache()
    pending, bad = _scan(Path(build_root))
    # A request file the answer's process forged is its own doing: reported, never built.
    results = [ExtensionBuild(key="", name="", ok=False, diagnostics=why, needs_gpu=None, seconds=0.0,
                              cached=False) for why in bad]
    for req in pending:
        if req.variant != variant:
            results.append(ExtensionBuild(
                key=req.key(), name=req.name, ok=False, needs_gpu=None, seconds=0.0, cached=False,
                diagnostics=f"extension {req.name!r} was requested for variant {req.variant!r}, "
                            f"not {variant!r}"))
            continue
        results.append(build_one(req, Path(build_root), cache=cache, sandboxed=sandboxed))
    return results


def build_one(req: BuildRequest, build_root: Path, *, cache: BuildCache, sandboxed: bool = True,
              ) -> ExtensionBuild:
    # Imported here, not at the top: the answer's own process imports this module (through
    # torch_cuda) and never builds, and pydantic's schemas cost it about 0.3 s of start-up.
    from schemas.validation import CompileInfo

    from ..build_cache import BuildCache, TransientBuildError
    from . import diagnostics

    started = time.monotonic()
    runtime_library(req.variant)
    # The precompiled headers are built by compile_request on a miss only: a hit needs neither.
    key = BuildCache.key(kind="torch-ext", request=asdict(req), shim=shim_version(),
                         compiler=toolchain.gxx_version())
    runner = _sandbox_runner() if sandboxed else toolchain.run_local

    def build(work: Path) -> CompileInfo:
        t0 = time.monotonic()
        ok, diag, commands = compile_request(req, work, runner=runner, cache=cache)
        info = CompileInfo(compiler=f"g++ {toolchain.gxx_version()} (cudashim {shim_version()}, torch "
                                    f"extension, {req.variant})",
                           command=commands, ok=ok, seconds=time.monotonic() - t0,
                           diagnostics=diagnostics.truncate(diag))
        if "timed out after" in diag.split("\n", 1)[0]:
            raise TransientBuildError(info)
        return info

    path, info = cache.get_or_build(key, build, artifact=MODULE_FILE)
    dest = build_root / EXT / req.key()
    tmp = Path(tempfile.mkdtemp(prefix=".ext-", dir=build_root))
    needs = None if info.ok else (_needs_gpu(info.diagnostics) or None)
    if path is not None:
        shutil.copyfile(path, tmp / f"{req.name}.so")
        os.chmod(tmp / f"{req.name}.so", 0o755)
    else:
        (tmp / FAILURE_FILE).write_text(json.dumps({"diagnostics": info.diagnostics, "needs_gpu": needs}))
    os.chmod(tmp, 0o755)
    dest.parent.mkdir(parents=True, exist_ok=True)
    if dest.exists():
        shutil.rmtree(dest)
    os.rename(tmp, dest)
    return ExtensionBuild(key=req.key(), name=req.name, ok=path is not None, diagnostics=info.diagnostics,
                          needs_gpu=needs, seconds=time.monotonic() - started, cached=info.cached)


def _needs_gpu(diag: str) -> str | None:
    for line in diag.splitlines():
        if "torch_cuda: " in line and "needs a GPU" in line:
            return line.split("torch_cuda: ", 1)[1].split(" needs a GPU")[0].strip()
    from . import diagnostics

    return diagnostics.gpu_feature_from_errors(diag)
