"""Implicit warp-synchronous code (warp_exchange.py): lanes that exchange values through volatile
shared memory with no barrier run each such statement in step, as a converged warp does; the
emulator ran each thread through the whole reduction alone, and sums came out wrong."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from schemas import Program, Status
from validators.backends import get_backend
from validators.cpu.rewrite import _parse
from validators.cpu.warp_exchange import STEP, in_step
from validators.engine import run_program

PROGRAMS = Path(__file__).resolve().parent / "cpu_programs"


def stepped(code: str) -> str:
    src = code.encode()
    return in_step(src, _parse(src).root_node).decode()


def test_exchanges_are_split_at_the_warps_steps_and_keep_their_lines():
    code = (
        "__device__ void wr(volatile float* s, int t) {\n"
        "  s[t] += s[t + 16];\n"
        "  s[t] = fmaxf(s[t],\n"
        "               s[t + 1]);\n"
        "}\n"
        "__global__ void k(float* x, volatile int* flag) {\n"
        "  __shared__ volatile float v[64]; __shared__ float plain[64];\n"
        "  float* volatile p = plain; int t = threadIdx.x; float sum = 0;\n"
        "  if (t < 32) v[t] = sum = sum + v[t + 32];\n"
        "  plain[t] += plain[t + 1]; p[t] += p[t + 1];\n"   # not volatile elements
        "  *flag = 1; flag[t] = 1; v[t] = x[t];\n"         # hand-offs and loads: no exchange
        "}\n"
        "void host(volatile float* s) { s[0] += s[1]; }\n"
    )
    out = stepped(code)
    assert out.count("\n") == code.count("\n")
    lines = out.splitlines()
    assert lines[1].count(STEP) == 3 and "auto __ckd_exchange = s[t] + (s[t + 16]);" in lines[1]
    assert lines[2].count(STEP) == 1 and lines[3].strip() == (
        "s[t + 1])); ::cudashim::warp_step(); s[t] = __ckd_exchange; ::cudashim::warp_step(); }")
    assert "= (sum = sum + v[t + 32]);" in lines[8] and lines[8].count(STEP) == 3
    assert STEP not in "\n".join(lines[9:])


def test_an_exchange_through_a_cast_to_volatile_is_split_too():
    """`((volatile int*)s)[t] += ((volatile int*)s)[t + 16]` over a plain array is the same
    exchange (it was left to run one thread at a time); a cast that makes only the pointer
    volatile, or a cast store of another array's value, is none."""
    code = (
        "__global__ void k(int* x) {\n"
        "  __shared__ int s[64]; __shared__ int o[64]; int t = threadIdx.x;\n"
        "  ((volatile int*)s)[t] += ((volatile int*)s)[t + 16];\n"
        "  ((volatile int*)(s))[t] = ((volatile int *)(s))[t] + ((volatile int*)(s))[t + 8];\n"
        "  ((int* volatile)s)[t] += ((int* volatile)s)[t + 4];\n"
        "  ((volatile int*)s)[t] = o[t + 1];\n"
        "  ((volatile int*)s)[t++] += ((volatile int*)s)[t + 1];\n"
        "}\n"
    )
    lines = stepped(code).splitlines()
    assert lines[2].count(STEP) == 3 and lines[3].count(STEP) == 3, lines
    assert STEP not in "\n".join(lines[4:]), lines


def test_an_exchange_in_a_macro_is_split_in_the_macros_text():
    """A `#define` whose body is an exchange becomes `do { ... } while (0)` (its uses stay
    statements, `if (c) M(...); else ...` included); one of several statements becomes a block;
    a macro of hand-offs or of a plain array is left alone; lines stay."""
    code = (
        "__shared__ volatile int v[64];\n"
        "#define ADD(s, t, o) ((volatile int*)(s))[t] += ((volatile int*)(s))[(t) + (o)]\n"
        "#define TWO(t) v[t] += v[t + 2]; \\\n"
        "  v[t] += v[t + 1];\n"
        "#define SET(s, t) ((volatile int*)(s))[t] = 1\n"
        "#define PLAIN(s, t) s[t] += s[t + 1]\n"
        "__global__ void k(int* s) { int t = threadIdx.x; if (t) ADD(s, t, 1); else TWO(t); PLAIN(s, t); }\n"
    )
    out = stepped(code)
    assert out.count("\n") == code.count("\n")
    lines = out.splitlines()
    assert lines[1].startswith("#define ADD(s, t, o) do { ::cudashim::warp_step(); auto __ckd_exchange = ((volatile int*)(s))[t] + ("), lines[1]
    assert lines[1].endswith("} while (0)") and lines[1].count(STEP) == 3, lines[1]
    assert lines[2].count(STEP) == 3 and lines[2].endswith("\\") and lines[3].count(STEP) == 3, lines[2:4]
    assert STEP not in "\n".join(lines[4:]), lines
    # Used as a value somewhere: the body stays an expression (as a statement it would not compile).
    valued = code.replace("PLAIN(s, t); }", "PLAIN(s, t); int r = ADD(s, t, 2); }")
    assert STEP not in stepped(valued).splitlines()[1]


def test_code_without_exchanges_is_returned_as_it_is():
    src = b"__global__ void k(volatile int* f) { while (*f == 0) {} f[1] = 2; }\n"
    assert in_step(src, _parse(src).root_node) is src


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed")
@pytest.mark.parametrize("variant,schedule", [("plain", "forward"), ("plain", "random:5"), ("race", "reverse")])
def test_warp_synchronous_sums_are_a_converged_warps(variant, schedule):
    prog = Program(source=(PROGRAMS / "warp_synchronous.cu").read_text(), filename="main.cu")
    res = run_program(prog, get_backend("cpu"), variant=variant, schedule=schedule)
    assert res.status == Status.PASSED, res.reason
    assert res.outcome is not None and res.outcome.stdout.strip().endswith("PASS"), res.outcome.stdout
    said = " ".join(res.notes)
    assert "implicit warp-synchronous code in kernel 'reduce_register'" in said, said
