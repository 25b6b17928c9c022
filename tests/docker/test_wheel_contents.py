"""The images install the project from a wheel, not in editable mode: every file the packages
need at run time (the CPU backend's headers and runtime source, the built-in tasks, configs)
must be in it, not only the Python modules."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("schemas", "sources", "validators", "builder", "cuset")


def tracked_files() -> list[str]:
    out = subprocess.run(["git", "ls-files", "--", *PACKAGES], cwd=ROOT, capture_output=True,
                         text=True, check=False)
    if out.returncode != 0:
        pytest.skip(f"not a git checkout ({out.stderr.strip()})")
    return out.stdout.splitlines()


def test_wheel_holds_every_tracked_file_of_the_packages(tmp_path):
    pytest.importorskip("setuptools", reason="the wheel is built without build isolation")
    files = tracked_files()
    wanted = {p for p in files if not p.endswith(".py")}
    assert any(p.endswith(".cuh") for p in wanted) and any(p.endswith(".cpp") for p in wanted)
    # what the images' build context holds (docker/*.dockerignore), copied so that setuptools'
    # build/ and egg-info land in tmp_path, not in the checkout
    src = tmp_path / "src"
    for rel in [*files, "pyproject.toml", "README.md"]:
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, src / rel)
    # no build isolation: setuptools is installed here, and nothing is downloaded
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                           "--no-build-isolation", "-q", "-w", str(tmp_path / "wheel"),
                           str(src)], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    (wheel,) = (tmp_path / "wheel").glob("*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = sorted(wanted - names)
    assert missing == [], f"{len(missing)} files not in the wheel, e.g. {missing[:5]}"
