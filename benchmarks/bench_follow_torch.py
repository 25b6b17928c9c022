"""What following the data (`torch_result`, validators/kernelbench/provenance.py) costs.

Checks each answer of a folder (`<problem stem>.py`) against its problem twice on a warm build
cache, with the dispatch mode that follows PyTorch's work and without it (the verifier's
`run_answer` called with `follow=False`), in alternating order, and prints the answer processes'
seconds side by side with their ratio:

    python benchmarks/bench_follow_torch.py --problems PATH/kernelbench_level1 \\
        --answers tests/validators/kernelbench/answers [--thorough] [--repeat 2]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def check(problem: str, answer: str, *, follow: bool, fast: bool) -> tuple[str, float]:
    import importlib

    # The module, not the package's `verify` function of the same name.
    verify_module = importlib.import_module("validators.kernelbench.verify")

    original = verify_module.run_answer

    def without(*args: object, **kwargs: object) -> object:
        kwargs["follow"] = False
        return original(*args, **kwargs)

    if not follow:
        verify_module.run_answer = without
    try:
        times: dict[str, float] = {}
        r = verify_module.verify(problem, answer, fast=fast, timings=times, max_elements=4096)
    finally:
        verify_module.run_answer = original
    return r.status.value, times.get("answer", 0.0)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problems", required=True, type=Path)
    ap.add_argument("--answers", required=True, type=Path)
    ap.add_argument("--thorough", action="store_true", help="every checking variant (not --fast)")
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    pairs = [(a.stem, args.problems / a.name, a) for a in sorted(args.answers.glob("*.py"))
             if (args.problems / a.name).is_file()]
    if not pairs:
        print(f"no answer in {args.answers} has a problem in {args.problems}", file=sys.stderr)
        return 2
    fast = not args.thorough
    total = {True: 0.0, False: 0.0}
    print(f"{'answer':45s} {'status':8s} {'followed':>9s} {'not':>8s} {'ratio':>6s}")
    for stem, problem, answer in pairs:
        p, a = problem.read_text(), answer.read_text()
        check(p, a, follow=True, fast=fast)  # warms the build cache
        secs = {True: 0.0, False: 0.0}
        status = ""
        for i in range(args.repeat):
            for follow in ((True, False) if i % 2 == 0 else (False, True)):
                status, s = check(p, a, follow=follow, fast=fast)
                secs[follow] += s / args.repeat
        total[True] += secs[True]
        total[False] += secs[False]
        print(f"{stem[:45]:45s} {status:8s} {secs[True]:8.2f}s {secs[False]:7.2f}s "
              f"{secs[True] / max(secs[False], 1e-9):6.2f}", flush=True)
    print(f"{'total':45s} {'':8s} {total[True]:8.2f}s {total[False]:7.2f}s "
          f"{total[True] / max(total[False], 1e-9):6.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
