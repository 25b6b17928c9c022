"""Rewards per second of `cuset grpo`'s reward on the cpu backend, for groups of 6 completions.

Two ways of reaching the validation service, each with a cold and then a warm build cache:

  local pool    the service `cuset grpo --reward-local` starts (`LocalService`: loopback, one
                caller may use every slot)
  HTTP service  a `python -m validators serve` started beforehand with its own defaults, reached
                by URL (`--reward-url`), as a shared service is

Each task gets one group of 6 completions, as a policy early in training writes them: four
variants of the task's reference program (distinct texts, so four builds), one program that does
not compile and one answer with no code block. "cold" scores them with an empty build cache,
"warm" scores the same texts again (every build a cache hit). Both go through
`VerifiedReward`, the reward function the trainer calls, with the thorough check.

    python benchmarks/bench_grpo_reward.py [--tasks 2] [--workers 2]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cuset.grpo_reward import LocalService, RewardWeights, VerifiedReward  # noqa: E402
from validators.client import ValidationClient  # noqa: E402

GROUP = 6


def group_for(task: str) -> list[str]:
    ref = (ROOT / "sources" / "builtin" / "tasks" / task / "main.cu").read_text()
    fenced = [f"```cuda\n{ref}\n// sample {i}\n```" for i in range(4)]
    broken = f"```cuda\n{ref.replace('int main', 'int main(', 1)}\n```"
    return [*fenced, broken, "I would write a kernel that does this."]


def score_pass(url: str, tasks: list[str]) -> tuple[float, int, dict[str, int]]:
    ids, texts = [], []
    for t in tasks:
        ids += [t] * GROUP
        texts += group_for(t)
    statuses: dict[str, int] = {}
    with ValidationClient(url, timeout=600) as client:
        reward = VerifiedReward(client, RewardWeights(), num_generations=GROUP)
        start = time.perf_counter()
        # one call per group, as the trainer calls it with a batch of one prompt's completions
        for i in range(0, len(texts), GROUP):
            reward(prompts=None, completions=texts[i:i + GROUP], task_id=ids[i:i + GROUP],
                   log_extra=lambda _k, v: [statuses.__setitem__(s, statuses.get(s, 0) + 1)
                                            for s in v])
        return time.perf_counter() - start, len(texts), statuses


def bench(mode: str, tasks: list[str], workers: int) -> list[tuple[str, str, float, int, dict]]:
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-grpo-") as tmp:
        env = {**os.environ, "CKD_CACHE_DIR": str(Path(tmp) / "cache"),
               "CKD_ALLOW_WEAK_SANDBOX": "1"}
        # the shared service keeps the server's own caller share
        svc = LocalService("builtin", Path(tmp) / "service.log", backend="cpu", workers=workers,
                           env=env, caller_share=1 if mode == "local pool" else None)
        with svc:
            for cache in ("cold", "warm"):
                wall, n, statuses = score_pass(svc.url, tasks)
                rows.append((mode, cache, wall, n, statuses))
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tasks", type=int, default=2, help="built-in tasks, one group of 6 each")
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    from sources.builtin import HELD_OUT, load_all

    tasks = sorted(t.name for t, _ in load_all().tasks if t.name not in HELD_OUT)[:args.tasks]
    print(f"tasks: {', '.join(tasks)}; {GROUP} completions each; cpu backend, "
          f"{args.workers} workers, thorough check; {os.cpu_count()} CPUs", flush=True)
    rows = []
    for mode in ("local pool", "HTTP service"):
        rows += bench(mode, tasks, args.workers)
    print(f"\n{'service':<14}{'build cache':<13}{'completions':>12}{'wall s':>9}{'rewards/s':>11}"
          "  statuses")
    for mode, cache, wall, n, statuses in rows:
        st = ", ".join(f"{k} {v}" for k, v in sorted(statuses.items()))
        print(f"{mode:<14}{cache:<13}{n:>12}{wall:>9.1f}{n / wall:>11.2f}  {st}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
