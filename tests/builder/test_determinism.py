"""What the builder writes for a record is a function of the record: the same in every process,
whatever the hash seed or the memory layout the analysis happens to get."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]

# Four launches of three kernels in one host function: the block size, the grid and the tile
# count are configuration statements several launches share, one launch sits in a branch.
PROGRAM = """\
#include <cuda_runtime.h>
constexpr int kThreads = 128;
__global__ void first(float* x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] += 1.0f; }
__global__ void second(float* x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= 2.0f; }
__global__ void third(float* x, const float* y, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] -= y[i]; }
static void run(float* x, float* y, int n) {
    int blocks = (n + kThreads - 1) / kThreads;
    dim3 grid(blocks);
    if (blocks == 1) {
        first<<<1, kThreads>>>(x, n);
        return;
    }
    cudaMemset(y, 0, n * sizeof(float));
    first<<<grid, kThreads>>>(x, n);
    second<<<grid, kThreads>>>(x, n);
    third<<<blocks, kThreads>>>(x, y, n);
    cudaDeviceSynchronize();
}
int main() { return 0; }
"""

ROUNDS = 40

# One process: the record's row, built ROUNDS times with the heap in a different state each
# time (the ballast moves where the next parse's nodes live); prints every distinct row.
SCRIPT = """
import json, sys
sys.path.insert(0, sys.argv[1])
from builder_helpers import make_raw, scale_task
from builder.item import Item
from builder.records import make_record
from builder.stages import Annotate, Specify
from schemas import ValidationResult
from schemas.rows import record_to_row

program, rounds = sys.stdin.read(), int(sys.argv[2])
rows, ballast = set(), []
for i in range(rounds):
    ballast.append(bytearray(977 * i))
    item = Item(raw=make_raw("multi", program, task=scale_task()))
    item = Annotate().process(Specify().process(item))
    item.validation = ValidationResult(backend="cpu", status="passed")
    rows.add(json.dumps(record_to_row(make_record(item)), default=str))
print(json.dumps(sorted(rows)))
"""


def _rows(hash_seed: str) -> list[str]:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    out = subprocess.run([sys.executable, "-c", SCRIPT, str(HERE), str(ROUNDS)], input=PROGRAM,
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_a_record_with_shared_launch_configuration_is_the_same_in_every_process():
    a, b = _rows("1"), _rows("2")
    assert len(a) == 1, "one process built different rows for the same record"
    assert a == b, "two processes (PYTHONHASHSEED 1 and 2) built different rows"
    spans = json.loads(a[0])["spans"]
    shared = {s["label"] for s in spans if s["kind"] == "launch_config" and "," in s["label"]}
    # A statement several launches share names their kernels in the order they are launched.
    assert shared == {"first,second,third", "first,second"}, shared
