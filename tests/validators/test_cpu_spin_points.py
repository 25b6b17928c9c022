"""Where the rewrite lets a spinning block of a cooperative grid hand over (issue 26, item 5):
`cudashim::spin_point()` in the condition of each device-code loop that reads volatile or atomic
memory, directly or through a function, and in no other loop. The runs are in
test_cpu_grid_sync.py (`coop_spin.cu`)."""

from __future__ import annotations

from validators.cpu.rewrite import rewrite

SOURCE = """\
struct Slot { cuda::atomic<int> ready; };
__device__ volatile int g_go;
__device__ bool seen(volatile int* f) { return *f != 0; }
__global__ void k(volatile int* f, int* c, float* x, Slot* s) {
  while (*f == 0);
  do { } while (atomicAdd(c, 0) == 0);
  for (;;) if (atomicCAS(c, 1, 2) == 1) break;
  while (!seen(f + 1)) { }
  while (g_go == 0) __nanosleep(100);
  while (s->ready.load() == 0) { }
  for (int i = 0; i < 8; ++i) x[i] = 2.0f * x[i];
  int n = 0;
  while (n < 4) n++;
}
void host_wait(volatile int* f) { while (*f == 0) { } }
"""


def test_loops_that_poll_memory_get_a_spin_point_and_no_other_does():
    out = rewrite(SOURCE, lockstep=False).text
    lines = out.splitlines()
    assert len(lines) == len(SOURCE.splitlines())  # g++'s line numbers stay the user's
    marked = [n for n, line in enumerate(lines, 1) if "::cudashim::spin_point()" in line]
    # volatile parameter, atomicAdd, atomicCAS in for(;;), a function reading volatile,
    # a volatile global with __nanosleep, an atomic field through a pointer
    assert marked == [5, 6, 7, 8, 9, 10], out
    assert "while (::cudashim::spin_point(), *f == 0);" in lines[4]
    assert "for (;::cudashim::spin_point(), true;)" in lines[6]


def test_a_restrict_qualified_volatile_parameter_still_polls():
    """ECL-MIS (HeCBench mis): `volatile stattype* const __restrict nstat`. The grammar took
    `__restrict` after `const` for the parameter's name, so reads of `nstat` polled nothing,
    the outer loop got no spin point, and the block hung where a thread waits for another."""
    from validators.analysis import analyze

    src = (
        "typedef unsigned char stattype;\n"
        "__global__ void k(const int n, volatile stattype* const __restrict nstat) {\n"
        "  int missing;\n"
        "  do {\n"
        "    missing = 0;\n"
        "    const stattype nv = nstat[threadIdx.x + 1 < n ? threadIdx.x + 1 : 0];\n"
        "    if (nv & 1) missing = 1; else nstat[threadIdx.x] = 2;\n"
        "  } while (missing != 0);\n"
        "}\n"
    )
    lines = rewrite(src, lockstep=False).text.splitlines()
    assert "::cudashim::spin_point()" in lines[7], lines
    assert [p.name for p in analyze(src).kernels[0].params] == ["n", "nstat"]
