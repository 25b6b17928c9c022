"""Torch references (KernelBench-style module files) run in the real sandbox: sizes substituted,
parameters loaded from inputs, inputs drawn from the case seed, outputs typed and checked,
hostile modules contained; and an engine check of CUDA programs against such a task."""

from __future__ import annotations

import socket

import numpy as np
import pytest
import torch

from schemas import InputCase, Program, Reference, Status, Task, TensorSpec, ValueDistribution
from validators.cases import materialize
from validators.reference import ReferenceError, ReferenceRunner
from validators.sandbox import sandbox_mode
from validators.torch_module import module_constants, substitute_constants

DRAWN = ValueDistribution(kind="reference")

RELU = """import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)

batch = 4096   # GPU-sized in the file; cases override it
dim = 2048 * 2

def get_inputs():
    return [torch.randn(batch, dim)]

def get_init_inputs():
    return []
"""

MATMUL = """import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, a, b):
        return torch.matmul(a, b), (a > 0)

M = 8
K = 16
N = 4

def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N)]

def get_init_inputs():
    return []
"""

CONV = """import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, cin, cout, k):
        super().__init__()
        self.conv = nn.Conv1d(cin, cout, k)

    def forward(self, x, scale):
        return self.conv(x) * scale

batch = 2
length = 12

def get_inputs():
    return [torch.randn(batch, 3, length), 0.5]

def get_init_inputs():
    return [3, 4, 3]
"""


def _relu_task(distribution: ValueDistribution | None = DRAWN, code: str = RELU,
               out_dtype: str = "float32") -> Task:
    dists = {"x": distribution} if distribution is not None else {}
    return Task(
        name="relu", description="out = relu(x)",
        inputs=[TensorSpec(name="x", dtype="float32", shape=["batch", "dim"])],
        outputs=[TensorSpec(name="out", dtype=out_dtype, shape=["batch", "dim"])],
        sizes={"batch": 16, "dim": 33},
        cases=[InputCase(name="c0", seed=7, distributions=dists),
               InputCase(name="c1", seed=8, sizes={"batch": 5, "dim": 31}, distributions=dists),
               InputCase(name="c2", seed=7, sizes={"batch": 3}, distributions=dists)],
        reference=Reference(language="torch", code=code, entrypoint="Model"),
    )


@pytest.fixture(scope="module")
def runner(tmp_path_factory) -> ReferenceRunner:
    return ReferenceRunner(tmp_path_factory.mktemp("torchref") / "refs")


def test_constants_read_and_substituted_without_running():
    assert module_constants(RELU) == {"batch": 4096, "dim": 4096}
    out = substitute_constants(RELU, {"batch": 3, "dim": 5, "unknown": 9})
    assert "batch = 3   # GPU-sized in the file; cases override it" in out
    assert "dim = 5\n" in out and module_constants(out) == {"batch": 3, "dim": 5}


def test_elementwise_given_inputs(runner):
    task = _relu_task(distribution=ValueDistribution(kind="normal"))
    case = task.cases[1]
    inputs = materialize(task, case)
    outs, cached = runner.outputs(task, case, inputs)
    assert not cached and outs["out"].shape == (5, 31) and outs["out"].dtype == np.float32
    np.testing.assert_array_equal(outs["out"], np.maximum(inputs["x"], 0))
    again, cached = runner.outputs(task, case, inputs)
    assert cached and np.array_equal(again["out"], outs["out"])


def test_drawn_inputs_follow_the_seed(runner):
    task = _relu_task()
    c0, c1, c2 = task.cases
    inputs0, outs0, cached = runner.case_data(task, c0)
    assert not cached and inputs0["x"].shape == (16, 33) and inputs0["x"].dtype == np.float32
    np.testing.assert_array_equal(outs0["out"], np.maximum(inputs0["x"], 0))
    # The module's own draw: manual_seed(seed), then get_inputs() (no parameters to init).
    torch.manual_seed(7)
    np.testing.assert_array_equal(inputs0["x"], torch.randn(16, 33).numpy())
    # Cached together: outputs() with the full dict finds the same entry.
    _, cached = runner.outputs(task, c0, inputs0)
    assert cached
    inputs1, _, _ = runner.case_data(task, c1)
    assert inputs1["x"].shape == (5, 31)
    inputs2, _, _ = runner.case_data(task, c2)  # the seed of c0 at another size
    torch.manual_seed(7)
    np.testing.assert_array_equal(inputs2["x"], torch.randn(3, 33).numpy())


def test_same_seed_same_bytes_other_seed_differs(runner, tmp_path):
    task = _relu_task()
    fresh = ReferenceRunner(tmp_path / "other")
    a, _, cached_a = runner.case_data(task, task.cases[0])
    b, _, cached_b = fresh.case_data(task, task.cases[0])
    assert not cached_b and a["x"].tobytes() == b["x"].tobytes()
    other = task.model_copy(update={"cases": [task.cases[0].model_copy(update={"seed": 8})]})
    c, _, _ = fresh.case_data(other, other.cases[0])
    assert c["x"].tobytes() != a["x"].tobytes()


def test_prefetch_runs_every_case_in_one_process_with_the_single_runs_bytes(tmp_path, monkeypatch):
    """A check's torch cases share one sandboxed process (torch imported once); what each case
    drew and computed is byte for byte what its own run gives."""
    from validators import reference as reference_mod

    task = _relu_task()
    task = task.model_copy(update={"cases": [*task.cases, InputCase(
        name="given", seed=9, sizes={"batch": 4}, distributions={"x": ValueDistribution(kind="normal")})]})
    alone = ReferenceRunner(tmp_path / "alone")
    expected = [alone.case_data(task, c) for c in task.cases]
    runs = []
    real = reference_mod.run_sandboxed
    monkeypatch.setattr(reference_mod, "run_sandboxed", lambda *a, **k: runs.append(a[0]) or real(*a, **k))
    batched = ReferenceRunner(tmp_path / "batched")
    assert batched.prefetch(task, [(c, materialize(task, c)) for c in task.cases]) == 4
    assert len(runs) == 1
    for case, (inputs, outs, _) in zip(task.cases, expected, strict=True):
        got_in, got_out, cached = batched.case_data(task, case)
        assert cached, case.name
        assert got_in["x"].tobytes() == inputs["x"].tobytes()
        assert got_out["out"].tobytes() == outs["out"].tobytes()
    assert len(runs) == 1


def test_matmul_tuple_output_and_bool_as_uint8(runner):
    task = Task(
        name="mm", description="matmul and a mask",
        inputs=[TensorSpec(name="a", dtype="float32", shape=["M", "K"]),
                TensorSpec(name="b", dtype="float32", shape=["K", "N"])],
        outputs=[TensorSpec(name="c", dtype="float32", shape=["M", "N"]),
                 TensorSpec(name="pos", dtype="uint8", shape=["M", "K"])],
        sizes={"M": 8, "K": 16, "N": 4},
        cases=[InputCase(name="c0", seed=3, sizes={"M": 5, "K": 7, "N": 3},
                         distributions={"a": DRAWN})],
        reference=Reference(language="torch", code=MATMUL),
    )
    inputs, outs, _ = runner.case_data(task, task.cases[0])
    assert inputs["a"].shape == (5, 7) and inputs["b"].shape == (7, 3)
    np.testing.assert_allclose(outs["c"], inputs["a"] @ inputs["b"], rtol=1e-5, atol=1e-6)
    assert outs["pos"].dtype == np.uint8
    np.testing.assert_array_equal(outs["pos"], (inputs["a"] > 0).astype(np.uint8))


def _conv_task(weight: ValueDistribution, out_dtype: str = "float32") -> Task:
    return Task(
        name="conv", description="conv1d times a constant",
        inputs=[TensorSpec(name="x", dtype="float32", shape=["batch", 3, "length"]),
                TensorSpec(name="conv_weight", dtype="float32", shape=[4, 3, 3]),
                TensorSpec(name="conv_bias", dtype="float32", shape=[4])],
        outputs=[TensorSpec(name="out", dtype=out_dtype, shape=["batch", 4, "lout"])],
        sizes={"batch": 2, "length": 12, "lout": 10},
        cases=[InputCase(name="c0", seed=5, sizes={"length": 9, "lout": 7},
                         distributions={"x": DRAWN, "conv_weight": weight,
                                        "conv_bias": DRAWN})],
        reference=Reference(language="torch", code=CONV),
    )


def test_conv_parameters_loaded_from_inputs(runner):
    task = _conv_task(ValueDistribution(kind="uniform", low=-1, high=1))
    inputs, outs, _ = runner.case_data(task, task.cases[0])
    given = materialize(task, task.cases[0])
    assert set(given) == {"conv_weight"}  # the drawn ones are not materialised
    np.testing.assert_array_equal(inputs["conv_weight"], given["conv_weight"])
    expect = torch.nn.functional.conv1d(torch.from_numpy(inputs["x"]),
                                        torch.from_numpy(inputs["conv_weight"]),
                                        torch.from_numpy(inputs["conv_bias"])) * 0.5
    np.testing.assert_allclose(outs["out"], expect.numpy(), rtol=1e-5, atol=1e-6)
    # Drawn parameters: the model's own initialisation under the seed, written out.
    drawn = _conv_task(DRAWN)
    inputs2, outs2, _ = runner.case_data(drawn, drawn.cases[0])
    torch.manual_seed(5)
    model_weight = torch.nn.Conv1d(3, 4, 3).weight.detach().numpy()
    np.testing.assert_array_equal(inputs2["conv_weight"], model_weight)
    np.testing.assert_array_equal(inputs2["x"], inputs["x"])  # same seed, drawn after the model


@pytest.mark.parametrize("change,reason", [
    ({"out_dtype": "float64"}, "output 'out' is float32, the task says float64"),
    ({"extra_output": True}, "forward returned 1 value.*2 output"),
    ({"code": "import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n"
              "        return 3\nbatch = 2\ndim = 2\ndef get_inputs():\n"
              "    return [torch.rand(batch, dim)]\ndef get_init_inputs():\n    return []\n"},
     "forward output 'out' is a int, not a tensor"),
    ({"code": RELU.replace("def get_init_inputs", "def other")},
     "defines no function get_init_inputs"),
    ({"code": RELU.replace("torch.randn(batch, dim)", "torch.randn(batch, dim + 1)")},
     "drawn by the reference has shape \\[16, 34\\], the task says \\[16, 33\\]"),
    ({"code": RELU.replace("torch.relu(x)", "x.cuda()")}, "Torch not compiled with CUDA"),
])
def test_bad_torch_references_have_clear_reasons(runner, change, reason):
    task = _relu_task(code=change.get("code", RELU), out_dtype=change.get("out_dtype", "float32"))
    if change.get("extra_output"):
        task = task.model_copy(update={"outputs": [
            *task.outputs, TensorSpec(name="out2", dtype="float32", shape=["batch"])]})
    with pytest.raises(ReferenceError, match=reason):
        runner.case_data(task, task.cases[0])


def test_reference_distribution_needs_a_torch_reference():
    task = _relu_task()
    numpy_task = task.model_copy(update={"reference": Reference(code="def reference(i, s): 1")})
    with pytest.raises(ValueError, match="only a torch reference can draw"):
        materialize(numpy_task, numpy_task.cases[0])


@pytest.mark.skipif(sandbox_mode() == "rlimits", reason="needs namespaces")
def test_hostile_torch_reference_reads_no_files_and_opens_no_sockets(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir(mode=0o755)
    (home / "secret").write_text("s3cret")
    monkeypatch.setenv("HOME", str(home))
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    port = srv.getsockname()[1]
    hostile = RELU.replace("        return torch.relu(x)", f"""        import socket
        tried = []
        for attempt in (lambda: open('/etc/passwd').read(),
                        lambda: open({str(home / 'secret')!r}).read(),
                        lambda: socket.create_connection(('127.0.0.1', {port}), timeout=1)):
            try:
                attempt()
                tried.append('yes')
            except Exception:
                tried.append('no')
        open('/etc/passwd').read()
        return torch.relu(x) + len(tried)""")
    task = _relu_task(code=hostile)
    runner = ReferenceRunner(tmp_path / "refs")
    try:
        with pytest.raises(ReferenceError, match="PermissionError: the reference may not open "
                                                 "/etc/passwd"):
            runner.case_data(task, task.cases[0])
        # Not trusted later either: the failure is what the cache holds.
        with pytest.raises(ReferenceError, match="may not open"):
            runner.case_data(task, task.cases[0])
        probe = RELU.replace("        return torch.relu(x)", f"""        import socket
        tried = []
        for attempt in (lambda: open('/etc/passwd').read(),
                        lambda: open({str(home / 'secret')!r}).read(),
                        lambda: socket.create_connection(('127.0.0.1', {port}), timeout=1)):
            try:
                attempt()
                tried.append('yes')
            except Exception:
                tried.append('no')
        raise RuntimeError('attempts:' + ','.join(tried))""")
        with pytest.raises(ReferenceError, match="attempts:no,no,no"):
            runner.case_data(_relu_task(code=probe), task.cases[0])
    finally:
        srv.close()


# --- engine: CUDA programs against a torch-reference task (cpu backend) ---------------------

RELU_CU = r"""
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#ifndef batch
#define batch 16
#endif
#ifndef dim
#define dim 33
#endif
__global__ void relu(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > 0.0f ? x[i] : SLOPE * x[i];
}
int main() {
    const int n = batch * dim;
    size_t bytes = (size_t)n * sizeof(float);
    float* h = (float*)malloc(bytes);
    FILE* f = fopen("data/x.bin", "rb");
    if (!f || fread(h, 1, bytes, f) != bytes) { fprintf(stderr, "read x\n"); return 1; }
    fclose(f);
    float *dx, *dy;
    cudaMalloc(&dx, bytes);
    cudaMalloc(&dy, bytes);
    cudaMemcpy(dx, h, bytes, cudaMemcpyHostToDevice);
    relu<<<(n + 127) / 128, 128>>>(dx, dy, n);
    cudaMemcpy(h, dy, bytes, cudaMemcpyDeviceToHost);
    f = fopen("data/out.bin", "wb");
    fwrite(h, 1, bytes, f);
    fclose(f);
    return 0;
}
"""


def _cpu_backend_or_skip():
    from validators.backends import get_backend

    try:
        return get_backend("cpu")
    except Exception as exc:  # no g++ / shim here
        pytest.skip(f"cpu backend not available: {exc}")


def test_engine_checks_cuda_program_against_torch_reference(tmp_path):
    from validators.build_cache import BuildCache
    from validators.engine import Engine

    backend = _cpu_backend_or_skip()
    cache = BuildCache(tmp_path / "builds")
    if hasattr(backend, "cache"):
        backend.cache = cache
    engine = Engine(backend, cache=cache, references=ReferenceRunner(tmp_path / "refs"))
    task = _relu_task()
    good = engine.check(task, Program(source=RELU_CU.replace("SLOPE", "0.0f")), thorough=False)
    assert good.status == Status.PASSED, good.reason
    assert [c.status for c in good.cases] == [Status.PASSED] * 3
    assert good.cases[1].outputs[0].elements == 5 * 31  # built with -Dbatch=5 -Ddim=31
    wrong = engine.check(task, Program(source=RELU_CU.replace("SLOPE", "0.5f")), thorough=False)
    assert wrong.status == Status.FAILED and "elements differ" in wrong.reason, wrong.reason


@pytest.mark.slow
def test_engine_reports_a_reference_that_cannot_draw_inputs(tmp_path):
    from validators.build_cache import BuildCache
    from validators.engine import Engine

    backend = _cpu_backend_or_skip()
    engine = Engine(backend, cache=BuildCache(tmp_path / "builds"),
                    references=ReferenceRunner(tmp_path / "refs"))
    broken = _relu_task(code=RELU.replace("return [torch.randn(batch, dim)]", "return 1 / 0"))
    res = engine.check(broken, Program(source=RELU_CU.replace("SLOPE", "0.0f")), thorough=False)
    assert res.status == Status.ERROR and res.error_origin == "task"
    assert "no reference inputs" in res.cases[0].reason and "ZeroDivisionError" in res.reason
