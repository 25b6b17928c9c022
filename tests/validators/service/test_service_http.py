"""The real service on loopback (uvicorn in a subprocess, the cpu backend), driven over HTTP with
the real client: verdicts, bad input, limits, timeouts, authentication, a burst past the queue."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import threading
import time
import uuid
from pathlib import Path

import httpx
import pytest
from service_server import (
    TASK,
    endless_program,
    processes_running,
    reference_program,
    slow_program,
    start_server,
    wrong_program,
)

from schemas import Task
from validators.client import AsyncValidationClient, ServiceError, ValidationClient
from validators.service.pool import SNAPSHOT_SECONDS

TOKEN = "s3cret-token"
TIMEOUT = 120  # seconds per validation: never reached by a real check, even on a loaded machine
SHORT_TIMEOUT = 8  # the endless program's own server: it costs one of these
QUEUE = 2


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    srv = start_server(tmp_path_factory.mktemp("service"), "--backend", "cpu", "--workers", "1",
                       "--queue", str(QUEUE), "--timeout", str(TIMEOUT),
                       "--max-body-bytes", str(1 << 20),
                       # One caller (this test) may use every slot: the burst and batch tests
                       # measure the capacity (the per-caller share is test_adversarial_service's).
                       "--caller-share", "1", token=TOKEN)
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def short_server(tmp_path_factory):
    # No share of the job's time for the program's runs: the endless program then runs the job
    # into the timeout, which is what this server is for (the worker's replacement).
    srv = start_server(tmp_path_factory.mktemp("service-short"), "--backend", "cpu", "--workers",
                       "1", "--timeout", str(SHORT_TIMEOUT), "--program-share", "0", token=TOKEN)
    yield srv
    srv.stop()


@pytest.fixture
def client(server):
    with ValidationClient(server.url, token=TOKEN, retries=0) as c:
        yield c


def test_correct_program_passes_and_wrong_one_fails_with_its_reason(client):
    ok = client.validate(reference_program(), task_id=TASK)
    assert ok["status"] == "passed" and ok["task"] == TASK and ok["backend"] == "cpu"
    assert len(ok["cases"]) == 5

    # The same task inline, in the schemas.Task format, with the program as an object.
    task = json.loads(_builtin_task().model_dump_json())
    bad = client.validate({"source": wrong_program(), "filename": "clamp.cu"}, task=task)
    assert bad["status"] == "failed"
    assert "output y" in bad["reason"]
    # The published cases show the expected values; the fresh case's are withheld.
    assert any("expected 2" in c["reason"] for c in bad["cases"] if not c["fresh"])


def _builtin_task() -> Task:
    from sources.builtin import load_all

    return next(t for t, _ in load_all().tasks if t.name == TASK)


def test_score_rewards_compiled_and_correct(client):
    fence = "```cuda\n{}\n```"
    completions = ["I cannot write that.", fence.format(reference_program()),
                   "Here:\n" + fence.format(wrong_program()), fence.format("not a program")]
    out = client.score(TASK, completions, alpha=2.0, beta=0.5, batch_size=3)
    got = [(r["index"], r["status"], r["compiled"], r["correct"], r["reward"])
           for r in out["results"]]
    assert got == [(0, "no_code_block", False, False, 0.0), (1, "passed", True, True, 2.5),
                   (2, "failed", True, False, 0.5), (3, "compile_error", False, False, 0.0)]


def test_a_program_that_launches_no_kernel_earns_nothing_for_building(client):
    """The compile term is for kernel programs: an empty main or a host-only answer builds,
    but must not be a policy's cheap reward (issue 25, reward hacking)."""
    fence = "```cuda\n{}\n```"
    out = client.score(TASK, [fence.format("int main() { return 0; }")], alpha=2.0, beta=0.5)
    item = out["results"][0]
    assert (item["status"], item["compiled"], item["reward"]) == ("rejected", False, 0.0), item
    assert "no kernel launch" in item["reason"]


def test_the_client_sends_the_requests_speed_cap(client):
    out = client.score(TASK, ["no code here"], speed_cap=2.5)
    assert out["speed_cap"] == 2.5
    assert client.score(TASK, ["no code here"])["speed_cap"] == 3.0  # the server's default


def test_malformed_json_and_bad_fields_get_clear_errors(server):
    headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
    r = httpx.post(server.url + "/v1/validate", content=b'{"task_id": "clamp", "program": ',
                   headers=headers)
    assert r.status_code == 400 and "not valid JSON" in r.json()["error"]
    r = httpx.post(server.url + "/v1/validate", json={"task_id": TASK}, headers=headers)
    assert r.status_code == 422 and "program: Field required" in r.json()["error"]
    r = httpx.post(server.url + "/v1/score", json={"task_id": TASK, "completions": [],
                                                   "alfa": 1}, headers=headers)
    assert r.status_code == 422
    assert "completions" in r.json()["error"] and "alfa" in r.json()["error"]
    r = httpx.post(server.url + "/v1/validate", json={"task_id": "no_such", "program": "x"},
                   headers=headers)
    assert r.status_code == 404 and "'no_such'" in r.json()["error"]
    r = httpx.post(server.url + "/v1/validate", headers=headers, json={
        "program": "x", "task": {"name": "t", "description": "d"}})
    assert r.status_code == 422 and "invalid Task in request field task" in r.json()["error"]


def test_a_5_mb_program_is_refused_with_413(client):
    with pytest.raises(ServiceError) as err:
        client.validate("// pad\n" * (5 * 1024 * 1024 // 7), task_id=TASK)
    assert err.value.status == 413 and "--max-body-bytes" in str(err.value)


def test_wrong_or_missing_token_is_401_and_health_needs_none(server):
    for token in ("wrong", None):
        with ValidationClient(server.url, token=token, retries=0) as c:
            with pytest.raises(ServiceError) as err:
                c.tasks()
            assert err.value.status == 401
    assert httpx.get(server.url + "/healthz").json()["status"] == "ok"


def test_tasks_docs_and_metrics(server, client):
    ids = [t["id"] for t in client.tasks()]
    assert TASK in ids and len(ids) == len(set(ids))
    auth = {"Authorization": f"Bearer {TOKEN}"}
    assert httpx.get(server.url + "/docs", headers=auth).status_code == 200
    assert "/v1/score" in httpx.get(server.url + "/openapi.json", headers=auth).json()["paths"]
    client.validate(reference_program(), task_id=TASK)
    text = httpx.get(server.url + "/metrics", headers=auth).text
    assert 'ckd_verdicts_total{status="passed"}' in text
    assert 'ckd_build_cache_total{outcome="hit"}' in text
    assert "ckd_queue_depth" in text and "ckd_request_seconds_bucket" in text


def test_a_program_that_never_ends_times_out_and_frees_its_worker(short_server, client):
    # The healthy program's builds come from the unlimited server first (one build cache):
    # built cold under the short limit, on a loaded machine, its check can itself take longer.
    assert client.validate(reference_program(), task_id=TASK)["status"] == "passed"
    with ValidationClient(short_server.url, token=TOKEN, retries=0) as short_client:
        _endless_then_healthy(short_server, short_client)


def test_a_program_that_spends_its_share_of_the_job_is_timeout_a_verdict(tmp_path):
    # 40 s a job, a quarter of it for the program's runs: the endless program is stopped by its
    # share, long before the job's limit, and its answer is a verdict (a reward, not None).
    srv = start_server(tmp_path, "--backend", "cpu", "--workers", "1", "--timeout", "40",
                       "--program-share", "0.25", token=TOKEN)
    try:
        with ValidationClient(srv.url, token=TOKEN, retries=0) as c:
            r = c.validate(endless_program(f"ckd-endless-{uuid.uuid4().hex}"), task_id=TASK)
        assert r["status"] == "timeout", r
        # (the figures of a fresh case's reason are withheld: '#')
        assert "the program's runs took the check's" in r["reason"], r["reason"]
        scored = httpx.post(srv.url + "/v1/score", timeout=120,
                            headers={"Authorization": f"Bearer {TOKEN}"},
                            json={"task_id": TASK, "completions": [
                                f"```cuda\n{endless_program('ckd-endless-score')}\n```"]})
        item = scored.json()["results"][0]
        assert item["status"] == "timeout" and item["reward"] is not None, item
        assert not item["correct"], item
    finally:
        srv.stop()


def _endless_then_healthy(server, client) -> None:
    marker = f"ckd-endless-{uuid.uuid4().hex}"
    with pytest.raises(ServiceError) as err:
        client.validate(endless_program(marker), task_id=TASK)
    assert err.value.status == 504 and "worker was replaced" in str(err.value)
    # Nothing of the program survives its worker: neither it nor its sandbox launcher.
    deadline = time.monotonic() + 30
    while processes_running(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_running(marker) == []
    # One worker only: this answer comes from the replacement.
    assert client.validate(reference_program(), task_id=TASK)["status"] == "passed"
    assert "ckd_worker_restarts_total 1.0" in httpx.get(
        server.url + "/metrics", headers={"Authorization": f"Bearer {TOKEN}"}).text


def test_a_burst_past_the_queue_is_refused_cleanly_and_nothing_is_lost(server):
    n = 10
    burst = uuid.uuid4().hex[:8]
    answers: list[list[httpx.Response | Exception]] = [[] for _ in range(n)]
    body = {"task_id": TASK, "program": slow_program(0.3)}
    start = threading.Barrier(n)

    def send(i: int) -> None:
        start.wait()
        try:
            answers[i].append(httpx.post(server.url + "/v1/validate", json=body, timeout=120,
                                         headers={"Authorization": f"Bearer {TOKEN}",
                                                  "X-Request-ID": f"{burst}-{i}"}))
        except httpx.HTTPError as exc:
            answers[i].append(exc)

    threads = [threading.Thread(target=send, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(len(a) == 1 and isinstance(a[0], httpx.Response) for a in answers), answers
    codes = sorted(a[0].status_code for a in answers)
    # One worker plus a queue of two: at most three admitted at once, each taking ~1.5 s.
    assert codes.count(200) >= 1 + QUEUE and set(codes) <= {200, 429}
    refused = [a[0] for a in answers if a[0].status_code == 429]
    assert refused and all(int(r.headers["Retry-After"]) >= 1 for r in refused)
    assert all(a[0].json()["status"] == "passed" for a in answers if a[0].status_code == 200)
    # The server's side: one access-log line per request id, with the status the client got.
    # (A line is written just after its response is sent: wait for the last ones.)
    def logged() -> list[dict]:
        # Only the access lines: a check's "fresh seed" line carries its request id too.
        return [e for e in (json.loads(line) for line in server.log_text().splitlines()
                            if f'"{burst}-' in line) if e.get("msg") == "request"]

    deadline = time.monotonic() + 30
    while len(logged()) < n and time.monotonic() < deadline:
        time.sleep(0.05)
    assert sorted((e["request_id"], e["status"]) for e in logged()) == sorted(
        (f"{burst}-{i}", a[0].status_code) for i, a in enumerate(answers))


def test_the_async_client_retries_a_burst_until_every_request_passes(server):
    asyncio.run(_burst_with_retries(server.url))


async def _burst_with_retries(url: str) -> None:
    async with AsyncValidationClient(url, token=TOKEN, backoff=0.1,
                                     max_backoff=2.0, retries=30) as c:
        results = await asyncio.gather(*(c.validate(reference_program(), task_id=TASK)
                                         for _ in range(6)))
    assert [r["status"] for r in results] == ["passed"] * 6


def test_score_past_the_capacity_is_413_and_the_client_batches_it(server, client):
    program = "```cuda\n" + reference_program() + "\n```"
    completions = [program if i % 2 == 0 else "no code" for i in range(7)]  # 4 programs
    capacity = 1 + QUEUE
    r = httpx.post(server.url + "/v1/score", json={"task_id": TASK, "completions": completions},
                   headers={"Authorization": f"Bearer {TOKEN}"})
    assert r.status_code == 413 and f"capacity of {capacity}" in r.json()["error"]
    assert client.capacity() == capacity
    out = client.score(TASK, completions)
    assert [(x["index"], x["status"]) for x in out["results"]] == [
        (i, "passed" if i % 2 == 0 else "no_code_block") for i in range(7)]


def test_the_speed_term_is_refused_off_the_cuda_backend(server):
    r = httpx.post(server.url + "/v1/score", headers={"Authorization": f"Bearer {TOKEN}"},
                   json={"task_id": TASK, "completions": ["x"], "speed": 0.5})
    assert r.status_code == 400 and "needs the cuda backend" in r.json()["error"]


def _workers_of(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_bytes()
            cmd = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(b")") + 2:].split()[1])
        if ppid == pid and b"multiprocessing.spawn" in cmd:
            found.append(int(entry.name))
    return found


def test_a_worker_that_dies_mid_job_gives_500_is_replaced_and_leaves_nothing(server, client):
    (worker,) = _workers_of(server.proc.pid)
    marker = f"ckd-endless-{uuid.uuid4().hex}"
    answer: list[object] = []
    t = threading.Thread(target=lambda: answer.append(httpx.post(
        server.url + "/v1/validate", json={"task_id": TASK, "program": endless_program(marker)},
        headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60)))
    t.start()
    deadline = time.monotonic() + 30
    while not processes_running(marker):
        assert time.monotonic() < deadline, "the program never started"
        time.sleep(0.05)
    # The pool has listed the processes below the worker: its snapshots come every
    # SNAPSHOT_SECONDS, and a loaded machine may delay one.
    time.sleep(6 * SNAPSHOT_SECONDS)
    os.kill(worker, signal.SIGKILL)
    t.join(60)
    (r,) = answer
    assert r.status_code == 500 and "worker died during the job" in r.json()["error"]
    deadline = time.monotonic() + 30
    while processes_running(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_running(marker) == []
    assert client.validate(reference_program(), task_id=TASK)["status"] == "passed"
    assert _workers_of(server.proc.pid) not in ([], [worker])
