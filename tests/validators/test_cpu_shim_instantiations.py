"""What the emulator's headers cost a program that uses none of them. GCC instantiates, at the
end of every translation unit, the templates that the inline function bodies of its headers
use, precompiled header or not: a non-template intrinsic written over a template helper (the
SIMD intrinsics over `_Map`, the float atomics over `atomic_update`, a std::vector registry)
was instantiated in every program, used or not, about a tenth of a small program's compile.
The intrinsics themselves still work: tests/validators/test_cpu_simd_intrinsics.py."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from validators.cpu import toolchain

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed")


def _instantiated(tmp_path: Path, source: str) -> list[str]:
    """The functions g++ finished for `source` compiled as a program is (the precompiled
    header of the plain build): one line each, as -fdump-tree-original names them."""
    (tmp_path / "prog.cu").write_text(source)
    cmd = [toolchain.gxx(), *toolchain.program_flags("plain"), "-x", "c++", f"-I{toolchain.INCLUDE_DIR}",
           "-include", str(toolchain.pch_header("plain")), "-c", "prog.cu", "-o", "prog.o",
           "-fdump-tree-original=dump.txt"]
    done = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "dump.txt").read_text(errors="replace")
    return [line for line in text.splitlines() if line.startswith(";; Function")]


def test_a_program_that_uses_no_intrinsic_instantiates_nothing_of_the_shim(tmp_path: Path) -> None:
    empty = _instantiated(tmp_path, "int main() { return 0; }\n")
    ours = [f for f in empty if "[with" in f and "cudashim" in f]
    assert ours == [], "\n".join(ours[:20])
    # Lambdas inside CUDA's own functions (atomicAdd(float*, float), __vadd2 ...).
    assert not [f for f in empty if re.search(r"\b(atomic[A-Z]\w*|__v\w+)\([^)]*\)::<lambda", f)]


def test_an_intrinsic_is_instantiated_where_it_is_called(tmp_path: Path) -> None:
    used = _instantiated(tmp_path, """
        __global__ void k(unsigned* o, float* f) { o[0] = __vadd2(o[1], o[2]); atomicAdd(f, 1.0f); }
        int main() { return 0; }
    """)
    assert any("_Map" in f and "__vadd2" in f for f in used)
    assert not any("__vsub4" in f for f in used)
