"""One CUDA device over CPU memory, for a KernelBench answer's process on the cpu backend.

`install(build_root)` is called in the answer's (sandboxed) process before the answer is
imported. Afterwards:

- `torch.utils.cpp_extension.load_inline` / `load` are served from `build_root` (built by
  `extension.build_pending` outside this process, in the build sandbox): a module not built yet
  is recorded as a request and the pass stops (`ExtensionNotBuilt`); a failed build raises
  `ExtensionBuildError`;
- `.cuda()`, `.to("cuda")`, `device="cuda"` / `torch.device("cuda:0")` in factories and
  `torch.cuda.*` behave as on one device, whose memory is CPU memory: the emulator's kernels take
  a CPU tensor's `data_ptr()` as device memory;
- with `poison=BYTE`, every new CPU allocation (torch.empty in Python, torch::empty in an
  extension) starts filled with that byte, as device allocations do under CUDASHIM_POISON.

The exceptions that stop a pass derive from BaseException: an answer's `except Exception`
fallback to PyTorch cannot swallow them and turn our own machinery's state into a verdict.
"""

from __future__ import annotations

import ctypes
import importlib.abc
import importlib.util
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from . import extension as _ext

DEVICE_NAME = "cudashim (CUDA emulated on the CPU)"


class ExtensionNotBuilt(BaseException):  # noqa: N818 (a control-flow signal, not an error)
    """The answer asked for an extension that is not built yet: its request is recorded in the
    build root, and this pass ends (the orchestrator builds it and runs the answer again)."""

    def __init__(self, name: str, key: str) -> None:
        super().__init__(f"extension {name!r} ({key}) is not built yet; its request is recorded")
        self.name = name
        self.key = key


class ExtensionBuildError(BaseException):
    """The extension did not compile: `diagnostics` holds g++'s text, `needs_gpu` the GPU-only
    feature it tripped over (or None for an ordinary compile error)."""

    def __init__(self, name: str, diagnostics: str, needs_gpu: str | None) -> None:
        head = f"needs a GPU: {needs_gpu}" if needs_gpu else "compile error"
        super().__init__(f"extension {name!r}: {head}")
        self.name = name
        self.diagnostics = diagnostics
        self.needs_gpu = needs_gpu


class NeedsGpu(BaseException):  # noqa: N818 (a verdict's reason, raised past the answer's handlers)
    """The answer uses a GPU-only facility the cpu backend does not emulate (`feature` names it)."""

    def __init__(self, feature: str) -> None:
        super().__init__(f"needs a GPU: {feature}")
        self.feature = feature


_state: dict[str, Any] = {"installed": False, "lib": None, "root": None, "variant": "plain"}


def launch_count() -> int:
    """Kernel launches made by extension code in this process so far (0 before any runtime)."""
    lib = _state["lib"]
    if lib is None:
        return 0
    fn = lib.cudashim_launch_count
    fn.restype = ctypes.c_longlong
    return int(fn())


def unsupported_feature(source: str) -> str | None:
    """A GPU-only facility an answer's Python source names, before it runs (`needs_gpu`)."""
    import re

    if re.search(r"^\s*(import\s+triton|from\s+triton[\s.])", source, re.M) or "@triton.jit" in source:
        return "triton (Triton kernels compile to PTX; no CPU emulation)"
    if re.search(r"\bsycl_sources\s*=", source):
        return "sycl (SYCL sources)"
    return None


def install(build_root: str | None = None, *, poison: int | None = None, variant: str = "plain") -> None:
    """Make this process a one-GPU torch process over CPU memory (see the module's text).

    `build_root`: the folder `extension.build_pending` fills (None: a private folder, and
    extensions are built here, unsandboxed: for trusted sources only, such as tests of the
    machinery). `poison`: the byte every new CPU allocation starts with (None: not poisoned).
    `variant`: the build the extensions were made with (`plain` or `race`)."""
    import torch

    if _state["installed"]:
        return
    if variant not in _ext.VARIANTS:
        raise ValueError(f"unknown extension build variant {variant!r} (expected one of {_ext.VARIANTS})")
    if poison is not None and not 0 <= int(poison) <= 255:
        raise ValueError(f"poison byte {poison!r} is not in 0..255")
    local = build_root is None
    root = Path(tempfile.mkdtemp(prefix="ckd-ext-")) if local else Path(build_root)
    if local:
        _ext.prepare_runtime(root, variant)
    _state.update(root=root, variant=variant, local=local)
    # The extensions the verifier built for this pass, before the answer runs: the only native
    # libraries it may load through ctypes (`built_libraries`).
    _state["built"] = frozenset(str(p) for p in (root / _ext.EXT).rglob("*.so"))
    if poison is not None:
        # The runtime's own device allocations (cudaMalloc in an extension) get the same byte.
        os.environ["CUDASHIM_POISON"] = str(int(poison))
    lib_path = root / _ext.LIB / _ext.LIBRARY_NAME
    if lib_path.is_file():
        _state["lib"] = ctypes.CDLL(str(lib_path), mode=ctypes.RTLD_GLOBAL)
    # The runtime captured its settings when it loaded: the answer need not see which check runs.
    for k in [k for k in os.environ if k.startswith("CUDASHIM_")]:
        del os.environ[k]
    if poison is not None:
        helper = root / _ext.LIB / _ext.POISON_LIBRARY_NAME
        if not helper.is_file():
            raise FileNotFoundError(f"{helper}: the poisoning allocator is missing (extension.prepare_runtime "
                                    "puts it there)")
        ctypes.CDLL(str(helper), mode=ctypes.RTLD_GLOBAL).cudashim_torch_poison(int(poison))
    from torch.utils import cpp_extension

    cpp_extension.load_inline = load_inline
    cpp_extension.load = load
    _mirror_library_impl(torch)
    _install_torch_cuda(torch)
    sys.meta_path.insert(0, _GpuOnlyImports())
    _CudaAsCpu().__enter__()  # for the rest of the process
    _state["installed"] = True


# --- load_inline / load ----------------------------------------------------------------------

def load_inline(name: str, cpp_sources: str | list[str], cuda_sources: str | list[str] | None = None,
                sycl_sources: str | list[str] | None = None, functions: str | list[str] | dict[str, str] | None = None,
                extra_cflags: list[str] | None = None, extra_cuda_cflags: list[str] | None = None,
                extra_sycl_cflags: list[str] | None = None, extra_ldflags: list[str] | None = None,
                extra_include_paths: list[str] | None = None, build_directory: str | None = None,
                verbose: bool = False, with_cuda: bool | None = None, with_sycl: bool | None = None,
                is_python_module: bool = True, with_pytorch_error_handling: bool = True,
                keep_intermediates: bool = True, use_pch: bool = False, no_implicit_headers: bool = False,
                ) -> Any:
    """torch.utils.cpp_extension.load_inline, served by the cpu backend (same parameters)."""
    if sycl_sources:
        raise NeedsGpu("sycl (SYCL sources)")
    if isinstance(functions, str):
        functions = [functions]
    if isinstance(functions, list):
        functions = {f: f for f in functions}
    elif functions is not None and not isinstance(functions, dict):
        raise ValueError(f"Expected 'functions' to be a list or dict, but was {type(functions)}")
    req = _ext.BuildRequest(
        name=name, cpp_sources=_as_list(cpp_sources), cuda_sources=_as_list(cuda_sources),
        functions=functions, with_pytorch_error_handling=bool(with_pytorch_error_handling),
        extra_cflags=list(extra_cflags or []), extra_cuda_cflags=list(extra_cuda_cflags or []),
        is_python_module=bool(is_python_module), inline=True, variant=_state["variant"])
    return _serve(req)


def load(name: str, sources: str | list[str], extra_cflags: list[str] | None = None,
         extra_cuda_cflags: list[str] | None = None, extra_sycl_cflags: list[str] | None = None,
         extra_ldflags: list[str] | None = None, extra_include_paths: list[str] | None = None,
         build_directory: str | None = None, verbose: bool = False, with_cuda: bool | None = None,
         with_sycl: bool | None = None, is_python_module: bool = True, is_standalone: bool = False,
         keep_intermediates: bool = True) -> Any:
    """torch.utils.cpp_extension.load, served by the cpu backend: the listed files are read here
    and built like load_inline's sources (a `.cu` through the shim's rewrite)."""
    cpp: list[str] = []
    cuda: list[str] = []
    for path in _as_list(sources):
        text = Path(path).read_text(encoding="utf-8", errors="surrogateescape")
        if path.endswith(".sycl"):
            raise NeedsGpu("sycl (SYCL sources)")
        (cuda if path.endswith(_ext._CUDA_SUFFIXES) else cpp).append(text)
    req = _ext.BuildRequest(
        name=name, cpp_sources=cpp, cuda_sources=cuda, functions=None,
        extra_cflags=list(extra_cflags or []), extra_cuda_cflags=list(extra_cuda_cflags or []),
        is_python_module=bool(is_python_module), inline=False, variant=_state["variant"])
    return _serve(req)


def _as_list(v: str | list[str] | None) -> list[str]:
    if v is None:
        return []
    return [v] if isinstance(v, str) else list(v)


def _serve(req: _ext.BuildRequest) -> Any:
    if not _state["installed"]:
        raise RuntimeError("torch_cuda.install() must run before an extension is loaded")
    root: Path = _state["root"]
    key = req.key()
    done = root / _ext.EXT / key
    if not done.is_dir():
        _record(root, req, key)
        if not _state.get("local"):
            raise ExtensionNotBuilt(req.name, key)
        _ext.build_pending(root, _state["variant"], sandboxed=False)
    failure = done / _ext.FAILURE_FILE
    if failure.is_file():
        data = json.loads(failure.read_text())
        raise ExtensionBuildError(req.name, data.get("diagnostics", ""), data.get("needs_gpu"))
    path = done / f"{req.name}.so"
    import torch

    before = _cuda_registrations(torch)
    if not req.is_python_module:
        torch.ops.load_library(str(path))
        _mirror_cuda_kernels(torch, before)
        return str(path)
    spec = importlib.util.spec_from_file_location(req.name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    _mirror_cuda_kernels(torch, before)
    return module


def _mirror_library_impl(torch: Any) -> None:
    """`torch.library.Library.impl(op, fn, "CUDA")` from the answer's Python: its kernel is
    mirrored for CPU tensors as an extension's are (`_mirror_cuda_kernels`)."""
    original = torch.library.Library.impl

    def impl(self: Any, op_name: Any, fn: Any, dispatch_key: str = "", *args: Any,
             **kwargs: Any) -> Any:
        before = _cuda_registrations(torch)
        out = original(self, op_name, fn, dispatch_key, *args, **kwargs)
        if str(dispatch_key).upper() == "CUDA":
            _mirror_cuda_kernels(torch, before)
        return out

    torch.library.Library.impl = impl


def _cuda_registrations(torch: Any) -> set[str]:
    return set(torch._C._dispatch_get_registrations_for_dispatch_key("CUDA"))


_MIRRORS: list[Any] = []  # the libraries holding the mirrored kernels: alive as long as the process


def _mirror_cuda_kernels(torch: Any, before: set[str] | None = None) -> None:
    """Operators registered for the CUDA dispatch key (TORCH_LIBRARY_IMPL(ns, CUDA, m), or
    `torch.library` with "cuda") also run for CPU tensors, which stand for device tensors here:
    torch dispatches on the tensor's real key, and an answer's CUDA-only operator was "not
    available for the CPU backend". The CPU entry redispatches to the answer's own CUDA kernel,
    unless the answer registered a CPU kernel of its own."""
    cuda = torch._C.DispatchKeySet(torch._C.DispatchKey.CUDA)
    for name in sorted(_cuda_registrations(torch) - (before or set())):
        if torch._C._dispatch_has_kernel_for_dispatch_key(name, "CPU"):
            continue
        ns, _, op = name.partition("::")
        op_name, _, overload = op.partition(".")
        try:
            target = getattr(getattr(getattr(torch.ops, ns), op_name), overload or "default")
        except (AttributeError, RuntimeError):
            continue

        def redispatch(*args: Any, _op: Any = target, **kwargs: Any) -> Any:
            return _op.redispatch(cuda, *args, **kwargs)

        lib = torch.library.Library(ns, "IMPL")
        lib.impl(op, redispatch, "CPU")
        _MIRRORS.append(lib)


def built_libraries() -> frozenset[str]:
    """The extension libraries present when `install` ran (built by the verifier, read-only in
    the answer's sandbox): the harness's guard lets exactly these through ctypes."""
    return _state.get("built", frozenset())


def _record(root: Path, req: _ext.BuildRequest, key: str) -> None:
    folder = root / _ext.REQUESTS
    folder.mkdir(parents=True, exist_ok=True)
    from dataclasses import asdict

    tmp = folder / f".{key}.{os.getpid()}.tmp"
    tmp.write_text(json.dumps(asdict(req)))
    os.replace(tmp, folder / f"{key}.json")


# --- GPU-only imports --------------------------------------------------------------------------

class _GpuOnlyImports(importlib.abc.MetaPathFinder):
    """`import triton` (and its submodules) ends the answer with needs_gpu, whether or not a
    Triton is installed: its kernels compile to PTX, which nothing here runs."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> None:
        if fullname == "triton" or fullname.startswith("triton."):
            raise NeedsGpu("triton (Triton kernels compile to PTX; no CPU emulation)")
        return None


# --- torch's CUDA device over CPU memory ----------------------------------------------------------

def _is_cuda_device(v: Any) -> bool:
    import torch

    if isinstance(v, str):
        return v == "cuda" or v.startswith("cuda:")
    return isinstance(v, torch.device) and v.type == "cuda"


def _map(v: Any) -> Any:
    return "cpu" if _is_cuda_device(v) else v


def _make_mode() -> type:
    import torch
    from torch.overrides import TorchFunctionMode

    # Each `Tensor.is_cuda.__get__` is a new method-wrapper: the descriptor identifies it.
    is_cuda_descriptor = torch.Tensor.is_cuda
    device_descriptor = torch.Tensor.device
    cuda0 = torch.device("cuda", 0)
    identity = {torch.Tensor.cuda, torch.Tensor.pin_memory}
    to_dlpack = torch.Tensor.__dlpack__
    to_host = {torch.Tensor.numpy, torch.Tensor.__array__, to_dlpack}

    class CudaAsCpu(TorchFunctionMode):
        """Maps the CUDA device to the CPU in every torch call: factories' `device=`, `.to()`,
        `.cuda()`; a tensor reports `is_cuda`, device index 0 and `device` cuda:0, as on one GPU."""

        def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
            kwargs = kwargs or {}
            owner = getattr(func, "__self__", None)
            if owner is is_cuda_descriptor:
                return True
            if owner is device_descriptor:
                # The device an answer's tensors are on, as on one GPU; whatever it is passed to
                # (factories' device=, .to()) maps back to the CPU below.
                got = func(*args, **kwargs)
                return cuda0 if got.type == "cpu" else got
            if func in identity:
                return args[0]
            if func in to_host:
                # A CUDA tensor has no host view: `.cpu().numpy()` is a copy on the host, and
                # writing into it changes nothing on the device (a dlpack export is a copy's).
                if func is to_dlpack:
                    return func(args[0].clone(), *args[1:], **kwargs)
                return func(*args, **kwargs).copy()
            if func is torch.Tensor.get_device:
                return 0
            if "device" in kwargs:
                kwargs = {**kwargs, "device": _map(kwargs["device"])}
            if any(_is_cuda_device(a) for a in args):
                args = tuple(_map(a) for a in args)
            return func(*args, **kwargs)

    return CudaAsCpu


def _CudaAsCpu() -> Any:  # noqa: N802 (a class made on first use: torch imports lazily)
    return _make_mode()()


class _Stream:
    """torch.cuda.Stream on the emulator: every stream is idle (work runs in issue order)."""

    def __init__(self, device: Any = None, priority: int = 0, **_: Any) -> None:
        self.device = device
        self.priority = priority
        self.cuda_stream = 0

    def synchronize(self) -> None:
        return None

    def query(self) -> bool:
        return True

    def wait_stream(self, stream: Any) -> None:
        return None

    def wait_event(self, event: Any) -> None:
        return None

    def record_event(self, event: Any = None) -> _Event:
        event = event or _Event()
        event.record(self)
        return event

    def __enter__(self) -> _Stream:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


class _Event:
    """torch.cuda.Event: records host time (the emulator runs synchronously)."""

    def __init__(self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False) -> None:
        self.enable_timing = enable_timing
        self._t: float | None = None

    def record(self, stream: Any = None) -> None:
        self._t = time.perf_counter()

    def synchronize(self) -> None:
        return None

    def query(self) -> bool:
        return True

    def wait(self, stream: Any = None) -> None:
        return None

    def elapsed_time(self, end: _Event) -> float:
        if self._t is None or end._t is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        return (end._t - self._t) * 1000.0


class _Properties:
    name = DEVICE_NAME
    major, minor = 8, 0
    multi_processor_count = 4
    total_memory = 16 << 30
    warp_size = 32
    max_threads_per_multi_processor = 2048


class _NullContext:
    def __init__(self, *_: Any, **__: Any) -> None:
        pass

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def _install_torch_cuda(torch: Any) -> None:
    c = torch.cuda
    default = _Stream()
    patches: dict[str, Any] = {
        "is_available": lambda: True,
        "is_initialized": lambda: True,
        "init": lambda: None,
        "device_count": lambda: 1,
        "current_device": lambda: 0,
        "set_device": lambda device: None,
        "synchronize": lambda device=None: None,
        "get_device_name": lambda device=None: DEVICE_NAME,
        "get_device_capability": lambda device=None: (8, 0),
        "get_device_properties": lambda device=None: _Properties(),
        "Stream": _Stream,
        "Event": _Event,
        "current_stream": lambda device=None: default,
        "default_stream": lambda device=None: default,
        "stream": lambda stream=None: _NullContext(),
        "device": _NullContext,
        # One generator serves the one device (torch.manual_seed calls manual_seed_all itself).
        "manual_seed": lambda seed: torch.default_generator.manual_seed(int(seed)) and None,
        "manual_seed_all": lambda seed: torch.default_generator.manual_seed(int(seed)) and None,
        "seed": lambda: None,
        "seed_all": lambda: None,
        "empty_cache": lambda: None,
        "memory_allocated": lambda device=None: 0,
        "max_memory_allocated": lambda device=None: 0,
        "memory_reserved": lambda device=None: 0,
        "reset_peak_memory_stats": lambda device=None: None,
    }
    for k, v in patches.items():
        setattr(c, k, v)
