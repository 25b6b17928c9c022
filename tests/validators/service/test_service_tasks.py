"""The task sets `serve --tasks` loads, and the command's refusals of bad options."""

from __future__ import annotations

import subprocess
import sys

import pytest
from service_server import ROOT

from schemas import DatasetRecord, Provenance, ValidationSummary
from validators.service.tasks import TaskSetError, load_task_set


def _builtin(names: tuple[str, ...]):
    from sources.builtin import load_all

    return [(t, p) for t, p in load_all().tasks if t.name in names]


def test_builtin_is_the_default_with_reference_programs():
    ts = load_task_set()
    assert ts.source == "builtin" and "clamp" in ts.tasks and len(ts.tasks) > 50
    assert "__global__" in ts.references["clamp"]


def test_a_folder_of_task_folders(tmp_path):
    for task, program in _builtin(("clamp", "relu")):
        folder = tmp_path / task.name
        folder.mkdir()
        (folder / "task.json").write_text(task.model_dump_json())  # reference code inlined
        (folder / "main.cu").write_text(program.source)
    ts = load_task_set(str(tmp_path))
    assert sorted(ts.tasks) == ["clamp", "relu"] and set(ts.references) == {"clamp", "relu"}


def test_a_dataset_folder_written_by_the_builder(tmp_path):
    from builder.writer import write_shards

    records = [DatasetRecord(
        id=f"{task.name}-{k}", prompt=task.description, response=program.source,
        messages=[{"role": "user", "content": task.description},
                  {"role": "assistant", "content": program.source}],
        task=task, validation=ValidationSummary(backend="cpu", status="passed"),
        provenance=Provenance(source="builtin", origin=task.name, license="Apache-2.0"),
        split="train" if k == 0 else "test")
        for task, program in _builtin(("clamp", "relu")) for k in range(2)]
    write_shards(tmp_path, records)
    ts = load_task_set(str(tmp_path))
    assert sorted(ts.tasks) == ["clamp", "relu"]
    assert ts.tasks["clamp"] == records[0].task


def test_bad_task_sources_are_named(tmp_path):
    with pytest.raises(TaskSetError, match="nowhere: not 'builtin' and not a folder"):
        load_task_set(str(tmp_path / "nowhere"))
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "task.json").write_text('{"name": "t"')
    with pytest.raises(TaskSetError, match="task.json: line 1"):
        load_task_set(str(tmp_path))


@pytest.mark.parametrize(("args", "message"), [
    (["--tasks", "/no/such/tasks"], "--tasks /no/such/tasks: not 'builtin' and not a folder"),
    (["--token-env", "CKD_NO_SUCH_TOKEN_VAR"], "--token-env CKD_NO_SUCH_TOKEN_VAR: the "
                                               "environment variable is unset"),
    (["--workers", "0"], "--workers must be at least 1"),
])
def test_serve_refuses_bad_options_in_one_line(args, message):
    out = subprocess.run([sys.executable, "-m", "validators", "serve", "--backend", "cpu", *args],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and message in out.stderr and "Traceback" not in out.stderr
