"""Benchmark loaders: each format read from files written here, bad paths as one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_decontam import DATA, write_cudabench

from builder.decontam import DecontamError, build_index, load_benchmark

KB_TASK = '''import torch
import torch.nn as nn

class Model(nn.Module):
    """Adds a learned bias then applies {op}."""
    def __init__(self, features: int):
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(features))

    def forward(self, x):
        return torch.{op}(x + self.bias)

def get_inputs():
    return [torch.randn(16, 64)]

def get_init_inputs():
    return [64]
'''

CE_V1 = {
    "task_id": "CUDA/7", "date": "2025-07-30",
    "prompt": "Implement `launch_saxpy` that launches the `saxpy` kernel over n elements.",
    "cc_flags": "-arch=sm_80", "ld_flags": "",
    "declaration": "#include <cuda_runtime.h>\n__global__ void saxpy(float a, const float* x, "
                   "float* y, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; "
                   "if (i < n) y[i] = a * x[i] + y[i]; }\n",
    "test": "int main() { return 0; }\n", "example_test": "", "cuda_toolkit": "12.0",
}
CE_V2 = {
    "type": "cuda_cpp", "schema_version": 2, "task_id": "CUDA/120", "date": "2025-10-01",
    "prompt": "Write `transpose_tiles` using 32x32 shared-memory tiles padded to avoid conflicts.",
    "metadata": {"difficulty": "medium", "tags": ["shared-memory"], "releases": ["2025-3"]},
    "group": "cuda-kernels",
    "context_files": [{"path": "include/transpose.h",
                       "content": "void transpose_tiles(const float*, float*, int, int);\n"}],
    "test_files": [{"path": "test/test_main.cu", "content": "int main() { return 0; }\n"}],
    "build_command": "nvcc -I include -o test.out solution.cu test/*.cu",
    "test_command": "./test.out",
    "baseline_solution": {"type": "file", "task_id": "CUDA/120", "files": [
        {"path": "solution.cu", "content": "__global__ void tile_kernel(const float* in, "
                                           "float* out, int w, int h) { }\n"}]},
}


def lines(path: Path, rows: list, extra: str = "") -> Path:
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n" + extra)
    return path


def test_kernelbench_folder_nested_levels_and_other_files(tmp_path):
    for level, op in (("level1", "relu"), ("level2", "tanh")):
        (tmp_path / level).mkdir()
        (tmp_path / level / f"1_{op}.py").write_text(KB_TASK.format(op=op))
    (tmp_path / "level1" / "utils.py").write_text("def helper():\n    return 1\n")
    lb = load_benchmark(tmp_path)
    assert lb.format == "kernelbench"
    assert [it.item_id for it in lb.items] == ["level1/1_relu", "level2/1_tanh"]
    assert lb.items[0].language == "python" and "torch.relu" in lb.items[0].code[0]
    assert lb.notes == ["1 .py files are not KernelBench tasks, skipped (first: utils.py)"]


def test_the_real_kernelbench_level1_folder():
    folder = DATA / "kernelbench_level1"
    if not folder.is_dir():
        pytest.skip(f"{folder} not present")
    lb = load_benchmark(folder)
    assert len(lb.items) == 100
    assert {it.benchmark for it in lb.items} == {"kernelbench"}


def test_cudabench_rows_of_one_task_make_one_item(tmp_path):
    lb = load_benchmark(write_cudabench(tmp_path / "set.jsonl"))
    assert lb.format == "cudabench" and lb.notes == []
    assert [it.item_id for it in lb.items] == ["row_softmax", "byte_histogram", "block_scan"]
    first = lb.items[0]
    assert len(first.code) == 1 and "__global__ void row_softmax" in first.code[0]
    assert len(first.prompts) == 3 and first.prompts[0].startswith("Task: row_softmax")


def test_a_malformed_jsonl_line_is_counted_and_skipped(tmp_path):
    good = write_cudabench(tmp_path / "set.jsonl").read_text().splitlines()
    broken = [good[0], '{"task_name": "cut off', *good[1:4], "not json at all", *good[4:]]
    (tmp_path / "broken.jsonl").write_text("\n".join(broken) + "\n")
    lb = load_benchmark(tmp_path / "broken.jsonl")
    assert len(lb.items) == 3
    assert lb.notes == ["2 malformed JSONL lines skipped (first: line 2)"]


def test_computeeval_both_problem_schemas(tmp_path):
    lb = load_benchmark(lines(tmp_path / "problems.jsonl", [CE_V1, CE_V2]))
    assert lb.format == "computeeval"
    v1, v2 = lb.items
    assert (v1.item_id, v2.item_id) == ("CUDA/7", "CUDA/120")
    assert "saxpy" in v1.code[0] and v1.prompts == [CE_V1["prompt"]]
    assert any("tile_kernel" in c for c in v2.code)
    assert any("transpose_tiles" in c for c in v2.code)
    assert not any("test_main" in c or "int main" in c for c in v2.code), "hidden tests are not code"


def test_tritonbench_g_t_and_alpaca_files(tmp_path):
    g = [{"file": "add_kernel.py", "repo": "someone/repo",
          "simp_instru": "Write a Triton kernel that adds two vectors.",
          "comp_instru": "Write a Triton kernel `add_kernel` with BLOCK_SIZE 1024 that adds x and y.",
          "output": "import triton\n@triton.jit\ndef add_kernel(x_ptr, y_ptr, out_ptr, n):\n    pass\n"}]
    (tmp_path / "TritonBench_G_v1.json").write_text(json.dumps(g, indent=4))
    t = [{"name": "torch.tanh", "func_inputs": "tanh(input, *, out=None) -> Tensor",
          "description": "Returns a new tensor with the hyperbolic tangent of the elements.",
          "math": "out_i = tanh(input_i)", "torch_code": "torch.tanh(a)", "file": "tanh.py"}]
    (tmp_path / "TritonBench_T_v1.jsonl").write_text(json.dumps(t, indent=4))
    alpaca = [{"instruction": "You are an expert in Triton. Implement softmax.", "input": "",
               "output": "@triton.jit\ndef softmax_kernel(x):\n    pass\n"}] * 2
    (tmp_path / "alpaca.json").write_text(json.dumps(alpaca))
    lg = load_benchmark(tmp_path / "TritonBench_G_v1.json")
    assert lg.format == "tritonbench" and lg.items[0].item_id == "add_kernel.py"
    assert "add_kernel" in lg.items[0].code[0] and len(lg.items[0].prompts) == 2
    lt = load_benchmark(tmp_path / "TritonBench_T_v1.jsonl")
    assert lt.items[0].code == ["torch.tanh(a)"] and lt.items[0].item_id == "tanh.py"
    la = load_benchmark(tmp_path / "alpaca.json")
    assert [it.item_id for it in la.items] == ["row1", "row2"]


@pytest.mark.parametrize("content, why", [
    (None, "no such file or folder"),
    ("", "empty file"),
    ('{"question": "2+2", "answer": "4"}\n', "unknown benchmark format (fields answer, question"),
    ("[1, 2, 3]", "unknown benchmark format (fields none"),
    ("12", "JSON int, expected a list of objects"),
    ("this is not json\nnor this\n", "neither JSON nor JSONL objects"),
    (b"\xff\xfe\x00binary", "not UTF-8 text"),
    ('{"task_name": "t", "bench.cu": ""}\n', "cudabench file with no usable row"),
])
def test_bad_files_are_one_line_errors_naming_the_path(tmp_path, content, why):
    path = tmp_path / "bench.jsonl"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    with pytest.raises(DecontamError) as e:
        load_benchmark(path)
    msg = str(e.value)
    assert msg.startswith(f"{path}: ") and why in msg and "\n" not in msg


def test_a_folder_without_tasks_is_an_error_and_stops_preflight(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.py").write_text("x = 1\n")
    good = write_cudabench(tmp_path / "set.jsonl")
    with pytest.raises(DecontamError, match="not a KernelBench folder"):
        build_index([str(good), str(tmp_path / "empty")])
    index, loaded = build_index([str(good), str(good)])
    assert len(index) == 3, "a path given twice counts its items once"
    assert [lb.format for lb in loaded] == ["cudabench", "cudabench"]
