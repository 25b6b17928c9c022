"""The code that runs inside the two sandboxed processes of a check.

The reference process runs the problem's `Model`: per seed it draws `get_inputs()`, builds the
model, adds the signed N(0, 1) input set and runs forward on each set, writing inputs and
outputs as safetensors. The answer process never sees the problem or those outputs: it gets
the inputs, builds `ModelNew` under the same seeds, and writes what each forward returned (and
the inputs as they were afterwards), with the kernel launches each call made. The verifier,
outside both, compares.

Both load tensors with safetensors (no pickle: nothing the other side wrote can run code here
or in the verifier).

The answer's code runs in the answer harness's interpreter, so the harness calls nothing after
the import that the answer could have replaced (everything is taken before it), runs each piece
of the answer's code through one wrapper that cleans up after it, and judges and writes each
call's outputs before any code of the answer's can run again; its final result is sealed with a
token the answer never sees in a file (see the README, "What the answer's process says").
"""

from __future__ import annotations

from validators.sandbox import READY_LINE
from validators.torch_module import COMMON, GUARD

ENCODE = r'''
def enc(v):
    """A constructor argument or non-tensor forward argument as JSON (tuples kept apart)."""
    if isinstance(v, bool) or v is None or isinstance(v, (int, float, str)):
        return v
    if isinstance(v, tuple):
        return {"tuple": [enc(x) for x in v]}
    if isinstance(v, list):
        return [enc(x) for x in v]
    raise TypeError("a %s cannot be passed between the processes (only numbers, strings, "
                    "lists and tuples of them)" % type(v).__name__)

def dec(v):
    if isinstance(v, dict):
        return tuple(dec(x) for x in v["tuple"])
    if isinstance(v, list):
        return [dec(x) for x in v]
    return v

def flush(obj, name):
    with open("out/%s.tmp" % name, "w") as f:
        json.dump(obj, f)
    os.replace("out/%s.tmp" % name, "out/%s" % name)
'''

REFERENCE_HARNESS = COMMON + GUARD + r'''
import json, os, traceback
from safetensors.torch import save_file
spec = json.load(open("spec.json"))
_ckd_install_guard(spec["prefixes"])
os.makedirs("out", exist_ok=True)
''' + ENCODE + READY_LINE + r'''

def signed_like(args, seed):
    # get_inputs() mostly draws torch.rand in [0, 1), which hides sign bugs.
    g = torch.Generator().manual_seed(seed ^ 0x5EED)
    out, changed = [], False
    for a in args:
        if isinstance(a, torch.Tensor) and a.is_floating_point() and a.numel() > 1:
            out.append(torch.randn(a.shape, generator=g, dtype=torch.float64).to(a.dtype))
            changed = True
        else:
            out.append(a)
    return out, changed

def run():
    src = open("problem.py").read()
    result = {"ok": False, "groups": []}
    for i, (seed, input_seed) in enumerate(zip(spec["seeds"], spec["input_seeds"])):
        ns, cls = load_module(src, "Model", seed)
        torch.manual_seed(input_seed)
        drawn = list(ns["get_inputs"]())
        init = list(ns["get_init_inputs"]())
        torch.manual_seed(seed)
        # Training mode, as KernelBench's own evaluation leaves it: BatchNorm normalises with
        # the batch's statistics (the answer's maths), Dropout stays as the problem wrote it.
        model = cls(*init)
        group = {"seed": seed, "init": enc(init), "cases": []}
        sets = [("get_inputs", drawn)]
        signed, changed = signed_like(drawn, input_seed)
        if changed and spec["signed"]:
            sets.append(("normal", signed))
        for label, args in sets:
            name = "seed%d-%s" % (i, label)
            tensors, encoded = {}, []
            for k, a in enumerate(args):
                if isinstance(a, torch.Tensor):
                    tensors["a%d" % k] = a.detach().contiguous().clone()
                    encoded.append({"tensor": "a%d" % k})
                else:
                    encoded.append({"value": enc(a)})
            save_file(tensors, "out/inputs-%s.safetensors" % name)
            with torch.no_grad():
                got = model(*[a.clone() if isinstance(a, torch.Tensor) else a for a in args])
            outs = as_list(got)
            for k, o in enumerate(outs):
                if not isinstance(o, torch.Tensor):
                    raise TypeError("forward output %d is a %s, not a tensor" % (k, type(o).__name__))
            save_file({"out%d" % k: o.detach().contiguous().clone() for k, o in enumerate(outs)},
                      "out/outputs-%s.safetensors" % name)
            group["cases"].append({"name": name, "label": label, "args": encoded,
                                   "outputs": [{"dtype": dtype_name(o.dtype), "shape": list(o.shape)}
                                               for o in outs]})
        result["groups"].append(group)
        flush(result, "reference.json")
    result["ok"] = True
    flush(result, "reference.json")

try:
    run()
except BaseException as exc:
    flush({"ok": False, "kind": error_kind(exc), "reason": ("%s: %s" % (type(exc).__name__, exc))[:800],
           "traceback": "\n".join(traceback.format_exc().strip().splitlines()[-4:])[:1500]},
          "reference.json")
'''

ANSWER_HARNESS = r'''
import builtins as _builtins_module
# Functions made from here on look builtins up in this copy, taken before the answer runs: a
# builtin the answer replaces in the builtins module is not one the harness calls. Python reads
# `__builtins__` from the globals each time it makes a function (a comprehension too), so the
# copy is put back after every piece of the answer's code (`restore`).
__builtins__ = dict(vars(_builtins_module))
import _thread, ctypes, gc, hashlib, itertools, json, json.encoder, os, sys, time
import traceback
import _signal
''' + GUARD + ENCODE + r'''

def _sealer(token, sha256, length):
    # The final result's seal, HMAC-SHA256 written out (hmac's own code looks its helpers up on
    # modules the answer can patch); the key lives in this closure only, and is dropped by
    # `forget` before anything of the answer's runs at exit.
    key = token + b"\0" * (64 - length(token))
    inner, outer = bytes(k ^ 0x36 for k in key), bytes(k ^ 0x5C for k in key)

    def mac(data):
        return sha256(outer + sha256(inner + data).digest()).hexdigest()

    def forget():
        nonlocal inner, outer
        inner = outer = b""

    return mac, forget

def _harness():
    # Everything the harness calls once the answer is imported is taken here, before: bound to
    # locals of this function (the answer can rebind module attributes and the harness's
    # globals, not these), never looked up again on a module or class the answer can patch.
    _read, _open, _write, _close, _replace = os.read, os.open, os.write, os.close, os.replace
    _O_NEW = (os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
              | getattr(os, "O_CLOEXEC", 0))
    _perf, _settrace, _setprofile = time.perf_counter, sys.settrace, sys.setprofile
    _gettrace, _getprofile = sys.gettrace, sys.getprofile
    # Python 3.12+: a monitoring tool's callbacks would run in the harness's code too.
    _monitoring = getattr(sys, "monitoring", None)
    if _monitoring is not None:
        _get_tool, _set_events, _tools = _monitoring.get_tool, _monitoring.set_events, (0, 1, 2, 3, 4, 5)
    _gc_enable, _gc_disable = gc.enable, gc.disable
    _thread_count = _thread._count
    _jstr = json.encoder.encode_basestring_ascii
    _sha256 = hashlib.sha256
    _format_exception = traceback.format_exception
    _int_to_bytes, _float_repr, _int_repr = int.to_bytes, float.__repr__, int.__repr__
    _dget, _mp_get, _type, _vars, _len = dict.get, type(vars(int)).get, type, vars, len
    _tuple = tuple
    _int_from_bytes, _bytearray, _int = int.from_bytes, bytearray, int
    _type_setattr, _type_delattr = type.__setattr__, type.__delattr__
    _tb_of = vars(BaseException)["__traceback__"].__get__
    _MISSING = object()

    # The completion token and what tells this run from the check's others (the poison byte)
    # come through a pipe, read to its end before the answer's code runs: spec.json, the
    # environment and the arguments are the same in every run of a check. Only the harness's
    # final result is sealed with the token (`finish`), so a result file the answer writes or
    # rewrites (at exit, say) is no result. Defence in depth: the answer runs in this
    # interpreter and could dig the token out of this closure.
    # Descriptor 0 is a socket to the verifier: the first frame now, then each case's inputs
    # only when the harness asks for them, just before that case's call (`take_inputs`).
    def read_exactly(n):
        chunks, left = [], n
        while left:
            b = _read(0, left if left < 1048576 else 1048576)
            if not b:
                raise EOFError("the verifier's socket closed")
            chunks.append(b)
            left -= _len(b)
        return b"".join(chunks)

    def read_frame():
        return read_exactly(_int_from_bytes(read_exactly(8), "little"))

    token, _, private = read_frame().partition(b"\n")
    poison = json.loads(private.decode("ascii") or "{}").get("poison")
    mac, forget_token = _sealer(token, _sha256, _len)
    del token, private

    G = globals()
    spec = json.load(open("spec.json"))
    G["spec"] = spec  # its cases are read again after the import (`run`)
    poison_large, poison_small = spec["poison_large"], spec["poison_small"]
    sys.path.insert(0, spec["package_root"])
    os.makedirs("out", exist_ok=True)
    import numpy
    import torch
    torch.set_num_threads(1)
    gpu, cuda, follow = bool(spec["gpu"]), bool(spec["cuda"]), bool(spec["follow"])
    G["launch_count"] = None
    count_native = library_native = None
    not_built = build_error = needs_gpu = ()
    # Native libraries the answer may load through ctypes (an operator library built with
    # is_python_module=False): the verifier's builds (cpu), torch's build folder (cuda).
    own_libraries = ()
    gpu_lost = None
    runtime_code = frozenset()
    if gpu:
        # The real torch on a real GPU: nothing replaced. CUDA starts before the answer is
        # imported, so the caching allocator runs under our settings, not ones the answer sets.
        own_libraries = tuple(p for p in [os.environ.get("TORCH_EXTENSIONS_DIR")] if p)
        try:
            torch.cuda.init()
            torch.empty(1, device="cuda")
        except Exception as exc:
            # The probe saw a GPU and this process does not: no verdict on the answer. Its
            # import still runs (it shows what the process was given), nothing after it.
            gpu_lost = exc
    elif cuda:
        # Before the answer is imported: load_inline/load and the cuda device are the
        # project's. Installed as the plain build whatever this run's build is: the emulator
        # labels extension requests with it, and the verifier builds and places them for the
        # run's own build (answer.py), so nothing in the process names the build.
        from validators.cpu import torch_cuda
        torch_cuda.install(build_root=spec["build_root"], poison=poison)
        G["launch_count"] = torch_cuda.launch_count  # a tripwire: see `restore`
        own_libraries = tuple(torch_cuda.built_libraries())
        not_built = (torch_cuda.ExtensionNotBuilt,)
        build_error = (torch_cuda.ExtensionBuildError,)
        needs_gpu = (torch_cuda.NeedsGpu,)
        # The code that may raise them, taken before the answer runs: the answer can import
        # the classes and raise them itself (a wrong answer would leave as needs_gpu).
        runtime_code = {f.__code__ for m in (torch_cuda, torch_cuda._GpuOnlyImports)
                        for f in vars(m).values() if _type(f).__name__ == "function"}
        # The runtime's own counter, through a function pointer of our own (the library
        # object's attributes are shared with the answer): each call's launches are the
        # counter's difference across that call, not a Python global the answer can rebind,
        # and launches at import or in __init__ are no call's.
        lib = torch_cuda._state["lib"]
        if lib is not None:
            count_native = lib["cudashim_launch_count"]
            count_native.restype, count_native.argtypes = ctypes.c_longlong, ()
            library_native = lib["cudashim_library_calls"]
            library_native.restype, library_native.argtypes = ctypes.c_longlong, (ctypes.c_int,)
        else:
            def count_native():
                return 0

    TB = torch._C.TensorBase
    _detach, _to, _contiguous, _clone, _reshape, _view = (
        TB.detach, TB.to, TB.contiguous, TB.clone, TB.reshape, TB.view)
    _numpy, _fill, _eq, _all, _item, _to_cuda = TB.numpy, TB.fill_, TB.eq, TB.all, TB.item, TB.cuda
    _tobytes = numpy.ndarray.tobytes
    _dtype_of, _shape_of = vars(TB)["dtype"].__get__, vars(TB)["shape"].__get__
    _layout_of, _device_of = vars(TB)["layout"].__get__, vars(TB)["device"].__get__
    _Tensor, _Module, _strided, _uint8 = torch.Tensor, torch.nn.Module, torch.strided, torch.uint8
    _params, _buffers = _Module.parameters, _Module.buffers
    _empty, _manual_seed = torch.empty, torch.manual_seed
    _set_grad, _grad_enabled = torch._C._set_grad_enabled, torch._C.is_grad_enabled
    _cuda_sync = getattr(torch._C, "_cuda_synchronize", None) if gpu else None
    _empty_cache = getattr(torch._C, "_cuda_emptyCache", None) if gpu else None
    # Taken before `guard` wraps it. Its class is a pybind11 type, whose methods can be
    # replaced: the methods are taken too. DisableTorchFunction's type is immutable.
    _DTD = torch._C._DisableTorchDispatch
    _dtd_enter, _dtd_exit = _DTD.__enter__, _DTD.__exit__
    _DTF = torch._C.DisableTorchFunction

    # The runtime's computing library calls, per library (`cudashim_library_calls`'s order);
    # None where the emulator's runtime is not loaded.
    LIBRARIES = ("thrust", "cub", "cublas", "cusparse", "curand", "cufft", "other")

    def library_counts():
        if library_native is None:
            return None
        return _tuple(library_native(i) for i in range(7))

    def quietly(fn, *args):
        # The harness's own tensor work, out of reach of any torch function mode, dispatch mode
        # or tensor subclass the answer left behind (a mode on the stack sees every call).
        f = _DTF()
        f.__enter__()
        d = _DTD()
        _dtd_enter(d)
        try:
            return fn(*args)
        finally:
            _dtd_exit(d, None, None, None)
            f.__exit__(None, None, None)

    watch = None
    if follow:
        # What torch computes by itself during each call (the `torch_result` rule), followed
        # by a dispatch mode made before the answer is imported.
        from validators.kernelbench import provenance
        watch = provenance.make_watch(count_native)
        watch_popped = provenance.guard(watch)
        _watch_start, _watch_enter, _watch_leave = watch.start, watch.enter, watch.leave
        _watch_blinded, _nearest = watch.was_blinded, watch.nearest
        _tls_excluded = torch._C._dispatch_tls_is_dispatch_key_excluded
        _python_keys = (torch._C.DispatchKey.Python, torch._C.DispatchKey.PythonTLSSnapshot)

        def unwatch():
            # False when the answer had moved the watch (off the stack, under a mode of its
            # own, or popped and pushed back) or blinded it; a method swapped on its class or
            # set on the object is put back and named by `restore`.
            on_top = _watch_leave()
            # An exclusion of the Python keys left in place hides every later op too.
            excluded = _tls_excluded(_python_keys[0]) or _tls_excluded(_python_keys[1])
            return on_top and not watch_popped() and not _watch_blinded() and not excluded

    _ckd_install_guard(spec["prefixes"], gpu, own_libraries)

    def no_more_hooks(event, args):
        # An audit hook of the answer's would run inside the harness's own file writes. A
        # RuntimeError refuses it quietly (the sys.addaudithook contract).
        if event == "sys.addaudithook":
            raise RuntimeError("refused")
    sys.addaudithook(no_more_hooks)

    # Each case's inputs come from the verifier only when its call is next: nothing the answer
    # runs before (its import, __init__, an earlier call) can read them and compute the result
    # unwatched. The verifier counts the requests, so an answer that asks for inputs itself is
    # seen (`inputs_read_early`). Parsed here with the harness's own pieces (a loader's module
    # is the answer's to patch): lines "key dtype shape nbytes", then the raw bytes.
    _frombuffer, _send = torch.frombuffer, os.write
    WIRE_DTYPES = {"float64": torch.float64, "float32": torch.float32,
                   "float16": torch.float16, "bfloat16": torch.bfloat16,
                   "int64": torch.int64, "int32": torch.int32, "int16": torch.int16,
                   "int8": torch.int8, "uint8": torch.uint8, "bool": torch.bool,
                   "complex64": torch.complex64, "complex128": torch.complex128}

    def take_inputs(name):
        _send(0, b"n")
        frame = read_frame()
        head, _, data = frame.partition(b"\n\n")
        lines = head.decode("ascii").split("\n")
        if lines[0] != name:
            raise EOFError("the verifier sent the inputs of %r for the call %r" % (lines[0], name))
        out, at = {}, 0
        for line in lines[1:]:
            key, dt, shape, nbytes = line.split(" ")
            nbytes = _int(nbytes)
            dims = [_int(x) for x in shape.split(",") if x]
            if nbytes:
                t = _reshape(_frombuffer(_bytearray(data[at:at + nbytes]), dtype=WIRE_DTYPES[dt]),
                             dims)
            else:
                t = _empty(dims, dtype=WIRE_DTYPES[dt])
            out[key] = t
            at += nbytes
        return out
    dec_value = dec

    ST_CODES = {torch.float64: "F64", torch.float32: "F32", torch.float16: "F16",
                torch.bfloat16: "BF16", torch.int64: "I64", torch.int32: "I32",
                torch.int16: "I16", torch.int8: "I8", torch.uint8: "U8", torch.bool: "BOOL",
                torch.complex64: "C64"}
    DTYPE_NAMES = {torch.float32: "float32", torch.float64: "float64",
                   torch.float16: "float16", torch.bfloat16: "bfloat16", torch.int8: "int8",
                   torch.int16: "int16", torch.int32: "int32", torch.int64: "int64",
                   torch.uint8: "uint8", torch.bool: "bool", torch.complex64: "complex64",
                   torch.complex128: "complex128"}
    for _n, _c in (("float8_e4m3fn", "F8_E4M3"), ("float8_e5m2", "F8_E5M2"),
                   ("uint16", "U16"), ("uint32", "U32"), ("uint64", "U64")):
        if hasattr(torch, _n):
            ST_CODES[getattr(torch, _n)] = _c

    # --- what the answer can change, as it was before it ran (`restore` puts it back) ------
    private_builtins = G["__builtins__"]
    spaces = [("the harness's builtins", private_builtins), ("builtins", vars(_builtins_module)),
              ("harness", G), ("os", vars(os)), ("os.path", vars(os.path)),
              ("torch", vars(torch)), ("torch._C", vars(torch._C)),
              ("torch.nn", vars(torch.nn)), ("hashlib", vars(hashlib)),
              ("itertools", vars(itertools))]
    classes = [("torch.Tensor", torch.Tensor)]
    objects = []
    if watch is not None:
        spaces.append(("provenance", vars(provenance)))
        # And what the watch's own code reaches (hashlib, weakref, ...), whatever it imports.
        for k, v in list(vars(provenance).items()):
            if _type(v) is _type(os) and v is not torch and all(v is not m for _, m in spaces):
                spaces.append((v.__name__, vars(v)))
        classes += [("the watch's class" if c is _type(watch) else c.__qualname__, c)
                    for c in _type(watch).__mro__[:-1]]
        objects.append(("the watch", vars(watch)))
    data = (bool, int, float, complex, str, bytes, type(None), list, dict, set, tuple)

    def code_of(items, strict):
        # A module's own state (counters, caches, flags) may change as it runs: what is watched
        # is what can be called, besides the names of the harness and the builtins.
        return tuple((k, v) for k, v in items if strict or _type(v) not in data)

    space_snaps = [(label, d, code_of(d.items(), i < 3)) for i, (label, d) in enumerate(spaces)]
    class_snaps = [(label, c, tuple(vars(c).items()), frozenset(vars(c))) for label, c in classes]
    object_snaps = [(label, d, code_of(d.items(), False), frozenset(d)) for label, d in objects]
    modules = tuple((n, sys.modules[n]) for n in
                    ("torch", "os", "posixpath", "hashlib", "itertools", "numpy",
                     "validators.kernelbench.provenance") if n in sys.modules)
    sys_modules = sys.modules
    sig_get, sig_set = _signal.getsignal, _signal.signal
    handlers = []
    for s in _signal.valid_signals():
        try:
            h = sig_get(s)
        except (OSError, ValueError):
            continue
        if h is not None:
            handlers.append((s, h))
    # A kernel the answer registers for an ATen op would run inside the harness's own tensor
    # work: such registrations are named (they cannot be taken back).
    impls = getattr(torch.library, "_impls", None)
    impls_before = frozenset(impls) if impls is not None else frozenset()
    # The keys a plain CPU or CUDA tensor's ops go through (torch adds Meta kernels lazily).
    real_keys = frozenset({"", "CPU", "CUDA", "BackendSelect", "ADInplaceOrView", "Autograd",
                           "AutogradCPU", "AutogradCUDA", "CompositeImplicitAutograd",
                           "CompositeExplicitAutograd",
                           "CompositeExplicitAutogradNonFunctional"})
    dump_table = torch._C._dispatch_dump_table
    ops = ("aten::clone", "aten::copy_", "aten::_to_copy", "aten::detach", "aten::alias",
           "aten::view", "aten::view.dtype", "aten::reshape", "aten::_reshape_alias",
           "aten::contiguous", "aten::as_strided", "aten::empty.memory_format",
           "aten::empty_strided", "aten::fill_.Scalar", "aten::eq.Scalar", "aten::eq.Tensor",
           "aten::all", "aten::equal", "aten::_local_scalar_dense", "aten::isnan",
           "aten::abs", "aten::sub.Tensor", "aten::div.Tensor", "aten::add.Tensor",
           "aten::mul.Tensor", "aten::le.Tensor", "aten::bitwise_or.Tensor",
           "aten::masked_fill.Scalar", "aten::nan_to_num", "aten::max", "aten::permute",
           "aten::narrow", "aten::where.self", "aten::clamp_min", "aten::resolve_conj",
           "aten::resolve_neg", "aten::lift_fresh")
    def table_of(op):
        return [line for line in dump_table(op).splitlines()
                if line.partition(":")[0].partition("[")[0] in real_keys]

    tables = []
    for op in ops:
        try:
            tables.append((op, table_of(op)))
        except RuntimeError:
            pass
    changes = []  # what the answer changed, in the order `restore` found it

    def restore():
        # Put back what the answer changed and name it. No comprehension or builtin before the
        # builtins are back: making a function reads `__builtins__` from the globals.
        found = changes
        for label, d, snap in space_snaps:
            # A key of another type than str (a str subclass of the answer's, with a hash and
            # an __eq__ of its own) would run the answer's code in any lookup: removed first.
            for k in d:
                if _type(k) is not str:
                    found.append("a key of the answer's in " + label)
                    kept = []
                    for k2, v2 in d.items():
                        if _type(k2) is str:
                            kept.append((k2, v2))
                    d.clear()
                    for k2, v2 in kept:
                        d[k2] = v2
                    break
        for label, d, snap in space_snaps:
            for k, v in snap:
                if _dget(d, k, _MISSING) is not v:
                    d[k] = v
                    found.append(label + "." + k)
        for label, d, snap, names in object_snaps:
            for k in d:
                if _type(k) is not str:
                    found.append("a key of the answer's in " + label)
                    kept = [(k2, v2) for k2, v2 in d.items() if _type(k2) is str]
                    d.clear()
                    d.update(kept)
                    break
            for k, v in snap:
                if _dget(d, k, _MISSING) is not v:
                    d[k] = v
                    found.append(label + "." + k)
            for k in list(d):
                if k not in names and callable(d[k]):
                    del d[k]  # a method set on the object hides its class's
                    found.append(label + "." + k)
        for label, c, snap, names in class_snaps:
            now = _vars(c)
            for k, v in snap:
                if _mp_get(now, k, _MISSING) is not v:
                    _type_setattr(c, k, v)
                    found.append(label + "." + k)
            for k in list(now):
                if k not in names and k != "__slotnames__":  # copyreg's cache, not a method
                    _type_delattr(c, k)
                    found.append(label + "." + k)
        for k in sys_modules:
            if _type(k) is not str:
                found.append("a key of the answer's in sys.modules")
                kept = [(k2, v2) for k2, v2 in sys_modules.items() if _type(k2) is str]
                sys_modules.clear()
                sys_modules.update(kept)
                break
        for name, module in modules:
            if _dget(sys_modules, name, _MISSING) is not module:
                sys_modules[name] = module
                found.append("sys.modules[%r]" % name)
        for s, h in handlers:
            if sig_get(s) is not h:
                try:
                    sig_set(s, h)
                except (OSError, ValueError, TypeError):
                    pass
                found.append("the handler of signal %d" % s)
        if impls is not None and _len(impls) != _len(impls_before):
            for entry in list(impls):
                if _type(entry) is not str:
                    found.append("an entry of the answer's in torch.library's registry")
                elif entry not in impls_before and entry.startswith(("aten/", "prims/")) \
                        and entry.rpartition("/")[2] in real_keys:
                    found.append("a kernel of %s" % entry)
        for op, table in tables:
            if table_of(op) != table:
                found.append("the dispatcher's kernels of " + op)

    held = []  # what the answer's code returned or raised: freed only after the harness ends

    def answer_code(fn, *args):
        # Every piece of the answer's code runs through here: afterwards no tracer or profiler
        # of its own is left (they run the harness's lines), garbage collection (finalizers
        # run the answer's code) is off until its code runs again, nothing it handed over is
        # freed, and what it changed is put back and named.
        _gc_enable()
        try:
            got = fn(*args)
            held.append(got)
            return got
        except BaseException as exc:
            held.append(exc)
            raise
        finally:
            try:
                try:
                    _settrace(None)
                    _setprofile(None)
                finally:
                    # A tracer and a profiler can each put the other back when called: until
                    # neither is left (the answer's code runs only while one is). One that
                    # raises is dropped by Python, and its exception ends this call as the
                    # answer's (no verdict but its own error).
                    while _gettrace() is not None or _getprofile() is not None:
                        _settrace(None)
                        _setprofile(None)
            finally:
                if _monitoring is not None:
                    for tool in _tools:
                        if _get_tool(tool) is not None:
                            _set_events(tool, 0)
                _gc_disable()
                restore()

    def plain(v):
        # Spec data the answer may have reached, copied as exact JSON types only (anything else
        # could run the answer's code when read).
        t = _type(v)
        if t is dict:
            out = {}
            for k, x in v.items():
                if _type(k) is not str:
                    raise TypeError("the harness's spec was altered")
                out[k] = plain(x)
            return out
        if t is list or t is tuple:
            return [plain(x) for x in v]
        if v is None or t is str or t is int or t is float or t is bool:
            return v
        raise TypeError("the harness's spec was altered")

    def dumps(v):
        # JSON of the harness's own records, with the C string encoder taken above.
        t = _type(v)
        if v is None:
            return "null"
        if t is bool:
            return "true" if v else "false"
        if t is str:
            return _jstr(v)
        if t is int:
            return _int_repr(v)
        if t is float:
            return _float_repr(v) if v == v and v not in (float("inf"), float("-inf")) \
                else "NaN"
        if t is dict:
            return "{" + ",".join([_jstr(k) + ":" + dumps(x) for k, x in v.items()]) + "}"
        if t is list or t is tuple:
            return "[" + ",".join([dumps(x) for x in v]) + "]"
        raise TypeError("cannot record a %s" % t.__name__)

    def write_out(name, data):
        # The file's SHA-256 goes into the sealed result: a file changed afterwards is no result.
        tmp = "out/%s.tmp" % name
        fd = _open(tmp, _O_NEW, 0o644)
        try:
            view = memoryview(data)
            while _len(view):
                view = view[_write(fd, view):]
        finally:
            _close(fd)
        _replace(tmp, "out/" + name)
        return _sha256(data).hexdigest()

    def host(t):
        return _contiguous(_to(_detach(t), "cpu"))

    def safetensors_bytes(items):
        # The safetensors format, written here (the library's helpers are the answer's to patch).
        header, blobs, at = [], [], 0
        for name, t in items:
            code = _dget(ST_CODES, _dtype_of(t))
            if code is None:
                raise TypeError("%s has dtype %s, which safetensors cannot hold" % (name, _dtype_of(t)))
            raw = _tobytes(_numpy(_view(_reshape(t, (-1,)), _uint8)))
            shape = ",".join(["%d" % d for d in _shape_of(t)])
            header.append('"%s":{"dtype":"%s","shape":[%s],"data_offsets":[%d,%d]}'
                          % (name, code, shape, at, at + _len(raw)))
            blobs.append(raw)
            at += _len(raw)
        head = ("{" + ",".join(header) + "}").encode("ascii")
        head += b" " * (-_len(head) % 8)
        return _int_to_bytes(_len(head), 8, "little") + head + b"".join(blobs)

    def dtype_name(dt):
        return _dget(DTYPE_NAMES, dt) or str(dt).replace("torch.", "")

    def form_problem(k, o):
        # Checked with what was taken before the answer ran: a subclass or a deferred object
        # could answer isinstance, or override every method the check would call.
        if _type(o) is not _Tensor:
            return "output %d is a %s, not a plain torch.Tensor" % (k, _type(o).__qualname__)
        if _layout_of(o) != _strided:
            return "output %d has layout %s, not a dense (strided) tensor" % (k, _layout_of(o))
        if _device_of(o).type not in ("cpu", "cuda"):
            return "output %d lives on the %s device, not cuda" % (k, _device_of(o).type)
        return ""

    def judge(call, got, args, case_args, name):
        # Right after forward returned and before any code of the answer's can run again: the
        # outputs are copied, matched against what torch computed, and written, each file's
        # digest recorded.
        outs = list(got) if _type(got) is tuple or _type(got) is list else [got]
        form = []
        for k, o in enumerate(outs):
            p = form_problem(k, o)
            if p:
                form.append(p)
        call["form"] = form
        digests = {}
        if not form:
            snaps = [_contiguous(_clone(_detach(o))) for o in outs]
            call["outputs"] = [{"dtype": dtype_name(_dtype_of(s)), "shape": list(_shape_of(s))}
                               for s in snaps]
            digests["outputs"] = write_out("outputs-%s.safetensors" % name, safetensors_bytes(
                [("out%d" % k, host(s)) for k, s in enumerate(snaps)]))
            if watch is not None:
                near = []
                for k, s in enumerate(snaps):
                    v = _nearest(s)
                    if v is not None:
                        near.append((k, v))
                call["torch_ops"] = {"%d" % k: v[1] for k, v in near}
                digests["torch"] = write_out("torch-%s.safetensors" % name, safetensors_bytes(
                    [("out%d" % k, host(v[0])) for k, v in near]))
        digests["after"] = write_out("after-%s.safetensors" % name, safetensors_bytes(
            [(a["tensor"], host(x)) for a, x in zip(case_args, args) if "tensor" in a]))
        call["digests"] = digests

    def poison_device(byte):
        # Fill the caching allocator's free memory with `byte`: the GPU's counterpart of the
        # cpu backend's poisoning allocator. Blocks that torch (in Python or in an extension's
        # torch::empty) hands out next on this stream come from these, so an output left
        # unwritten shows the byte instead of whatever the memory held.
        _cuda_sync()
        _empty_cache()
        held = [_empty(poison_large, dtype=_uint8, device="cuda")]
        held += [_empty(1 << 20, dtype=_uint8, device="cuda") for _ in range(poison_small)]
        for t in held:
            _fill(t, byte)
        _cuda_sync()
        del held

    def poison_effective(byte):
        # Whether new small and large allocations do start as `byte` (the allocator's settings
        # can defeat the fill, e.g. expandable segments): the verifier says so when they do not.
        poison_device(byte)
        small = _empty(4096, dtype=_uint8, device="cuda")
        large = _empty(4 << 20, dtype=_uint8, device="cuda")
        return bool(_item(_all(_eq(small, byte)))) and bool(_item(_all(_eq(large, byte))))

    def gpu_build_failure(exc):
        # torch's extension builder's own failure (nvcc or the linker): a compile error.
        tb = _tb_of(exc)
        while tb is not None and tb.tb_next is not None:
            tb = tb.tb_next
        where = tb.tb_frame.f_code.co_filename if tb is not None else ""
        return (_type(exc) is RuntimeError and str(exc).startswith("Error building extension")
                and where.endswith("torch/utils/cpp_extension.py"))

    def halted(exc):
        # The status of a stop that is no verdict on this call (an extension still to build, a
        # failed build, a GPU-only feature: BaseExceptions, so the answer's own `except
        # Exception` cannot swallow them); None for anything else. Read through the exception's
        # real type and traceback: its class is the answer's to define.
        tb = _tb_of(exc)
        while tb is not None and tb.tb_next is not None:
            tb = tb.tb_next
        if tb is None or tb.tb_frame.f_code not in runtime_code:
            return None  # raised by the answer's own code: an ordinary exception of the answer
        for kinds, status in ((not_built, "pending"), (build_error, "build_error"),
                              (needs_gpu, "needs_gpu")):
            if kinds and issubclass(_type(exc), kinds):
                return status
        return None

    def describe(exc):
        return ("%s: %s" % (_type(exc).__name__, exc))[:800]

    def inherits_of(cls):
        if not (isinstance(cls, type) and issubclass(cls, _Module)):
            return None
        for base in cls.__mro__[1:]:
            if base is _Module:
                break
            if base.__name__ == "Model" or "forward" in vars(base) and "forward" not in vars(cls):
                return ("ModelNew inherits %s.forward" % base.__qualname__
                        if base.__name__ != "Model" else "ModelNew inherits from Model")
        return ""

    def model_tensors(model):
        return list(_params(model)) + list(_buffers(model))

    def forward(model, args):
        return model(*args)

    def to_cuda(model):
        return model.cuda()

    def fresh(t):
        c = _clone(t)
        return _to_cuda(c) if gpu else c

    records = ()

    def body(fields):
        return dumps(fields)[:-1] + ',"calls":[' + ",".join(records) + "]}"

    def finish(fields):
        text = body(fields)
        sealed = '{"mac":"%s","body":%s}' % (mac(text.encode("ascii")), _jstr(text))
        write_out("answer.json", sealed.encode("ascii"))

    def tampered():
        return sorted(set(changes))[:40]

    def stop(status, exc, extra=()):
        fields = dict(extra)
        fields["status"] = status
        fields["reason"] = answer_code(describe, exc)
        if status == "needs_gpu":
            fields["needs_gpu"] = answer_code(lambda: str(getattr(exc, "feature", "") or exc))
        elif status == "build_error" and not build_error:
            pass  # torch's own builder: its text is already in the diagnostics
        elif status == "build_error":
            fields["diagnostics"] = answer_code(
                lambda: str(getattr(exc, "diagnostics", "") or ""))[:20000]
            fields["needs_gpu"] = answer_code(lambda: str(getattr(exc, "needs_gpu", None) or ""))
        else:
            fields["traceback"] = answer_code(lambda: "\n".join(
                "".join(_format_exception(exc)).strip().splitlines()[-12:]))[:3000]
        fields["tampered"] = tampered()
        finish(fields)

    def run():
        nonlocal records
        code = compile(open("answer.py").read(), "answer.py", "exec")
        ns = {"__name__": "answer", "__file__": "answer.py", "__builtins__": _builtins_module}
        threads = _thread_count()
        keep = []  # every input, output, model and exception stays alive: no id() or data_ptr()
        # is reused, and no finalizer of the answer's runs in the harness's code
        ''' + READY_LINE + r'''
        _gc_disable()
        t_import = _perf()
        try:
            answer_code(exec, code, ns)
        except BaseException as exc:
            keep.append(exc)
            if gpu_lost is not None:
                return stop("no_gpu", gpu_lost)
            if gpu and answer_code(gpu_build_failure, exc):
                return stop("build_error", exc,
                            (("diagnostics", answer_code(lambda: str(exc))[:20000]),))
            return stop(halted(exc) or "load_error", exc)
        # A tuple, not a dict: the answer can reach this frame's objects while its code runs.
        # On a GPU the extensions build while the answer imports (torch's builder, in here).
        extra = (("import_seconds", _perf() - t_import),)
        if gpu_lost is not None:
            return stop("no_gpu", gpu_lost, extra)
        poison_on = gpu and poison is not None
        if poison_on:
            extra += (("poison_effective", quietly(poison_effective, poison)),)
        cls = ns.get("ModelNew")
        inherits = answer_code(inherits_of, cls)
        if _type(inherits) is not str:
            return stop("load_error", TypeError("ModelNew is not an nn.Module class"), extra)
        extra += (("inherits", inherits),)
        groups = plain(G["spec"]["groups"])
        for group in groups:
            try:
                answer_code(_manual_seed, group["seed"])
                if poison_on:
                    quietly(poison_device, poison)
                # Training mode, as the reference (and KernelBench) builds it.
                model = answer_code(cls, *dec_value(group["init"]))
                keep.append(model)
                if cuda:
                    model = answer_code(to_cuda, model)
                    keep.append(model)
            except BaseException as exc:
                keep.append(exc)
                return stop(halted(exc) or "init_error", exc, extra)
            for case in group["cases"]:
                name = case["name"]
                try:
                    loaded = quietly(take_inputs, name)
                except BaseException as exc:
                    keep.append(exc)
                    return stop("harness_error", exc, extra)
                args = tuple([quietly(fresh, loaded[a["tensor"]]) if "tensor" in a
                              else dec_value(a["value"]) for a in case["args"]])
                keep.append(args)
                if watch is not None:
                    sources = tuple([a for a in args if _type(a) is _Tensor]
                                    + answer_code(model_tensors, model))
                    keep.append(sources)
                    answer_code(_watch_start, sources)
                if poison_on:
                    quietly(poison_device, poison)
                grad = _grad_enabled()
                _set_grad(False)
                before = count_native() if count_native is not None else 0
                lib_before = library_counts()
                got = failed = None
                watched = False
                t0 = _perf()
                try:
                    if watch is not None:
                        watch_popped()  # a pop before the call is not the call's
                        _watch_enter()
                        watched = True
                    got = answer_code(forward, model, args)
                    if _cuda_sync is not None:
                        _cuda_sync()  # the kernels' work, on whichever stream, and its errors
                except BaseException as exc:
                    failed = exc
                t1 = _perf()
                launches = count_native() - before if count_native is not None else None
                lib_after = library_counts()
                lost = []
                if watched and not unwatch():
                    lost.append("took the harness's dispatch mode off the stack, altered it or "
                                "hid ops from it during forward")
                if changes:
                    lost.append("altered what the harness runs (%s)" % ", ".join(tampered()[:6]))
                if _thread_count() > threads:
                    lost.append("left a thread of its own running after forward")
                # Made only now: the answer could have reached a record made before forward.
                call = {"name": name, "launches": None, "error": "", "form": [],
                        "seconds": t1 - t0}
                if failed is not None:
                    _set_grad(grad)
                    keep.append(failed)
                    status = halted(failed)
                    if status:
                        return stop(status, failed, extra)
                    call["error"] = answer_code(describe, failed)
                    records += (dumps(call),)
                    write_out("answer.json", body(dict(extra, status="running")).encode("ascii"))
                    continue
                if count_native is not None:
                    call["launches"] = launches
                if lib_before is not None:
                    call["library"] = {LIBRARIES[i]: lib_after[i] - lib_before[i]
                                       for i in range(len(LIBRARIES))
                                       if lib_after[i] > lib_before[i]}
                if watch is not None:
                    call["torch_lost"] = bool(lost)
                    if lost:
                        call["lost_why"] = "; ".join(lost)
                keep.append(got)
                quietly(judge, call, got, args, case["args"], name)
                _set_grad(grad)
                records += (dumps(call),)
                write_out("answer.json", body(dict(extra, status="running")).encode("ascii"))
        finish(dict(extra + (("tampered", tampered()),), status="ok"))

    try:
        run()
    except BaseException as exc:
        stop("harness_error", exc)
    finally:
        # Nothing the answer runs at exit (its handlers, its finalizers) finds the token here.
        forget_token()

_harness()
'''
