"""The stand-ins (a GitHub REST server, an OpenAI-compatible server) and scripted answers live
beside the tests that introduced them; end-to-end tests of other packages import them too.
Stand-ins more than one package's tests use (the Hugging Face Hub) live in tests/ itself."""

from __future__ import annotations

import os
import secrets
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
# The suite runs our own programs: on a machine whose only sandbox is `rlimits` it still runs
# (validators refuse untrusted code there unless told; test_cuda_simulated checks the refusal).
os.environ.setdefault("CKD_ALLOW_WEAK_SANDBOX", "1")
# KernelBench inputs are drawn under a salt drawn per check (the answer must not know them);
# the suite fixes it, so that a test's inputs are the same in every run.
os.environ.setdefault("CKD_KB_INPUT_SALT", "20261128")
# Each task's fresh case is drawn anew per run (as for users), from a key drawn here once for the
# whole run (xdist's workers inherit it): a failure that depends on the draw names the key, and
# `CKD_FRESH_SEED_KEY=<key> bash scripts/test.sh ...` draws the same cases again.
os.environ.setdefault("CKD_FRESH_SEED_KEY", secrets.token_hex(16))
# One compute thread per test process when xdist runs several (scripts/test.sh: three, on the
# two-core CI machine): each torch or NumPy in a worker otherwise starts a thread per core, and
# OpenMP threads spin while they wait, so two workers training at once burned about three times
# the CPU for the same steps (the in-process training tests: 267 CPU-s against 95). Set before
# any test module imports torch; subprocesses the tests start inherit it.
if int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")) > 1:
    for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(_var, "1")
for folder in (HERE, HERE / "sources", HERE / "builder"):
    if str(folder) not in sys.path:
        sys.path.append(str(folder))


def _shared_by_workers(tmp_path_factory, name: str) -> Path:
    """A folder for the whole run, the same for every xdist worker of it (their temporary
    folders have one parent); what goes in it must be safe to build from several processes."""
    base = tmp_path_factory.getbasetemp()
    shared = base.parent / name if os.environ.get("PYTEST_XDIST_WORKER") else base / name
    shared.mkdir(parents=True, exist_ok=True)
    return shared


@pytest.fixture(scope="session")
def shared_dir(tmp_path_factory):
    """`shared_dir(name)`: a folder shared by the run's workers (see `_shared_by_workers`)."""
    return lambda name: _shared_by_workers(tmp_path_factory, name)


@pytest.fixture(scope="session", autouse=True)
def shared_cpu_shim(tmp_path_factory):
    """One build of the emulator's runtime and precompiled headers for the whole session: tests
    that give a build its own cache directory (a cold build, a resumed build) still rebuild every
    program and stage, but not the emulator itself (13 s a directory, and about 50 CPU-s for each
    variant of the torch extensions' precompiled header). Shared by the xdist workers of one run
    (their temporary folders have one parent; the shim's builds take a file lock)."""
    shared = _shared_by_workers(tmp_path_factory, "cpu-shim")
    old = os.environ.get("CKD_SHIM_DIR")
    os.environ["CKD_SHIM_DIR"] = str(shared)
    yield
    if old is None:
        os.environ.pop("CKD_SHIM_DIR", None)
    else:
        os.environ["CKD_SHIM_DIR"] = old


@pytest.fixture
def no_login(monkeypatch, tmp_path) -> None:
    """No Hugging Face token from the environment or a stored login, whatever the machine has
    (the Hub tests point the real client at a stand-in on loopback)."""
    from huggingface_hub import constants

    for var in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_OIDC_RESOURCE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(constants, "HF_TOKEN_PATH", str(tmp_path / "no-token"))


def pytest_collection_modifyitems(session, config, items) -> None:
    """Files that hold a `slow` end-to-end test run first (in their own order): with the suite
    split over processes a file at a time, the longest files then start at once instead of
    leaving one process alone with them at the end. (xdist keeps this order only with
    `--no-loadscope-reorder`, which scripts/test.sh passes.)"""
    heavy = {item.path for item in items if item.get_closest_marker("slow") is not None}
    items.sort(key=lambda item: 0 if item.path in heavy else 1)


def pytest_report_header(config) -> str:
    return f"fresh cases drawn under CKD_FRESH_SEED_KEY={os.environ['CKD_FRESH_SEED_KEY']}"


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    if terminalreporter.stats.get("failed") or terminalreporter.stats.get("error"):
        terminalreporter.write_line(
            f"fresh cases were drawn under CKD_FRESH_SEED_KEY={os.environ['CKD_FRESH_SEED_KEY']}: "
            "set it to draw them again")
