"""The code that runs inside the two sandboxed processes of a check.

The reference process runs the problem's `Model`: per seed it draws `get_inputs()`, builds the
model, adds the signed N(0, 1) input set and runs forward on each set, writing inputs and
outputs as safetensors. The answer process never sees the problem or those outputs: it gets
the inputs, builds `ModelNew` under the same seeds, and writes what each forward returned (and
the inputs as they were afterwards), with the kernel launches each call made. The verifier,
outside both, compares.

Both load tensors with safetensors (no pickle: nothing the other side wrote can run code here
or in the verifier).
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
    for i, seed in enumerate(spec["seeds"]):
        ns, cls = load_module(src, "Model", seed)
        torch.manual_seed(seed)
        drawn = list(ns["get_inputs"]())
        init = list(ns["get_init_inputs"]())
        torch.manual_seed(seed)
        # Training mode, as KernelBench's own evaluation leaves it: BatchNorm normalises with
        # the batch's statistics (the answer's maths), Dropout stays as the problem wrote it.
        model = cls(*init)
        group = {"seed": seed, "init": enc(init), "cases": []}
        sets = [("get_inputs", drawn)]
        signed, changed = signed_like(drawn, seed)
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
import json, os, sys, time, traceback
def _completion():
    # The verifier's token comes through a pipe, read to its end before the answer's code runs;
    # only the harness's final result carries it, so a result file the answer writes itself
    # (and then ends the process) is no result. Defence in depth: the answer runs in this
    # interpreter and could dig the token out of this closure; the verifier's exact-call check
    # is what makes a forged or emptied result fail.
    chunks = []
    while True:
        b = os.read(0, 256)
        if not b:
            break
        chunks.append(b)
    token = b"".join(chunks).decode("ascii", "replace")
    def finish(obj):
        obj["token"] = token
        flush(obj, "answer.json")
    return finish
finish = _completion()
spec = json.load(open("spec.json"))
sys.path.insert(0, spec["package_root"])
os.makedirs("out", exist_ok=True)
import torch
torch.set_num_threads(1)
from safetensors.torch import load_file, save_file
_type, _Tensor, _tuple, _list = type, torch.Tensor, tuple, list
launch_count = None
not_built = build_error = needs_gpu = ()
# Native libraries the answer may load through ctypes (an operator library built with
# is_python_module=False): the verifier's builds (cpu), torch's build folder (cuda).
own_libraries = ()
gpu_lost = None
_runtime_code = frozenset()
if spec["gpu"]:
    # The real torch on a real GPU: nothing replaced. CUDA starts before the answer is
    # imported, so the caching allocator runs under our settings, not ones the answer sets.
    own_libraries = _tuple(p for p in [os.environ.get("TORCH_EXTENSIONS_DIR")] if p)
    try:
        torch.cuda.init()
        torch.empty(1, device="cuda")
    except Exception as exc:
        # The probe saw a GPU and this process does not: no verdict on the answer. Its import
        # still runs (it shows what the process was given), nothing after it.
        gpu_lost = exc
elif spec["cuda"]:
    # Before the answer is imported: load_inline/load and the cuda device are the project's.
    from validators.cpu import torch_cuda
    torch_cuda.install(build_root=spec["build_root"], poison=spec["poison"],
                       variant=spec["variant"])
    launch_count = torch_cuda.launch_count
    own_libraries = _tuple(torch_cuda.built_libraries())
    not_built = (torch_cuda.ExtensionNotBuilt,)
    build_error = (torch_cuda.ExtensionBuildError,)
    needs_gpu = (torch_cuda.NeedsGpu,)
    # The code that may raise them, taken before the answer runs: the answer can import the
    # classes and raise them itself (a wrong answer would leave as needs_gpu, no verdict).
    _runtime_code = {f.__code__ for m in (torch_cuda, torch_cuda._GpuOnlyImports)
                     for f in vars(m).values() if _type(f).__name__ == "function"}
watch = None
if spec["follow"]:
    # What torch computes by itself during each call (the `torch_result` rule), followed by a
    # dispatch mode made before the answer is imported.
    from validators.kernelbench.provenance import guard, make_watch
    watch = make_watch(launch_count)
    watch_popped = guard(watch)
    _params, _buffers = torch.nn.Module.parameters, torch.nn.Module.buffers
    # What the watch is made of, before the answer runs: a method swapped on its class or set
    # on the object would blind it as surely as taking it off the stack.
    _watch_leave = watch.leave
    _watch_blinded = watch.was_blinded
    _tls_excluded = torch._C._dispatch_tls_is_dispatch_key_excluded
    _watch_cls = _type(watch)
    _watch_methods = {k: v for k, v in vars(_watch_cls).items()}
    _watch_fields = frozenset(vars(watch))

def unwatch():
    """Take the watch off the dispatch stack: False when the answer had moved it (off the
    stack, under a mode of its own, or popped and pushed back) or altered it."""
    intact = (_type(watch) is _watch_cls and frozenset(vars(watch)) == _watch_fields
              and {k: v for k, v in vars(_watch_cls).items()} == _watch_methods)
    on_top = _watch_leave()
    # An exclusion of the Python keys left in place hides every later op too.
    excluded = any(_tls_excluded(k) for k in
                   (torch._C.DispatchKey.Python, torch._C.DispatchKey.PythonTLSSnapshot))
    return on_top and intact and not watch_popped() and not _watch_blinded() and not excluded
''' + GUARD + ENCODE + r'''
_ckd_install_guard(spec["prefixes"], spec["gpu"], own_libraries)
''' + READY_LINE + r'''
result = {"status": "running", "calls": [], "inherits": ""}

def poison_device(byte):
    """Fill the caching allocator's free memory with `byte`: the GPU's counterpart of the cpu
    backend's poisoning allocator. Blocks that torch (in Python or in an extension's
    torch::empty) hands out next on this stream come from these, so an output left unwritten
    shows the byte instead of whatever the memory held."""
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    held = [torch.empty(spec["poison_large"], dtype=torch.uint8, device="cuda")]
    held += [torch.empty(1 << 20, dtype=torch.uint8, device="cuda")
             for _ in range(spec["poison_small"])]
    for t in held:
        t.fill_(byte)
    torch.cuda.synchronize()
    del held

def poison_effective(byte):
    """Whether new small and large allocations do start as `byte` (the allocator's settings can
    defeat the fill, e.g. expandable segments): the verifier says so when they do not."""
    poison_device(byte)
    small = torch.empty(4096, dtype=torch.uint8, device="cuda")
    large = torch.empty(4 << 20, dtype=torch.uint8, device="cuda")
    ok = bool((small == byte).all()) and bool((large == byte).all())
    del small, large
    return ok

def gpu_build_failure(exc):
    """torch's extension builder's own failure (nvcc or the linker): a compile error."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    where = tb.tb_frame.f_code.co_filename if tb is not None else ""
    return (_type(exc) is RuntimeError and str(exc).startswith("Error building extension")
            and where.endswith("torch/utils/cpp_extension.py"))

def halted(exc):
    """The status of a stop that is no verdict on this call: an extension still to build, a
    failed build, a GPU-only feature (BaseExceptions, so the answer's own `except Exception`
    cannot swallow them); None for anything else."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is None or tb.tb_frame.f_code not in _runtime_code:
        return None  # raised by the answer's own code: an ordinary exception of the answer
    for kinds, status in ((not_built, "pending"), (build_error, "build_error"),
                          (needs_gpu, "needs_gpu")):
        if kinds and isinstance(exc, kinds):
            return status
    return None

def stop(status, exc):
    result["status"] = status
    result["reason"] = ("%s: %s" % (_type(exc).__name__, exc))[:800]
    # By status, not by class: the answer can raise the classes itself (see `halted`).
    if status == "needs_gpu":
        result["needs_gpu"] = str(getattr(exc, "feature", "") or exc)
    elif status == "build_error" and not build_error:
        pass  # torch's own builder: its text is already in result["diagnostics"]
    elif status == "build_error":
        result["diagnostics"] = str(getattr(exc, "diagnostics", "") or "")[:20000]
        result["needs_gpu"] = getattr(exc, "needs_gpu", None) or ""
    else:
        result["traceback"] = "\n".join(traceback.format_exc().strip().splitlines()[-12:])[:3000]
    finish(result)

def form_problem(k, o):
    # Checked with the builtins saved before the answer ran: a subclass or a deferred object
    # could answer isinstance, or override every method the check would call.
    if _type(o) is not _Tensor:
        return "output %d is a %s, not a plain torch.Tensor" % (k, _type(o).__qualname__)
    if o.layout != torch.strided:
        return "output %d has layout %s, not a dense (strided) tensor" % (k, o.layout)
    if o.device.type not in ("cpu", "cuda"):
        return "output %d lives on the %s device, not cuda" % (k, o.device.type)
    return ""

def run():
    ns = {"__name__": "answer", "__file__": "answer.py"}
    t_import = time.perf_counter()
    try:
        exec(compile(open("answer.py").read(), "answer.py", "exec"), ns)
    except BaseException as exc:
        if gpu_lost is not None:
            return stop("no_gpu", gpu_lost)
        if spec["gpu"] and gpu_build_failure(exc):
            result["diagnostics"] = str(exc)[:20000]
            return stop("build_error", exc)
        return stop(halted(exc) or "load_error", exc)
    # On a GPU the extensions build while the answer imports (torch's builder, in here).
    result["import_seconds"] = time.perf_counter() - t_import
    if gpu_lost is not None:
        return stop("no_gpu", gpu_lost)
    poison = spec["gpu"] and spec["poison"] is not None
    if poison:
        result["poison_effective"] = poison_effective(spec["poison"])
    cls = ns.get("ModelNew")
    if not (isinstance(cls, _type) and issubclass(cls, torch.nn.Module)):
        return stop("load_error", TypeError("ModelNew is not an nn.Module class"))
    for base in cls.__mro__[1:]:
        if base is torch.nn.Module:
            break
        if base.__name__ == "Model" or "forward" in vars(base) and "forward" not in vars(cls):
            result["inherits"] = "ModelNew inherits %s.forward" % base.__qualname__ \
                if base.__name__ != "Model" else "ModelNew inherits from Model"
            break
    keep = []  # every input and output stays alive: no id() or data_ptr() is reused
    for group in spec["groups"]:
        torch.manual_seed(group["seed"])
        try:
            if poison:
                poison_device(spec["poison"])
            model = cls(*dec(group["init"]))  # training mode, as the reference (and KernelBench)
            if spec["cuda"]:
                model = model.cuda()
        except BaseException as exc:
            return stop(halted(exc) or "init_error", exc)
        for case in group["cases"]:
            loaded = load_file("inputs/%s.safetensors" % case["name"])
            args = [loaded[a["tensor"]] if "tensor" in a else dec(a["value"]) for a in case["args"]]
            if spec["cuda"]:
                args = [a.cuda() if _type(a) is _Tensor else a for a in args]
            call = {"name": case["name"], "launches": None, "error": "", "form": []}
            if poison:
                poison_device(spec["poison"])
            before = launch_count() if launch_count else 0
            watched = False
            if watch is not None:
                watch.start([a for a in args if _type(a) is _Tensor]
                            + _list(_params(model)) + _list(_buffers(model)))
            t0 = time.perf_counter()
            try:
                with torch.no_grad():
                    if watch is not None:
                        watch_popped()  # a pop before the call is not the call's
                        watch.enter()
                        watched = True
                    got = model(*args)
                    if watched:
                        watched = False
                        if not unwatch():
                            call["torch_lost"] = True
                if spec["cuda"]:
                    torch.cuda.synchronize()
            except BaseException as exc:
                if watched:
                    unwatch()
                if halted(exc):
                    return stop(halted(exc), exc)
                call["error"] = ("%s: %s" % (_type(exc).__name__, exc))[:800]
                call["seconds"] = time.perf_counter() - t0
                result["calls"].append(call)
                flush(result, "answer.json")
                continue
            call["seconds"] = time.perf_counter() - t0
            if launch_count:
                call["launches"] = launch_count() - before
            outs = list(got) if _type(got) in (_tuple, _list) else [got]
            call["form"] = [p for p in (form_problem(k, o) for k, o in enumerate(outs)) if p]
            if not call["form"]:
                call["outputs"] = [{"dtype": dtype_name(o.dtype), "shape": _list(o.shape)} for o in outs]
                save_file({"out%d" % k: o.detach().to("cpu").contiguous().clone()
                           for k, o in enumerate(outs)}, "out/outputs-%s.safetensors" % case["name"])
                if watch is not None:
                    near = {k: watch.nearest(o) for k, o in enumerate(outs)}
                    near = {k: v for k, v in near.items() if v is not None}
                    call["torch_ops"] = {str(k): v[1] for k, v in near.items()}
                    save_file({"out%d" % k: v[0].detach().to("cpu").contiguous()
                               for k, v in near.items()}, "out/torch-%s.safetensors" % case["name"])
            save_file({a["tensor"]: x.detach().to("cpu").contiguous().clone()
                       for a, x in zip(case["args"], args) if "tensor" in a},
                      "out/after-%s.safetensors" % case["name"])
            keep.append((args, got))
            result["calls"].append(call)
            flush(result, "answer.json")
    result["status"] = "ok"
    finish(result)

DTYPE_NAMES = {torch.float32: "float32", torch.float64: "float64", torch.float16: "float16",
               torch.bfloat16: "bfloat16", torch.int8: "int8", torch.int16: "int16",
               torch.int32: "int32", torch.int64: "int64", torch.uint8: "uint8",
               torch.bool: "bool", torch.complex64: "complex64", torch.complex128: "complex128"}

def dtype_name(dt):
    return DTYPE_NAMES.get(dt, str(dt).replace("torch.", ""))

try:
    run()
except BaseException as exc:
    stop("harness_error", exc)
'''
