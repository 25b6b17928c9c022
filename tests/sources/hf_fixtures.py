"""Small local stand-ins for the Hugging Face datasets the `hf` source knows, written at test
time with pyarrow in each dataset's own schema (column names and types as published). The code
in them is written here or taken from the project's built-in tasks; nothing is downloaded."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

BUILTIN_TASKS = Path(__file__).resolve().parents[2] / "sources" / "builtin" / "tasks"

RELU_EXTENSION = r"""#include <torch/extension.h>
#include <cuda.h>
#include <cuda_runtime.h>

__global__ void relu_kernel(const float* __restrict__ in, float* __restrict__ out, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (; i < n; i += stride) {
        float v = in[i];
        out[i] = v > 0.0f ? v : 0.0f;
    }
}

torch::Tensor forward(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "x must be float32");
    auto x_c = x.contiguous();
    auto out = torch::empty_like(x_c);
    const int64_t n = x_c.numel();
    const int threads = 256;
    const int blocks = (int)std::min<int64_t>((n + threads - 1) / threads, 65535);
    relu_kernel<<<blocks, threads>>>(x_c.data_ptr<float>(), out.data_ptr<float>(), n);
    return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("forward", &forward, "ReLU forward (CUDA)");
}
"""

RELU_MODULE = '''import torch
import torch.nn as nn


class Model(nn.Module):
    """Applies ReLU element-wise."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


batch_size = 16
dim = 16384


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
'''

SCALE_ADD_EXTENSION = r"""#include <torch/extension.h>

__global__ void scale_add_kernel(const float* x, const float* bias, float* out,
                                 float scale, int64_t rows, int64_t cols) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < rows * cols) {
        out[i] = x[i] * scale + bias[i % cols];
    }
}

torch::Tensor forward(torch::Tensor x, torch::Tensor bias, double scale) {
    auto out = torch::empty_like(x);
    const int64_t rows = x.size(0), cols = x.size(1);
    const int threads = 256;
    const int64_t blocks = (rows * cols + threads - 1) / threads;
    scale_add_kernel<<<blocks, threads>>>(x.data_ptr<float>(), bias.data_ptr<float>(),
                                          out.data_ptr<float>(), (float)scale, rows, cols);
    return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward); }
"""

SCALE_ADD_MODULE = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, features: int, scale: float):
        super().__init__()
        self.linear = nn.Linear(features, features)
        self.scale = scale

    def forward(self, x):
        return self.linear(x) * self.scale


def get_inputs():
    return [torch.randn(128, 512)]


def get_init_inputs():
    return [512, 2.0]
'''

RELU_FUNCTIONAL = '''import torch
import torch.nn as nn


def module_fn(x: torch.Tensor) -> torch.Tensor:
    return torch.relu(x)


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, fn=module_fn):
        return fn(x)


batch_size = 16
dim = 16384


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
'''

SCALE_ADD_FUNCTIONAL = '''import torch
import torch.nn as nn


def module_fn(x, weight, bias, scale):
    return torch.nn.functional.linear(x, weight, bias) * scale


class Model(nn.Module):
    def __init__(self, features: int, scale: float):
        super().__init__()
        linear = nn.Linear(features, features)
        self.weight = nn.Parameter(linear.weight)
        self.bias = nn.Parameter(linear.bias)
        self.scale = scale

    def forward(self, x, fn=module_fn):
        return fn(x, self.weight, self.bias, self.scale)
'''

SUM_AGGREGATOR = '''import torch
import torch.nn as nn


class SumAggregator(nn.Module):

    def __init__(self):
        super(SumAggregator, self).__init__()

    def forward(self, neighbor):
        return torch.sum(neighbor, dim=1)


def get_inputs():
    return [torch.rand([4, 4, 4, 4])]


def get_init_inputs():
    return [[], {}]
'''

PINBALL_LOSS = '''import torch
from torch import nn


class PinballLoss(nn.Module):
    """Quantile (pinball) loss."""

    def __init__(self, quantile=0.1, reduction='mean'):
        super().__init__()
        self.quantile = quantile
        self.reduction = reduction

    def forward(self, output, target):
        error = target - output
        loss = torch.max(self.quantile * error, (self.quantile - 1) * error)
        return loss.mean() if self.reduction == 'mean' else loss.sum()


def get_inputs():
    return [torch.rand([4, 4, 4, 4]), torch.rand([4, 4, 4, 4])]


def get_init_inputs():
    return [[], {}]
'''

NO_INIT_INPUTS = '''import torch
from torch import nn


class Halve(nn.Module):
    def forward(self, x):
        return x * 0.5


def get_inputs():
    return [torch.rand([8, 8])]
'''

OPS_CONV_RELU = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

    def forward(self, x):
        return torch.relu(self.conv(x))


def get_inputs():
    return [torch.randn(8, 3, 32, 32)]


def get_init_inputs():
    return [3, 16, 3]
'''

OPS_SIGMOID = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.sigmoid(x)


def get_inputs():
    return [torch.randn(4096)]


def get_init_inputs():
    return []
'''

BIG = 600 * 1024
"""Larger than the source's 512 KiB cap."""


def _sakana_row(level: int, task: int, op: str, kernel: str | None, cuda: str | None,
                module: str | None, correct: object, max_diff: float,
                error: str | None = None, functional: str | None = None,
                runtime: float | None = 0.0123) -> dict:
    return {
        "Op_Name": op, "Level_ID": level, "Task_ID": task, "Kernel_Name": kernel,
        "CUDA_Runtime": runtime, "PyTorch_Native_Runtime": 0.0201, "PyTorch_Compile_Runtime": 0.03,
        "CUDA_Speedup_Native": 1.63, "CUDA_Speedup_Compile": 2.4, "CUDA_Code": cuda,
        "PyTorch_Code_Module": module, "PyTorch_Code_Functional": functional, "Correct": correct,
        "Max_Diff": max_diff, "Error": error, "NCU_Profile": None, "Torch_Profile": None,
        "Clang_Tidy": None, "__index_level_0__": task,
    }


SAKANA_SCHEMA = pa.schema([
    ("Op_Name", pa.string()), ("Level_ID", pa.int64()), ("Task_ID", pa.int64()),
    ("Kernel_Name", pa.string()), ("CUDA_Runtime", pa.float64()),
    ("PyTorch_Native_Runtime", pa.float64()), ("PyTorch_Compile_Runtime", pa.float64()),
    ("CUDA_Speedup_Native", pa.float64()), ("CUDA_Speedup_Compile", pa.float64()),
    ("CUDA_Code", pa.string()), ("PyTorch_Code_Module", pa.string()),
    ("PyTorch_Code_Functional", pa.string()), ("Correct", pa.bool_()), ("Max_Diff", pa.float64()),
    ("Error", pa.string()), ("NCU_Profile", pa.string()), ("Torch_Profile", pa.string()),
    ("Clang_Tidy", pa.string()), ("__index_level_0__", pa.int64()),
])


def sakana_level1_rows() -> list[dict]:
    return [
        _sakana_row(1, 19, "19_ReLU", "19_ReLU_grid_stride_base", RELU_EXTENSION, RELU_MODULE,
                    True, 0.0, functional=RELU_FUNCTIONAL),
        _sakana_row(1, 19, "19_ReLU", "19_ReLU_unrolled_edit_1", RELU_EXTENSION, RELU_MODULE,
                    False, 4.25, "Output mismatch: max difference 4.25\nat index 17",
                    functional=RELU_FUNCTIONAL),
        _sakana_row(1, 19, "19_ReLU", "19_ReLU_empty_base", None, RELU_MODULE, True, 0.0,
                    functional=RELU_FUNCTIONAL),
        _sakana_row(1, 19, "19_ReLU", "19_ReLU_huge_base", "// pad\n" * (BIG // 7), RELU_MODULE,
                    True, 0.0, functional=RELU_FUNCTIONAL),
        # Same task and kernel name as the first row: ids must stay unique.
        _sakana_row(1, 19, "19_ReLU", "19_ReLU_grid_stride_base", RELU_EXTENSION, RELU_MODULE,
                    True, 1e-7, functional=RELU_FUNCTIONAL),
    ]


def sakana_level2_rows() -> list[dict]:
    return [
        _sakana_row(2, 40, "40_Matmul_Scaling_ResidualAdd", "40_scale_add_fused_base",
                    SCALE_ADD_EXTENSION, SCALE_ADD_MODULE, True, 3.1e-6, functional=SCALE_ADD_FUNCTIONAL),
        _sakana_row(2, 40, "40_Matmul_Scaling_ResidualAdd", "", SCALE_ADD_EXTENSION,
                    SCALE_ADD_MODULE, True, 2.0e-6, functional=SCALE_ADD_FUNCTIONAL),
    ]


def write_table(path: Path, rows: list[dict], schema: pa.Schema | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)
    return path


def write_sakana_file(folder: Path) -> Path:
    return write_table(folder / "level_1.parquet", sakana_level1_rows(), SAKANA_SCHEMA)


SAKANA_CARD = """---
tags:
- code
license: cc-by-4.0
configs:
- config_name: default
  data_files:
  - split: level_1
    path: level_1.parquet
  - split: level_2
    path: level_2.parquet
---
# Local stand-in for the AI CUDA Engineer Archive layout (written by the tests)
"""


def write_sakana_snapshot(folder: Path) -> Path:
    """A folder laid out like the Hub repository (README with configs, one file per level)."""
    write_table(folder / "level_1.parquet", sakana_level1_rows(), SAKANA_SCHEMA)
    write_table(folder / "level_2.parquet", sakana_level2_rows(), SAKANA_SCHEMA)
    (folder / "README.md").write_text(SAKANA_CARD, encoding="utf-8")
    return folder


KERNELBOOK_SCHEMA = pa.schema([
    ("entry_point", pa.string()), ("original_triton_code", pa.string()),
    ("python_code", pa.string()), ("triton_code", pa.string()), ("repo_name", pa.string()),
    ("module_name", pa.string()), ("synthetic", pa.bool_()), ("uuid", pa.int64()),
    ("licenses", pa.list_(pa.string())), ("stars", pa.int64()), ("sha", pa.string()),
    ("repo_link", pa.string()),
])


def _book(uuid: int, entry: str, code: str | None, licenses: list[str], synthetic: bool = False,
          repo: str = "deepgraph/gnn-layers", stars: int | None = 214) -> dict:
    return {
        "entry_point": entry, "original_triton_code": "# triton source elided in the stand-in",
        "python_code": code, "triton_code": "# inductor output elided in the stand-in",
        "repo_name": repo, "module_name": entry, "synthetic": synthetic, "uuid": uuid,
        "licenses": licenses, "stars": stars,
        "sha": "" if synthetic else "3f2b9c1d0a8e7f6b5c4d3e2f1a0b9c8d7e6f5a4b",
        "repo_link": "" if synthetic else f"https://github.com/{repo}/tree/3f2b9c1d",
    }


def kernelbook_rows() -> list[dict]:
    return [
        _book(1174, "SumAggregator", SUM_AGGREGATOR, ["MIT"]),
        _book(603, "PinballLoss", PINBALL_LOSS, ["Apache-2.0", "mit"], repo="qr/quantile-nets"),
        _book(77, "SumAggregator", SUM_AGGREGATOR, [], repo="someone/unlicensed"),
        _book(78, "SumAggregator", SUM_AGGREGATOR, [], synthetic=True, repo="", stars=None),
        _book(79, "Halve", NO_INIT_INPUTS, ["BSD-3-Clause"]),
        _book(80, "Halve", None, ["MIT"]),
    ]


def write_kernelbook(folder: Path, with_json_copy: bool = False) -> Path:
    """`dataset_permissive.parquet` (and, like the Hub repository, the same rows as JSON)."""
    rows = kernelbook_rows()
    write_table(folder / "dataset_permissive.parquet", rows, KERNELBOOK_SCHEMA)
    if with_json_copy:
        with open(folder / "dataset_permissive.json", "w", encoding="utf-8") as f:
            for row in rows:
                f.write(json.dumps(row) + "\n")
    return folder


def ops6k_rows() -> list[dict]:
    return [
        {"data_source": "torch#2", "ops": ["nn.Conv2d", "torch.relu"], "code": OPS_CONV_RELU},
        {"data_source": "torch#1", "ops": ["torch.sigmoid"], "code": OPS_SIGMOID},
        {"data_source": "torch#1", "ops": ["torch.tanh"], "code": "class Model(:\n  pass\n"},
    ]


def write_ops6k(folder: Path) -> Path:
    return write_table(folder / "data.parquet", ops6k_rows())


def builtin_cuda(task: str) -> str:
    return (BUILTIN_TASKS / task / "main.cu").read_text(encoding="utf-8")


def generic_rows() -> list[dict]:
    """A generic CUDA corpus in JSON Lines: real programs from the built-in tasks."""
    return [
        {"name": "relu", "source": builtin_cuda("relu"), "lang": "cuda", "lic": "MIT",
         "part": "train"},
        {"name": "saxpy", "source": builtin_cuda("saxpy"), "lang": "cuda", "lic": "apache-2.0",
         "part": "test"},
        {"name": "notes", "source": "print('not cuda')", "lang": "python", "lic": "MIT",
         "part": "train"},
        {"name": "numeric", "source": 12345, "lang": "cuda", "lic": "MIT", "part": "train"},
        {"name": "gelu", "source": builtin_cuda("gelu"), "lang": "cuda", "lic": None,
         "part": "validation"},
        {"name": "", "source": builtin_cuda("softmax"), "lang": "cuda", "lic": ["MIT", "ISC"],
         "part": "train"},
    ]


def write_generic_jsonl(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for row in generic_rows():
            f.write(json.dumps(row) + "\n")
    return path


def write_binary_code(path: Path) -> Path:
    """A `binary` code column: one valid UTF-8 program, one Latin-1 one."""
    latin1 = "// Gr\u00fc\u00dfe\n__global__ void k(float* x) { x[0] = 1.0f; }\n".encode("latin-1")
    rows = [
        {"code": builtin_cuda("vector_add_int").encode("utf-8"), "id": "utf8"},
        {"code": latin1, "id": "latin1"},
    ]
    schema = pa.schema([("code", pa.binary()), ("id", pa.string())])
    return write_table(path, rows, schema)
