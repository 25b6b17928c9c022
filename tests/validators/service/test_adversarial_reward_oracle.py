"""Issue 21, classes 3 and 4, against the real service on loopback (uvicorn in a subprocess, the
cpu backend, the real client): a reward never comes from a weaker check than the server's, and
a `/v1/validate` answer is no oracle for the case drawn at validation time.

- class 3: a histogram that counts into shared memory without atomics computes the right
  answer when its threads run one at a time (the fast check) and loses updates when they
  interleave; it must not score full reward through `/v1/score` or `ServiceReward`, and a
  request asking for the fast check must not get it.
- class 4: a lookup-table program for `argmax` learns each case's answer from one answer of
  `/v1/validate` (the expected value in a failing case's reason, its inputs' key from its
  stdout, the fresh seed) and replays them; the fresh case must defeat it.
"""

from __future__ import annotations

import json
import re
import uuid

import httpx
import numpy as np
import pytest
from service_server import reference_program, start_server

from validators.client import ServiceError, ValidationClient
from validators.reward import ServiceReward

TOKEN = "adversarial-token"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    # One worker: a worker kept one fresh seed per task for its life, so a table learned from
    # one answer met the same fresh case in the next request. A long timeout: the service's
    # limit is not under test, and a cold thorough check on a loaded machine builds a lot.
    srv = start_server(tmp_path_factory.mktemp("adversarial"), "--backend", "cpu", "--workers",
                       "1", "--queue", "8", "--timeout", "600", token=TOKEN)
    yield srv
    srv.stop()


@pytest.fixture
def client(server):
    with ValidationClient(server.url, token=TOKEN, retries=0) as c:
        yield c


def _fenced(source: str) -> str:
    return f"```cuda\n{source}\n```\n"


# --- class 3: the reward path runs the server's check --------------------------------------------

def racy_histogram() -> str:
    """The built-in histogram with its shared-memory count a plain read-modify-write: two
    threads of a block that meet one byte value lose an update."""
    src = reference_program("histogram")
    racy = src.replace("atomicAdd(&local[data[i]], 1u);", "local[data[i]] += 1u;")
    assert racy != src
    return racy


def test_a_racy_histogram_scores_less_than_full_reward(client):
    answer = client.score("histogram", [_fenced(racy_histogram()),
                                        _fenced(reference_program("histogram"))])
    racy, honest = answer["results"]
    assert racy["status"] == "failed" and not racy["correct"], racy
    assert answer["check"] == "thorough"
    assert "schedule-dependent" in racy["reason"] or "race" in racy["reason"]
    assert racy["reward"] == pytest.approx(0.1)  # compiled, not correct
    assert honest["status"] == "passed" and honest["reward"] == pytest.approx(1.1)


def test_service_reward_gives_the_racy_histogram_less_than_full_reward(server):
    reward = ServiceReward(server.url, token=TOKEN)
    got = reward(prompts=["p", "p"], completions=[_fenced(racy_histogram()),
                                                   _fenced(reference_program("histogram"))],
                 task_id=["histogram", "histogram"])
    reward.close()
    assert got == pytest.approx([0.1, 1.1])


def test_a_score_request_asking_for_the_fast_check_is_refused(server):
    body = {"task_id": "histogram", "completions": [_fenced(racy_histogram())],
            "thorough": False}
    resp = httpx.post(server.url + "/v1/score", json=body,
                      headers={"Authorization": f"Bearer {TOKEN}"}, timeout=120)
    assert resp.status_code == 422
    error = resp.json()["error"]
    assert "thorough" in error and "--score-check" in error


def test_validate_says_which_check_ran(client):
    fast = client.validate(reference_program("clamp"), task_id="clamp", thorough=False)
    full = client.validate(reference_program("clamp"), task_id="clamp", thorough=True)
    assert (fast["status"], fast["check"]) == ("passed", "fast")
    assert (full["status"], full["check"]) == ("passed", "thorough")


def test_service_reward_refuses_rewards_from_a_weaker_check(tmp_path):
    fast = start_server(tmp_path, "--backend", "cpu", "--workers", "1", "--score-check", "fast",
                        token=TOKEN)
    try:
        strict = ServiceReward(fast.url, token=TOKEN)
        with pytest.raises(ServiceError, match="fast check"):
            strict(prompts=["p"], completions=[_fenced(racy_histogram())],
                   task_id=["histogram"])
        strict.close()
        # The operator chose the fast check; a trainer that accepts it says so.
        lenient = ServiceReward(fast.url, token=TOKEN, require_check=None)
        assert lenient(prompts=["p"], completions=[_fenced(racy_histogram())],
                       task_id=["histogram"]) == pytest.approx([1.1])
        lenient.close()
    finally:
        fast.stop()


# --- class 4: the verdict is no oracle for the fresh case -----------------------------------------

LOOKUP = r"""
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#ifndef N
#define N 131072
#endif

// The answers this program "knows", keyed by a fingerprint of the whole input and the size
// (the first element alone repeats across draws of a case with ties). An input it does not know
// gets -1, never a valid index: the table is never right by accident.
static const unsigned KEYS[] = {TABLE_KEYS 0u};
static const int VALUES[] = {TABLE_VALUES -1};
static const int ENTRIES = sizeof(KEYS) / sizeof(KEYS[0]);

__host__ __device__ unsigned fingerprint(const unsigned* x) {
    unsigned h = (unsigned)N;
    for (unsigned i = 0; i < (unsigned)N; ++i) h += (x[i] ^ i) * (2u * i + 1u);
    return h;
}

__global__ void look_up(const unsigned* x, const unsigned* keys, const int* values, int k,
                        int* out) {
    unsigned key = fingerprint(x);
    int found = -1;
    for (int j = 0; j < k; ++j) if (keys[j] == key) found = values[j];
    *out = found;
}

int main() {
    unsigned* h = (unsigned*)malloc(N * sizeof(unsigned));
    FILE* f = fopen("data/x.bin", "rb");
    if (!f || fread(h, sizeof(unsigned), N, f) != (size_t)N) return 1;
    fclose(f);
    printf("KEY %u\n", fingerprint(h));
    unsigned *d_x, *d_keys;
    int *d_values, *d_out;
    cudaMalloc(&d_x, N * sizeof(unsigned));
    cudaMalloc(&d_keys, sizeof(KEYS));
    cudaMalloc(&d_values, sizeof(VALUES));
    cudaMalloc(&d_out, sizeof(int));
    cudaMemcpy(d_x, h, N * sizeof(unsigned), cudaMemcpyHostToDevice);
    cudaMemcpy(d_keys, KEYS, sizeof(KEYS), cudaMemcpyHostToDevice);
    cudaMemcpy(d_values, VALUES, sizeof(VALUES), cudaMemcpyHostToDevice);
    look_up<<<1, 1>>>(d_x, d_keys, d_values, ENTRIES, d_out);
    cudaDeviceSynchronize();
    int answer = -1;
    cudaMemcpy(&answer, d_out, sizeof(int), cudaMemcpyDeviceToHost);
    f = fopen("data/index.bin", "wb");
    fwrite(&answer, sizeof(int), 1, f);
    fclose(f);
    return 0;
}
"""


def lookup_program(table: dict[int, int]) -> str:
    keys = "".join(f"{k}u, " for k in table)
    values = "".join(f"{v}, " for v in table.values())
    return LOOKUP.replace("TABLE_KEYS", keys).replace("TABLE_VALUES", values)


def learn(answer: dict) -> dict[int, int]:
    """What a caller learns from one answer: per case, the key its program printed and the
    expected index in the reason."""
    table = {}
    for case in answer["cases"]:
        key = re.search(r"KEY (\d+)", case.get("stdout_tail", ""))
        expected = re.search(r"expected (-?\d+)", case.get("reason", ""))
        if key and expected:
            table[int(key.group(1))] = int(expected.group(1))
    return table


def learn_every_case(client) -> tuple[dict[int, int], set[str]]:
    """A table for every published case: the fresh case (its output withheld) is drawn at
    random per request, so a few answers of the empty table teach them all."""
    table: dict[int, int] = {}
    names: set[str] = set()
    for _ in range(16):
        probe = client.validate(lookup_program({}), task_id="argmax")
        assert probe["status"] == "failed", probe["reason"]
        table.update(learn(probe))
        names |= {c["case"] for c in probe["cases"] if not c["fresh"]}
        if len(names) == len(probe["cases"]):
            break
    return table, names


def test_a_lookup_table_learned_from_answers_fails_the_fresh_case(client):
    table, _ = learn_every_case(client)
    replay = client.validate(lookup_program(table), task_id="argmax", thorough=True)
    fresh = [c for c in replay["cases"] if c["fresh"]]
    assert len(fresh) == 1
    assert replay["status"] in ("failed", "rejected"), replay["reason"]
    assert fresh[0]["status"] == "failed", fresh[0]
    # The published cases could be learned (their seeds are public anyway): the case drawn for
    # the request stops the table, and so does the kernel-work run where a published case's
    # answer stays put while the device's inputs change.
    assert all(c["status"] == "passed" or "outputs do not depend on the kernels" in c["reason"]
               for c in replay["cases"] if not c["fresh"]), replay["cases"]


def test_the_answer_withholds_the_fresh_case_values_and_seed(client, server):
    rid = "oracle-" + uuid.uuid4().hex[:8]
    resp = client.request("POST", "/v1/validate", headers={"X-Request-Id": rid},
                          json={"program": lookup_program({}), "task_id": "argmax"})
    answer = resp.json()
    fresh = next(c for c in answer["cases"] if c["fresh"])
    assert answer["fresh_seed"] is None
    assert fresh["status"] == "failed"
    assert fresh["seed"] is None and fresh["stdout_tail"] == "" and fresh["stderr_tail"] == ""
    assert not re.search(r"\d", fresh["reason"].replace(fresh["case"], "")), fresh["reason"]
    assert all(o.get("max_abs_error") is None and not re.search(r"\d", o["reason"])
               for o in fresh["outputs"])
    if answer["reason"].startswith(f"case {fresh['case']}:"):
        assert not re.search(r"\d", answer["reason"].replace(fresh["case"], ""))
    # A published case keeps its whole diagnosis: its seed is public anyway.
    published = next(c for c in answer["cases"] if not c["fresh"] and c["status"] == "failed")
    assert re.search(r"expected -?\d+", published["reason"])
    assert "KEY" in published["stdout_tail"]
    # The seed is in the server's log under the request's id, for reproduction.
    seeds = _logged_seeds(server, rid)
    assert len(seeds) == 1 and isinstance(seeds[0], int)


def test_each_request_draws_its_own_fresh_inputs(client, server):
    rids = [f"fresh-{n}-" + uuid.uuid4().hex[:8] for n in range(3)]
    for rid in rids:
        client.request("POST", "/v1/validate", headers={"X-Request-Id": rid},
                       json={"program": reference_program("argmax"), "task_id": "argmax"})
    seeds = [s for rid in rids for s in _logged_seeds(server, rid)]
    assert len(seeds) == 3 and len(set(seeds)) == 3


def published_only_program() -> str:
    """The honest argmax, which writes a wrong index for any input that is not one of the
    task's published ones (it knows their fingerprints: their seeds are public)."""
    from sources.builtin import load_all
    from validators.cases import materialize

    task = next(t for t, _ in load_all().tasks if t.name == "argmax")
    prints = []
    for case in task.cases:
        w = materialize(task, case)["x"].view(np.uint32).astype(np.uint64)
        i = np.arange(w.size, dtype=np.uint64)
        prints.append(int(((w ^ i) * (2 * i + 1)).sum(dtype=np.uint64) % 2**32))
    check = (
        "    {\n      static const unsigned PUB[] = {" + ", ".join(f"{h}u" for h in prints) + "};\n"
        "      unsigned h = 0;\n"
        "      for (size_t i = 0; i < (size_t)N; i++) { unsigned w; memcpy(&w, &h_x[i], 4);\n"
        "        h += (w ^ (unsigned)i) * (unsigned)(2 * i + 1); }\n"
        "      int known = 0; for (unsigned p : PUB) known |= p == h;\n"
        "      if (!known) h_idx = N - 1 - h_idx;\n"
        "    }\n")
    source = reference_program("argmax")
    anchor = '    write_file("data/index.bin", &h_idx, sizeof(int));'
    assert anchor in source
    return "#include <cstring>\n" + source.replace(anchor, check + anchor)


def test_a_score_answer_withholds_the_fresh_case_numbers(client):
    answer = client.score("argmax", [_fenced(published_only_program())])
    item = answer["results"][0]
    # Only the case re-seeded for the request fails: the reason is its, without its numbers.
    assert item["status"] == "failed" and re.match(r"case \w+\+fresh:", item["reason"]), item
    assert not re.search(r"\d", item["reason"].split(":", 1)[1]), item["reason"]


def _logged_seeds(server, rid: str) -> list[int]:
    seeds = []
    for line in server.log_text().splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if entry.get("request_id") == rid and "fresh_seed" in entry:
            seeds.append(entry["fresh_seed"])
    return seeds


def test_a_fresh_case_per_check_keeps_only_published_references_on_disk(tmp_path):
    """The service's engine: a new fresh seed every check, and its reference outputs (never
    read again) stay out of the disk cache, which would otherwise grow with every request."""
    from schemas import Program
    from sources.builtin import load_all
    from validators.backends import get_backend
    from validators.engine import Engine
    from validators.reference import ReferenceRunner
    from validators.service.pool import _published

    task = next(t for t, _ in load_all().tasks if t.name == "relu")
    root = tmp_path / "references"
    engine = Engine(get_backend("cpu"), references=ReferenceRunner(root, persist=_published),
                    fresh_per_check=True)
    program = Program(source=reference_program("relu"))
    first, second = (engine.check(task, program, thorough=False) for _ in range(2))
    assert first.passed and second.passed, (first.reason, second.reason)
    assert first.fresh_seed != second.fresh_seed
    kept = {e.name for e in root.glob("*/*") if e.is_dir()}
    # What is kept follows from the published seeds alone (each case's outputs and its
    # kernel-work run's second draw): bounded by the task, whatever the requests drew.
    assert len(kept) <= 2 * len(task.cases)
    from validators.cases import materialize
    from validators.engine import with_fresh_case
    from validators.reference import reference_key

    for res in (first, second):
        fresh = with_fresh_case(task, res.fresh_seed)[1]
        assert reference_key(task, fresh, materialize(task, fresh)) not in kept
