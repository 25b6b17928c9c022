"""Near-dedup threshold and MinHash size on the real kernel corpus, and the throughput of
dedup and decontamination, measured side by side in one run.

    python benchmarks/bench_dedup.py [--data DIR] [--repeat N] [--pairs]

The corpus is every `__global__` kernel of the five real repositories under `DIR/github` plus
the built-in tasks' programs (one kernel = one unit, as records with `focus` are signed by
`builder.stages.extract.kernel_code`). For every pair it computes the exact Jaccard of the
5-token shingle sets (`builder.stages.dedup.shingles`) and the MinHash estimates at 128 and
256 permutations; `JUDGED` holds a reading of every pair between 0.6 and 0.95 (and of the
duplicates found below 0.6): is it a duplicate *for training purposes*? A variant that differs
in names, types, constants, formatting or a pragma is; one that changes the algorithm or the
memory access pattern (a new optimisation step of a tutorial series, forward vs backward) is
not. `--pairs` prints that list.

Findings (289 kernels, 41,616 pairs; pair counts by JUDGED):

    t     exact: dropped FP FN   MinHash-128: dropped FP FN flips   MinHash-256: dropped FP FN flips
    0.70         25      15 18                25      21 13 11                   24      16 15  4
    0.75         21      10 19                17      16 17  8                   20      10 19  2
    0.80         16       6 21                13       2 19  8                   15       7 22  2
    0.85         10       1 25                10       0 23  3                   12       2 24  2
    0.90          9       0 26                 9       0 25  1                    8       0 25  1

* Duplicates and deliberate variants overlap in Jaccard: true duplicates range from 0.56
  (llm.c `dev/cuda` kernels re-typed to `floatX` in `llmc/`: in a short kernel one changed
  type touches most shingles) to 1.0, while distinct optimisation steps reach 0.855
  (matmul_backward_bias 8 vs 9: atomics vs per-block partial sums), 0.83 (SGEMM 6 vs 7 and 8:
  new shared-memory layouts), 0.80 (reduce v3 vs v4). No threshold separates them.
* At 0.7 (BigCode's setting, made for whole files of a web-scale crawl) 15 pairs of distinct
  variants fall above the threshold (SGEMM 7 and 8, reduce v4, transpose variants, bitonic
  stages, nbody SoA, the blur's column pass...); at 0.85 one does, at 0.9 none. What a high
  threshold misses are short dtype ports, which no Jaccard threshold worth using catches.
* 256 permutations put fewer pairs on the wrong side of the threshold than 128 (flips above;
  standard error at J = 0.85 is 0.022 vs 0.032), most clearly at 0.7 to 0.8; at 0.85 the
  difference is 3 vs 2 pairs. Signing is 1.0 to 1.6 times slower with 256 (shingling and
  hashing dominate), LSH dedup about 1.3 times; both stay thousands of kernels per second.

Recommendation: keep `near_threshold` at 0.85. Optionally raise `DedupConfig.num_perm` to 256
(builder/stages/dedup.py; it changes the extract cache key): cheap, fewer estimate errors,
but at 0.85 it moves only one pair. Do not adopt 0.7: it would throw away exactly the
step-by-step optimisation series that make this corpus valuable. Catching the dtype ports
would need a type-normalised token stream (float/floatX/half -> one token), not a lower
threshold.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from builder.decontam import DecontamConfig, DecontamIndex, load_benchmark
from builder.decontam.model import BenchmarkItem
from builder.item import Item
from builder.stages.dedup import DedupConfig, dedup, minhash, shingles
from builder.stages.normalise import text_hash
from schemas import Provenance, RawRecord
from validators.analysis import analyze

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT / ".." / "shared" / "data"
BUILTIN = ROOT / "sources" / "builtin" / "tasks"
THRESHOLDS = (0.7, 0.75, 0.8, 0.85, 0.9)
PERMS = (128, 256)

LLM, CS, SG = "karpathy__llm.c/", "NVIDIA__cuda-samples/Samples/", "siboehm__SGEMM_CUDA/src/kernels/"
OPT, NB = "Liu-xiandong__How_to_optimize_in_GPU/", "harrism__mini-nbody/cuda/"
AF, AB, LB = LLM + "dev/cuda/attention_forward.cu:", LLM + "dev/cuda/attention_backward.cu:", \
    LLM + "dev/cuda/layernorm_backward.cu:"
TR, BS = CS + "6_Performance/transpose/transpose.cu:", \
    CS + "2_Concepts_and_Techniques/sortingNetworks/bitonicSort.cu:"
RED = CS + "2_Concepts_and_Techniques/reduction/reduction_kernel.cu:"

DUP, DIFF = True, False
# (kernel a, kernel b) -> (duplicate for training?, why). Pairs at 0.95 or more count as duplicates.
JUDGED: dict[frozenset[str], tuple[bool, str]] = {frozenset(k): v for k, v in [
    ((TR + "transposeCoalesced", TR + "transposeNoBankConflicts"), (DUP, "only the +1 padding constant (borderline: that constant is the optimisation)")),
    ((LLM + "dev/cuda/layernorm_forward.cu:layernorm_forward_kernel6", LLM + "llmc/layernorm.cuh:layernorm_forward_kernel6"), (DUP, "float -> floatX")),
    ((LLM + "dev/cuda/matmul_backward_bias.cu:matmul_backward_bias_kernel8", LLM + "dev/cuda/matmul_backward_bias.cu:matmul_backward_bias_kernel9"), (DIFF, "atomicAdd vs per-block partial sums")),
    ((AF + "unpermute_kernel", AF + "unpermute_kernel_lowp"), (DUP, "element type")),
    ((AB + "unpermute_kernel", AF + "unpermute_kernel_lowp"), (DUP, "element type")),
    ((SG + "6_kernel_vectorize.cuh:sgemmVectorize", SG + "7_kernel_resolve_bank_conflicts.cuh:sgemmResolveBankConflicts"), (DIFF, "new shared-memory layout")),
    ((LLM + "dev/cuda/fused_residual_forward.cu:fused_residual_forward_kernel5", LLM + "llmc/layernorm.cuh:fused_residual_forward_kernel5"), (DUP, "WARP_SIZE constant, types")),
    ((SG + "6_kernel_vectorize.cuh:sgemmVectorize", SG + "8_kernel_bank_extra_col.cuh:sgemmResolveBankExtraCol"), (DIFF, "padded shared-memory layout, scalar stores")),
    ((LLM + "dev/cuda/matmul_backward_bias.cu:matmul_backward_bias_kernel8", LLM + "llmc/matmul.cuh:matmul_backward_bias_kernel9"), (DIFF, "atomicAdd vs per-block partial sums")),
    ((AF + "permute_kernel", AF + "permute_kernel_lowp"), (DUP, "element type, layout")),
    ((OPT + "reduce/reduce_v3_add_during_load.cu:reduce3", OPT + "reduce/reduce_v4_unroll_last_warp.cu:reduce4"), (DIFF, "last warp unrolled")),
    ((SG + "7_kernel_resolve_bank_conflicts.cuh:sgemmResolveBankConflicts", SG + "8_kernel_bank_extra_col.cuh:sgemmResolveBankExtraCol"), (DIFF, "two different conflict-avoiding layouts")),
    ((CS + "2_Concepts_and_Techniques/histogram/histogram256.cu:mergeHistogram256Kernel", CS + "2_Concepts_and_Techniques/histogram/histogram64.cu:mergeHistogram64Kernel"), (DUP, "bin-count constant")),
    ((LLM + "dev/cuda/global_norm.cu:norm_kernel3", LLM + "dev/cuda/global_norm.cu:norm_kernel4"), (DIFF, "atomicAdd vs per-block output")),
    ((AB + "permute_kernel", AF + "permute_kernel_lowp"), (DUP, "element type, layout")),
    ((LB + "layernorm_backward_kernel5", LB + "layernorm_backward_kernel6"), (DIFF, "atomics replace the last-block reduction")),
    ((TR + "transposeNoBankConflicts", TR + "transposeCoarseGrained"), (DIFF, "coarse-grained copies tiles without transposing")),
    ((BS + "bitonicSortShared", BS + "bitonicSortShared1"), (DIFF, "another sorting stage")),
    ((BUILTIN.name + "/gaussian_blur:blur_rows", BUILTIN.name + "/gaussian_blur:blur_cols"), (DIFF, "the other direction")),
    ((OPT + "reduce/reduce_v2_no_bank_conflict.cu:reduce2", OPT + "reduce/reduce_v3_add_during_load.cu:reduce3"), (DIFF, "add during load")),
    ((LB + "layernorm_backward_kernel3", LB + "layernorm_backward_kernel6"), (DIFF, "different reduction scheme")),
    ((LLM + "dev/cuda/global_norm.cu:global_norm_aggregate_kernel", LLM + "llmc/global_norm.cuh:global_norm_aggregate_kernel"), (DUP, "a renamed parameter")),
    ((TR + "transposeCoalesced", TR + "transposeCoarseGrained"), (DIFF, "coarse-grained copies tiles without transposing")),
    ((NB + "nbody-orig.cu:bodyForce", NB + "nbody-soa.cu:bodyForce"), (DIFF, "AoS vs SoA layout")),
    ((AF + "softmax_forward_kernel5", AF + "softmax_forward_kernel5_lowp"), (DUP, "element type (float4 loads dropped; borderline)")),
    ((AB + "softmax_forward_kernel5", AF + "softmax_forward_kernel5_lowp"), (DUP, "element type (float4 loads dropped; borderline)")),
    ((AB + "unpermute_kernel_backward", AF + "unpermute_kernel"), (DIFF, "the backward operation")),
    ((AB + "unpermute_kernel", AB + "unpermute_kernel_backward"), (DIFF, "the backward operation")),
    ((BS + "bitonicSortShared", CS + "2_Concepts_and_Techniques/sortingNetworks/oddEvenMergeSort.cu:oddEvenMergeSortShared"), (DIFF, "another sorting network")),
    ((AF + "softmax_forward_kernel4", LLM + "dev/cuda/softmax_forward.cu:softmax_forward_kernel4"), (DUP, "shared buffers renamed")),
    ((OPT + "sgemm/sgemm_v1.cu:Sgemm", OPT + "sgemm/sgemm_v3.cu:Sgemm"), (DIFF, "warp-level tiling added")),
    ((BS + "bitonicSortShared", BS + "bitonicMergeShared"), (DIFF, "merge vs sort stage")),
    ((AB + "unpermute_kernel_backward", AF + "unpermute_kernel_lowp"), (DIFF, "the backward operation")),
    ((LLM + "dev/cuda/encoder_forward.cu:encoder_forward_kernel3", LLM + "llmc/encoder.cuh:encoder_forward_kernel3"), (DUP, "early return, renamed locals")),
    ((LLM + "dev/cuda/residual_forward.cu:residual_forward_kernel2", LLM + "llmc/layernorm.cuh:residual_forward_kernel"), (DUP, "bounds check dropped")),
    ((LLM + "dev/cuda/layernorm_forward.cu:layernorm_forward_kernel3", LLM + "dev/cuda/layernorm_forward.cu:layernorm_forward_kernel4"), (DIFF, "one-pass sum/sum of squares")),
    ((LB + "layernorm_backward_kernel2", LB + "layernorm_backward_kernel3"), (DIFF, "shared-memory accumulation")),
    ((SG + "10_kernel_warptiling.cuh:sgemmWarptiling", SG + "12_kernel_double_buffering.cuh:runSgemmDoubleBuffering2"), (DIFF, "double buffering")),
    ((LLM + "dev/cuda/classifier_fused.cu:fused_classifier_kernel5", LLM + "llmc/fused_classifier.cuh:fused_classifier_kernel5"), (DUP, "signature and block order (borderline)")),
    ((RED + "reduce0", RED + "reduce1"), (DIFF, "addressing scheme")),
    ((AB + "unpermute_kernel_backward", LLM + "llmc/attention.cuh:unpermute_kernel_backward"), (DUP, "element type, early return")),
    ((SG + "10_kernel_warptiling.cuh:sgemmWarptiling", SG + "11_kernel_double_buffering.cuh:sgemmDoubleBuffering"), (DIFF, "double buffering")),
    ((LLM + "dev/cuda/gelu_forward.cu:gelu_forward_kernel2", LLM + "llmc/gelu.cuh:gelu_forward_kernel2"), (DUP, "bounds check, renamed index")),
    ((RED + "reduce0", RED + "reduce2"), (DIFF, "sequential addressing")),
    ((LB + "layernorm_backward_kernel3", LB + "layernorm_backward_kernel5"), (DIFF, "different reduction scheme")),
    ((RED + "reduce4", RED + "reduce5"), (DIFF, "templated full unroll")),
    ((BS + "bitonicSortShared1", BS + "bitonicMergeShared"), (DIFF, "merge vs sort stage")),
    ((LLM + "dev/cuda/attention_backward.cu:softmax_autoregressive_backward_kernel7", LLM + "dev/cuda/attention_backward.cu:softmax_autoregressive_backward_kernel8"), (DIFF, "next optimisation step")),
    ((LB + "layernorm_backward_kernel3", LB + "layernorm_backward_kernel4"), (DIFF, "different reduction scheme")),
    ((TR + "transposeFineGrained", TR + "transposeCoarseGrained"), (DIFF, "different partial transposes")),
    ((BS + "bitonicSortShared1", CS + "2_Concepts_and_Techniques/sortingNetworks/oddEvenMergeSort.cu:oddEvenMergeSortShared"), (DIFF, "another sorting network")),
    ((NB + "nbody-block.cu:bodyForce", NB + "nbody-soa.cu:bodyForce"), (DIFF, "shared-memory tiling")),
    ((RED + "reduce5", RED + "reduce6"), (DIFF, "multiple elements per thread")),
    ((LLM + "dev/cuda/global_norm.cu:norm_kernel1", LLM + "dev/cuda/global_norm.cu:norm_kernel2"), (DIFF, "warp reduction")),
    ((NB + "nbody-soa.cu:bodyForce", NB + "nbody-unroll.cu:bodyForce"), (DIFF, "tiling and unrolling")),
    ((LLM + "dev/cuda/gelu_backward.cu:gelu_backward2", LLM + "llmc/gelu.cuh:gelu_backward_inplace_kernel"), (DUP, "in-place output (borderline)")),
    ((OPT + "reduce/reduce_v2_no_bank_conflict.cu:reduce2", OPT + "reduce/reduce_v4_unroll_last_warp.cu:reduce4"), (DIFF, "two steps apart")),
    ((AF + "permute_kernel_lowp", LLM + "llmc/attention.cuh:permute_kernel"), (DUP, "element type, early return")),
    ((OPT + "reduce/reduce_v0_baseline.cu:reduce0", OPT + "reduce/reduce_v2_no_bank_conflict.cu:reduce2"), (DIFF, "addressing scheme")),
    ((OPT + "reduce/reduce_v0_baseline.cu:reduce0", OPT + "reduce/reduce_v1_no_divergence_branch.cu:reduce1"), (DIFF, "divergence-free indexing")),
    ((AB + "permute_kernel_backward", LLM + "llmc/attention.cuh:permute_kernel_backward"), (DUP, "element type, early return")),
    ((LLM + "llmc/attention.cuh:unpermute_kernel", LLM + "llmc/attention.cuh:unpermute_kernel_backward"), (DIFF, "the backward operation")),
    ((LLM + "dev/cuda/attention_backward.cu:softmax_autoregressive_backward_kernel4", LLM + "dev/cuda/attention_backward.cu:softmax_autoregressive_backward_kernel5"), (DIFF, "next optimisation step")),
    # duplicates below 0.6: missed by any threshold worth using
    ((LLM + "dev/cuda/matmul_backward.cu:matmul_backward_bias_kernel_faster", LLM + "dev/cuda/matmul_backward_bias.cu:matmul_backward_bias_kernel1"), (DUP, "element type")),
    ((AF + "unpermute_kernel", LLM + "llmc/attention.cuh:unpermute_kernel"), (DUP, "element type, __ldcs")),
    ((AB + "unpermute_kernel", LLM + "llmc/attention.cuh:unpermute_kernel"), (DUP, "element type, __ldcs")),
    ((AB + "permute_kernel", LLM + "llmc/attention.cuh:permute_kernel"), (DUP, "element type, early return")),
    ((AF + "permute_kernel", LLM + "llmc/attention.cuh:permute_kernel"), (DUP, "element type, early return")),
    ((LLM + "dev/cuda/fused_residual_forward.cu:layernorm_forward_kernel1", LLM + "dev/cuda/layernorm_forward.cu:layernorm_forward_kernel1"), (DUP, "element type")),
    ((AF + "unpermute_kernel_lowp", LLM + "llmc/attention.cuh:unpermute_kernel"), (DUP, "element type, __ldcs")),
]}


@dataclass(frozen=True)
class Kernel:
    key: str
    text: str


def load_corpus(data: Path) -> list[Kernel]:
    files = [(f"{f.relative_to(data / 'github').parts[0]}/"
              f"{'/'.join(f.relative_to(data / 'github').parts[2:])}", f)
             for f in sorted((data / "github").rglob("*"))
             if f.suffix in (".cu", ".cuh", ".h", ".hpp") and f.is_file()]
    files += [(f"{BUILTIN.name}/{f.parent.name}", f) for f in sorted(BUILTIN.glob("*/main.cu"))]
    out: list[Kernel] = []
    for name, f in files:
        a = analyze(f.read_bytes())
        seen: dict[str, int] = {}
        for k in a.kernels:
            seen[k.name] = seen.get(k.name, 0) + 1
            suffix = f"#{seen[k.name]}" if seen[k.name] > 1 else ""
            out.append(Kernel(f"{name}:{k.name}{suffix}", a.text[k.span.start : k.span.end]))
    return out


def pair_matrices(kernels: list[Kernel]) -> dict[str, np.ndarray]:
    sets = [shingles(k.text, 5) for k in kernels]
    n = len(kernels)
    exact = np.eye(n)
    for i, j in itertools.combinations(range(n), 2):
        exact[i, j] = exact[j, i] = len(sets[i] & sets[j]) / len(sets[i] | sets[j])
    out = {"exact": exact}
    for p in PERMS:
        h = np.stack([minhash(k.text, DedupConfig(num_perm=p)).hashvalues for k in kernels])
        out[f"mh{p}"] = np.stack([(h == h[i]).mean(axis=1) for i in range(n)])
    return out


def judged(keys: list[str], i: int, j: int, exact: float) -> bool | None:
    if exact >= 0.95:
        return True
    v = JUDGED.get(frozenset((keys[i], keys[j])))
    return None if v is None else v[0]


def greedy_drops(sim: np.ndarray, t: float) -> int:
    """Kernels dropped when each is compared with those kept before it (the dedup order)."""
    kept: list[int] = []
    dropped = 0
    for i in range(sim.shape[0]):
        if kept and sim[i, kept].max() >= t:
            dropped += 1
        else:
            kept.append(i)
    return dropped


def pipeline_drops(kernels: list[Kernel], t: float, perms: int) -> int:
    """Kernels the real `dedup` stage (exact hash, then MinHash LSH) drops."""
    cfg = DedupConfig(near_threshold=t, num_perm=perms)
    items = [_item(f"k{i:04d}", k.text, cfg) for i, k in enumerate(kernels)]
    return sum(1 for it in dedup(items, cfg) if not it.alive)


def _item(rid: str, text: str, cfg: DedupConfig) -> Item:
    raw = RawRecord(id=rid, text=text, provenance=Provenance(source="bench", origin="bench",
                                                              license="MIT"))
    return Item(raw=raw, text_hash=text_hash(text),
                minhash=[int(v) for v in minhash(text, cfg).hashvalues])


def threshold_table(kernels: list[Kernel], mats: dict[str, np.ndarray]) -> list[str]:
    keys = [k.key for k in kernels]
    n = len(keys)
    pairs = [(i, j) for i, j in itertools.combinations(range(n), 2)]
    labels = {(i, j): judged(keys, i, j, mats["exact"][i, j]) for i, j in pairs}
    dup_pairs = [p for p, v in labels.items() if v]
    lines = [f"{'t':>5} {'measure':>7} {'dropped':>7} {'dup>=t':>6} {'FP':>3} {'FN':>3} "
             f"{'unjudged>=t':>11} {'flips':>5}"]
    for t in THRESHOLDS:
        for name, m in mats.items():
            over = [p for p in pairs if m[p] >= t]
            tp = sum(1 for p in over if labels[p])
            fp = sum(1 for p in over if labels[p] is False)
            unj = sum(1 for p in over if labels[p] is None)
            fn = sum(1 for p in dup_pairs if m[p] < t)
            flips = "" if name == "exact" else str(
                sum(1 for p in pairs if (m[p] >= t) != (mats["exact"][p] >= t)))
            dropped = greedy_drops(m, t) if name == "exact" else \
                pipeline_drops(kernels, t, int(name[2:]))
            lines.append(f"{t:>5.2f} {name:>7} {dropped:>7} {tp:>6} {fp:>3} {fn:>3} {unj:>11} "
                         f"{flips:>5}")
    return lines


def pair_list(kernels: list[Kernel], mats: dict[str, np.ndarray]) -> list[str]:
    keys = [k.key for k in kernels]
    rows = []
    for i, j in itertools.combinations(range(len(keys)), 2):
        e = mats["exact"][i, j]
        v = JUDGED.get(frozenset((keys[i], keys[j])))
        if 0.6 <= e < 0.95 or v is not None:
            verdict = "?" if v is None else ("DUP " if v[0] else "diff") + f" {v[1]}"
            rows.append((e, f"{e:.3f} {mats['mh128'][i, j]:.3f} {mats['mh256'][i, j]:.3f}  "
                            f"{keys[i]}  ~  {keys[j]}  -> {verdict}"))
    return [r for _, r in sorted(rows, reverse=True)]


def synthetic_cudabench(path: Path, every: int = 2) -> Path:
    """A CUDABench-format file from every `every`-th built-in task (bench.cu = its program,
    level prompts from its description): realistic programs with a shared harness."""
    rows = []
    for t, folder in enumerate(sorted(p.parent for p in BUILTIN.glob("*/main.cu"))):
        if t % every:
            continue
        desc = json.loads((folder / "task.json").read_text()).get("description", "")
        for scale in range(5):
            rows.append({"id": len(rows), "task_name": folder.name, "inputs": [], "outputs": [],
                         "level1_prompt": desc, "level2_prompt": desc.split("\n\n")[0],
                         "level3_prompt": f"Implement {folder.name}.",
                         "bench.cu": (folder / "main.cu").read_text(), "gen.py": "", "compare.py": "",
                         "scale": scale})
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def _rate(fn, count: int, repeat: int) -> float:
    """Units per second: the best of `repeat` timed passes (the machine is shared)."""
    best = min(_timed(fn) for _ in range(repeat))
    return count / best


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def throughput(kernels: list[Kernel], data: Path, repeat: int) -> list[str]:
    texts = [k.text for k in kernels] * 4  # the corpus four times: about 1150 kernels a pass
    n = len(texts)
    lines = [f"workload: {n} kernels a pass (the corpus x4), best of {repeat} passes"]
    for p in PERMS:
        cfg = DedupConfig(num_perm=p)
        lines.append(f"(a) MinHash signatures, {p} perms: "
                     f"{_rate(lambda c=cfg: [minhash(t, c) for t in texts], n, repeat):10.0f} kernels/s")
    for p in PERMS:
        cfg = DedupConfig(num_perm=p)
        items = [_item(f"k{i:05d}", t + f"\n// copy {i}", cfg) for i, t in enumerate(texts)]
        # each copy differs by a comment only: the same exact hash, so give each its own
        for i, it in enumerate(items):
            it.text_hash = f"{i:064x}"
        lines.append(f"(b) LSH dedup (0.85), {p} perms:   "
                     f"{_rate(lambda its=items, c=cfg: dedup([i.model_copy() for i in its], c), n, repeat):10.0f} kernels/s")
    with tempfile.TemporaryDirectory() as tmp:
        cb = synthetic_cudabench(Path(tmp) / "cudabench.jsonl")
        bench_items: list[BenchmarkItem] = load_benchmark(cb).items
        if (data / "kernelbench_level1").is_dir():
            bench_items += load_benchmark(data / "kernelbench_level1").items
        t0 = time.perf_counter()
        index = DecontamIndex(bench_items, DecontamConfig())
        built = time.perf_counter() - t0
    st = index.stats()
    lines.append(f"index: {st['items']} items, {st['code_ngrams']} code n-grams "
                 f"({st['code_ngrams_dropped_as_boilerplate']} dropped as boilerplate), "
                 f"{st['prompt_ngrams']} prompt n-grams, built in {built:.2f} s")
    lines.append(f"(c) decontamination code match:  "
                 f"{_rate(lambda: [index.match_code(t) for t in texts], n, repeat):10.0f} kernels/s")
    prompts = [json.loads((f.parent / "task.json").read_text()).get("description", "")
               for f in sorted(BUILTIN.glob("*/main.cu"))]
    work = [prompts[i % len(prompts)] for i in range(n)]
    lines.append(f"(d) decontamination prompt match: "
                 f"{_rate(lambda: [index.match_prompt(p) for p in work], n, repeat):10.0f} prompts/s")
    gh = [k for k in kernels if not k.key.startswith(BUILTIN.name)]
    bi = [k for k in kernels if k.key.startswith(BUILTIN.name)]
    flagged_gh = [k.key for k in gh if index.match_code(k.text)]
    inside = {it.item_id for it in index.items if it.benchmark == "cudabench"}
    names = [f.parent.name for f in sorted(BUILTIN.glob("*/main.cu"))]
    task_of = {k.key: k.key.split(":")[0].split("/")[-1] for k in bi}
    hit_bi = {task_of[k.key] for k in bi if index.match_code(k.text)}
    hit_p = {n for n, p in zip(names, prompts, strict=True) if index.match_prompt(p)}
    lines.append(f"what fires: {len(flagged_gh)} of {len(gh)} GitHub kernels {flagged_gh[:5]}")
    lines.append(f"  built-in tasks in the synthetic file ({len(inside)}): kernel flagged for "
                 f"{len(hit_bi & inside)}, description flagged for {len(hit_p & inside)}")
    lines.append(f"  built-in tasks not in it ({len(set(names) - inside)}): kernel flagged for "
                 f"{len(hit_bi - inside)} {sorted(hit_bi - inside)}, description flagged for "
                 f"{len(hit_p - inside)} {sorted(hit_p - inside)}")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the shared data folder")
    ap.add_argument("--repeat", type=int, default=3, help="timed passes (the best is kept)")
    ap.add_argument("--pairs", action="store_true", help="list the judged pairs")
    args = ap.parse_args(argv)
    if not (args.data / "github").is_dir():
        print(f"bench_dedup: no github corpus under {args.data}", file=sys.stderr)
        return 2
    kernels = load_corpus(args.data)
    mats = pair_matrices(kernels)
    print(f"corpus: {len(kernels)} kernels, {len(kernels) * (len(kernels) - 1) // 2} pairs; "
          f"FP = distinct variants at or above t, FN = duplicates below t (by JUDGED), "
          f"flips = pairs the estimate puts on the other side of t than the exact Jaccard")
    print("\n".join(threshold_table(kernels, mats)))
    if args.pairs:
        print("\nexact  mh128  mh256  pair -> judgement")
        print("\n".join(pair_list(kernels, mats)))
    print()
    print("\n".join(throughput(kernels, args.data, args.repeat)))
    ratio = statistics.mean(mats["mh256"][np.triu_indices(len(kernels), 1)]) if kernels else 0.0
    print(f"mean MinHash-256 estimate over all pairs: {ratio:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
