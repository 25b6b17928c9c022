"""`python -m validators inspect FILE.cu [--json]`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from validators.cli import main as cli_main

SRC = """\
#include <cuda_fp16.h>
// markup-looking text must print literally: [bold] [/] [/red]
__device__ float twice(float x) { return 2.0f * x; }
template <typename T>
__global__ void k(T* a, int n) {
  __shared__ T tile[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  const char* s = "[/red]";
  if (i < n) { tile[threadIdx.x] = twice(a[i]); __syncthreads(); a[i] = tile[threadIdx.x] + s[0]; }
}
int main() {
  int n = 1000;
  dim3 grid((n + 255) / 256), block(256);
  k<float><<<grid, block>>>(nullptr, n);
}
"""

JSON_KEYS = [
    "file", "encoding", "chars", "kernels", "device_functions", "launches", "api_launches",
    "dim3s", "spans",
    "features", "feature_hits", "errors", "notes",
]


@pytest.fixture()
def cu(tmp_path: Path) -> Path:
    p = tmp_path / "prog.cu"
    p.write_text(SRC, encoding="utf-8")
    return p


def test_json_output_is_one_object_with_stable_keys(cu: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["inspect", str(cu), "--json"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    data = json.loads(out)
    assert list(data) == JSON_KEYS
    assert data["encoding"] == "utf-8" and data["chars"] == len(SRC)
    assert [k["name"] for k in data["kernels"]] == ["k"]
    assert data["kernels"][0]["template_params"] == ["typename T"]
    assert [f["name"] for f in data["device_functions"]] == ["twice"]
    (launch,) = data["launches"]
    assert (launch["kernel"], launch["callee"], launch["config"], launch["args"]) == (
        "k", "k<float>", ["grid", "block"], ["nullptr", "n"],
    )
    assert [d["name"] for d in data["dim3s"]] == ["grid", "block"]
    kinds = [(s["kind"], SRC[s["start"] : s["end"]]) for s in data["spans"]]
    assert ("launch_config", "dim3 grid((n + 255) / 256), block(256);") in kinds
    assert ("shared_memory", "__shared__ T tile[256];") in kinds
    assert ("kernel_body", "{ return 2.0f * x; }") in kinds
    line_of_sync = next(s["line"] for s in data["spans"] if s["kind"] == "sync")
    assert line_of_sync == 9
    assert data["features"] == ["half"]
    assert data["feature_hits"][0]["reason"] == "#include <cuda_fp16.h>"
    assert data["errors"] == []


def test_tables_show_kernels_launches_span_texts_and_features(
    cu: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli_main(["inspect", str(cu)]) == 0
    out = capsys.readouterr().out
    for needle in (
        "Kernels and device functions", "Launches", "Spans", "Features",
        "k<float>", "grid, block", "__shared__ T tile[256];", "__syncthreads()",
        "#include <cuda_fp16.h>",
    ):
        assert needle in out, needle
    # Long covered texts are abbreviated, not dumped whole.
    assert "..." in out


def test_code_that_looks_like_rich_markup_prints_literally(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    p = tmp_path / "markup.cu"
    p.write_text(
        "__global__ void k(float* a, char c) {}\n"
        'int main() { float* p[2]; for (int i = 0; i < 2; i++) k<<<1, 32>>>(p[i], "[/red]"[0]); }\n'
    )
    assert cli_main(["inspect", str(p)]) == 0
    out = capsys.readouterr().out
    assert 'p[i], "[/red]"[0]' in out


def test_missing_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    r = subprocess.run(
        [sys.executable, "-m", "validators", "inspect", str(tmp_path / "nope.cu")],
        capture_output=True, text=True, timeout=60,
    )
    assert r.returncode == 2
    assert r.stdout == ""
    assert r.stderr.strip() == f"inspect: cannot read {tmp_path / 'nope.cu'}: No such file or directory"
    assert "Traceback" not in r.stderr


def test_directory_and_unreadable_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["inspect", str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip().endswith("Is a directory")
    if Path("/dev/zero").exists():  # endless: must be refused, not read
        assert cli_main(["inspect", "/dev/zero"]) == 2
        assert capsys.readouterr().err.strip() == "inspect: cannot read /dev/zero: not a regular file"
    locked = tmp_path / "locked.cu"
    locked.write_text("int x;")
    locked.chmod(0)
    try:
        if locked.stat().st_mode and not _can_read(locked):
            assert cli_main(["inspect", str(locked)]) == 2
            assert capsys.readouterr().err.strip().endswith("Permission denied")
    finally:
        locked.chmod(0o644)


def _can_read(p: Path) -> bool:
    try:
        p.read_bytes()
        return True
    except OSError:
        return False


def test_binary_and_non_utf8_files_report_instead_of_crashing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blob = tmp_path / "blob.cu"
    blob.write_bytes(bytes(range(256)) * 40)
    assert cli_main(["inspect", str(blob), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["errors"][0].startswith("input looks binary")
    assert cli_main(["inspect", str(blob)]) == 0
    assert "input looks binary" in capsys.readouterr().out

    latin = tmp_path / "latin.cu"
    latin.write_bytes(b"// \xe9t\xe9\n__global__ void k() {}\n")
    assert cli_main(["inspect", str(latin), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["encoding"] == "latin-1" and [k["name"] for k in data["kernels"]] == ["k"]


def test_real_subprocess_on_an_ascii_terminal(tmp_path: Path) -> None:
    p = tmp_path / "uni.cu"
    p.write_text('// héllo\n__global__ void k(char* a) { const char* s = "é"; a[threadIdx.x] = s[0]; }\n')
    env = {**os.environ, "PYTHONIOENCODING": "ascii"}
    r = subprocess.run(
        [sys.executable, "-m", "validators", "inspect", str(p)],
        capture_output=True, text=True, timeout=60, env=env,
    )
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    assert "threadIdx.x" in r.stdout and "\\xe9" in r.stdout  # escaped, not a crash


def test_a_long_path_is_not_broken_across_lines_on_a_narrow_terminal():
    """The suite failed in a clone under a long temporary folder: the console's width cut the
    file's path in two."""
    import io

    from rich.console import Console

    from validators.analysis import analyze
    from validators.cli.inspect_cmd import print_tables

    console = Console(soft_wrap=False, width=60, file=io.StringIO())
    path = "/tmp/" + "deep-folder-" * 10 + "/main.cu"
    print_tables(path, analyze("__global__ void k() {}\nint main() { k<<<1, 1>>>(); }\n"), console)
    assert path in console.file.getvalue()
