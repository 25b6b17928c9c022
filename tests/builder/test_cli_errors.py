"""Inputs the builder cannot work with: exit status 2 and one line naming input and reason."""

from __future__ import annotations

import socket

import pytest

from builder.cli import main
from sources.base import register_source


def one_error_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("error: ")
    return err[0]


def test_unknown_source(tmp_path, capsys):
    assert main(["run", "--sources", "nosuch", "--out", str(tmp_path / "o"), "--no-progress"]) == 2
    line = one_error_line(capsys)
    assert "'nosuch'" in line and "known: " in line and "builtin" in line


def test_unwritable_output(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    assert main(["run", "--out", str(blocker / "dataset"), "--no-progress"]) == 2
    line = one_error_line(capsys)
    assert str(blocker / "dataset") in line and "not writable" in line


def test_ray_address_that_does_not_answer(tmp_path, capsys):
    register_source("cli_test_empty", lambda: iter(()))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert main(["run", "--sources", "cli_test_empty", "--address", f"127.0.0.1:{port}", "--out", str(tmp_path / "o"), "--no-progress"]) == 2
    line = one_error_line(capsys)
    assert f"--address 127.0.0.1:{port}" in line and "no Ray cluster answers" in line


def test_negative_limit(tmp_path, capsys):
    assert main(["run", "--limit", "-1", "--out", str(tmp_path / "o"), "--no-progress"]) == 2
    assert "--limit" in one_error_line(capsys)


def test_cuda_backend_without_a_gpu(tmp_path, capsys):
    cuda = pytest.importorskip("validators.backends.cuda")
    if cuda.CudaBackend().available() is not None:
        pytest.skip("nvcc is not installed here")
    if cuda.probe_gpu().ok:
        pytest.skip("this machine has a GPU")
    register_source("cli_test_empty", lambda: iter(()))
    assert main(["run", "--sources", "cli_test_empty", "--backend", "cuda", "--out", str(tmp_path / "o"), "--no-progress"]) == 2
    line = one_error_line(capsys)
    assert "--backend cuda" in line and "needs_gpu" in line and "no GPU" in line


@pytest.mark.parametrize("value", ["-0.5", "0", "nan"])
def test_near_dup_threshold_out_of_range(tmp_path, capsys, value):
    assert main(["run", "--near-dup-threshold", value, "--out", str(tmp_path / "o"), "--no-progress"]) == 2
    assert f"--near-dup-threshold {float(value)}" in one_error_line(capsys)


def test_cache_dir_that_is_a_file(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    assert main(["run", "--cache-dir", str(blocker), "--out", str(tmp_path / "o"), "--no-progress"]) == 2
    line = one_error_line(capsys)
    assert str(blocker) in line and "not a folder" in line
