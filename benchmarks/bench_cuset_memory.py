"""Step time and peak memory of the CuSeT loss vs SFT, and of chunked vs full-logits log-probs.

CPU, a Qwen2-shaped model with the real Qwen vocabulary (151,936) and a small hidden size, one
sequence of 2048 tokens (the first 256 a prompt), full fine-tuning so the output matrix gets a
gradient too. A step is forward + backward (no optimizer). Peak memory: each variant runs one
step in a fresh process, measured as the rise of the peak resident set size (VmHWM, reset
through /proc/self/clear_refs) over the resident size just before the step. Time: one process
runs the variants round-robin after a warm-up and reports each one's median process CPU time
(steadier than wall clock when other jobs share the cores) and minimum wall-clock time.

    python benchmarks/bench_cuset_memory.py [--seq-len 2048] [--hidden 64] [--steps 3] [--threads 1]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

VARIANTS = ("chunked-sft", "chunked-cuset", "full-sft", "full-cuset")


def _status_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status")


def _reset_peak() -> bool:
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def _setup(seq_len: int, hidden: int, vocab: int):
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    from cuset.config import LossConfig
    from cuset.head import HeadRequest, head_request, install_head, unpack
    from cuset.logprobs import shift_targets
    from cuset.losses import compute, cuset_objective

    torch.manual_seed(0)
    cfg = Qwen2Config(
        vocab_size=vocab,
        hidden_size=hidden,
        intermediate_size=2 * hidden,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        tie_word_embeddings=False,
        max_position_embeddings=seq_len,
    )
    model = Qwen2ForCausalLM(cfg)
    model.config.use_cache = False
    # Installed for every variant: without a request the head is the plain linear layer, so the
    # full-logits variants run exactly transformers' computation.
    head = install_head(model)
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, vocab, (1, seq_len), generator=g)
    labels = ids.clone()
    labels[:, :256] = -100
    cuda = torch.rand(1, seq_len, generator=g) < 0.3
    targets = shift_targets(labels)
    loss_mask = targets.ne(-100)
    cuda_t = torch.zeros_like(cuda)
    cuda_t[:, :-1] = cuda[:, 1:]
    n_items = loss_mask.sum()

    def step(variant: str) -> None:
        impl, method = variant.split("-")
        model.zero_grad(set_to_none=True)
        if impl == "chunked":
            with head_request(head, HeadRequest(targets)):
                packed = model(input_ids=ids).logits
            stats = unpack(packed, top_k=0, has_ref=False)
            loss = (
                compute(stats, loss_mask, cuda_t, LossConfig(method=method)).per_sample.sum()
                / n_items
            )
        elif method == "sft":
            loss = model(input_ids=ids, labels=labels).loss  # transformers' own full-logits loss
        else:
            logits = model(input_ids=ids).logits.float()
            logp = torch.log_softmax(logits, -1).gather(-1, targets.clamp_min(0)[..., None])[..., 0]
            logp = torch.where(loss_mask, logp, torch.zeros_like(logp))
            loss = cuset_objective(logp, loss_mask, cuda_t).sum() / n_items
        loss.backward()

    return step


def measure_memory(variant: str, seq_len: int, hidden: int, vocab: int) -> dict:
    step = _setup(seq_len, hidden, vocab)
    base = _status_kb("VmRSS")
    exact = _reset_peak()
    step(variant)
    return {"variant": variant, "peak_mb": (_status_kb("VmHWM") - base) / 1024, "peak_reset": exact}


def measure_time(seq_len: int, hidden: int, vocab: int, steps: int) -> dict:
    """Round-robin over the variants in one process, so a shared machine's load affects each alike."""
    step = _setup(seq_len, hidden, vocab)
    wall: dict[str, list[float]] = {v: [] for v in VARIANTS}
    cpu: dict[str, list[float]] = {v: [] for v in VARIANTS}
    for v in VARIANTS:
        step(v)  # warm-up
    for _ in range(steps):
        for v in VARIANTS:
            t0, c0 = time.perf_counter(), time.process_time()
            step(v)
            wall[v].append(time.perf_counter() - t0)
            cpu[v].append(time.process_time() - c0)
    return {
        v: {"wall_min_s": min(wall[v]), "cpu_median_s": statistics.median(cpu[v])} for v in VARIANTS
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seq-len", type=int, default=2048)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--vocab", type=int, default=151_936)
    p.add_argument("--steps", type=int, default=3)
    p.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch threads per process (1 keeps figures steadier on a shared machine)",
    )
    p.add_argument("--child", help=argparse.SUPPRESS)
    a = p.parse_args()
    import torch

    torch.set_num_threads(a.threads)
    dims = (a.seq_len, a.hidden, a.vocab)
    if a.child == "time":
        print(json.dumps(measure_time(*dims, a.steps)))
        return 0
    if a.child:
        print(json.dumps(measure_memory(a.child, *dims)))
        return 0

    def child(what: str) -> dict:
        out = subprocess.run(
            [
                sys.executable,
                __file__,
                "--child",
                what,
                "--seq-len",
                str(a.seq_len),
                "--hidden",
                str(a.hidden),
                "--vocab",
                str(a.vocab),
                "--steps",
                str(a.steps),
                "--threads",
                str(a.threads),
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        return json.loads(out.stdout.strip().splitlines()[-1])

    rows = {v: child(v) for v in VARIANTS}
    for v, t in child("time").items():
        rows[v].update(t)
    print(
        f"vocab {a.vocab}, hidden {a.hidden}, seq len {a.seq_len}, full fine-tuning, CPU, "
        f"{a.threads} thread(s), forward+backward; time over {a.steps} interleaved steps: "
        "process CPU time (median) and wall clock (minimum)"
    )
    print(f"{'variant':<15} {'peak MB':>9} {'cpu s':>8} {'wall s':>8}")
    for v in VARIANTS:
        r = rows[v]
        print(f"{v:<15} {r['peak_mb']:9.1f} {r['cpu_median_s']:8.3f} {r['wall_min_s']:8.3f}")

    def ratio(x: str, y: str, key: str) -> float:
        return rows[x][key] / rows[y][key]

    print("ratios (target):")
    for label, x, y, key, target in [
        (
            "cuset / sft, chunked, cpu time",
            "chunked-cuset",
            "chunked-sft",
            "cpu_median_s",
            "<= 1.10",
        ),
        (
            "cuset / sft, chunked, wall time",
            "chunked-cuset",
            "chunked-sft",
            "wall_min_s",
            "<= 1.10",
        ),
        ("cuset / sft, chunked, memory", "chunked-cuset", "chunked-sft", "peak_mb", "<= 1.10"),
        ("chunked / full, sft, memory", "chunked-sft", "full-sft", "peak_mb", "<= 0.5"),
        ("chunked / full, cuset, memory", "chunked-cuset", "full-cuset", "peak_mb", "<= 0.5"),
        ("chunked / full, sft, cpu time", "chunked-sft", "full-sft", "cpu_median_s", ""),
    ]:
        print(f"  {label:<34} {ratio(x, y, key):6.3f}  {target}")
    if not all(r["peak_reset"] for r in rows.values()):
        print("note: /proc/self/clear_refs was not writable; peaks include start-up memory")
    return 0


if __name__ == "__main__":
    sys.exit(main())
