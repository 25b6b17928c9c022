"""A build whose validator cannot work here stops on its first records with the cause; an
error of ours is counted apart from verdicts and retried on resume."""

from __future__ import annotations

import pytest
from builder_helpers import make_raw, scale_program, scale_task

from builder.failfast import FailFast, infrastructure_cause
from builder.item import Item
from builder.pipeline import BuildError
from builder.stages import Filter, Validate
from schemas import ErrorOrigin, Status, ValidationResult


def _item(rid: str, status: Status = Status.PASSED, reason: str = "",
          origin: ErrorOrigin | None = None) -> Item:
    it = Item(raw=make_raw(rid, scale_program(2.0), task=scale_task(2.0)))
    it.validation = ValidationResult(backend="cpu", status=status, reason=reason,
                                     error_origin=origin)
    return it


def _harness(rid: str, case: str = "c0") -> Item:
    return _item(rid, Status.ERROR, f"case {case}: no reference outputs: reference harness could "
                 f"not start: ckd-launch: cannot execute /srv/{rid}/.venv/bin/python: No such "
                 "file or directory", ErrorOrigin.VALIDATOR)


def _envs(items):
    from builder.item import Envelope

    return [Envelope(item=it) for it in items]


def test_the_same_infrastructure_error_on_the_first_records_stops_the_build():
    watch = FailFast(BuildError, first=4)
    envs = _envs([_harness(f"r/{i}", case=f"c{i}") for i in range(4)])
    for env in envs[:3]:
        watch(env)
    with pytest.raises(BuildError, match="first 4 records.*harness could not start"):
        watch(envs[3])


def test_one_good_record_or_two_causes_do_not_stop_it():
    for mixed in ([_harness("r/0"), _item("r/1"), _harness("r/2"), _harness("r/3")],
                  [_harness("r/0"), _harness("r/1"), _harness("r/2"),
                   _item("r/3", Status.ERROR, "could not run: sandbox set-up failed",
                         ErrorOrigin.VALIDATOR)]):
        watch = FailFast(BuildError, first=4)
        for env in _envs(mixed):
            watch(env)
    # The task's own failures (its reference) are no reason to stop: they are the records'.
    watch = FailFast(BuildError, first=2)
    for env in _envs([_item(f"r/{i}", Status.ERROR, "reference failed: ValueError",
                            ErrorOrigin.TASK) for i in range(2)]):
        watch(env)


def test_a_crashed_validate_stage_counts_as_infrastructure():
    it = _item("r/0")
    it.validation = None
    it.reject("validate", "stage_error:validate", "BrokenPipeError: [Errno 32] Broken pipe")
    assert infrastructure_cause(it) is not None
    assert infrastructure_cause(_item("r/1", Status.FAILED, "case c0: wrong")) is None


def test_errors_are_counted_apart_and_ours_are_retried():
    ours = _harness("r/0")
    task = _item("r/1", Status.ERROR, "no reference outputs: reference failed: ValueError",
                 ErrorOrigin.TASK)
    assert Filter().process(ours.model_copy(deep=True)).rejection.reason == "validator_error"
    assert Filter().process(task.model_copy(deep=True)).rejection.reason == "task_error"
    v = Validate("cpu")
    assert not v.keep(ours)  # not cached: a resumed build validates it again
    assert v.keep(task) and v.keep(_item("r/2", Status.FAILED))


@pytest.mark.slow
def test_a_build_whose_harness_cannot_start_fails_loudly_and_resumes(tmp_path, monkeypatch, capsys):
    """The interpreter unreachable in the sandbox (as with a linked .venv before it was
    handled): no record is judged; the build says so and exits non-zero, and once the
    environment is mended the same command validates them again (errors are not cached)."""
    from builder.cli import EXIT_EMPTY
    from builder.cli import main as builder_main
    from validators import reference

    monkeypatch.setenv("CKD_CACHE_DIR", str(tmp_path / "ckd"))
    monkeypatch.setenv("CKD_FRESH_SEED_KEY", "5eed" * 16)
    real = reference.python_executable
    monkeypatch.setattr(reference, "python_executable", lambda: "/nonexistent/venv/bin/python")

    def run(out: str, limit: int) -> int:
        return builder_main(["run", "--out", str(tmp_path / out), "--backend", "cpu",
                             "--executor", "local", "--quick", "--no-progress",
                             "--limit", str(limit)])

    assert run("small", 2) == EXIT_EMPTY
    err = capsys.readouterr().err
    assert "kept no record of 2" in err and "filter: validator_error 2" in err
    assert not list((tmp_path / "small" / "data").glob("*.parquet"))

    assert run("eight", 8) == 2
    err = capsys.readouterr().err
    assert "first 8 records" in err and "reference harness could not start" in err

    monkeypatch.setattr(reference, "python_executable", real)
    assert run("small", 2) == 0
    manifest = (tmp_path / "small" / "manifest.json").read_text()
    assert '"validator_error"' not in manifest
    assert datasets_rows(tmp_path / "small") == 2


def datasets_rows(out) -> int:
    datasets = pytest.importorskip("datasets")
    ds = datasets.load_dataset(str(out), cache_dir=str(out.parent / ".hf"))
    return sum(len(ds[s]) for s in ds)
