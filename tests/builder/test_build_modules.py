"""`python -m builder run --sources kernelbench` end to end: real KernelBench modules become
tasks whose reference is the module itself (run on the CPU in the sandbox, inputs drawn by its
own `get_inputs()` per case seed), the scripted LLM writes the CUDA program from the prompt it
is given, and the validator keeps the right program and rejects the wrong one."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from llm_scripts import SHARED, user_text
from openai_standin import Answer, StandIn, ok

from builder.cli import main

KB = SHARED / "kernelbench_level1"
pytestmark = [pytest.mark.slow, pytest.mark.skipif(not KB.is_dir(), reason="../shared/data is not here")]

# What the scripted model computes per task: ReLU right, and LeakyReLU answered as a ReLU (wrong).
OPS = {"19_ReLU": "v > 0.0f ? v : 0.0f", "20_LeakyReLU": "v > 0.0f ? v : 0.0f"}


def elementwise_program(prompt: str, expr: str) -> str:
    """A program for a one-input elementwise task, written from the prompt's tensor list and
    sizes, as a model would."""
    inp = re.search(r"- input `(\w+)`: float32 \[([^\]]*)\]", prompt)
    out = re.search(r"- output `(\w+)`: float32 \[([^\]]*)\]", prompt)
    sizes = dict(re.findall(r"^- (\w+) = (\d+)$", prompt, flags=re.M))
    assert inp and out and sizes, prompt
    dims = [d.strip() for d in inp.group(2).split(",")]
    macros = "".join(f"#ifndef {k}\n#define {k} {v}\n#endif\n" for k, v in sizes.items())
    count = " * ".join(f"(size_t)({d})" for d in dims)
    return f"""#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
{macros}
__global__ void elementwise(const float* x, float* y, size_t n) {{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {{ float v = x[i]; y[i] = {expr}; }}
}}

int main() {{
    const size_t n = {count};
    float* h = (float*)malloc(n * sizeof(float));
    FILE* f = fopen("data/{inp.group(1)}.bin", "rb");
    if (!f || fread(h, sizeof(float), n, f) != n) {{ fprintf(stderr, "read\\n"); return 1; }}
    fclose(f);
    float *dx, *dy;
    cudaMalloc(&dx, n * sizeof(float));
    cudaMalloc(&dy, n * sizeof(float));
    cudaMemcpy(dx, h, n * sizeof(float), cudaMemcpyHostToDevice);
    elementwise<<<(unsigned)((n + 255) / 256), 256>>>(dx, dy, n);
    if (cudaGetLastError() != cudaSuccess) return 1;
    cudaMemcpy(h, dy, n * sizeof(float), cudaMemcpyDeviceToHost);
    f = fopen("data/{out.group(1)}.bin", "wb");
    fwrite(h, sizeof(float), n, f);
    fclose(f);
    return 0;
}}
"""


def respond(body: dict) -> Answer:
    prompt = user_text(body)
    rid = re.search(r"The record: (\S+?)\.(?:\s|$)", prompt).group(1)
    stem = rid.rsplit("/", 1)[-1]
    return ok({
        "task_name": stem.split("_", 1)[1].lower(),
        "description": f"Apply {stem.split('_', 1)[1]} elementwise to x; see the tensors and sizes. "
                       "Read data/x.bin, write data/out.bin (raw little-endian float32).",
        "program": elementwise_program(prompt, OPS[stem]),
    })


def test_kernelbench_modules_become_validated_records(tmp_path: Path, capsys) -> None:
    folder = tmp_path / "kb"
    folder.mkdir()
    for stem in OPS:
        shutil.copy(KB / f"{stem}.py", folder / f"{stem}.py")
    shutil.copy(KB / "LICENSE", folder / "LICENSE")
    (folder / "99_Broken.py").write_text("import torch\nclass Model(torch.nn.Module):\n    def forward(self, x:\n")
    out = tmp_path / "dataset"
    with StandIn(respond=respond) as llm:
        code = main([
            "run", "--sources", "kernelbench", "--kernelbench-dir", str(folder),
            "--kernelbench-split", "train", "--llm-model", "scripted", "--llm-base-url", llm.url,
            "--llm-cache-dir", str(tmp_path / "llm"), "--repair-rounds", "0",
            "--backend", "cpu", "--quick", "--executor", "local", "--no-progress", "--out", str(out),
        ])
        prompts = [user_text(r.body) for r in llm.chat_requests()]
    capsys.readouterr()
    assert code == 0
    rejections = {r["id"]: r for r in map(json.loads, (out / "rejections.jsonl").read_text().splitlines())}
    assert rejections["kernelbench/99_Broken"]["reason"] == "not_a_module"
    # LeakyReLU answered with a ReLU: the module's own outputs expose it.
    assert rejections["kernelbench/20_LeakyReLU"]["reason"] == "validation_failed"
    rows = pq.read_table(out / "data" / "train-00000-of-00001.parquet").to_pylist()
    assert [r["id"] for r in rows] == ["kernelbench/19_ReLU"]
    task = json.loads(rows[0]["task_json"])
    assert task["reference"]["language"] == "torch" and "class Model" in task["reference"]["code"]
    assert task["original_sizes"] == {"batch_size": 4096, "dim": 393216} and "scaled" in task["scaling"].lower()
    kinds = {c["name"]: {d["kind"] for d in c["distributions"].values()} for c in task["cases"]}
    assert kinds["default"] == {"reference"} and kinds["small"] == {"normal"}  # signed values
    assert len({c["seed"] for c in task["cases"]}) == 5
    assert any(v % 32 for c in task["cases"] for v in c.get("sizes", {}).values())
    assert json.loads(rows[0]["provenance_json"])["license"] == "MIT"
    # The module reached the LLM as fenced data, with the task's fixed tensors.
    assert all("BEGIN UNTRUSTED" in p and "- input `x`: float32" in p for p in prompts)
