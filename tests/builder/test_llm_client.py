"""builder.llm.LLMClient driven through the real `openai` client against a real HTTP server on
127.0.0.1 (tests/builder/openai_standin.py)."""

from __future__ import annotations

import email.utils
import pickle
import socket
import threading
import time

import pytest
from openai_standin import (
    Answer,
    StandIn,
    bad_request,
    ok,
    rate_limited,
    reject_response_format,
    server_error,
    slow,
)
from pydantic import BaseModel, Field

from builder.llm import LLMAnswerError, LLMClient, LLMConfig, LLMError, Usage
from builder.llm.client import retry_after
from builder.llm.extract import NoJSONError, extract_json

KEY_ENV = "CKD_TEST_LLM_KEY"
ASK = [{"role": "system", "content": "answer in JSON"}, {"role": "user", "content": "add 2 and 3"}]


class Sum(BaseModel):
    total: int
    note: str = Field(min_length=3)


GOOD = {"total": 5, "note": "two plus three"}


@pytest.fixture
def srv():
    with StandIn(default=ok(GOOD)) as s:
        yield s


@pytest.fixture
def make(tmp_path, monkeypatch):
    monkeypatch.delenv(KEY_ENV, raising=False)
    sleeps: list[float] = []

    def build(server: StandIn, **cfg) -> LLMClient:
        cfg.setdefault("cache_dir", tmp_path / "llm")
        cfg.setdefault("api_key_env", KEY_ENV)
        client = LLMClient(LLMConfig(model="standin-model", base_url=server.url, **cfg),
                           sleep=sleeps.append)
        client.sleeps = sleeps
        return client

    return build


def test_valid_answer(srv, make):
    client = make(srv)
    out = client.structured(ASK, Sum)
    assert out.value == Sum(**GOOD)
    assert out.attempts == 1 and out.raw_texts == [ok(GOOD).content]
    [req] = srv.chat_requests()
    assert req.body["messages"] == ASK
    assert req.body["model"] == "standin-model"
    assert req.body["response_format"] == {"type": "json_object"}
    assert (req.body["seed"], req.body["temperature"], req.body["max_tokens"]) == (0, 0.2, 4096)
    words = sum(len(m["content"].split()) for m in ASK)  # the stand-in counts words as tokens
    assert out.usage == Usage(prompt_tokens=words, completion_tokens=6, calls=1)
    assert client.stats()["calls"] == 1 and client.stats()["errors"] == {}


def test_malformed_json_is_fed_back_then_fixed(srv, make):
    client = make(srv)
    broken = '{"total": 5, "note": "two plus three"'
    srv.push(ok(broken))
    out = client.structured(ASK, Sum)
    assert out.value.total == 5 and out.attempts == 2 and out.raw_texts[0] == broken
    first, second = srv.chat_requests()
    assert second.body["messages"][: len(ASK)] == ASK
    assert second.body["messages"][-2] == {"role": "assistant", "content": broken}
    feedback = second.body["messages"][-1]
    assert feedback["role"] == "user" and "not valid JSON" in feedback["content"]
    assert out.usage.calls == 2


def test_json_inside_prose_and_fences_is_found():
    assert extract_json('{"a": 1}') == {"a": 1}
    assert extract_json('Here:\n```json\n{"a": {"b": "}"}}\n```\nDone.') == {"a": {"b": "}"}}
    assert extract_json('Sure. The result is {"a": [1, 2]} as asked {"b": 1}') == {"a": [1, 2]}
    assert extract_json('if (x) { y(); } then {"a": 2}') == {"a": 2}
    with pytest.raises(NoJSONError, match="expected a JSON object"):
        extract_json("[1, 2]")
    with pytest.raises(NoJSONError, match="no JSON object found"):
        extract_json("I cannot help with that.")


def test_schema_violations_exhaust_retries_with_usage(srv, make):
    client = make(srv, schema_retries=2)
    bad = [{"total": "five", "note": "x"}, {"note": "still no total"}, {"total": 5, "note": "n"}]
    srv.push(*(ok(b) for b in bad))
    with pytest.raises(LLMAnswerError) as info:
        client.structured(ASK, Sum)
    err = info.value
    assert err.reason == "invalid_answer"
    assert "note" in err.detail and "at least 3 characters" in err.detail  # the last error
    reqs = srv.chat_requests()
    assert len(reqs) == 3
    assert "total" in reqs[1].body["messages"][-1]["content"]  # the first error, fed back
    assert err.usage.calls == 3
    assert err.usage.completion_tokens == sum(len(ok(b).content.split()) for b in bad)
    assert err.raw_texts == [ok(b).content for b in bad]
    assert client.stats()["errors"] == {"invalid_answer": 1}


def test_validate_callback_refusal_is_fed_back(srv, make):
    client = make(srv)
    srv.push(ok({"total": 6, "note": "wrong sum"}))

    def check(value: Sum) -> None:
        if value.total != 5:
            raise ValueError(f"total {value.total} is not 2 + 3")

    out = client.structured(ASK, Sum, validate=check)
    assert out.value.total == 5 and out.attempts == 2
    assert "total 6 is not 2 + 3" in srv.chat_requests()[1].body["messages"][-1]["content"]


def test_rate_limit_honours_retry_after(srv, make):
    client = make(srv)
    srv.push(rate_limited(retry_after="2"), rate_limited(retry_after=None, retry_after_ms="250"))
    reply = client.chat(ASK)
    assert client.sleeps == [2.0, 0.25]
    assert reply.attempts == 3 and reply.usage.retries == 2 and not reply.cached
    assert len(srv.chat_requests()) == 3
    assert client.stats()["retries"] == 2 and client.stats()["requests"] == 3


def test_retry_after_as_http_date():
    later = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 < retry_after({"retry-after": later}) <= 30
    assert retry_after({"retry-after": "soon"}) is None
    assert retry_after({}) is None


def test_server_errors_exhaust_retries(make):
    with StandIn(default=server_error(503)) as srv:
        client = make(srv, max_retries=3)
        with pytest.raises(LLMError) as info:
            client.chat(ASK)
    assert info.value.reason == "server_error" and "HTTP 503" in info.value.detail
    assert info.value.usage.retries == 3
    assert len(srv.chat_requests()) == 4
    assert len(client.sleeps) == 3
    assert all(0 <= s <= 2**i for i, s in enumerate(client.sleeps))  # full jitter, doubling cap
    assert client.stats()["errors"] == {"server_error": 1}


def test_errors_are_not_cached(srv, make):
    client = make(srv, max_retries=0)
    srv.push(server_error())
    with pytest.raises(LLMError, match="server_error"):
        client.chat(ASK)
    assert client.chat(ASK).text == ok(GOOD).content
    assert len(srv.chat_requests()) == 2


def test_slow_answer_times_out_after_retries(make):
    with StandIn(default=slow(5.0, GOOD)) as srv:
        client = make(srv, timeout=0.3, max_retries=1)
        with pytest.raises(LLMError) as info:
            client.chat(ASK)
        # The retry went out as the client gave up on it: the stand-in's handler thread may
        # record it a moment later on a loaded machine.
        deadline = time.monotonic() + 10
        while len(srv.chat_requests()) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
    assert info.value.reason == "timeout"
    assert len(srv.chat_requests()) == 2 and len(client.sleeps) == 1


def test_refusals_are_not_retried(srv, make):
    client = make(srv)
    srv.push(bad_request("messages must not be empty"),
             Answer(status=401, error={"error": {"message": "bad key"}}),
             Answer(status=404, error={"error": {"message": "no such model"}}))
    failures = []
    for _ in range(3):
        with pytest.raises(LLMError) as info:
            client.chat(ASK)
        failures.append(info.value)
    assert [f.reason for f in failures] == ["bad_request", "auth", "not_found"]
    assert "HTTP 400: messages must not be empty" in failures[0].detail
    assert len(srv.chat_requests()) == 3 and client.sleeps == []
    assert client.stats()["errors"] == {"auth": 1, "bad_request": 1, "not_found": 1}


def test_connection_refused_is_retried_then_reported(make, tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again when the block ends: nothing listens there

    class Closed:
        url = f"http://127.0.0.1:{port}/v1"

    client = make(Closed, max_retries=2)
    with pytest.raises(LLMError) as info:
        client.chat(ASK)
    assert info.value.reason == "connection" and len(client.sleeps) == 2


def test_server_without_json_mode_is_asked_without_it(srv, make):
    client = make(srv)
    srv.push(reject_response_format())
    assert client.chat(ASK).text == ok(GOOD).content
    client.chat([{"role": "user", "content": "another question"}])
    first, second, third = srv.chat_requests()
    assert "response_format" in first.body
    assert "response_format" not in second.body and "response_format" not in third.body
    stats = client.stats()
    assert stats["json_mode"] is False and stats["errors"] == {}
    assert client.sleeps == []


def test_transport_error_inside_structured_carries_usage(srv, make):
    client = make(srv, max_retries=0)
    srv.push(ok({"total": 5}), server_error())
    with pytest.raises(LLMError) as info:
        client.structured(ASK, Sum)
    assert info.value.reason == "server_error" and info.value.usage.calls == 1


def test_missing_usage_counts_zero_and_is_flagged(srv, make):
    client = make(srv)
    srv.push(Answer(content=ok(GOOD).content, usage=False))
    reply = client.chat(ASK)
    assert reply.usage.usage_missing == 1
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (0, 0)
    assert client.stats()["usage_missing"] == 1


def test_cache_answers_a_repeat_without_a_request(srv, make, tmp_path):
    client = make(srv)
    first = client.chat(ASK)
    second = make(srv).chat(ASK)  # a new client (a rebuild) with the same cache folder
    assert len(srv.chat_requests()) == 1
    assert second.cached and second.attempts == 0 and second.text == first.text
    assert second.usage == Usage(prompt_tokens=first.usage.prompt_tokens,
                                 completion_tokens=first.usage.completion_tokens,
                                 calls=1, cached_calls=1)
    make(srv, temperature=0.7).chat(ASK)  # what the answer depends on is in the key
    client.chat(ASK, max_tokens=100)
    assert len(srv.chat_requests()) == 3


def test_damaged_cache_entry_is_refetched(srv, make, tmp_path):
    client = make(srv)
    client.chat(ASK)
    [entry] = [p for p in (tmp_path / "llm").rglob("*.json")]
    data = bytearray(entry.read_bytes())
    data[-3] ^= 0x01
    entry.write_bytes(bytes(data))
    again = client.chat(ASK)
    assert not again.cached and len(srv.chat_requests()) == 2
    assert client.stats()["cache_discarded"] == 1
    assert client.chat(ASK).cached and len(srv.chat_requests()) == 2


def test_concurrency_is_bounded_across_threads(make):
    # Every request waits until four are in flight together, so the bound is reached (else the
    # barrier breaks and the calls fail), then lingers so that any request the client let past
    # the bound would be counted in max_in_flight.
    gate = threading.Barrier(4, timeout=10)

    def respond(body):
        gate.wait()
        time.sleep(0.05)
        return ok(GOOD)

    with StandIn(respond=respond) as srv:
        client = make(srv, concurrency=4)
        start = threading.Barrier(16)
        results, errors = [], []

        def call(i: int) -> None:
            start.wait()
            try:
                results.append(client.chat([{"role": "user", "content": f"question {i}"}]))
            except LLMError as exc:
                errors.append(exc)

        threads = [threading.Thread(target=call, args=(i,)) for i in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert errors == [] and len(results) == 16
    assert srv.max_in_flight == 4
    assert len(srv.chat_requests()) == 16


def test_api_key_is_sent_but_never_stored(srv, make, monkeypatch, tmp_path):
    secret = "sk-test-very-secret-0123456789"
    monkeypatch.setenv(KEY_ENV, secret)
    client = make(srv)
    client.structured(ASK, Sum)
    assert srv.chat_requests()[0].headers["authorization"] == f"Bearer {secret}"
    files = [p for p in (tmp_path / "llm").rglob("*") if p.is_file()]
    assert files and not any(secret.encode() in p.read_bytes() for p in files)
    assert secret.encode() not in pickle.dumps(client.cfg)
    assert secret not in repr(client.cfg)


def test_no_key_for_public_openai_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.delenv(KEY_ENV, raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(LLMError) as info:
        LLMClient(LLMConfig(model="gpt-x", api_key_env=KEY_ENV, cache_dir=tmp_path))
    assert info.value.reason == "auth" and KEY_ENV in info.value.detail


def test_config_defaults_and_bad_values(monkeypatch, tmp_path):
    monkeypatch.setenv("CKD_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("OPENAI_BASE_URL", "http://gpu-box:8000/v1")
    cfg = LLMConfig(model="qwen")
    resolved = cfg.resolved()
    assert resolved.cache_dir == tmp_path / "llm" and resolved.base_url == "http://gpu-box:8000/v1"
    assert cfg.params()["base_url_host"] == "gpu-box"
    assert pickle.loads(pickle.dumps(resolved)) == resolved
    with pytest.raises(ValueError, match="concurrency must be >= 1"):
        LLMConfig(model="qwen", concurrency=0)


def test_errors_and_client_pickle(srv, make):
    err = LLMAnswerError("invalid_answer", "x: missing", Usage(calls=2), ["a", "b"])
    back = pickle.loads(pickle.dumps(err))
    assert (back.reason, back.detail, back.usage, back.raw_texts) == (
        "invalid_answer", "x: missing", Usage(calls=2), ["a", "b"])
    client = pickle.loads(pickle.dumps(make(srv)))
    assert client.chat(ASK).text == ok(GOOD).content
    assert Usage(calls=1, retries=2) + Usage(calls=1) == Usage(calls=2, retries=2)


def test_a_refused_answer_is_asked_again_on_the_next_call_not_served_from_cache(srv, make):
    client = make(srv, schema_retries=0)
    srv.push(ok({"total": "five"}))
    with pytest.raises(LLMAnswerError, match="invalid_answer|total"):
        client.structured(ASK, Sum, forget_refused=True)
    # the next run (a fresh client on the same cache) asks again and gets the good answer
    again = make(srv, schema_retries=0).structured(ASK, Sum, forget_refused=True)
    assert again.value == Sum(**GOOD)
    assert len(srv.chat_requests()) == 2
    # the good answer is cached as before
    assert make(srv, schema_retries=0).structured(ASK, Sum).value == Sum(**GOOD)
    assert len(srv.chat_requests()) == 2


def test_by_default_a_refused_answer_stays_cached_so_a_rebuild_asks_nothing(srv, make):
    srv.push(ok({"total": "five"}))
    for _ in range(2):
        with pytest.raises(LLMAnswerError, match="invalid_answer|total"):
            make(srv, schema_retries=0).structured(ASK, Sum)
    assert len(srv.chat_requests()) == 1


def test_a_cached_answer_the_checks_refuse_is_asked_for_afresh(srv, make):
    client = make(srv, schema_retries=0)
    srv.push(ok("no JSON here"))
    assert client.chat(ASK).text == "no JSON here"  # plain chat caches whatever it is given
    out = client.structured(ASK, Sum, forget_refused=True)
    assert out.value == Sum(**GOOD) and out.raw_texts == ["no JSON here", ok(GOOD).content]
    assert len(srv.chat_requests()) == 2
    # once only: a fresh answer refused too is an invalid answer (no loop), and is not kept
    other = [*ASK, {"role": "user", "content": "and 4 and 5?"}]
    srv.push(ok("stale"), ok("fresh but bad"))
    client.chat(other)
    with pytest.raises(LLMAnswerError) as info:
        client.structured(other, Sum, forget_refused=True)
    assert info.value.raw_texts == ["stale", "fresh but bad"]
    assert len(srv.chat_requests()) == 4
    assert client.forget(other) is False
