"""`/v1/score` and the TRL reward on a check that could not be carried out: the answer is an
error with its cause, never a reward of 0 (which would teach a policy that a correct program is
wrong)."""

from __future__ import annotations

import json

import pytest
from service_server import reference_program, start_server

from sources.builtin.loader import load_tasks
from validators.client import ServiceError
from validators.reward import ServiceReward

TOKEN = "score-errors-token"
BROKEN = "import numpy as np\ndef reference(inputs, sizes):\n    raise RuntimeError('no data')\n"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("score-errors")
    folder = tmp / "tasks" / "clamp"
    folder.mkdir(parents=True)
    task, program = next((t, p) for t, p in load_tasks() if t.name == "clamp")
    spec = json.loads(task.model_dump_json())
    spec["reference"]["code"] = BROKEN
    (folder / "task.json").write_text(json.dumps(spec))
    (folder / "main.cu").write_text(program.source)
    srv = start_server(tmp, "--backend", "cpu", "--workers", "1", "--queue", "8",
                       "--timeout", "120", "--tasks", str(tmp / "tasks"), token=TOKEN)
    yield srv
    srv.stop()


def _fenced(source: str) -> str:
    return f"```cuda\n{source}\n```\n"


def test_score_answers_an_unjudged_program_with_no_reward(server):
    import httpx

    r = httpx.post(server.url + "/v1/score", timeout=300,
                   headers={"Authorization": f"Bearer {TOKEN}"},
                   json={"task_id": "clamp", "completions": [_fenced(reference_program("clamp")),
                                                             "no code here"]})
    assert r.status_code == 200, r.text
    first, second = r.json()["results"]
    assert first["status"] == "error" and first["reward"] is None, first
    assert first["error_origin"] == "task" and "no data" in first["reason"]
    assert second["status"] == "no_code_block" and second["reward"] == 0.0


def test_the_trl_reward_raises_or_leaves_it_out_never_zero(server):
    completions = [_fenced(reference_program("clamp"))]
    with pytest.raises(ServiceError, match="not judged"):
        ServiceReward(server.url, token=TOKEN)(prompts=["p"], completions=completions,
                                               task_id=["clamp"])
    got = ServiceReward(server.url, token=TOKEN, on_error="none")(
        prompts=["p"], completions=completions, task_id=["clamp"])
    assert got == [None]
