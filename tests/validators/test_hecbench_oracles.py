"""The harness oracles of benchmarks/hecbench_oracles.py: they accept the real programs' output
on the CPU backend and reject a program whose kernel was broken on purpose."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import hecbench_cpu  # noqa: E402
import hecbench_oracles  # noqa: E402

DATA = ROOT / ".." / "shared" / "data" / "hecbench"


def test_f16atomic_oracle_reads_both_sections() -> None:
    good = "FLOAT32: 0.000000 8.000000\n\nFLOAT32: 0.000000 8.000000\n"
    assert hecbench_oracles.f16atomic(["4096", "1"], good)[0]
    ok, why = hecbench_oracles.f16atomic(["4096", "1"], good.replace("8.0", "7.0", 1))
    assert not ok and "half" in why
    assert not hecbench_oracles.f16atomic(["4096", "1"], "FLOAT32: 0.000000 8.000000\n")[0]


def test_langevin_oracle_needs_whole_blocks_and_three_errors() -> None:
    ok, why = hecbench_oracles.langevin(["1000", "1"], "")
    assert not ok and "256" in why
    ok, why = hecbench_oracles.langevin(["1024", "1"], "nothing printed")
    assert not ok and "Error statistics" in why


def test_michalewicz_oracle_reproduces_libstdcxx_mt19937(tmp_path: Path) -> None:
    """The oracle's random vectors are the program's: checked against g++'s own <random>."""
    import subprocess

    import numpy as np

    src = tmp_path / "mt.cpp"
    src.write_text(
        "#include <random>\n#include <cstdio>\nint main(){std::mt19937 g(19937);"
        "std::uniform_real_distribution<float> d(0.0,4.0);"
        'for(int i=0;i<1000;i++) std::printf("%.9g\\n", d(g));}\n'
    )
    subprocess.run(["g++", "-O2", str(src), "-o", str(tmp_path / "mt")], check=True)
    out = subprocess.run([str(tmp_path / "mt")], capture_output=True, text=True, check=True)
    expected = np.array([float(v) for v in out.stdout.split()], dtype=np.float32)
    got = hecbench_oracles._libstdcxx_uniform_float(np.random.RandomState(19937), 1000, 0.0, 4.0)
    assert np.array_equal(got, expected)


needs_data = pytest.mark.skipif(not DATA.is_dir(), reason="../shared/data/hecbench not present")

# (program, text in main.cu, replacement that breaks the kernel's result)
MUTANTS = [
    ("f16atomic-cuda", "__half2 val {ZERO_FP16, ONE_FP16};", "__half2 val {ONE_FP16, ONE_FP16};"),
    ("michalewicz-cuda", "float c = powf(b, 20);", "float c = powf(b, 10);"),
    ("langevin-cuda", "r = fmaf (r, x,  0.25f * x);", "r = fmaf (r, x,  0.26f * x);"),
]


@needs_data
@pytest.mark.parametrize("name", sorted(hecbench_oracles.ORACLES))
def test_oracle_passes_the_real_program(name: str) -> None:
    from validators.backends.cpu import CpuBackend

    row = hecbench_cpu.run_one(CpuBackend(), DATA / name, ["forward"], ["plain"])
    assert (row["verdict"], row["check"]) == ("PASS", "oracle"), row


@needs_data
@pytest.mark.parametrize(("name", "old", "new"), MUTANTS, ids=[m[0] for m in MUTANTS])
def test_oracle_rejects_a_broken_kernel(
    name: str, old: str, new: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from validators.backends.cpu import CpuBackend

    source = (DATA / name / "main.cu").read_text()
    assert old in source, f"{name}: mutation site {old!r} not found"
    monkeypatch.setitem(hecbench_cpu.SOURCE_SCALING, name, [(old, new, "test mutant")])
    row = hecbench_cpu.run_one(CpuBackend(), DATA / name, ["forward"], ["plain"])
    assert row["verdict"] == "FAIL", row
