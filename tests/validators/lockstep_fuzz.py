"""Random race-free kernels for checking the lockstep copies against the thread loop.

Each generated kernel mixes what the copy transforms (uniform loops, loops whose trip count
differs per thread, thread-dependent branches around loops, early returns, `break`/`continue`
at a loop's level and inside per-lane statements, `do` loops, float math that vectorises,
calls of device functions that read `threadIdx`) and writes only its
own thread's output slots, so every legal interleaving computes the same bits: the program's
output must not change with the copies on or off, forward or reverse.
"""

from __future__ import annotations

import random

SLOTS = 4  # output slots per thread


class _Gen:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.loop_vars: list[str] = []
        self.depth = 0
        self.counter = 0

    def atom(self) -> str:
        r = self.rng.random()
        choices = ["a0", "a1", "t", "(unsigned)n", str(self.rng.randint(1, 9))]
        if self.loop_vars:
            choices.append(f"(unsigned){self.rng.choice(self.loop_vars)}")
        if r < 0.25:
            return f"in[(t + {self.rng.choice(choices)}) % (unsigned)n]"
        if r < 0.3:
            return "lane_mix(a0)"
        if r < 0.35:
            return "(unsigned)threadIdx.y"
        return self.rng.choice(choices)

    def expr(self, depth: int = 0) -> str:
        if depth > 1 or self.rng.random() < 0.4:
            return self.atom()
        op = self.rng.choice(["+", "-", "*", "^", "|", "&"])
        if self.rng.random() < 0.1:
            return f"({self.expr(depth + 1)} / {self.rng.randint(1, 7)}u)"
        return f"({self.expr(depth + 1)} {op} {self.expr(depth + 1)})"

    def cond(self) -> str:
        op = self.rng.choice(["<", ">", "==", "!=", "<="])
        if self.rng.random() < 0.3:
            return f"(t % {self.rng.randint(2, 5)}u) {op} {self.rng.randint(0, 3)}u"
        return f"({self.expr(1)} % 7u) {op} {self.rng.randint(0, 6)}u"

    def stmts(self, n: int, in_loop: bool) -> list[str]:
        return [s for _ in range(n) for s in self.stmt(in_loop)]

    def stmt(self, in_loop: bool) -> list[str]:
        r = self.rng.random()
        if self.depth >= 3:
            r = self.rng.random() * 0.45
        if r < 0.2:
            return [f"a{self.rng.randint(0, 1)} {self.rng.choice(['=', '+=', '^='])} {self.expr()};"]
        if r < 0.25:
            return [self.rng.choice([
                f"f0 = fmaf(f0, 0.75f, (float)({self.expr(1)} & 1023u));",
                f"f0 += sqrtf((float)({self.expr(1)} & 4095u)) / 3.0f;",
                "do { a0 += 3u; } while (a0 % 5u != 0u);",
            ])]
        if r < 0.4:
            return [f"out[t * {SLOTS} + {self.rng.randrange(SLOTS)}] = {self.expr()};"]
        if r < 0.45:
            return [f"if ({self.cond()}) return;"]
        self.depth += 1
        try:
            if r < 0.6:
                self.counter += 1
                v = f"k{self.counter}"
                bound = self.rng.choice(["m", "3", "(int)blockDim.y + 1", "m / 2"])
                self.loop_vars.append(v)
                body = self.stmts(self.rng.randint(1, 3), True)
                self.loop_vars.pop()
                return [f"for (int {v} = 0; {v} < {bound}; ++{v}) {{", *body, "}"]
            if r < 0.72:
                self.counter += 1
                v = f"j{self.counter}"
                self.loop_vars.append(v)
                body = self.stmts(self.rng.randint(1, 3), True)
                self.loop_vars.pop()
                start = self.rng.choice(["(int)(t % 3u)", "(int)threadIdx.x % 4", "0"])
                return [f"for (int {v} = {start}; {v} < m + (int)(a0 % 3u); {v} += 2) {{", *body, "}"]
            if r < 0.8:
                self.counter += 1
                g = f"g{self.counter}"
                body = self.stmts(self.rng.randint(1, 2), True)
                tail = [f"if ({self.cond()}) break;"] if self.rng.random() < 0.5 else []
                return [f"int {g} = 0;", f"while ({g} < (int)(t % 5u) + 1) {{", f"++{g};", *body, *tail, "}"]
            if r < 0.92:
                then = self.stmts(self.rng.randint(1, 3), in_loop)
                out = [f"if ({self.cond()}) {{", *then, "}"]
                if self.rng.random() < 0.5:
                    out += ["else {", *self.stmts(self.rng.randint(1, 2), in_loop), "}"]
                return out
            if in_loop:
                return [f"if ({self.cond()}) continue;" if self.rng.random() < 0.5 else f"if ({self.cond()}) break;"]
            return [f"a1 += {self.expr()};"]
        finally:
            self.depth -= 1


def program(seed: int, kernels: int = 24) -> str:
    """A CUDA program with `kernels` random kernels; it prints one checksum line per kernel."""
    rng = random.Random(seed)
    parts = [
        "#include <cstdio>",
        "#include <vector>",
        "__device__ unsigned lane_mix(unsigned v) { return v * 2654435761u + threadIdx.x; }",
    ]
    launches = []
    for k in range(kernels):
        g = _Gen(rng)
        body = g.stmts(rng.randint(3, 7), False)
        parts += [
            f"__global__ void fz{k}(const unsigned* in, unsigned* out, int n, int m) {{",
            "  unsigned t = (blockIdx.x * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;",
            "  if (t >= (unsigned)n) return;",
            "  unsigned a0 = in[t], a1 = t * 7u;",
            "  float f0 = 0.f;",
            *("  " + s for s in body),
            f"  out[t * {SLOTS}] ^= a0 + a1;",
            f"  out[t * {SLOTS} + 3] ^= __float_as_uint(f0);",
            "}",
        ]
        bx, by = rng.choice([(32, 1), (48, 2), (16, 4), (7, 3), (64, 1)])
        blocks = rng.randint(1, 3)
        launches.append(f"  run({k}, [&](int n) {{ fz{k}<<<{blocks}, dim3({bx}, {by})>>>(in, out, n, {rng.randint(2, 6)}); }}, "
                        f"{blocks * bx * by});")
    parts += [
        "unsigned *in, *out;",
        "template <class F> void run(int k, F launch, int threads) {",
        "  int n = threads - 3;",
        f"  cudaMemset(out, 0, threads * {SLOTS} * sizeof(unsigned));",
        "  launch(n);",
        f"  std::vector<unsigned> h(threads * {SLOTS});",
        "  cudaMemcpy(h.data(), out, h.size() * sizeof(unsigned), cudaMemcpyDeviceToHost);",
        "  unsigned long long sum = 0;",
        "  for (size_t i = 0; i < h.size(); ++i) sum = sum * 1000003ull + h[i];",
        '  printf("fz%d %llu\\n", k, sum);',
        "}",
        "int main() {",
        "  const int cap = 1024;",
        "  cudaMalloc(&in, cap * sizeof(unsigned));",
        f"  cudaMalloc(&out, cap * {SLOTS} * sizeof(unsigned));",
        "  std::vector<unsigned> h(cap);",
        "  for (int i = 0; i < cap; ++i) h[i] = (unsigned)(i * 2654435761u) >> 7;",
        "  cudaMemcpy(in, h.data(), cap * sizeof(unsigned), cudaMemcpyHostToDevice);",
        *launches,
        "  return 0;",
        "}",
    ]
    return "\n".join(parts) + "\n"


def main() -> int:
    """`python tests/validators/lockstep_fuzz.py FIRST LAST`: build the programs of seeds
    FIRST..LAST-1 once each and compare their output with the copies off (forward) against
    the copies on and off under both schedules."""
    import os
    import subprocess
    import sys
    import tempfile
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from validators.cpu.toolchain import compile_program

    first, last = (int(a) for a in sys.argv[1:3])
    copied = differ = 0
    for seed in range(first, last):
        with tempfile.TemporaryDirectory() as tmp:
            made = compile_program(program(seed), Path(tmp))
            if not made.ok:
                print(f"seed {seed}: does not build\n{made.diagnostics[-2000:]}")
                differ += 1
                continue
            copied += len(made.rewrite.lockstep)
            outs = {}
            for lockstep in ("0", "1"):
                for schedule in ("forward", "reverse"):
                    env = {**os.environ, "CUDASHIM_SCHEDULE": schedule, "CUDASHIM_LOCKSTEP": lockstep}
                    p = subprocess.run([str(made.exe)], capture_output=True, text=True, env=env, timeout=120)
                    outs[lockstep, schedule] = (p.returncode, p.stdout)
            for key, out in outs.items():
                if out != outs["0", "forward"]:
                    differ += 1
                    print(f"seed {seed}: copies {key[0]}, {key[1]}: output differs")
    print(f"seeds {first}..{last - 1}: {copied} kernels copied, {differ} differences")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
