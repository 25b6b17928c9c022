"""Decontamination: copies of benchmark code or prompts are caught and named; unrelated real
kernels and shared boilerplate are not."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from builder_helpers import SCALE_PROGRAM

from builder.decontam import DecontamConfig, DecontamIndex, build_index, load_benchmark
from builder.decontam.model import BenchmarkItem
from builder.decontam.parts import prompt_parts
from builder.item import Item
from builder.stages.decontaminate import decontaminate_code, decontaminate_prompts
from builder.stages.specify import Specify
from schemas import Provenance, RawRecord
from sources.builtin import HELD_OUT
from sources.builtin import records as builtin_records

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
REPO = Path(__file__).resolve().parents[2]
BUILTIN_PROGRAMS = sorted((REPO / "sources" / "builtin" / "tasks").glob("*/main.cu"))

# The harness every task of the synthetic CUDABench file shares, as the real set's tasks do.
HARNESS = r"""#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <vector>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    std::printf("cuda failure %s line %d\n", cudaGetErrorString(e_), __LINE__); std::exit(2); } } while (0)
static std::vector<float> load_input(const char* name, size_t count) {
    std::vector<float> v(count);
    FILE* fp = std::fopen(name, "rb");
    if (!fp) { std::printf("missing %s\n", name); std::exit(3); }
    size_t got = std::fread(v.data(), sizeof(float), count, fp);
    std::fclose(fp);
    if (got != count) { std::printf("short read %s\n", name); std::exit(4); }
    return v;
}
static void store_output(const char* name, const float* data, size_t count) {
    FILE* fp = std::fopen(name, "wb");
    if (!fp) { std::printf("cannot create %s\n", name); std::exit(5); }
    std::fwrite(data, sizeof(float), count, fp);
    std::fclose(fp);
}
"""

KERNELS = {
    "row_softmax": r"""
__global__ void row_softmax(const float* in, float* out, int cols) {
    extern __shared__ float red[];
    const float* row = in + (size_t)blockIdx.x * cols;
    float hi = -INFINITY;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) hi = fmaxf(hi, row[c]);
    red[threadIdx.x] = hi;
    __syncthreads();
    for (int half = blockDim.x >> 1; half > 0; half >>= 1) {
        if (threadIdx.x < half) red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + half]);
        __syncthreads();
    }
    hi = red[0];
    __syncthreads();
    float total = 0.f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) total += __expf(row[c] - hi);
    red[threadIdx.x] = total;
    __syncthreads();
    for (int half = blockDim.x >> 1; half > 0; half >>= 1) {
        if (threadIdx.x < half) red[threadIdx.x] += red[threadIdx.x + half];
        __syncthreads();
    }
    total = red[0];
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        out[(size_t)blockIdx.x * cols + c] = __expf(row[c] - hi) / total;
}
""",
    "byte_histogram": r"""
__global__ void byte_histogram(const float* codes, unsigned int* bins, int count) {
    __shared__ unsigned int local[256];
    for (int b = threadIdx.x; b < 256; b += blockDim.x) local[b] = 0u;
    __syncthreads();
    for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < count; k += gridDim.x * blockDim.x) {
        int bucket = min(255, max(0, (int)(codes[k] * 256.0f)));
        atomicAdd(&local[bucket], 1u);
    }
    __syncthreads();
    for (int b = threadIdx.x; b < 256; b += blockDim.x)
        if (local[b]) atomicAdd(&bins[b], local[b]);
}
""",
    "block_scan": r"""
__global__ void block_scan(const float* src, float* dst, int count) {
    extern __shared__ float buf[];
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    float mine = (g < count) ? src[g] : 0.0f;
    buf[threadIdx.x] = mine;
    __syncthreads();
    for (int step = 1; step < blockDim.x; step *= 2) {
        float add = (threadIdx.x >= step) ? buf[threadIdx.x - step] : 0.0f;
        __syncthreads();
        buf[threadIdx.x] += add;
        __syncthreads();
    }
    if (g < count) dst[g] = buf[threadIdx.x];
}
""",
}

MAINS = {
    "row_softmax": "row_softmax<<<rows, 256, 256 * sizeof(float)>>>(d_in, d_out, cols);",
    "byte_histogram": "byte_histogram<<<64, 256>>>(d_in, d_bins, count);",
    "block_scan": "block_scan<<<(count + 511) / 512, 512, 512 * sizeof(float)>>>(d_in, d_out, count);",
}

PROMPTS = {
    "row_softmax": (
        "Task: row_softmax. Given a matrix of shape (rows, cols) stored row-major as float32, "
        "compute the softmax of every row independently: subtract the row maximum for numerical "
        "stability, exponentiate, and divide by the row sum. Use one thread block per row and a "
        "shared-memory tree reduction for both the maximum and the sum. Input: in (rows x cols). "
        "Output: out (rows x cols)."
    ),
    "byte_histogram": (
        "Task: byte_histogram. Quantise each float32 value in [0, 1) of the input array into one "
        "of 256 buckets and count how many values fall into each bucket, using a per-block "
        "shared-memory histogram merged into global memory with atomics. Input: codes (count). "
        "Output: bins (256, uint32)."
    ),
    "block_scan": (
        "Task: block_scan. Compute an inclusive prefix sum inside each block of 512 elements of "
        "a float32 array with the Hillis-Steele doubling scheme in shared memory. Input: src "
        "(count). Output: dst (count), each block scanned independently."
    ),
}


def bench_cu(task: str) -> str:
    body = (
        "int main(int argc, char** argv) {\n"
        "    int rows = 64, cols = 1000, count = 1 << 16;\n"
        "    auto host = load_input(\"data/input.bin\", (size_t)count);\n"
        "    float *d_in, *d_out; unsigned int* d_bins;\n"
        "    CK(cudaMalloc(&d_in, count * sizeof(float)));\n"
        "    CK(cudaMalloc(&d_out, count * sizeof(float)));\n"
        "    CK(cudaMalloc(&d_bins, 256 * sizeof(unsigned int)));\n"
        "    CK(cudaMemcpy(d_in, host.data(), count * sizeof(float), cudaMemcpyHostToDevice));\n"
        f"    {MAINS[task]}\n"
        "    CK(cudaDeviceSynchronize());\n"
        "    CK(cudaMemcpy(host.data(), d_out, count * sizeof(float), cudaMemcpyDeviceToHost));\n"
        "    store_output(\"data/output.bin\", host.data(), (size_t)count);\n"
        "    return 0;\n}\n"
    )
    return HARNESS + KERNELS[task] + body


def write_cudabench(path: Path) -> Path:
    lines = []
    for t, task in enumerate(KERNELS):
        for scale in range(5):
            lines.append(json.dumps({
                "id": t * 5 + scale, "task_name": task,
                "inputs": [{"name": "in", "dtype": "float32", "shape": [1024 << scale]}],
                "outputs": [{"name": "out", "dtype": "float32", "shape": [1024 << scale]}],
                "level1_prompt": PROMPTS[task],
                "level2_prompt": f"Implement {task.replace('_', ' ')} on the GPU for the given array.",
                "level3_prompt": f"Write {task}.",
                "bench.cu": bench_cu(task), "gen.py": "import numpy as np\n",
                "compare.py": "import numpy as np\n",
            }))
    path.write_text("\n".join(lines) + "\n")
    return path


def record(rid: str, text: str, *, module: str | None = None, prompt: str | None = None) -> Item:
    raw = RawRecord(
        id=rid, text=text, module=module,
        provenance=Provenance(source="test", origin="test", license="MIT"),
    )
    return Item(raw=raw, prompt=prompt)


def reformat(code: str) -> str:
    """The same code with other whitespace, other comments and a comment block added."""
    out = []
    for line in code.splitlines():
        stripped = line.strip()
        if stripped:
            out.append("\t" + re.sub(r"\s*([=<>+*/-]=?)\s*", r"  \1  ", stripped) + "   // edited")
    return "/* adapted from a tutorial */\n" + "\n\n".join(out)


@pytest.fixture(scope="module")
def cudabench(tmp_path_factory) -> Path:
    return write_cudabench(tmp_path_factory.mktemp("cb") / "CUDABench-Set.jsonl")


@pytest.fixture(scope="module")
def index(cudabench) -> DecontamIndex:
    paths = [str(cudabench)]
    if (DATA / "kernelbench_level1").is_dir():
        paths.append(str(DATA / "kernelbench_level1"))
    return build_index(paths)[0]


def test_a_copied_kernel_is_caught_with_the_benchmark_item_named(index):
    host = SCALE_PROGRAM.replace("__global__", reformat(KERNELS["row_softmax"]) + "\n__global__", 1)
    matches = index.match_code(host)
    assert [(m.benchmark, m.item_id) for m in matches][:1] == [("cudabench", "row_softmax")]
    assert matches[0].run >= DecontamConfig().code_min_run

    items = [record("gh/copy", host), record("gh/clean", SCALE_PROGRAM)]
    decontaminate_code(items, index)
    assert items[0].rejection is not None
    assert items[0].rejection.reason == "contaminated_code"
    assert "cudabench item row_softmax" in items[0].rejection.detail
    assert items[1].alive


def test_a_whole_copied_program_is_caught_by_the_overlap_ratio(index):
    matches = index.match_code(reformat(bench_cu("block_scan")))
    assert matches[0].item_id == "block_scan"
    assert matches[0].overlap > 0.9


def test_shared_harness_and_idioms_do_not_trigger(index):
    # the benchmark's own harness around an unrelated kernel: template text, not contamination
    unrelated = HARNESS + SCALE_PROGRAM.split("int main()")[0].split("#endif", 1)[1]
    assert index.match_code(unrelated) == []
    # a one-item benchmark cannot learn its template; the built-in idiom list covers the usual one
    lone = DecontamIndex([BenchmarkItem("cudabench", "lone", code=[
        "#define CUDA_CHECK(call) do { cudaError_t err = call; if (err != cudaSuccess) {\n"
        "  fprintf(stderr, \"CUDA error %s at %s:%d\\n\", cudaGetErrorString(err), __FILE__, __LINE__);\n"
        "  exit(EXIT_FAILURE); } } while (0)\n" + KERNELS["byte_histogram"]])])
    other = ("#define CUDA_CHECK(call) do { cudaError_t err = call; if (err != cudaSuccess) {"
             " fprintf(stderr, \"CUDA error %s at %s:%d\\n\", cudaGetErrorString(err), __FILE__,"
             " __LINE__); exit(EXIT_FAILURE); } } while (0)\n" + SCALE_PROGRAM)
    assert lone.match_code(other) == []
    assert lone.match_code(other + KERNELS["byte_histogram"])[0].item_id == "lone"


def test_builtin_programs_are_not_flagged(index):
    assert len(BUILTIN_PROGRAMS) >= 50
    flagged = {p.parent.name: index.match_code(p.read_text())[:1] for p in BUILTIN_PROGRAMS}
    assert {k: v for k, v in flagged.items() if v} == {}


def test_real_github_kernels_are_not_flagged(index):
    github = DATA / "github"
    if not github.is_dir():
        pytest.skip(f"{github} not present")
    files = [f for f in sorted(github.rglob("*")) if f.suffix in (".cu", ".cuh")]
    assert len(files) > 50
    flagged = {}
    for f in files:
        hit = index.match_code(f.read_bytes().decode("utf-8", "replace"))
        if hit:
            flagged[f.name] = hit[0].describe()
    assert flagged == {}


def test_a_kernelbench_module_record_is_contaminated():
    folder = DATA / "kernelbench_level1"
    if not folder.is_dir():
        pytest.skip(f"{folder} not present")
    idx = DecontamIndex(load_benchmark(folder).items)
    module = (folder / "23_Softmax.py").read_text()
    items = [record("kernelbench/23", "", module=module.replace("    ", "  "))]
    decontaminate_code(items, idx)
    assert items[0].rejection is not None
    assert "kernelbench item 23_Softmax" in items[0].rejection.detail
    # a PyTorch module written for another operation is not
    own = ("import torch\nimport torch.nn as nn\n\nclass Model(nn.Module):\n"
           "    def __init__(self, alpha: float):\n        super().__init__()\n"
           "        self.alpha = alpha\n\n    def forward(self, x, y):\n"
           "        return torch.lerp(x, y, self.alpha).cumsum(dim=-1)\n\n"
           "def get_inputs():\n    return [torch.randn(8, 33), torch.randn(8, 33)]\n\n"
           "def get_init_inputs():\n    return [0.25]\n")
    assert idx.match_code("", extra=[(own, "python")]) == []


def test_a_copied_prompt_is_caught_and_an_own_prompt_is_not(index):
    copied = ("Write a CUDA program for this.\n" + PROMPTS["byte_histogram"].upper()
              + "\nRead inputs from data/.")
    hit = index.match_prompt(copied)
    assert [(m.benchmark, m.item_id, m.kind) for m in hit][:1] == [
        ("cudabench", "byte_histogram", "prompt")]
    own = ("Implement a CUDA kernel that computes the softmax over each row of a float32 matrix. "
           "The input matrix x has shape [R, C]; the output y has the same shape. Read x from "
           "data/x.bin and write y to data/y.bin.")
    items = [record("a", SCALE_PROGRAM, prompt=copied), record("b", SCALE_PROGRAM, prompt=own),
             record("c", SCALE_PROGRAM, prompt=None)]
    items[2].reject("dedup", "duplicate_exact", "x")
    decontaminate_prompts(items, index)
    assert items[0].rejection is not None and items[0].rejection.reason == "contaminated_prompt"
    assert "byte_histogram" in items[0].rejection.detail
    assert items[1].alive
    assert items[2].rejection.reason == "duplicate_exact"


def test_rejected_records_pass_through_untouched(index):
    copy = record("x", bench_cu("row_softmax"))
    copy.reject("extract", "no_kernel", "kept")
    decontaminate_code([copy], index)
    assert (copy.rejection.stage, copy.rejection.reason) == ("extract", "no_kernel")


def test_config_is_a_plain_dict_for_the_manifest(index):
    cfg = index.config()
    assert cfg["code_n"] == 10 and cfg["prompt_n"] == 8
    assert cfg["benchmarks"]["cudabench"] == 3
    json.dumps(cfg)
    stats = index.stats()
    assert stats["code_ngrams"] > 0 and stats["code_ngrams_dropped_as_boilerplate"] > 0


# --- the default build against its own tasks ------------------------------------------------
#
# The built-in corpus's splits share no task-specific text: decontaminating against the held-out
# tasks (or any one task) removes exactly those tasks, and no train record goes for the harness or
# the file convention every task repeats.


def export_as_cudabench(names: list[str], folder: Path) -> Path:
    """The named built-in tasks as a CUDABench JSONL file, exported with the command a user runs:
    one row per case (CUDABench writes one per input scale) with the task's description as the
    level-1 prompt and its program as `bench.cu`, the fields `builder.decontam.loaders` reads."""
    out = folder / "exported"
    subprocess.run([sys.executable, "-m", "sources.builtin", "export", str(out), *names],
                   check=True, cwd=REPO, capture_output=True, timeout=120)
    rows = []
    for name in names:
        task = json.loads((out / name / "task.json").read_text())
        program = (out / name / "main.cu").read_text()
        for case in task["cases"]:
            sizes = {**task["sizes"], **case.get("sizes", {})}
            def spec(t, sizes=sizes):
                return {"name": t["name"], "dtype": t["dtype"],
                        "shape": [sizes.get(d, d) if isinstance(d, str) else d for d in t["shape"]]}
            rows.append({"id": len(rows), "task_name": name,
                         "inputs": [spec(t) for t in task["inputs"]],
                         "outputs": [spec(t) for t in task["outputs"]],
                         "level1_prompt": task["description"], "bench.cu": program,
                         "gen.py": "import numpy as np\n", "compare.py": "import numpy as np\n"})
    path = folder / "CUDABench-Set.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture(scope="module")
def builtin_raw() -> list[RawRecord]:
    recs = [r for r in builtin_records() if isinstance(r, RawRecord)]
    assert len(recs) >= 50
    return recs


def build_decontaminated(raw: list[RawRecord], index: DecontamIndex) -> dict[str, str]:
    """The default build's driver passes over the built-in records (code stage, specify without
    an LLM, prompt stage): {removed task: rejection detail}."""
    items = [Item(raw=r) for r in raw]
    decontaminate_code(items, index)
    spec = Specify()
    items = [spec.process(it) if it.alive else it for it in items]
    decontaminate_prompts(items, index)
    assert all(it.rejection is None or it.rejection.stage == "decontaminate" for it in items)
    return {it.raw.task.name: it.rejection.detail for it in items if it.rejection is not None}


def named_part(detail: str, item: str) -> str | None:
    m = re.match(rf"cudabench item {re.escape(item)} \((kernel|prompt)\): ", detail)
    return m.group(1) if m else None


def test_the_held_out_tasks_as_a_benchmark_remove_those_tasks(builtin_raw, tmp_path):
    index = build_index([str(export_as_cudabench(list(HELD_OUT), tmp_path))])[0]
    assert index.stats()["items_compared_by_kernels"] == len(HELD_OUT)
    removed = build_decontaminated(builtin_raw, index)
    for name in HELD_OUT:
        assert name in removed, name
        assert named_part(removed[name], name) in ("kernel", "prompt"), removed[name]
    others = {name: detail for name, detail in removed.items() if name not in HELD_OUT}
    assert others == {}, others


def test_a_one_row_benchmark_removes_its_own_task(builtin_raw, tmp_path):
    bench = export_as_cudabench([r.task.name for r in builtin_raw], tmp_path)
    lines = bench.read_text().splitlines()
    missed, shared = [], {}
    for r in builtin_raw:
        name = r.task.name
        row = next(line for line in lines if json.loads(line)["task_name"] == name)
        one = tmp_path / f"{name}.jsonl"
        one.write_text(row + "\n")
        removed = build_decontaminated(builtin_raw, build_index([str(one)])[0])
        if named_part(removed.pop(name, ""), name) not in ("kernel", "prompt"):
            missed.append(name)
        shared.update({(other, name): detail for other, detail in removed.items()})
    # every pair at once, so a failure lists all the tasks that share text, not the first
    assert missed == [] and shared == {}, (missed, shared)


def test_prompt_parts_drop_the_file_convention_in_any_wording():
    text = ("Leaky ReLU. Apply max(x, 0.01 x) to each element of a 3-D volume. Read x from "
            "data/x.bin and write the result to data/y.bin! Sizes are #ifndef macros. Other sizes "
            "can be set with -D N=10. Outputs:\n- `y`: float32 array of shape [N]\n\nFile "
            "convention: the program reads each input from data/<name>.bin.")
    assert prompt_parts(text) == [
        "Leaky ReLU. Apply max(x, 0.01 x) to each element of a 3-D volume.",
        "Outputs:\n- `y`: float32 array of shape [N]",
    ]


def test_kernelbench_items_are_compared_by_their_module_text():
    folder = DATA / "kernelbench_level1"
    if not folder.is_dir():
        pytest.skip(f"{folder} not present")
    items = load_benchmark(folder).items
    idx = DecontamIndex(items)
    assert idx.stats()["items_compared_by_kernels"] == 0
    for it in items:
        best = idx.match_code("", extra=[(it.code[0].replace("    ", "  "), "python")])[0]
        assert (best.item_id, best.part) == (it.item_id, "module")
