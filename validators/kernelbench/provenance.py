"""What PyTorch computed by itself during a forward call: the data the `torch_result` rule follows.

Runs inside the answer's process (the harness imports it before the answer). While forward
runs, a TorchDispatchMode sees every ATen op, whether the answer's Python or its C++ extension
called it. A value is *pure* when no kernel of the answer could have written it: the call's
inputs, the model's parameters and buffers, and whatever an ATen op made from pure values alone.
Purity is judged by value, from a fingerprint of the bytes an op reads, because a kernel writes
through a raw pointer that no op sees: a tensor a kernel wrote holds bytes nobody vouched for.

The results of pure *computing* ops (not views, copies, fills or factories) are kept, newest
first within a byte budget. After the call, each output's nearest kept result of its shape and
dtype is handed to the verifier, which compares them with the check's own tolerance: an output
PyTorch had already computed from the inputs was not computed by the kernels, whatever they
then copied (the hack the no-launch run cannot see: with the copy a no-op, the output is
poison, so it "depends on the kernels").

Defence in depth, like the harness's launch counts: the answer runs in this interpreter. It
cannot take the mode off the stack unseen (`guard` notes a pop through torch's Python entry
points; the harness checks the stack and the mode's methods after the call), nor hide torch's
work in a thread started from Python (`guard` pushes the mode in each).
"""

from __future__ import annotations

import hashlib
from typing import Any

FINGERPRINT_MAX_BYTES = 1 << 28
"""Tensors larger than this are not fingerprinted (never pure): hashing costs a pass over them."""

KEEP_BYTES = 1 << 28
"""The budget of kept pure results per call (copies, so that a kernel writing into one later
does not change what torch had computed)."""

# Ops whose result is data that was already there (views, copies, conversions) or that no input
# determines (fills, *_like factories): pure when their inputs are, never an answer of torch's.
_PASSING = frozenset({
    "clone", "copy", "copy_", "_to_copy", "to", "contiguous", "lift_fresh", "lift_fresh_copy",
    "_copy_from", "_copy_from_and_resize", "detach", "detach_", "alias", "_unsafe_view",
    "empty_like", "zeros_like", "ones_like", "full_like", "rand_like", "randn_like",
    "randint_like", "new_empty", "new_empty_strided", "new_zeros", "new_ones", "new_full",
    "fill", "fill_", "zero", "zero_", "resize_", "resize_as_", "set_", "as_strided_",
    "_local_scalar_dense", "_has_compatible_shallow_copy_type", "record_stream",
})


def _torch() -> Any:
    import torch

    return torch


def fingerprint(t: Any) -> tuple | None:
    """(dtype, shape, digest of the bytes) of a dense tensor, None when it has no bytes to read
    here (sparse, meta, too large)."""
    torch = _torch()
    if type(t) not in _plain_types(torch) or t.layout != torch.strided or t.device.type == "meta":
        return None
    if t.numel() * t.element_size() > FINGERPRINT_MAX_BYTES:
        return None
    data = t.detach()
    if data.device.type != "cpu":
        data = data.cpu()
    data = data.resolve_conj().resolve_neg().contiguous().reshape(-1)
    if data.dtype != torch.bool:
        data = data.view(torch.uint8)
    digest = hashlib.blake2b(data.numpy().tobytes(), digest_size=16).digest()
    return (str(t.dtype), tuple(t.shape), digest)


def _plain_types(torch: Any) -> tuple:
    # Parameters and buffers hold plain storage; other subclasses may answer reads their own way.
    return (torch.Tensor, torch.nn.Parameter, *((torch.nn.Buffer,) if hasattr(torch.nn, "Buffer")
                                               else ()))


def _bits_equal(a: Any, b: Any) -> bool:
    # `compare.same_tensor`'s test, kept here: this module runs in the answer's process, whose
    # start-up imports torch and nothing of the verifier's (pydantic schemas).
    torch = _torch()
    if a.dtype != b.dtype or tuple(a.shape) != tuple(b.shape):
        return False
    if a.numel() == 0:
        return True
    x, y = a.detach().contiguous().reshape(-1), b.detach().contiguous().reshape(-1)
    if x.dtype != torch.bool:
        x, y = x.view(torch.uint8), y.view(torch.uint8)
    return bool(torch.equal(x, y))


def _tensors(v: Any) -> list:
    torch = _torch()
    if isinstance(v, torch.Tensor):
        return [v]
    if isinstance(v, (list, tuple)):
        return [t for x in v for t in _tensors(x)]
    if isinstance(v, dict):
        return [t for x in v.values() for t in _tensors(x)]
    return []


def _read_args(func: Any, args: tuple, kwargs: dict) -> list:
    """The tensors an op reads: its arguments, less those it only writes (`out=`)."""
    schema = func._schema
    write_only = {a.name for a in schema.arguments
                  if a.kwarg_only and a.alias_info is not None and a.alias_info.is_write}
    found = _tensors(list(args))
    found += [t for name, v in kwargs.items() if name not in write_only for t in _tensors(v)]
    return found


def make_watch(launch_count: Any = None) -> Any:
    """A new `Watch` (its class is made on first use: torch imports lazily).

    `launch_count`: the emulator's count of kernel launches so far, or None (a real GPU); while
    it stands still no kernel ran, so a tensor's fingerprint can be reused from the last op."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    # torch's own stack functions, taken before the answer runs: the watch pushes and pops
    # itself with these, so a pop through the Python entry points is never the watch's own
    # (`guard` wraps those).
    c_push, c_pop = torch._C._push_on_torch_dispatch_stack, torch._C._pop_torch_dispatch_stack
    c_len, c_at = torch._C._len_torch_dispatch_stack, torch._C._get_dispatch_stack_at

    class Watch(TorchDispatchMode):
        def __init__(self) -> None:
            super().__init__()
            self.pure: set[tuple] = set()
            self.computed: dict[tuple, str] = {}  # fingerprint -> the torch op that computed it
            self.kept: list[tuple[tuple, Any, str]] = []  # (fingerprint, copy, op), newest last
            self.kept_bytes = 0
            self._cache: dict[tuple, tuple | None] = {}
            self._launches: int | None = None

        def enter(self) -> None:
            c_push(self)

        def leave(self) -> bool:
            """Take the watch off this thread's stack: False when it was not on top (or not
            there at all)."""
            stack = [c_at(i) for i in range(c_len())]
            if not any(m is self for m in stack):
                return False
            on_top = stack[-1] is self
            while c_pop(None) is not self:
                pass
            return on_top

        def start(self, tensors: list) -> None:
            self.pure, self.computed = set(), {}
            for t in tensors:
                try:
                    fp = fingerprint(t)
                except Exception:
                    fp = None  # a tensor it cannot read (quantized, storage-less): not pure
                if fp is not None:
                    self.pure.add(fp)
            self.kept, self.kept_bytes, self._cache = [], 0, {}
            self._launches = None

        def _fp(self, t: Any) -> tuple | None:
            if launch_count is None:
                return fingerprint(t)
            now = launch_count()
            if now != self._launches:
                self._cache, self._launches = {}, now
            try:
                key = (t.data_ptr(), t.dtype, tuple(t.shape), tuple(t.stride()), t._version)
            except Exception:
                return fingerprint(t)  # no version counter (inference tensors): no reuse
            if key not in self._cache:
                self._cache[key] = fingerprint(t)
            return self._cache[key]

        def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (),
                               kwargs: dict | None = None) -> Any:
            kwargs = kwargs or {}
            if func.namespace not in ("aten", "prims"):
                return self._custom(func, args, kwargs)
            # The bookkeeping never raises into the answer's forward (a tensor it cannot read,
            # an op it does not know): what it cannot follow is simply not pure.
            try:
                read = _read_args(func, args, kwargs)
                fps = [self._fp(t) for t in read]
                pure = all(fp is not None and fp in self.pure for fp in fps)
            except Exception:
                read, fps, pure = [], [], False
            out = func(*args, **kwargs)
            if pure:
                try:
                    self._record(func, fps, out)
                except Exception:
                    pass
            return out

        def _custom(self, func: Any, args: tuple, kwargs: dict) -> Any:
            """An operator of the answer's own (torch.library, TORCH_LIBRARY): run its backend
            kernel with the watch back on, so that the ATen ops inside it are followed too."""
            self._cache = {}
            key = None
            try:
                cuda = any(t.device.type == "cuda" for t in _tensors([args, kwargs]))
                key = torch._C.DispatchKey.CUDA if cuda else torch._C.DispatchKey.CPU
                if not torch._C._dispatch_has_computed_kernel_for_dispatch_key(
                        func.name(), key.name):
                    key = None
            except Exception:
                key = None
            if key is None:
                out = func(*args, **kwargs)
            else:
                self.enter()
                try:
                    out = func.redispatch(torch._C.DispatchKeySet(key), *args, **kwargs)
                finally:
                    self.leave()
            self._cache = {}
            return out

        def _record(self, func: Any, read_fps: list, out: Any) -> None:
            name = func._schema.name.split("::")[-1]
            if not read_fps:
                origin = None  # a factory: nothing of the inputs in it
            elif name not in _PASSING and not func.is_view:
                origin = str(func)
            else:
                # A view, copy or cast of what torch computed is still torch's result.
                origin = next((self.computed[fp] for fp in read_fps if fp in self.computed), None)
            for t in _tensors(out):
                fp = self._fp(t)
                if fp is None:
                    continue
                self.pure.add(fp)
                if origin is not None and t.numel() > 0:
                    self.computed.setdefault(fp, origin)
                    self._keep(fp, t, origin)

        def _keep(self, fp: tuple, t: Any, op: str) -> None:
            size = t.numel() * t.element_size()
            if size > KEEP_BYTES:
                return
            self.kept.append((fp, t.detach().clone(), op))
            self.kept_bytes += size
            while self.kept_bytes > KEEP_BYTES:
                _, old, _ = self.kept.pop(0)
                self.kept_bytes -= old.numel() * old.element_size()

        def nearest(self, out: Any) -> tuple[Any, str, bool] | None:
            """What torch computed that is nearest to `out`: among the kept results of its dtype
            and shape, or tiled from kept pieces along one dimension (bit for bit); (tensor,
            op, bit-equal), or None when there is none (or it cannot be told)."""
            try:
                return self._nearest(out) or self._tiled(out)
            except Exception:
                return None

        def _nearest(self, out: Any) -> tuple[Any, str, bool] | None:
            fp = fingerprint(out)
            if fp is None:
                return None
            same = [(k, t, op) for k, t, op in reversed(self.kept)
                    if t.dtype == out.dtype and tuple(t.shape) == tuple(out.shape)]
            for k, t, op in same:
                if k == fp:
                    return t, op, True
            if not same or not out.dtype.is_floating_point:
                return None
            o = out.detach().to("cpu", torch.float64)

            def distance(t: Any) -> float:
                c = t.to("cpu", torch.float64)
                both_nan = torch.isnan(o) & torch.isnan(c)
                d = ((o - c).abs() / (1 + c.abs())).masked_fill(both_nan, 0).nan_to_num(
                    nan=float("inf"))
                return float(d.max()) if d.numel() else 0.0

            t, op = min(((t, op) for _, t, op in same), key=lambda x: distance(x[0]))
            return t, op, False

        def _tiled(self, out: Any) -> tuple[Any, str, bool] | None:
            # Torch's result computed in pieces (chunks, splits) and copied into the output
            # piece by piece: no kept result has the output's shape, the pieces tile it.
            if type(out) not in _plain_types(torch) or out.dim() == 0:
                return None
            o = out.detach().to("cpu")
            for d in range(o.dim()):
                pieces = [(t, op) for _, t, op in reversed(self.kept)
                          if t.dtype == o.dtype and t.dim() == o.dim() and 0 < t.shape[d] < o.shape[d]
                          and all(t.shape[i] == o.shape[i] for i in range(o.dim()) if i != d)]
                at, ops = 0, []
                while pieces and at < o.shape[d]:
                    hit = next(((t, op) for t, op in pieces if at + t.shape[d] <= o.shape[d]
                                and _bits_equal(o.narrow(d, at, t.shape[d]), t)), None)
                    if hit is None:
                        break
                    at += hit[0].shape[d]
                    ops.append(hit[1])
                if pieces and at == o.shape[d]:
                    return o.clone(), " + ".join(dict.fromkeys(ops)), True
            return None

    return Watch()


def guard(watch: Any) -> Any:
    """Close two ways of doing torch's work out of the watch's sight; returns `popped()`, which
    says (and forgets) whether anything but the watch itself popped it off a dispatch stack.

    - Pops: torch's Python entry points (`_pop_mode`, `_disable_current_modes`, `torch._C.
      _pop_torch_dispatch_stack`) go through a wrapper that notes a pop of the watch.
    - Threads: the mode stack is per thread, so every thread started from Python afterwards
      (`threading`, `_thread`, the pools built on them) runs with the watch pushed.
    """
    import _thread
    import threading

    import torch
    import torch.utils._python_dispatch as python_dispatch

    original_pop = torch._C._pop_torch_dispatch_stack
    state = {"popped": False}

    def pop(*args: Any) -> Any:
        mode = original_pop(*args)
        if mode is watch:
            state["popped"] = True
        return mode

    torch._C._pop_torch_dispatch_stack = pop
    python_dispatch._pop_torch_dispatch_stack = pop

    original_start = _thread.start_new_thread

    def start(function: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        def followed(*a: Any, **k: Any) -> Any:
            watch.enter()
            try:
                return function(*a, **k)
            finally:
                watch.leave()

        return original_start(followed, args, kwargs or {})

    _thread.start_new_thread = start
    if hasattr(threading, "_start_new_thread"):
        threading._start_new_thread = start

    def popped() -> bool:
        was, state["popped"] = state["popped"], False
        return was

    return popped
