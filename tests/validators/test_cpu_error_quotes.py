"""A compile error is reported against the program's own line, not the cpu rewrite's: g++
quotes and counts columns in what it compiled (a launch made a call to the shim, a device shift's
amount wrapped), which the program never had."""

from __future__ import annotations

import shutil

import pytest

from schemas import Program
from validators.backends import get_backend
from validators.cpu.diagnostics import program_quotes

SOURCE = (
    "#include <cstdio>\n"
    "__global__ void kernel_a(float *y, int s) {\n"
    "\tunsigned v = y[0];\n"
    "\ty[threadIdx.x] = v << (s + undefined_x);\n"
    "}\n"
    "int main() {\n"
    "    float *d;\n"
    "    int threads = 512, blocks = 1;\n"
    "    kernel_a<<<blocks, thread>>>(d, 1);\n"
    "}\n"
)


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed")
def test_errors_quote_and_point_into_the_programs_lines():
    exe = get_backend("cpu").build(Program(source=SOURCE, filename="main.cu"), {})
    said = exe.compile.diagnostics
    assert not exe.compile.ok
    assert "cudashim" not in said, said
    # Columns count a tab as g++ does (to the next multiple of 8).
    assert "main.cu:4:36: error: ‘undefined_x’ was not declared" in said, said
    assert "    4 |         y[threadIdx.x] = v << (s + undefined_x);\n" \
           "      |                                    ^~~~~~~~~~~" in said, said
    assert "main.cu:9:24: error: ‘thread’ was not declared" in said, said
    assert "    9 |     kernel_a<<<blocks, thread>>>(d, 1);\n" \
           "      |                        ^~~~~~\n" \
           "      |                        threads" in said, said


def test_a_token_the_line_holds_twice_loses_its_column_not_its_line():
    said = (
        "k.cu:2:30: error: 'n' was not declared in this scope\n"
        "    2 |   ::cudashim::launch(f, n, n, g(n));\n"
        "      |                              ^\n"
    )
    own = {"k.cu": "int x;\n  f<<<n, n>>>(g(n, n));\n"}
    assert program_quotes(said, own) == (
        "k.cu:2: error: 'n' was not declared in this scope\n"
        "    2 |   f<<<n, n>>>(g(n, n));\n"
    )
    # A line g++ quotes as the program has it, or a file not the program's, is left as it is.
    same = "k.cu:1:5: error: x\n    1 | int x;\n      |     ^\n"
    assert program_quotes(same, own) == same
    other = "cuda_runtime.h:1:1: error: x\n    1 | int y;\n      | ^\n"
    assert program_quotes(other, own) == other
