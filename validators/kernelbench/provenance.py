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
    here (sparse, meta, too large). A subclass is read through its plain data: wrapping a value
    in a subclass of one's own must not make it a value nobody vouched for."""
    torch = _torch()
    if not isinstance(t, torch.Tensor) or t.layout != torch.strided or t.device.type == "meta":
        return None
    if t.numel() * t.element_size() > FINGERPRINT_MAX_BYTES:
        return None
    data = _plain(t).detach()
    if data.device.type != "cpu":
        data = data.cpu()
    data = data.resolve_conj().resolve_neg().contiguous().reshape(-1)
    if data.dtype != torch.bool:
        data = data.view(torch.uint8)
    digest = hashlib.blake2b(data.numpy().tobytes(), digest_size=16).digest()
    return (str(t.dtype), tuple(t.shape), digest)


def value_key(fp: tuple) -> tuple:
    """The part of a fingerprint that is the value: dtype and bytes, not shape (a kernel that
    copies a tensor into another shape hands the same value on)."""
    return (fp[0], fp[2])


def _plain_types(torch: Any) -> tuple:
    # Parameters and buffers hold plain storage; other subclasses are read through it.
    return (torch.Tensor, torch.nn.Parameter, *((torch.nn.Buffer,) if hasattr(torch.nn, "Buffer")
                                               else ()))


def _plain(t: Any) -> Any:
    torch = _torch()
    return t if type(t) in _plain_types(torch) else t.as_subclass(torch.Tensor)


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


INPUT = "<input>"
"""The op `nearest` names for an output that is bit for bit one of the call's own pure values
(an input, a parameter, a view or copy of one): no computation of torch's, none of a kernel's."""

HOST_ORIGIN = "host data ({})"
"""The op named for a tensor made from host data during a call (`torch.from_numpy`,
`torch.tensor`): computed outside both torch's ops and the kernels."""

NEAR_ULPS = 4
"""A value a kernel wrote that is within this many units in the last place of a pure value is
that value (a copy, a widening cast, a nudge of a few bits): what torch computes from it is
torch's work on the pure value."""


class _State:
    """The watch's bookkeeping, held in the closure of its methods rather than on the mode
    object: the answer reaches the mode through torch's own `_get_current_dispatch_mode()`."""

    def __init__(self) -> None:
        self.pure: set[tuple] = set()  # value keys (`value_key`) no kernel can have written
        self.computed: dict[tuple, str] = {}  # value key -> the torch op that computed it
        self.kept: list[tuple[tuple, Any, str]] = []  # (value key, copy, op), oldest first
        self.kept_bytes = 0
        self.sources: list[Any] = []  # the call's pure tensors (inputs, parameters, buffers)
        self.near_checked: set[tuple] = set()
        self.cache: dict[tuple, tuple | None] = {}
        self.launches: int | None = None
        self.lost = False  # the answer blinded the watch (`guard`) during the call


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
    st = _State()

    def fp_of(t: Any) -> tuple | None:
        if launch_count is None:
            return fingerprint(t)
        now = launch_count()
        if now != st.launches:
            st.cache, st.launches = {}, now
        try:
            key = (t.data_ptr(), t.dtype, tuple(t.shape), tuple(t.stride()), t._version)
        except Exception:
            return fingerprint(t)  # no version counter (inference tensors): no reuse
        if key not in st.cache:
            st.cache[key] = fingerprint(t)
        return st.cache[key]

    def is_pure(t: Any, fp: tuple | None) -> bool:
        if fp is None:
            return False
        key = value_key(fp)
        if key in st.pure:
            return True
        if key in st.near_checked:
            return False
        st.near_checked.add(key)
        return near_pure(t, key)

    def near_pure(t: Any, key: tuple) -> bool:
        """A value no op made that is a pure value moved by a kernel without computing
        anything: the same elements within `NEAR_ULPS` (an exact copy into another shape, a
        widening cast, a nudge). It becomes pure, and torch's result if that value was."""
        if not (t.dtype.is_floating_point and t.numel() > 0):
            return False
        a = _plain(t).detach().reshape(-1).to("cpu", torch.float64)
        for c, origin in [(s, None) for s in st.sources] + [(k, op) for _, k, op in st.kept]:
            if c.numel() != t.numel() or not c.dtype.is_floating_point:
                continue
            eps = max(torch.finfo(t.dtype).eps, torch.finfo(c.dtype).eps)
            tiny = max(torch.finfo(t.dtype).tiny, torch.finfo(c.dtype).tiny)
            b = _plain(c).detach().reshape(-1).to("cpu", torch.float64)
            nan = torch.isnan(a)
            if not torch.equal(nan, torch.isnan(b)):
                continue
            close = (a - b).abs() <= NEAR_ULPS * eps * b.abs() + tiny
            if bool((close | nan | (a == b)).all()):
                st.pure.add(key)
                if origin is not None:
                    st.computed.setdefault(key, origin)
                    keep(key, t, origin)
                return True
        return False

    def keep(key: tuple, t: Any, op: str) -> None:
        size = t.numel() * t.element_size()
        if size > KEEP_BYTES:
            return
        st.kept.append((key, _plain(t).detach().clone(), op))
        st.kept_bytes += size
        while st.kept_bytes > KEEP_BYTES:
            # The largest go first: a flood of big junk results cannot push an output-sized
            # result of torch's out of reach (a bit-exact copy is found by `computed` anyway).
            big = max(range(len(st.kept)), key=lambda i: st.kept[i][1].numel()
                      * st.kept[i][1].element_size())
            _, old, _ = st.kept.pop(big)
            st.kept_bytes -= old.numel() * old.element_size()

    def record(func: Any, read_fps: list, out: Any) -> None:
        name = func._schema.name.split("::")[-1]
        if not read_fps:
            origin = None  # a factory: nothing of the inputs in it
        elif name not in _PASSING and not func.is_view:
            origin = str(func)
        else:
            # A view, copy or cast of what torch computed is still torch's result.
            origin = next((st.computed[value_key(fp)] for fp in read_fps
                           if value_key(fp) in st.computed), None)
        for t in _tensors(out):
            fp = fp_of(t)
            if fp is None:
                continue
            key = value_key(fp)
            if key in st.pure and key not in st.computed:
                continue  # an op that reproduced a pure value (x * 1.0) computed nothing
            st.pure.add(key)
            if origin is not None and t.numel() > 0 and key not in st.computed:
                st.computed[key] = origin
                keep(key, t, origin)

    class Watch(TorchDispatchMode):
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
            st.pure, st.computed, st.sources = set(), {}, []
            for t in tensors:
                try:
                    fp = fingerprint(t)
                except Exception:
                    fp = None  # a tensor it cannot read (quantized, storage-less): not pure
                if fp is not None:
                    st.pure.add(value_key(fp))
                    st.sources.append(t)
            st.kept, st.kept_bytes, st.cache, st.near_checked = [], 0, {}, set()
            st.launches, st.lost = None, False

        def blinded(self) -> None:
            """Something hid ops from the watch during the call (`guard`)."""
            st.lost = True

        def was_blinded(self) -> bool:
            return st.lost

        def host_made(self, t: Any, how: str) -> None:
            """`t` was made from host data during the call: torch's ops did not compute it,
            and neither did a kernel."""
            try:
                fp = fingerprint(t)
                if fp is not None and t.numel() > 0:
                    key = value_key(fp)
                    st.pure.add(key)
                    if key not in st.computed:
                        st.computed[key] = HOST_ORIGIN.format(how)
                        keep(key, t, st.computed[key])
            except Exception:
                pass

        def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (),
                               kwargs: dict | None = None) -> Any:
            kwargs = kwargs or {}
            if func.namespace not in ("aten", "prims"):
                return self._custom(func, args, kwargs)
            # The bookkeeping never raises into the answer's forward (a tensor it cannot read,
            # an op it does not know): what it cannot follow is simply not pure.
            try:
                read = _read_args(func, args, kwargs)
                fps = [fp_of(t) for t in read]
                pure = all(is_pure(t, fp) for t, fp in zip(read, fps, strict=True))
            except Exception:
                read, fps, pure = [], [], False
            out = func(*args, **kwargs)
            if pure:
                try:
                    record(func, fps, out)
                except Exception:
                    pass
            return out

        def _custom(self, func: Any, args: tuple, kwargs: dict) -> Any:
            """An operator of the answer's own (torch.library, TORCH_LIBRARY): run its backend
            kernel with the watch back on, so that the ATen ops inside it are followed too."""
            st.cache = {}
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
            st.cache = {}
            return out

        def nearest(self, out: Any) -> tuple[Any, str, bool] | None:
            """What torch computed that is nearest to `out`, as a tensor of `out`'s dtype and
            shape: bit for bit any result of the call (by value, whatever its shape), else the
            nearest kept result of its number of elements (reshaped, permuted or cast), else
            kept pieces that tile it along one dimension (bit for bit); `INPUT` when `out` is
            bit for bit a pure value nobody computed (an input, a parameter). (tensor, op,
            bit-equal), or None when there is none (or it cannot be told)."""
            try:
                fp = fingerprint(out)
                if fp is None:
                    return None
                key = value_key(fp)
                if key in st.computed:
                    return _plain(out).detach().clone(), st.computed[key], True
                if key in st.pure:
                    return _plain(out).detach().clone(), INPUT, True
                return self._nearest(out) or self._tiled(out)
            except Exception:
                return None

        def _nearest(self, out: Any) -> tuple[Any, str, bool] | None:
            o = _plain(out).detach()
            same = []
            for _, t, op in reversed(st.kept):
                for view in _arrangements(t, o):
                    same.append((view, op))
            for t, op in same:
                if _bits_equal(t, o):
                    return t, op, True
            if not same or not out.dtype.is_floating_point:
                return None
            o64 = o.to("cpu", torch.float64)

            def distance(t: Any) -> float:
                c = t.to("cpu", torch.float64)
                both_nan = torch.isnan(o64) & torch.isnan(c)
                d = ((o64 - c).abs() / (1 + c.abs())).masked_fill(both_nan, 0).nan_to_num(
                    nan=float("inf"))
                return float(d.max()) if d.numel() else 0.0

            t, op = min(same, key=lambda x: distance(x[0]))
            return t, op, False

        def _tiled(self, out: Any) -> tuple[Any, str, bool] | None:
            # Torch's result computed in pieces (chunks, splits) and copied into the output
            # piece by piece: no kept result has the output's shape, the pieces tile it.
            if out.dim() == 0:
                return None
            o = _plain(out).detach().to("cpu")
            for d in range(o.dim()):
                pieces = [(t.to(o.dtype), op) for _, t, op in reversed(st.kept)
                          if _castable(t, o) and t.dim() == o.dim() and 0 < t.shape[d] < o.shape[d]
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


def _castable(t: Any, out: Any) -> bool:
    """`t` may stand for `out` after a cast: the same dtype, or both floating point (torch
    computed in float64 and a kernel did the cast)."""
    return t.dtype == out.dtype or (t.dtype.is_floating_point and out.dtype.is_floating_point)


def _arrangements(t: Any, out: Any) -> list:
    """`t` laid out as `out` is (its dtype and shape) without computing anything: as it is,
    reshaped in order, or with its dimensions permuted (a transposed result copied back)."""
    import itertools

    if t.numel() != out.numel() or not _castable(t, out):
        return []
    c = t.to(out.dtype)
    if tuple(c.shape) == tuple(out.shape):
        return [c]
    found = [c.reshape(out.shape)]
    if c.dim() == out.dim() and 2 <= c.dim() <= 4:
        for perm in itertools.permutations(range(c.dim())):
            if perm != tuple(range(c.dim())) and tuple(c.shape[i] for i in perm) == tuple(out.shape):
                found.append(c.permute(perm).contiguous())
    return found


def guard(watch: Any) -> Any:
    """Close the ways of doing torch's work out of the watch's sight that Python offers; returns
    `popped()`, which says (and forgets) whether anything but the watch itself popped it off a
    dispatch stack.

    - Pops: torch's Python entry points (`_pop_mode`, `_disable_current_modes`, `torch._C.
      _pop_torch_dispatch_stack`) go through a wrapper that notes a pop of the watch.
    - Exclusions: `torch._C._DisableTorchDispatch`, and the dispatch-key guards and setters
      (`_ExcludeDispatchKeyGuard`, `_ForceDispatchKeyGuard`, `_dispatch_tls_set_dispatch_key_
      excluded`) when they exclude the Python keys, make the watch `blinded` for the call.
    - Threads: the mode stack is per thread, so every thread started from Python afterwards
      (`threading`, `_thread`, the pools built on them) runs with the watch pushed.
    - Host data: a tensor made from host data during a call (`torch.from_numpy`, `torch.tensor`,
      `torch.as_tensor`, `torch.asarray`, `torch.frombuffer`, `torch.from_dlpack`,
      `Tensor.new_tensor`) was computed by neither torch's ops nor a kernel: the watch keeps it
      as it keeps torch's results (numpy's work copied in by a kernel is not the kernel's).
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

    hidden = (torch._C.DispatchKey.Python, torch._C.DispatchKey.PythonTLSSnapshot)

    def hides(keys: Any) -> bool:
        try:
            return any(keys.has(k) for k in hidden)
        except Exception:
            return True  # not a key set it can read: assume the worst

    def watching() -> bool:
        return any(torch._C._get_dispatch_stack_at(i) is watch
                   for i in range(torch._C._len_torch_dispatch_stack()))

    def wrap(name: str, test: Any) -> None:
        original = getattr(torch._C, name, None)
        if original is None:
            return

        def wrapped(*args: Any, **kwargs: Any) -> Any:
            if test(*args, **kwargs) and watching():
                watch.blinded()
            return original(*args, **kwargs)

        setattr(torch._C, name, wrapped)

    wrap("_DisableTorchDispatch", lambda *a, **k: True)
    wrap("_ExcludeDispatchKeyGuard", lambda keys=None, *a, **k: hides(keys))
    wrap("_ForceDispatchKeyGuard", lambda include=None, exclude=None, *a, **k:
         exclude is None or hides(exclude))
    wrap("_dispatch_tls_set_dispatch_key_excluded", lambda key=None, value=True, *a, **k:
         bool(value) and key in hidden)

    import torch.utils._mode_utils as mode_utils

    disable = torch._C._DisableTorchDispatch

    @_contextmanager
    def no_dispatch() -> Any:
        with disable():
            yield

    mode_utils.no_dispatch = no_dispatch

    for module, name in ((torch, "from_numpy"), (torch, "tensor"), (torch, "as_tensor"),
                         (torch, "asarray"), (torch, "frombuffer"), (torch, "from_dlpack"),
                         (torch.Tensor, "new_tensor")):
        original = getattr(module, name, None)
        if original is not None:
            setattr(module, name, _host_maker(watch, watching, original, name))

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


def _host_maker(watch: Any, watching: Any, original: Any, name: str) -> Any:
    def made(*args: Any, **kwargs: Any) -> Any:
        t = original(*args, **kwargs)
        if watching():
            watch.host_made(t, name)
        return t

    made.__name__ = made.__qualname__ = name
    made.__doc__ = getattr(original, "__doc__", None)
    return made


def _contextmanager(f: Any) -> Any:
    import contextlib

    return contextlib.contextmanager(f)
