"""`benchmarks/real_projects.py`: project folders (sources, headers, project.toml) built and
tested on the cpu backend through `validators run`, one row each with its cause."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PROJECTS = REPO / "benchmarks" / "real_projects"


def _module():
    spec = importlib.util.spec_from_file_location("real_projects", REPO / "benchmarks" / "real_projects.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["real_projects"] = mod  # dataclasses look their module up by name
    spec.loader.exec_module(mod)
    return mod


rp = _module()


@pytest.mark.parametrize("text, said", [
    ('build = "nvcc -o t main.cu"\n', "'test' is missing"),
    ('build = "nvcc -o t main.cu"\ntest = "./t"\nexpect_exit = "0"\n', "'expect_exit' must be int"),
    ('build = "nvcc -o t main.cu"\ntest = "./t"\nexpect = 0\n', "unknown key 'expect'"),
    ('build = "nvcc -o t main.cu"\ntest = ""\n', "'test' names no program"),
    ('build = nvcc\n', "cannot read it"),
])
def test_a_bad_manifest_is_named(tmp_path, text, said):
    path = tmp_path / "project.toml"
    path.write_text(text)
    with pytest.raises(rp.ManifestError) as err:
        rp.read_manifest(path)
    assert str(err.value).startswith(f"{path}: ") and said in str(err.value)


def test_the_manifest_gives_the_program_its_arguments(tmp_path):
    (tmp_path / "project.toml").write_text(
        'build = "nvcc -I include -o t a.cu b.cu"\ntest = "./t 10 \'two words\'"\nexpect_exit = 3\n')
    m = rp.read_manifest(tmp_path / "project.toml")
    assert (m.build, m.args, m.expect_exit, m.expect_stdout) == (
        "nvcc -I include -o t a.cu b.cu", ["10", "two words"], 3, None)


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed")
def test_a_failing_project_gets_its_cause_and_a_bad_manifest_loses_no_other_row(tmp_path, capsys):
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "project.toml").write_text('build = "nvcc -o t main.cu"\n')
    out = tmp_path / "rows.json"
    assert rp.main([str(bad), str(PROJECTS / "scale_bug"), "--json", str(out)]) == 0
    rows = {r["project"]: r for r in json.loads(out.read_text())}
    assert rows["bad"]["result"] == "error" and "'test' is missing" in rows["bad"]["cause"]
    # the program's own check prints how many elements the rounded-down grid left unscaled
    assert rows["scale_bug"]["result"] == "fail", rows["scale_bug"]
    assert rows["scale_bug"]["cause"].startswith("exit status 1, expected 0; last output '")
    assert "wrong: FAIL" in rows["scale_bug"]["cause"]
    assert "| scale_bug | fail |" in capsys.readouterr().out
