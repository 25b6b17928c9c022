"""compare.py: tolerance modes and every failure reason, on arrays and files."""

from __future__ import annotations

import numpy as np
import pytest

from schemas import TensorSpec, Tolerance
from validators.compare import compare_arrays, compare_output, read_output

SPEC = TensorSpec(name="y", dtype="float32", shape=["N"])


def _f(*v):
    return np.array(v, dtype=np.float32)


def test_allclose_pass_and_fail():
    ref = _f(1, 2, 3, 4)
    ok = compare_arrays("y", ref + 1e-6, ref, Tolerance())
    assert ok.ok and ok.mismatches == 0 and ok.elements == 4 and ok.max_abs_error < 1e-5
    bad = compare_arrays("y", _f(1, 2, 3.1, 4.2), ref, Tolerance())
    assert not bad.ok and bad.mismatches == 2 and bad.first_mismatch_index == 2
    assert abs(bad.max_abs_error - 0.2) < 1e-5 and abs(bad.max_rel_error - 0.05) < 1e-5
    assert "2 of 4 elements differ (allclose atol=1e-05 rtol=0.0001); first at index 2: got 3.0999999" in bad.reason


def test_rtol_scales_with_reference():
    ref = _f(1000.0)
    assert compare_arrays("y", _f(1000.05), ref, Tolerance(atol=0, rtol=1e-4)).ok
    assert not compare_arrays("y", _f(1000.2), ref, Tolerance(atol=0, rtol=1e-4)).ok


def test_exact_mode_integers_and_floats():
    r = np.arange(5, dtype=np.int32)
    assert compare_arrays("y", r.copy(), r, Tolerance(mode="exact")).ok
    o = r.copy()
    o[3] = 7
    c = compare_arrays("y", o, r, Tolerance(mode="exact"))
    assert not c.ok and c.first_mismatch_index == 3 and "(exact)" in c.reason and "got 7, expected 3" in c.reason
    assert not compare_arrays("y", _f(1.0000001), _f(1.0), Tolerance(mode="exact")).ok


def test_max_abs_mode():
    assert compare_arrays("y", _f(1.05), _f(1.0), Tolerance(mode="max_abs", max_abs=0.1)).ok
    c = compare_arrays("y", _f(1.0, 1.5), _f(1.0, 1.0), Tolerance(mode="max_abs", max_abs=0.1))
    assert not c.ok and "max_abs 0.1" in c.reason and c.first_mismatch_index == 1


def test_nan_and_inf_where_reference_has_none():
    c = compare_arrays("y", _f(1, np.nan, np.nan), _f(1, 2, 3), Tolerance(atol=1e9))
    assert not c.ok and c.mismatches == 2 and c.first_mismatch_index == 1
    assert "2 NaN value(s) where the reference has none; first at index 1 (expected 2)" in c.reason
    c = compare_arrays("y", _f(1, 2, -np.inf), _f(1, 2, 3), Tolerance(atol=1e9))
    assert not c.ok and "1 Inf value(s)" in c.reason and c.first_mismatch_index == 2


def test_nan_and_inf_matching_reference_agree():
    ref = _f(np.nan, np.inf, 1)
    assert compare_arrays("y", ref.copy(), ref, Tolerance()).ok
    assert compare_arrays("y", ref.copy(), ref, Tolerance(mode="exact")).ok
    assert not compare_arrays("y", _f(np.nan, -np.inf, 1), ref, Tolerance()).ok


def test_empty_arrays():
    assert compare_arrays("y", _f(), _f(), Tolerance()).ok


@pytest.mark.parametrize("nbytes,reason", [
    (None, "missing output file data/y.bin"),
    (12, "short output data/y.bin: 12 bytes, expected 16 (4 x float32[4])"),
    (20, "oversized output data/y.bin: 20 bytes, expected 16 (4 x float32[4])"),
])
def test_file_problems(tmp_path, nbytes, reason):
    (tmp_path / "data").mkdir()
    path = tmp_path / "data" / "y.bin"
    if nbytes is not None:
        path.write_bytes(b"\0" * nbytes)
    arr, why = read_output(tmp_path, SPEC, {"N": 4})
    assert arr is None and why == reason
    check, arr = compare_output(tmp_path, SPEC, {"N": 4}, _f(1, 2, 3, 4), Tolerance())
    assert not check.ok and check.reason == reason and arr is None


def test_file_read_little_endian(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "y.bin").write_bytes(_f(1, 2, 3, 4).astype("<f4").tobytes())
    check, arr = compare_output(tmp_path, SPEC, {"N": 4}, _f(1, 2, 3, 4), Tolerance())
    assert check.ok and arr.tolist() == [1, 2, 3, 4]


def test_planted_links_and_fifos_are_not_followed(tmp_path):
    secret = tmp_path / "secret.bin"
    secret.write_bytes(_f(1, 2, 3, 4).tobytes())
    run = tmp_path / "run"
    (run / "data").mkdir(parents=True)
    link = run / "data" / "y.bin"
    link.symlink_to(secret)
    arr, why = read_output(run, SPEC, {"N": 4})
    assert arr is None and why == "output data/y.bin is a symbolic link, not a file"
    link.unlink()
    import os

    os.mkfifo(link)
    arr, why = read_output(run, SPEC, {"N": 4})  # must not block
    assert arr is None and why == "output data/y.bin is not a regular file"
    # a link in place of the data folder itself (its file is a regular one, behind the link)
    other = tmp_path / "elsewhere"
    other.mkdir()
    (other / "y.bin").write_bytes(_f(1, 2, 3, 4).tobytes())
    os.unlink(link)
    (run / "data").rmdir()
    (run / "data").symlink_to(other)
    arr, why = read_output(run, SPEC, {"N": 4})
    assert arr is None and "not a directory" in why
