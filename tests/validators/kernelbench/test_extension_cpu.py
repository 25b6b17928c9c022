"""PyTorch CUDA extensions on the cpu backend (issue 23, item 2): a KernelBench-style answer's
`load_inline` is recorded in its sandbox, built by `extension.build_pending` in the build
sandbox (real g++ against torch's headers and the shim), and imported by the next pass, whose
kernels run on the emulator. Few builds on purpose: each extension costs tens of seconds here.
"""

from __future__ import annotations

import json
import platform
import shutil
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("torch")

from validators.build_cache import BuildCache  # noqa: E402
from validators.cpu import extension  # noqa: E402
from validators.sandbox import GIB, Limits, python_executable, python_prefixes, run_sandboxed  # noqa: E402

REPO = Path(__file__).resolve().parents[3]

pytestmark = pytest.mark.skipif(platform.machine() != "x86_64" or shutil.which("g++") is None,
                                reason="the cpu backend needs x86-64 and g++")

# A KernelBench level-1 ReLU answer written as the field writes them, using the CUDA side of
# torch's C++ API: CHECK_CUDA on device().is_cuda(), is_cuda(), OptionalCUDAGuard,
# getCurrentCUDAStream() as the launch's stream, AT_DISPATCH over float/double/half,
# C10_CUDA_KERNEL_LAUNCH_CHECK, TensorOptions on kCUDA, CUDAGuard, device properties.
RELU_ANSWER = textwrap.dedent(r'''
    import torch
    import torch.nn as nn
    from torch.utils.cpp_extension import load_inline

    cuda_src = r"""
    #include <torch/extension.h>
    #include <ATen/cuda/CUDAContext.h>
    #include <c10/cuda/CUDAGuard.h>
    #define CHECK_CUDA(x) TORCH_CHECK(x.device().is_cuda(), #x " must be a CUDA tensor")
    #define CHECK_CONTIGUOUS(x) TORCH_CHECK(x.is_contiguous(), #x " must be contiguous")
    #define CHECK_INPUT(x) CHECK_CUDA(x); CHECK_CONTIGUOUS(x)

    template <typename scalar_t>
    __global__ void relu_kernel(const scalar_t* __restrict__ x, scalar_t* __restrict__ y, int64_t n) {
      int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
      if (i < n) y[i] = x[i] > scalar_t(0) ? x[i] : scalar_t(0);
    }

    torch::Tensor relu_cuda(torch::Tensor x) {
      CHECK_INPUT(x);
      TORCH_CHECK(x.is_cuda(), "x must be on the GPU");
      const at::cuda::OptionalCUDAGuard guard(device_of(x));
      auto y = torch::empty_like(x);
      int64_t n = x.numel();
      const int threads = 256;
      const int blocks = (n + threads - 1) / threads;
      cudaStream_t stream = at::cuda::getCurrentCUDAStream();
      AT_DISPATCH_FLOATING_TYPES_AND_HALF(x.scalar_type(), "relu_cuda", ([&] {
        relu_kernel<scalar_t><<<blocks, threads, 0, stream>>>(x.data_ptr<scalar_t>(), y.data_ptr<scalar_t>(), n);
      }));
      C10_CUDA_KERNEL_LAUNCH_CHECK();
      return y;
    }

    torch::Tensor empty_on_device(int64_t n) {
      auto opts = torch::TensorOptions().dtype(torch::kFloat32).device(torch::kCUDA, 0);
      c10::cuda::CUDAGuard g(0);
      TORCH_CHECK(at::cuda::getCurrentDeviceProperties()->warpSize == 32, "warp size");
      auto t = torch::empty({n}, opts);
      TORCH_CHECK(t.device().type() == at::kCUDA && t.is_cuda(), "not on the device");
      return t;
    }

    // The extension tutorial's accessors, with torch's nvcc-only RestrictPtrTraits.
    __global__ void row_scale_kernel(const torch::PackedTensorAccessor32<float, 2, torch::RestrictPtrTraits> x,
                                     const torch::PackedTensorAccessor32<float, 1, at::RestrictPtrTraits> s,
                                     torch::PackedTensorAccessor32<float, 2, torch::RestrictPtrTraits> y) {
      const int r = blockIdx.x, c = threadIdx.x;
      if (r < x.size(0) && c < x.size(1)) y[r][c] = x[r][c] * s[r];
    }

    torch::Tensor row_scale(torch::Tensor x, torch::Tensor s) {
      auto y = torch::empty_like(x);
      row_scale_kernel<<<x.size(0), x.size(1)>>>(x.packed_accessor32<float, 2, torch::RestrictPtrTraits>(),
                                                 s.packed_accessor32<float, 1, torch::RestrictPtrTraits>(),
                                                 y.packed_accessor32<float, 2, torch::RestrictPtrTraits>());
      return y;
    }
    """

    ext = load_inline(name="relu_ext",
                      cpp_sources="torch::Tensor relu_cuda(torch::Tensor x);\ntorch::Tensor empty_on_device(int64_t n);\n"
                                  "torch::Tensor row_scale(torch::Tensor x, torch::Tensor s);",
                      cuda_sources=cuda_src, functions=["relu_cuda", "empty_on_device", "row_scale"],
                      extra_cuda_cflags=["-O3", "--use_fast_math"], verbose=False)


    class ModelNew(nn.Module):
        def forward(self, x):
            return ext.relu_cuda(x)
''')

# The answer's process: install, import the answer, report what the tests check as JSON.
PASS = textwrap.dedent('''
    import json, sys
    sys.path.insert(0, {repo!r})
    from validators.cpu import torch_cuda
    torch_cuda.install({root!r}, poison={poison}, variant={variant!r})
    import torch, importlib.util
    report = {{}}
    try:
        spec = importlib.util.spec_from_file_location("answer", "answer.py")
        answer = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(answer)
    except torch_cuda.ExtensionNotBuilt as e:
        report["not_built"] = e.name
    except torch_cuda.ExtensionBuildError as e:
        report["build_error"] = {{"needs_gpu": e.needs_gpu, "diagnostics": e.diagnostics[-2000:]}}
    else:
        report.update(json.loads(json.dumps(answer.check(torch, torch_cuda) if hasattr(answer, "check")
                                            else {{}})))
    print("REPORT " + json.dumps(report))
''')

RELU_CHECK = textwrap.dedent('''
    def check(torch, torch_cuda):
        out = {}
        before = torch_cuda.launch_count()
        model = ModelNew().cuda()
        torch.manual_seed(0)
        x = torch.randn(257, 33, device="cuda")
        y = model(x)
        out["launches"] = torch_cuda.launch_count() - before
        out["equal"] = bool(torch.equal(y, torch.relu(x)))
        xd = torch.randn(1000, dtype=torch.float64).to("cuda")
        out["equal_double"] = bool(torch.equal(model(xd), torch.relu(xd)))
        xh = torch.randn(1000).half().cuda()
        out["equal_half"] = bool(torch.equal(model(xh), torch.relu(xh)))
        out["launches_total"] = torch_cuda.launch_count() - before
        s = torch.randn(257, device="cuda")
        out["accessor"] = bool(torch.equal(ext.row_scale(x, s), x * s[:, None]))
        out["is_cuda"] = bool(x.is_cuda)
        out["device"] = [str(x.device), str(y.device), str(torch.zeros(2, device=x.device).device)]
        out["available"] = torch.cuda.is_available()
        out["device_count"] = torch.cuda.device_count()
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record(); model(x); end.record(); end.synchronize()
        out["elapsed_ms_ok"] = start.elapsed_time(end) >= 0
        out["py_empty"] = torch.empty(16, device=torch.device("cuda:0")).view(torch.uint8).tolist()
        out["cpp_empty"] = ext.empty_on_device(16).view(torch.uint8).tolist()
        return out
''')


def _limits() -> Limits:
    return Limits(cpu_seconds=300, wall_seconds=600, memory_bytes=16 * GIB)


def run_pass(work: Path, root: Path, *, poison: int | None = None, variant: str = "plain",
             env: dict[str, str] | None = None):
    script = PASS.format(repo=str(REPO), root=str(root), poison=poison, variant=variant)
    out = run_sandboxed([python_executable(), "-I", "-c", script], work, limits=_limits(),
                        env={"OMP_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1", **(env or {})},
                        expose=[*python_prefixes(), REPO])
    line = next((ln for ln in out.stdout.splitlines() if ln.startswith("REPORT ")), None)
    return (json.loads(line[7:]) if line else None), out


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> BuildCache:
    return BuildCache(tmp_path_factory.mktemp("ext-cache"))


@pytest.fixture(scope="module")
def relu_work(tmp_path_factory, cache):
    """The two passes and the build in between, in the real sandboxes."""
    work = tmp_path_factory.mktemp("relu")
    (work / "answer.py").write_text(RELU_ANSWER + RELU_CHECK)
    root = work / "build"
    root.mkdir()
    extension.prepare_runtime(root, "plain")
    first, out = run_pass(work, root)
    assert first == {"not_built": "relu_ext"}, out.stdout + out.stderr
    pending = extension.pending_requests(root)
    assert [r.name for r in pending] == ["relu_ext"]
    builds = extension.build_pending(root, "plain", cache=cache)
    assert [b.ok for b in builds] == [True], builds[0].diagnostics
    assert extension.pending_requests(root) == []
    return work, root


def test_load_inline_answer_computes_torchs_result_on_the_emulator(relu_work):
    work, root = relu_work
    report, out = run_pass(work, root, poison=0xAB, env={"CUDASHIM_SCHEDULE": "reverse"})
    assert report is not None, out.stdout + out.stderr
    assert report["equal"] and report["equal_double"] and report["equal_half"], report
    assert report["accessor"], report
    # one custom launch per forward, counted by the runtime the extensions share
    assert report["launches"] == 1 and report["launches_total"] == 3, report
    assert report["is_cuda"] and report["available"] and report["device_count"] == 1, report
    assert report["device"] == ["cuda:0"] * 3, report
    assert report["elapsed_ms_ok"], report


@pytest.mark.parametrize("byte", [0xAB, 0x5A])
def test_new_allocations_start_poisoned_in_python_and_in_the_extension(relu_work, byte):
    work, root = relu_work
    report, out = run_pass(work, root, poison=byte)
    assert report is not None, out.stdout + out.stderr
    assert report["py_empty"] == [byte] * 64, report
    assert report["cpp_empty"] == [byte] * 64, report


def _built_and_run(work: Path, cache: BuildCache):
    """The answer in `work` through its first pass, its build (plain) and the pass that runs it."""
    (work / "build").mkdir(exist_ok=True)
    extension.prepare_runtime(work / "build", "plain")
    run_pass(work, work / "build")
    builds = extension.build_pending(work / "build", "plain", cache=cache)
    assert [b.ok for b in builds] == [True], builds[0].diagnostics if builds else "nothing to build"
    return run_pass(work, work / "build")


def _host_unit_builds(cache: BuildCache) -> int:
    return sum(1 for meta in cache.root.rglob("meta.json")
               if "host unit" in json.loads(meta.read_text())["info"]["compiler"])


def test_the_host_unit_is_built_once_for_every_variant_and_same_declarations(relu_work, cache, tmp_path):
    """main.cpp (pybind11's bindings, most of an extension's build) holds no kernel: the race
    build links the plain build's object, and another answer with the same declarations and
    bindings (another kernel, another module name) links it too; each module still imports
    under its own name and computes with its own kernel."""
    before = _host_unit_builds(cache)
    assert before >= 1
    work = tmp_path / "race"
    root = work / "build"
    root.mkdir(parents=True)
    shutil.copy(relu_work[0] / "answer.py", work / "answer.py")
    extension.prepare_runtime(root, "race")
    first, out = run_pass(work, root, variant="race")
    assert first == {"not_built": "relu_ext"}, out.stdout + out.stderr
    builds = extension.build_pending(root, "race", cache=cache)
    assert [b.ok for b in builds] == [True], builds[0].diagnostics
    report, out = run_pass(work, root, variant="race")
    assert report is not None and report["equal"] and report["equal_half"], out.stdout + out.stderr
    # Another kernel behind the same declarations, under another module name: x -> max(x, 0) + 1.
    other = tmp_path / "other"
    other.mkdir()
    (other / "answer.py").write_text(
        RELU_ANSWER.replace('name="relu_ext"', 'name="relu_plus_one"')
        .replace("? x[i] : scalar_t(0)", "? x[i] + scalar_t(1) : scalar_t(1)")
        + "\ndef check(torch, torch_cuda):\n    x = torch.randn(300, device='cuda')\n"
        "    return {'equal': bool(torch.equal(ModelNew()(x), torch.relu(x) + 1)), 'name': ext.__name__}\n")
    report, out = _built_and_run(other, cache)
    assert report == {"equal": True, "name": "relu_plus_one"}, out.stdout + out.stderr
    assert _host_unit_builds(cache) == before


def test_answers_whose_bindings_differ_only_by_names_share_one_host_unit(relu_work, cache, tmp_path):
    """Other function names and docstrings over the same declarations' shape: the host unit
    is the one already built (its names come from the extension's own table), and pybind11
    registers the answer's names and docstrings, as torch's text would."""
    before = _host_unit_builds(cache)
    answer = (RELU_ANSWER.replace("relu_cuda", "clamp_below_cuda").replace("empty_on_device", "fresh_on_device")
              .replace('name="relu_ext"', 'name="renamed_ext"')
              .replace('functions=["clamp_below_cuda", "fresh_on_device", "row_scale"]',
                       'functions={"clamp_below_cuda": "Clamps at zero, from below.", '
                       '"fresh_on_device": "A new tensor.", "row_scale": "Rows scaled."}'))
    assert "Clamps at zero" in answer
    work = tmp_path / "renamed"
    work.mkdir(parents=True)
    (work / "answer.py").write_text(answer + textwrap.dedent('''
        def check(torch, torch_cuda):
            x = torch.randn(300, device="cuda")
            f = ext.clamp_below_cuda
            try:
                f("not a tensor")
                message = ""
            except TypeError as e:
                message = str(e)
            return {"equal": bool(torch.equal(ModelNew()(x), torch.relu(x))), "name": f.__name__,
                    "doc": "Clamps at zero, from below." in f.__doc__,
                    "other": ext.fresh_on_device.__name__, "error_names_it": "clamp_below_cuda()" in message,
                    "module": ext.__name__}
    '''))
    report, out = _built_and_run(work, cache)
    assert report == {"equal": True, "name": "clamp_below_cuda", "doc": True, "other": "fresh_on_device",
                      "error_names_it": True, "module": "renamed_ext"}, out.stdout + out.stderr
    assert _host_unit_builds(cache) == before


def _unit_builds(cache: BuildCache, what: str) -> int:
    return sum(1 for meta in cache.root.rglob("meta.json")
               if what in json.loads(meta.read_text())["info"]["compiler"])


def test_an_answer_that_differs_only_in_its_python_and_module_name_reuses_both_units(relu_work, cache, tmp_path):
    """Samples of one policy often share their CUDA text and differ in the module name they give
    load_inline or in their Python: the CUDA unit never names the module, so its object is the
    one already built (2.3 of the ~4 s a warm answer cost), and so is the host unit; the module
    still imports under its own name and computes with that kernel."""
    assert _unit_builds(cache, "CUDA unit") >= 1  # relu_work built it
    before = (_unit_builds(cache, "CUDA unit"), _host_unit_builds(cache))
    answer = (RELU_ANSWER.replace('name="relu_ext"', 'name="relu_sample_7"')
              .replace("return ext.relu_cuda(x)", "x = x.contiguous()\n        return ext.relu_cuda(x)"))
    assert "relu_sample_7" in answer and "x = x.contiguous()" in answer
    work = tmp_path / "sample"
    work.mkdir(parents=True)
    (work / "answer.py").write_text(answer + textwrap.dedent('''
        def check(torch, torch_cuda):
            x = torch.randn(300, device="cuda")
            return {"equal": bool(torch.equal(ModelNew()(x), torch.relu(x))), "module": ext.__name__}
    '''))
    report, out = _built_and_run(work, cache)
    assert report == {"equal": True, "module": "relu_sample_7"}, out.stdout + out.stderr
    assert (_unit_builds(cache, "CUDA unit"), _host_unit_builds(cache)) == before


SELF_BINDING = textwrap.dedent(r"""
    #include <torch/extension.h>
    __global__ void k(const float* x, float* y, int64_t n) {
      int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
      if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
    }
    torch::Tensor forward(torch::Tensor x) {
      auto y = torch::empty_like(x);
      int64_t n = x.numel();
      k<<<(n + 127) / 128, 128>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
      return y;
    }
    PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "relu"); }
""")


def test_a_self_binding_source_compiles_its_kernels_without_pybind11_and_shares_its_bindings(tmp_path, cache):
    """The AI CUDA Engineer's form: the kernels' unit takes the header without pybind11, the
    PYBIND11_MODULE block is a binding unit that a second answer of the same shape (another
    kernel, another function name) links again instead of compiling it. (The archive's rows run
    through this in tests/sources/test_sakana_archive.py.)"""
    from validators.cpu import toolchain

    def build(src: str, name: str) -> list[str]:
        req = extension.BuildRequest(name=name, cpp_sources=[""], cuda_sources=[src])
        ok, diag, commands = extension.compile_request(req, tmp_path / name, runner=toolchain.run_local,
                                                       cache=cache)
        assert ok, diag[-3000:]
        assert (tmp_path / name / extension.MODULE_FILE).is_file()
        return commands

    def binding_units() -> int:
        return sum(1 for meta in cache.root.rglob("meta.json")
                   if extension.BIND_UNIT in " ".join(json.loads(meta.read_text())["info"]["command"]))

    first = build(SELF_BINDING, "self_a")
    kernels = next(c for c in first if " -c cuda0.cu " in c)
    assert extension.BIND_DEFINE not in kernels and "/core/" in kernels
    assert any(" -c " + extension.BIND_UNIT in c for c in first)
    units = binding_units()
    assert units == 1
    build(SELF_BINDING.replace("forward", "run").replace(": 0.f", ": 0.5f * x[i]"), "self_b")
    assert binding_units() == units
    # Bound through a lambda: compiled as it is, the kernels' unit with pybind11's header.
    lam = build(SELF_BINDING.replace('m.def("forward", &forward, "relu");',
                                     'm.def("forward", [](torch::Tensor x) { return forward(x); });'), "self_c")
    assert any(extension.BIND_DEFINE in c and " -c cuda0.cu " in c for c in lam)
    assert binding_units() == units


def test_a_compile_error_quotes_the_answers_own_line(tmp_path, cache):
    """g++ compiles the rewritten unit (a launch is a call to the shim); what it says about an
    answer's launch quotes the answer's line, split from its bindings or not."""
    from validators.cpu import toolchain

    bad = SELF_BINDING.replace("k<<<(n + 127) / 128, 128>>>", "k<<<(n + 127) / 128, threads>>>")
    line = next(i for i, ln in enumerate(bad.splitlines(), 1) if "threads>>>" in ln) + 3  # load_inline's includes
    for name, src in [("quote_split", bad), ("quote_lambda", bad.replace(
            'm.def("forward", &forward, "relu");',
            'm.def("forward", [](torch::Tensor x) { return forward(x); });'))]:
        req = extension.BuildRequest(name=name, cpp_sources=[""], cuda_sources=[src])
        ok, diag, _ = extension.compile_request(req, tmp_path / name, runner=toolchain.run_local, cache=cache)
        assert not ok
        assert "cudashim::launch" not in diag, diag[-3000:]
        assert f"cuda0.cu:{line}:" in diag and "k<<<(n + 127) / 128, threads>>>" in diag, diag[-3000:]


def test_a_forged_request_file_is_reported_and_builds_nothing(relu_work, cache):
    """The answer's process can write in requests/: what is not a request is named, not built,
    and stops nothing else."""
    _, root = relu_work
    (root / "requests" / "forged.json").write_text('{"name": "x; rm -rf /", "cpp_sources": [], '
                                                   '"cuda_sources": []}')
    (root / "requests" / "junk.json").write_text("not json")
    before = sorted(p.name for p in (root / "ext").iterdir())
    builds = extension.build_pending(root, "plain", cache=cache)
    reasons = sorted(b.diagnostics for b in builds)
    assert [b.ok for b in builds] == [False, False], reasons
    assert "forged.json: module name 'x; rm -rf /' is not a Python identifier" in reasons[0] + reasons[1]
    assert any("junk.json" in r for r in reasons), reasons
    assert sorted(p.name for p in (root / "ext").iterdir()) == before
    for name in ("forged.json", "junk.json"):
        (root / "requests" / name).unlink()


RACY_ANSWER = textwrap.dedent(r'''
    import torch
    from torch.utils.cpp_extension import load_inline

    src = r"""
    #include <torch/extension.h>
    __global__ void hist(const int* in, int* out, int n) {
      __shared__ int bins[4];
      if (threadIdx.x < 4) bins[threadIdx.x] = 0;
      __syncthreads();
      if (threadIdx.x < n) bins[in[threadIdx.x] & 3]++;
      __syncthreads();
      if (threadIdx.x < 4) atomicAdd(&out[threadIdx.x], bins[threadIdx.x]);
    }
    torch::Tensor histogram(torch::Tensor x) {
      auto out = torch::zeros({4}, x.options());
      hist<<<1, 64>>>(x.data_ptr<int>(), out.data_ptr<int>(), (int)x.numel());
      return out;
    }
    """
    ext = load_inline(name="hist_ext", cpp_sources="torch::Tensor histogram(torch::Tensor x);",
                      cuda_sources=src, functions=["histogram"])

    def check(torch, torch_cuda):
        x = torch.arange(64, dtype=torch.int32, device="cuda")
        return {"hist": ext.histogram(x).tolist()}
''')


def test_a_shared_memory_race_fails_under_the_race_build(tmp_path, cache):
    (tmp_path / "answer.py").write_text(RACY_ANSWER)
    root = tmp_path / "build"
    root.mkdir()
    extension.prepare_runtime(root, "race")
    first, out = run_pass(tmp_path, root, variant="race")
    assert first == {"not_built": "hist_ext"}, out.stdout + out.stderr
    assert [b.ok for b in extension.build_pending(root, "race", cache=cache)] == [True]
    report, out = run_pass(tmp_path, root, variant="race")
    assert report is None and out.exit_code == 87, out.stdout + out.stderr
    assert "race in kernel 'hist': lost update of shared memory: __shared__ bins" in out.stderr, out.stderr


NEEDS_GPU_ANSWER = textwrap.dedent(r'''
    from torch.utils.cpp_extension import load_inline
    src = r"""
    #include <torch/extension.h>
    #include <ATen/cuda/CUDAContext.h>
    #include <cublas_v2.h>
    torch::Tensor mm(torch::Tensor a, torch::Tensor b) {
      auto handle = at::cuda::getCurrentCUDABlasHandle();
      (void)handle;
      return a;
    }
    """
    ext = load_inline(name="blas_ext", cpp_sources="torch::Tensor mm(torch::Tensor a, torch::Tensor b);",
                      cuda_sources=src, functions=["mm"])
''')


def test_gpu_only_features_are_needs_gpu_naming_them(tmp_path, cache):
    (tmp_path / "answer.py").write_text(NEEDS_GPU_ANSWER)
    root = tmp_path / "build"
    root.mkdir()
    run_pass(tmp_path, root)
    builds = extension.build_pending(root, "plain", cache=cache)
    assert [b.ok for b in builds] == [False]
    assert "cuBLAS handle" in (builds[0].needs_gpu or ""), builds[0].diagnostics
    report, out = run_pass(tmp_path, root)
    assert report is not None and "cuBLAS handle" in (report["build_error"]["needs_gpu"] or ""), \
        out.stdout + out.stderr
    # Triton, imported at the answer's top level, past any `except Exception` of the answer
    (tmp_path / "answer.py").write_text("try:\n    import triton\nexcept Exception:\n    pass\n")
    report, out = run_pass(tmp_path, root)
    assert report is None and "NeedsGpu: needs a GPU: triton" in out.stderr, out.stdout + out.stderr


FRONTEND_ANSWER = textwrap.dedent(r'''
    from torch.utils.cpp_extension import load_inline
    src = r"""
    #include <torch/extension.h>
    __global__ void scale(float* y, int n) { int i = threadIdx.x; if (i < n) y[i] *= 2.0f; }
    torch::Tensor f(torch::Tensor x) {
      auto y = torch::nn::functional::relu(x).contiguous();
      scale<<<1, 64>>>(y.data_ptr<float>(), (int)y.numel());
      return y;
    }
    """
    ext = load_inline(name="frontend_ext", cpp_sources="torch::Tensor f(torch::Tensor x);",
                      cuda_sources=src, functions=["f"])

    def check(torch, torch_cuda):
        x = torch.randn(64, device="cuda")
        return {"equal": bool(torch.equal(ext.f(x), torch.relu(x) * 2))}
''')


@pytest.mark.slow
def test_an_extension_using_torchs_cpp_frontend_is_built_with_the_whole_header(tmp_path, cache):
    """torch::nn is outside the precompiled slim header: the build is redone with the real
    torch/extension.h, and says so."""
    (tmp_path / "answer.py").write_text(FRONTEND_ANSWER)
    root = tmp_path / "build"
    root.mkdir()
    extension.prepare_runtime(root, "plain")
    run_pass(tmp_path, root)
    builds = extension.build_pending(root, "plain", cache=cache)
    assert [b.ok for b in builds] == [True], builds[0].diagnostics
    assert "built again with the whole torch/extension.h" in builds[0].diagnostics
    report, out = run_pass(tmp_path, root)
    assert report == {"equal": True}, out.stdout + out.stderr


def test_only_units_that_bind_to_python_get_pybind11():
    """pybind11's headers cost every unit that includes them ~6 s of CPU: the generated
    main.cpp and sources that name pybind11 get them, kernels and launchers do not."""
    main = extension.module_generation(extension.BuildRequest(
        name="m", cpp_sources=["torch::Tensor f(torch::Tensor x);"], cuda_sources=[], functions={"f": "f"}))
    assert extension.binds_to_python(main)
    kernels = RELU_ANSWER.split('cuda_src = r"""')[1].split('"""')[0]
    assert "torch/extension.h" in kernels and not extension.binds_to_python(
        extension.cuda_generation(kernels, inline=True))
    for own in ("PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def(\"f\", &f); }",
                "py::object g(py::object o) { return o; }", "#include <torch/python.h>",
                "PyObject* h(const at::Tensor& t) { return THPVariable_Wrap(t); }"):
        assert extension.binds_to_python(kernels + own), own


@pytest.mark.parametrize("variant, bind", [("plain", False), ("race", False), ("plain", True)],
                         ids=["plain", "race", "binding"])
def test_every_unit_compile_takes_its_precompiled_header(tmp_path, variant, bind):
    """A precompiled header g++ finds invalid is skipped without a word (-w), and the unit then
    parses torch's headers itself: ten times the time, same result. The race build's units use
    the plain build's core header (built with -g1), so g++ must take it with the race flags."""
    import subprocess

    from validators.cpu import toolchain

    pch = extension.prelude_pch(variant, bind)
    unit = tmp_path / "unit.cpp"
    unit.write_text("__global__ void k(float* x) { x[threadIdx.x] = 1.0f; }\n")
    cmd = [toolchain.gxx(), *extension._flags(variant), *extension._include_flags(),
           *([extension.BIND_DEFINE] if bind else []), "-include", str(pch), "-H", "-fsyntax-only",
           "-x", "c++", str(unit)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    used = [ln for ln in done.stderr.splitlines() if ln.endswith(".gch")]
    assert used and used[0].startswith("! "), done.stderr[:2000]  # "!": used; "x": refused
