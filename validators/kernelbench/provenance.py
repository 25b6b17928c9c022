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
work in a thread started from Python (`guard` pushes the mode in each), nor in the
`__torch_dispatch__` of a tensor subclass of its own (torch runs it with the mode stack stashed;
the watch runs it with itself pushed again).
"""

from __future__ import annotations

import hashlib
import weakref
from typing import Any

FINGERPRINT_MAX_BYTES = 1 << 28
"""A device's tensors up to this size are fingerprinted by a hash of their bytes copied to the
host (as host tensors of any size are); larger ones by a checksum computed on the device (the
copy and a byte hash would cost seconds each time an op reads one). Never by nothing: a value
the watch cannot read would be one nobody vouched for, and torch's work on it the kernels'
(torch's result on a padded copy beyond the limit, sliced)."""

CHECKSUM_CHUNK = 1 << 22
"""Words (8 bytes) a checksum reads at once: its temporaries stay a few tens of MiB."""

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
    # Layout conversions and the parts of a sparse tensor: the same values, another form.
    "to_dense", "_to_dense", "to_sparse", "_to_sparse", "coalesce", "_coalesce", "_coalesced_",
    "_values", "_indices", "values", "indices", "crow_indices", "col_indices", "ccol_indices",
    "row_indices", "to_sparse_csr", "to_sparse_csc", "to_sparse_bsr", "to_sparse_bsc",
    "_to_sparse_csr", "_to_sparse_csc", "_to_sparse_bsr", "_to_sparse_bsc", "to_mkldnn",
    "_sparse_coo_tensor_with_dims_and_tensors", "_sparse_coo_tensor_unsafe",
    "sparse_coo_tensor", "_sparse_compressed_tensor_unsafe", "sparse_compressed_tensor",
    "_sparse_csr_tensor_unsafe", "sparse_csr_tensor",
})

# Ops whose result is data from the host that no op computed: `lift_fresh` ends every tensor
# constructor that copies or wraps host data (torch.tensor, torch.Tensor(ndarray), the legacy
# typed constructors, from_numpy and as_tensor under any name, `Tensor.new(data)`), `from_file`
# maps a file. `set_` onto a storage is among them when it brings new bytes (pickle, torch.load,
# UntypedStorage.from_buffer): see `_HOST_SET`.
_HOST_OPS = frozenset({"lift_fresh", "lift_fresh_copy", "lift", "from_file"})
_HOST_SET = "set_"

CONSTRUCTOR = "a tensor constructor"
"""How a tensor made from host data is named when no wrapped Python name saw it made."""


def _torch() -> Any:
    import torch

    return torch


def fingerprint(t: Any) -> tuple | None:
    """(dtype, shape, digest of the value) of a tensor, None when it has no value to read here
    (meta) or reading it would run the answer's code (a subclass with a `__torch_dispatch__` of
    its own: the watch runs that code itself, pushed). A subclass without one is read through its
    plain data: wrapping a value in a subclass of one's own must not make it a value nobody
    vouched for. Sparse tensors are read through their indices and values, quantized ones
    through their integers and parameters, other layouts through their dense form."""
    torch = _torch()
    if (not isinstance(t, torch.Tensor) or _dispatches(type(t)) or _python_key(t)
            or t.device.type == "meta"):
        return None
    layout = t.layout
    if layout == torch.strided and not t.is_quantized:
        if t.is_nested:
            return None
        return (str(t.dtype), tuple(t.shape), _digest(_plain(t).detach()))
    p = _plain(t).detach()
    if layout == torch.sparse_coo:
        c = p.coalesce()
        parts: tuple = (fingerprint(c._indices()), fingerprint(c._values()))
    elif layout in (torch.sparse_csr, torch.sparse_bsr):
        parts = (fingerprint(p.crow_indices()), fingerprint(p.col_indices()),
                 fingerprint(p.values()))
    elif layout in (torch.sparse_csc, torch.sparse_bsc):
        parts = (fingerprint(p.ccol_indices()), fingerprint(p.row_indices()),
                 fingerprint(p.values()))
    elif t.is_quantized:
        scheme = p.qscheme()
        if scheme in (torch.per_tensor_affine, torch.per_tensor_symmetric):
            params: tuple = (float(p.q_scale()), int(p.q_zero_point()))
        else:
            params = (fingerprint(p.q_per_channel_scales()),
                      fingerprint(p.q_per_channel_zero_points()), int(p.q_per_channel_axis()))
        parts = (fingerprint(p.int_repr()), str(scheme), params)
    else:
        parts = (fingerprint(p.to_dense()),)
    if any(x is None for x in parts):
        return None
    digest = hashlib.blake2b(repr((str(layout), parts)).encode(), digest_size=16).digest()
    return (str(t.dtype), tuple(t.shape), digest)


def _digest(data: Any) -> bytes:
    """The digest of a dense tensor's bytes in order: a byte hash on the host (a device's tensor
    copied there up to `FINGERPRINT_MAX_BYTES`), a checksum on the device beyond."""
    torch = _torch()
    data = data.resolve_conj().resolve_neg()
    if not data.is_cpu:
        if data.numel() * data.element_size() > FINGERPRINT_MAX_BYTES:
            return _checksum(data.contiguous().reshape(-1).view(torch.uint8))
        data = data.cpu()
    data = data.contiguous().reshape(-1)
    if data.dtype != torch.bool:
        data = data.view(torch.uint8)
    return hashlib.blake2b(memoryview(data.numpy()), digest_size=16).digest()


def _signed(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


_MIX = tuple(_signed(v) for v in (0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB,
                                  0xD6E8FEB86659FD93))


def _checksum(data: Any) -> bytes:
    """Two 64-bit sums of each 8-byte word mixed with its position (splitmix64): the same bytes
    give the same sums on any device and in any order of summation. Collisions would only make
    a kernel's value look pure (more of torch's work found, never less)."""
    torch = _torch()
    if data.storage_offset() % 8:
        data = data.clone()  # words read whole: an 8-byte aligned copy
    n = data.numel()
    words = data[: n // 8 * 8].view(torch.int64)
    low = (1 << 34) - 1, (1 << 37) - 1, (1 << 33) - 1
    h1 = h2 = 0
    for start in range(0, words.numel(), CHECKSUM_CHUNK):
        w = words[start:start + CHECKSUM_CHUNK]
        z = torch.arange(start, start + w.numel(), dtype=torch.int64, device=w.device)
        z = z.mul_(_MIX[0]).add_(w)
        z = z.bitwise_xor_(z.bitwise_right_shift(30).bitwise_and_(low[0])).mul_(_MIX[1])
        z = z.bitwise_xor_(z.bitwise_right_shift(27).bitwise_and_(low[1])).mul_(_MIX[2])
        z = z.bitwise_xor_(z.bitwise_right_shift(31).bitwise_and_(low[2]))
        h1 += int(z.sum())
        h2 += int(z.mul_(_MIX[3]).bitwise_xor_(z.bitwise_right_shift(29)).sum())
    tail = data[n // 8 * 8:].cpu().numpy().tobytes()
    return hashlib.blake2b(repr((n, h1 % (1 << 64), h2 % (1 << 64), tail)).encode(),
                           digest_size=16).digest()


def _dispatches(cls: type) -> bool:
    """A tensor type with a `__torch_dispatch__` of its own (a wrapper subclass): torch hands it
    every op on its instances."""
    torch = _torch()
    return issubclass(cls, torch.Tensor) and (
        cls.__torch_dispatch__ is not torch._C._disabled_torch_dispatch_impl)


def _python_key(t: Any) -> bool:
    """Torch hands the ops on `t` to Python: the mark torch itself sets on an instance of a
    class with a `__torch_dispatch__`, whatever the class says of itself when asked."""
    torch = _torch()
    return bool(torch._C._dispatch_keys(t).has(torch._C.DispatchKey.Python))


def _handlers(tensors: list) -> list:
    """The types among `tensors` whose `__torch_dispatch__` torch would call, in torch's order
    (a subclass before its base, otherwise as they come)."""
    found: list = []
    for cls in dict.fromkeys(type(t) for t in tensors):
        if not _dispatches(cls):
            continue
        at = next((i for i, c in enumerate(found) if issubclass(cls, c)), len(found))
        found.insert(at, cls)
    return found


def value_key(fp: tuple) -> tuple:
    """The part of a fingerprint that is the value: dtype and bytes, not shape (a kernel that
    copies a tensor into another shape hands the same value on)."""
    return (fp[0], fp[2])


def _dense(t: Any) -> bool:
    """A plain strided tensor whose elements can be compared and copied here."""
    torch = _torch()
    return (t.layout == torch.strided and not t.is_quantized and not t.is_nested
            and not _dispatches(type(t)))


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
`torch.tensor`, `torch.Tensor(ndarray)`, pickle): computed outside both torch's ops and the
kernels."""

HOST_MEMORY = "memory no op or kernel wrote"
"""How host data is named when the watch finds it by its memory (`from_host` in `make_watch`)
rather than by how it was made."""

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
        self.started_at: int | None = None  # the launch count when the call started
        self.lost = False  # the answer blinded the watch (`guard`) during the call
        # Pure tensors no digest can name (a layout nothing reads here), by identity:
        # id -> (weak reference, the name it stands under, its version counter).
        self.ids: dict[int, tuple[Any, tuple, int | None]] = {}
        self.serial = 0


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
    # The watch's own reads while it is pushed (`host_made`) go past it with this, taken before
    # `guard` wraps it: a digest's ops are not the answer's.
    quiet = torch._C._DisableTorchDispatch
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

    def version(t: Any) -> int | None:
        try:
            return int(t._version)
        except Exception:
            return None

    def by_identity(t: Any) -> tuple | None:
        """The name a pure tensor without a digest stands under, while it is the same object
        and no op wrote into it."""
        entry = st.ids.get(id(t))
        if entry is None or entry[0]() is not t or entry[2] != version(t):
            return None
        return entry[1]

    def name_by_identity(t: Any) -> tuple | None:
        if not isinstance(t, torch.Tensor) or _dispatches(type(t)):
            return None
        try:
            ref = weakref.ref(t)
        except TypeError:
            return None
        st.serial += 1
        try:
            shape = tuple(t.shape)
        except Exception:
            shape = ()  # nested tensors have no one shape
        fp = ("<by identity>", shape, st.serial)
        st.ids[id(t)] = (ref, fp, version(t))
        return fp

    def key_of(t: Any) -> tuple | None:
        try:
            fp = fp_of(t)
        except Exception:
            fp = None
        return fp if fp is not None else by_identity(t)

    def is_pure(t: Any, fp: tuple | None) -> bool:
        if fp is None:
            return False
        key = value_key(fp)
        if key in st.pure:
            return True
        if key in st.near_checked or fp[0] == "<by identity>":
            return False
        st.near_checked.add(key)
        return near_pure(t, key)

    def near_pure(t: Any, key: tuple) -> bool:
        """A value no op made that is a pure value moved by a kernel without computing
        anything: the same elements within `NEAR_ULPS` (an exact copy into another shape, a
        widening cast, a nudge). It becomes pure, and torch's result if that value was."""
        if not (t.dtype.is_floating_point and t.numel() > 0 and _dense(t)):
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
        # The elements of an input or a parameter in another order: a kernel that only
        # transposed, flipped or shuffled a pure value computed nothing (red team: a kernel
        # permuted the input, torch's softmax or matmul did the work on the copy).
        if t.numel() >= MIN_ELEMENTS:
            ordered = torch.sort(a).values
            for c in st.sources:
                if c.numel() != t.numel() or not c.dtype.is_floating_point:
                    continue
                b = torch.sort(_plain(c).detach().reshape(-1).to("cpu", torch.float64)).values
                if torch.equal(ordered, b) and torch.unique(b).numel() >= MIN_DISTINCT:
                    st.pure.add(key)
                    return True
        return False

    def keep(key: tuple, t: Any, op: str) -> None:
        size = t.numel() * t.element_size()
        if size > KEEP_BYTES or not _dense(t):
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
            fp = key_of(t) or name_by_identity(t)
            if fp is None:
                continue
            key = value_key(fp)
            if key in st.pure and key not in st.computed:
                continue  # an op that reproduced a pure value (x * 1.0) computed nothing
            st.pure.add(key)
            if origin is not None and t.numel() > 0 and key not in st.computed:
                st.computed[key] = origin
                keep(key, t, origin)

    def note_host(t: Any, fp: tuple, how: str) -> None:
        """`t` (of digest `fp`) holds data from the host that no op computed: torch's ops on it
        are torch's work, and a kernel's copy of it is not the kernel's. A pure value brought
        back from the host (x.tolist() made a tensor again) stays what it was."""
        if fp[0] == "<by identity>" or t.numel() == 0:
            return
        key, label = value_key(fp), HOST_ORIGIN.format(how)
        if key in st.computed:
            if st.computed[key] == HOST_ORIGIN.format(CONSTRUCTOR) and how != CONSTRUCTOR:
                # The Python name that made it says more than the op inside it did.
                st.computed[key] = label
                st.kept = [(k, c, label if k == key else op) for k, c, op in st.kept]
            return
        if key in st.pure:
            return
        st.pure.add(key)
        st.computed[key] = label
        keep(key, t, label)

    def from_host(t: Any, fp: tuple | None) -> bool:
        """A value an op reads that no op made and no kernel can have written: memory torch
        did not allocate (numpy's, a buffer's, a file's, dlpack's), read before any kernel ran in
        the call (or, with no launch count, on the host). The tensor constructors that no wrapped
        name and no op sees (`torch._C._VariableFunctions.frombuffer`, `torch._C._from_dlpack`
        bound early) make such tensors; a kernel's output is torch's allocation (or written by a
        launch)."""
        if fp is None or fp[0] == "<by identity>":
            return False
        try:
            if t.untyped_storage().resizable():
                return False
            if launch_count is None:
                if t.device.type != "cpu":
                    return False
            elif launch_count() != st.started_at:
                return False
        except Exception:
            return False
        note_host(t, fp, HOST_MEMORY)
        return True

    def host_op(func: Any, args: tuple, pure: bool, out: Any) -> bool:
        """Note `out` as host data when `func` made it from host data (`_HOST_OPS`, `set_` onto
        a storage whose bytes no pure value holds); True when it did."""
        name = func._schema.name.split("::")[-1]
        storage = (torch.UntypedStorage, torch.TypedStorage)
        if name == _HOST_SET and any(isinstance(a, storage) for a in args):
            pure = False  # the bytes come from the storage, not from the tensor set
        elif name not in _HOST_OPS:
            return False
        if pure and name != "from_file":
            return False  # a pure value round-tripped through the host
        for t in _tensors(out):
            fp = key_of(t)
            if fp is not None and value_key(fp) not in st.pure:
                note_host(t, fp, CONSTRUCTOR if name != "from_file" else "torch.from_file")
        return True

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
            st.pure, st.computed, st.sources, st.ids = set(), {}, [], {}
            for t in tensors:
                try:
                    fp = fingerprint(t)
                except Exception:
                    fp = None
                if fp is None:
                    fp = name_by_identity(t)  # a tensor no digest reads: pure by identity
                if fp is not None:
                    st.pure.add(value_key(fp))
                    if fp[0] != "<by identity>":
                        st.sources.append(t)
            st.kept, st.kept_bytes, st.cache, st.near_checked = [], 0, {}, set()
            st.launches, st.lost = None, False
            st.started_at = launch_count() if launch_count is not None else None

        def blinded(self) -> None:
            """Something hid ops from the watch during the call (`guard`)."""
            st.lost = True

        def was_blinded(self) -> bool:
            return st.lost

        def host_made(self, t: Any, how: str) -> None:
            """`t` was made from host data during the call: torch's ops did not compute it,
            and neither did a kernel."""
            try:
                with quiet():
                    fp = fingerprint(t)
                    if fp is not None:
                        note_host(t, fp, how)
            except Exception:
                pass

        def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (),
                               kwargs: dict | None = None) -> Any:
            kwargs = kwargs or {}
            try:
                dispatching = [t for t in _tensors([args, kwargs]) if _python_key(t)]
            except Exception:
                dispatching = []
            if dispatching:
                return self._subclass(func, dispatching, args, kwargs)
            if func.namespace not in ("aten", "prims"):
                return self._custom(func, args, kwargs)
            # The bookkeeping never raises into the answer's forward (a tensor it cannot read,
            # an op it does not know): what it cannot follow is simply not pure.
            try:
                read = _read_args(func, args, kwargs)
                fps = [key_of(t) for t in read]
                # A view is no use of the data (`.numpy()` and `np.asarray` read through
                # `detach`): only an op that uses it finds memory no op made (`from_host`).
                pure = all(is_pure(t, fp) or (not func.is_view and from_host(t, fp))
                           for t, fp in zip(read, fps, strict=True))
            except Exception:
                read, fps, pure = [], [], False
            out = func(*args, **kwargs)
            try:
                if host_op(func, args, pure, out):
                    return out
            except Exception:
                pass
            if pure:
                try:
                    record(func, fps, out)
                except Exception:
                    pass
            return out

        def _subclass(self, func: Any, tensors: list, args: tuple, kwargs: dict) -> Any:
            """An op on a tensor subclass with a `__torch_dispatch__` of its own. Torch would run
            that handler with the mode stack stashed, where torch's work inside it is nobody's;
            the watch runs it with itself pushed again, so the ATen ops inside it are followed.
            Its result is whatever those ops (or the kernels) made. A class that will not say
            what its handler is gets torch's own call, unwatched, and the call is lost."""
            try:
                handlers = _handlers(tensors)
            except Exception:
                handlers = []
            if not handlers:
                st.lost = True
                return func(*args, **kwargs)
            st.cache = {}
            out: Any = NotImplemented
            self.enter()
            try:
                for cls in handlers:
                    out = cls.__torch_dispatch__(func, tuple(handlers), args, kwargs)
                    if out is not NotImplemented:
                        break
            finally:
                if not self.leave():
                    st.lost = True  # the handler left the watch under a mode, or took it off
                st.cache = {}
            if out is NotImplemented:
                raise TypeError(f"no __torch_dispatch__ of {[c.__name__ for c in handlers]} "
                                f"handled {func}")
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
            nearest kept result of its number of elements (reshaped, permuted or cast), else kept
            pieces that tile it along one dimension (bit for bit), else kept results that hold
            its rows at a stride (`_contained`: a crop, a flip, rows gathered, tiles); `INPUT`
            when `out` is bit for bit a pure value nobody computed (an input, a parameter).
            (tensor, op, bit-equal), or None when there is none (or it cannot be told)."""
            try:
                fp = fingerprint(out)
                if fp is None:
                    return None
                key = value_key(fp)
                if key in st.computed:
                    return _plain(out).detach().clone(), st.computed[key], True
                if key in st.pure:
                    return _plain(out).detach().clone(), INPUT, True
                near = self._nearest(out)
                if near is not None and near[2]:
                    return near
                found = self._tiled(out) or _contained(out, st.kept)
                if found is None or near is None or found[2]:
                    return found or near
                return min((found, near), key=lambda f: _distance(out, f[0]))
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
            t, op = min(same, key=lambda x: _distance(o, x[0]))
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


def _distance(out: Any, t: Any) -> float:
    """The largest error of `out` against `t`, relative to 1 + |t| (NaN against NaN is 0)."""
    torch = _torch()
    o = out.detach().to("cpu", torch.float64)
    c = t.detach().to("cpu", torch.float64)
    both_nan = torch.isnan(o) & torch.isnan(c)
    d = ((o - c).abs() / (1 + c.abs())).masked_fill(both_nan, 0).nan_to_num(nan=float("inf"))
    return float(d.max()) if d.numel() else 0.0


def _castable(t: Any, out: Any) -> bool:
    """`t` may stand for `out` after a cast: the same dtype, or both floating point (torch
    computed in float64 and a kernel did the cast)."""
    return t.dtype == out.dtype or (t.dtype.is_floating_point and out.dtype.is_floating_point)


MIN_RUN = 8
"""Elements of an output's row that must lie at one stride in a kept result for the row to be
that result's (a crop's row, a flipped one, a tile's): a kernel that chose each element by
comparing values (max pooling, a sort) leaves no such runs. One shorter run, three at least,
may end the row at either end (a roll's wrapped piece)."""

MIN_ELEMENTS = 64
"""Elements an output needs before its rows are looked for in kept results: in a handful, runs
of values a kernel chose (the larger of each pair) line up by chance."""

MIN_DISTINCT = 16
"""Distinct values (in a sample) an output needs likewise: constant, zero or two-valued outputs
are in many tensors by coincidence."""

MAX_COUNT = 2
"""Occurrences in a kept result a value may have and still anchor a stride (values that recur,
zeros of a padding, say, are checked where a stride puts them but do not suggest one)."""

WINDOW = 128
"""Elements either side of an anchor a stride is checked over (a longer run is found again from
an anchor further on)."""


def _int_bits(t: Any) -> Any:
    """The elements of a contiguous 1-D tensor as their bit patterns, in int64."""
    torch = _torch()
    ints = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()]
    return t.view(ints).to(torch.int64)


def _coarse_bits(dtype: Any) -> int:
    """Low bits a float's key drops in the second look (a kernel that nudged every element by a
    few units in the last place)."""
    torch = _torch()
    return 2 if dtype in (torch.float16, torch.bfloat16) else 4


def _contained(out: Any, kept: list) -> tuple[Any, str, bool] | None:
    """Kept results that hold `out`'s rows (along some dimension) at a stride each: a crop of a
    larger result, a flip, a transpose of a crop, rows or columns gathered in any order, tiles,
    a roll. The output's elements are looked up in each result by value (exactly, then with a few
    low bits dropped); each pair of neighbours found once or twice suggests a (start, stride) for
    its row, kept when two pairs agree, and checked element by element around them. Every
    element must lie in a run of `MIN_RUN`, or in one shorter run at an end of a row that has a
    long one. (The kept results' values laid out as `out`, their ops, bit-equal), or None."""
    torch = _torch()
    o = _plain(out).detach()
    if (o.dim() == 0 or o.numel() < MIN_ELEMENTS or o.is_complex() or o.dtype == torch.bool
            or not _dense(o)):
        return None
    # At least half as many elements: a result for all but a few rows the kernels made counts
    # (`_cover`).
    cands = [(t, op) for _, t, op in reversed(kept) if _castable(t, o) and not t.is_complex()
             and 2 * t.numel() >= o.numel()]
    if not cands:
        return None
    flat = o.contiguous().reshape(-1)
    sample = torch.unique(_int_bits(flat[::max(1, flat.numel() // 4096)]))
    if sample.numel() < MIN_DISTINCT:
        return None
    dims = [o.dim() - 1, *range(o.dim() - 2, -1, -1)]
    for shift in (0, _coarse_bits(o.dtype)) if o.dtype.is_floating_point else (0,):
        picks = sample[torch.linspace(0, sample.numel() - 1, 16).round().long()] >> shift
        ready = []
        for t, op in cands:
            r = t.detach().to(o.dtype).contiguous().reshape(-1)
            keys = _int_bits(r) >> shift
            misses = 0
            for v in picks:
                misses += not bool((keys == v).any())
                if misses > 4:
                    break
            if misses <= 4:
                skeys, order = torch.sort(keys)
                ready.append((r, skeys, order, op))
            del keys
        for d in dims:
            found = _cover(o, d, ready, shift) if o.shape[d] >= MIN_RUN else None
            if found is not None:
                return found
    return None


def _cover(o: Any, d: int, ready: list, shift: int) -> tuple[Any, str, bool] | None:
    """`_contained` along dimension `d`."""
    torch = _torch()
    moved = o.movedim(d, -1).contiguous()
    length = moved.shape[-1]
    rows = moved.reshape(-1, length)
    keys = _int_bits(rows.reshape(-1)).reshape(rows.shape) >> shift
    long_runs = torch.zeros(rows.shape, dtype=torch.bool, device=o.device)
    end_runs = torch.zeros(rows.shape, dtype=torch.bool, device=o.device)
    values = torch.empty(rows.numel(), dtype=o.dtype, device=o.device)
    ops = []
    step = max(1, (1 << 18) // length)
    for r, skeys, order, op in ready:
        hit = False
        for r0 in range(0, rows.shape[0], step):
            hit |= _runs(rows, keys, r0, min(rows.shape[0], r0 + step), r, skeys, order, shift,
                         long_runs.view(-1), end_runs.view(-1), values)
        if hit:
            ops.append(op)
        covered = long_runs | end_runs
        # Rows nothing was found in at all, up to half of them, are the kernels' own: torch's
        # result for the other rows, joined to a few rows a kernel computed, is still torch's
        # (red team: one row of 512 by a kernel, `torch.cat` with torch's other 511). A row
        # with a run anywhere must be covered as before: a kernel that changed some of torch's
        # values in place (an epilogue) worked on every row it touched.
        none = ~covered.any(1)
        if int(none.sum()) * 2 > rows.shape[0]:
            continue
        rest = ~none
        if not bool(covered[rest].all()):
            continue
        if bool(none.any()):
            # torch's part must hold values of its own, not zeros a buffer started as
            part = _int_bits(rows[rest].reshape(-1))
            if torch.unique(part[::max(1, part.numel() // 4096)]).numel() < MIN_DISTINCT:
                continue
        # What only short runs hold is one piece at one end of a row that has a long run.
        short = end_runs & ~long_runs
        n = short.sum(1)
        head = short.int().cumprod(1).sum(1)
        tail = short.flip(1).int().cumprod(1).sum(1)
        if bool((long_runs.any(1) & ((n == head) | (n == tail)))[rest].all()):
            grid = values.view(rows.shape)
            grid[none] = rows[none]  # the kernels' rows, as they are
            g = values.reshape(moved.shape).movedim(-1, d)
            return g, " + ".join(dict.fromkeys(ops)), _bits_equal(g, o)
    return None


def _mix(*cols: Any) -> Any:
    """One int64 per row of int64 columns (splitmix64 of a weighted sum): equal rows give equal
    keys; unequal ones the same key with odds of 2**-64."""
    z = cols[0] * _MIX[0]
    for c in cols[1:]:
        z = (z + c) * _MIX[1]
        z = z ^ ((z >> 31) & ((1 << 33) - 1))
    z = z * _MIX[2]
    return z ^ ((z >> 29) & ((1 << 35) - 1))


def _groups(key: Any) -> tuple[Any, Any, Any]:
    """(first index, inverse, size) of the groups of equal values in the 1-D `key`."""
    torch = _torch()
    _, inverse, counts = torch.unique(key, return_inverse=True, return_counts=True)
    first = torch.full((counts.numel(),), key.numel(), dtype=torch.int64, device=key.device)
    first = first.scatter_reduce(0, inverse, torch.arange(key.numel(), device=key.device), "amin")
    return first, inverse, counts


def _runs(rows: Any, keys: Any, r0: int, r1: int, r: Any, skeys: Any, order: Any, shift: int,
          long_runs: Any, end_runs: Any, values: Any) -> bool:
    """Mark the elements of rows r0..r1 that lie in runs of `r` (sorted keys `skeys`, their
    positions `order`) in `long_runs` or `end_runs`, with `r`'s values in `values`; whether
    any did."""
    torch = _torch()
    dev = rows.device
    m, length, n = r1 - r0, rows.shape[1], r.numel()
    k = keys[r0:r1]
    lo = torch.searchsorted(skeys, k)
    count = torch.searchsorted(skeys, k, right=True) - lo
    pos = [order[(lo + i).clamp(max=n - 1)] for i in range(MAX_COUNT)]
    valid = [(count > i) & (count <= MAX_COUNT) for i in range(MAX_COUNT)]
    cols = torch.arange(length - 1, device=dev).expand(m, length - 1)
    row_ids = torch.arange(r0, r1, device=dev)[:, None].expand(m, length - 1)
    found = []
    for i in range(MAX_COUNT):
        for j in range(MAX_COUNT):
            a, b = pos[i][:, :-1], pos[j][:, 1:]
            stride = b - a
            ok = valid[i][:, :-1] & valid[j][:, 1:] & (stride != 0)
            found.append(torch.stack([row_ids[ok], (a - cols * stride)[ok], stride[ok],
                                      cols[ok]], 1))
    pairs = torch.cat(found)
    if pairs.shape[0] == 0:
        return False
    # A (row, start, stride) two pairs agree on; one pair alone agrees with itself.
    _, inverse, votes = _groups(_mix(pairs[:, 0], pairs[:, 1], pairs[:, 2]))
    pairs = pairs[votes[inverse] >= 2]
    if pairs.shape[0] == 0:
        return False
    # One window per stride and stretch of WINDOW columns, around its first agreeing pair.
    _, inverse, _ = _groups(_mix(pairs[:, 0], pairs[:, 1], pairs[:, 2]))
    first, _, _ = _groups(inverse * (length // WINDOW + 1) + pairs[:, 3] // WINDOW)
    hyp = pairs[first]
    span = torch.arange(-WINDOW, WINDOW + 1, device=dev)
    hit = False
    per = max(1, (1 << 22) // span.numel())
    for w0 in range(0, hyp.shape[0], per):
        h = hyp[w0:w0 + per]
        c0 = h[:, 3]
        c = c0[:, None] + span
        p = h[:, 1:2] + c * h[:, 2:3]
        ok = (c >= 0) & (c < length) & (p >= 0) & (p < n)
        got = r[p.clamp(0, n - 1)]
        idx = h[:, 0:1] * length + c.clamp(0, length - 1)
        match = ok & _close(got, rows.reshape(-1)[idx], shift)
        right = match[:, WINDOW:].int().cumprod(1).sum(1)
        left = match[:, :WINDOW + 1].flip(1).int().cumprod(1).sum(1)
        size = left + right - 1
        at_end = (c0 - left + 1 == 0) | (c0 + right - 1 == length - 1)
        inside = (span >= 1 - left[:, None]) & (span <= right[:, None] - 1)
        longer = inside & (size >= MIN_RUN)[:, None]
        ending = inside & (at_end & (size >= 3))[:, None]
        if bool((longer | ending).any()):
            long_runs[idx[longer]] = True
            end_runs[idx[ending]] = True
            values[idx[longer | ending]] = got[longer | ending]
            hit = True
    return hit


def _close(a: Any, b: Any, shift: int) -> Any:
    """Elementwise: `a` stands for `b` (bit for bit, both NaN, or floats within a few units in
    the last place)."""
    torch = _torch()
    if not a.dtype.is_floating_point:
        return a == b
    x, y = a.to(torch.float64), b.to(torch.float64)
    info = torch.finfo(a.dtype)
    ulps = max(NEAR_ULPS, 1 << shift)
    return ((x == y) | (torch.isnan(x) & torch.isnan(y))
            | ((x - y).abs() <= ulps * info.eps * y.abs() + info.tiny))


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
      `torch._C._from_dlpack`, `Tensor.new_tensor`) was computed by neither torch's ops nor a
      kernel: the watch keeps it as it keeps torch's results (numpy's work copied in by a
      kernel is not the kernel's). These names only say how it was made: the watch finds such
      tensors whatever made them (`lift_fresh`, `set_` onto a storage, memory torch did not
      allocate), as the names reach the same C functions under others it cannot replace
      (`torch._C._VariableFunctions`, the legacy constructors). A tensor handed to one of them
      is not host data: it is converted, and what it holds is followed already.
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
                         (torch._C, "_from_dlpack"), (torch.Tensor, "new_tensor")):
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
    import torch

    def made(*args: Any, **kwargs: Any) -> Any:
        t = original(*args, **kwargs)
        at = 1 if name == "new_tensor" else 0
        data = args[at] if len(args) > at else next(
            (kwargs[k] for k in ("data", "obj", "ndarray", "buffer", "ext_tensor") if k in kwargs),
            None)
        if watching() and not isinstance(data, torch.Tensor):
            watch.host_made(t, name)
        return t

    made.__name__ = made.__qualname__ = name
    made.__doc__ = getattr(original, "__doc__", None)
    return made


def _contextmanager(f: Any) -> Any:
    import contextlib

    return contextlib.contextmanager(f)
