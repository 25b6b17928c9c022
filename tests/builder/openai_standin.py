"""An OpenAI-compatible chat server on 127.0.0.1 for tests and benchmarks.

A real HTTP/1.1 server (keep-alive, as the `openai` client expects) in a background thread:
`POST /v1/chat/completions` answers with `chat.completion` JSON, `GET /v1/models` lists the
model. What each request gets is scripted: a queue of `Answer`s (`push`), consumed in order,
then the `respond(request_json) -> Answer` function, if any, else `default`.

    with StandIn(latency=0.2) as srv:
        srv.push(rate_limited(retry_after="2"), ok({"x": 1}))
        client = LLMClient(LLMConfig(model="m", base_url=srv.url))

Every request is recorded (`requests`: path, body, headers) and `max_in_flight` is the most
chat requests it was serving at once.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Answer:
    """What one request gets. `content` may be any text (valid JSON or not); a `status` other
    than 200 sends `error` as an OpenAI error body instead."""

    content: str | None = "{}"
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    """Extra seconds before answering (on top of the server's `latency`)."""
    error: dict[str, Any] | None = None
    usage: bool = True
    finish_reason: str = "stop"


def ok(value: Any, **kw: Any) -> Answer:
    """A 200 whose content is `value` as JSON (a str is sent as is)."""
    return Answer(content=value if isinstance(value, str) else json.dumps(value), **kw)


def rate_limited(retry_after: str | None = "1", retry_after_ms: str | None = None) -> Answer:
    headers = {}
    if retry_after is not None:
        headers["Retry-After"] = retry_after
    if retry_after_ms is not None:
        headers["retry-after-ms"] = retry_after_ms
    return Answer(status=429, headers=headers, error=_error("Rate limit reached", "rate_limit_exceeded"))


def server_error(status: int = 500) -> Answer:
    return Answer(status=status, error=_error("The server had an error", "server_error"))


def slow(seconds: float, value: Any = "{}") -> Answer:
    answer = ok(value)
    answer.delay = seconds
    return answer


def reject_response_format() -> Answer:
    """What vLLM-like servers without JSON mode say."""
    return Answer(status=400, error=_error(
        "response_format is not supported by this model", "invalid_request_error",
        param="response_format"))


def bad_request(message: str = "invalid request") -> Answer:
    return Answer(status=400, error=_error(message, "invalid_request_error"))


def _error(message: str, kind: str, param: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": param, "code": kind}}


@dataclass
class Recorded:
    path: str
    body: dict[str, Any]
    headers: dict[str, str]
    """Names in lower case."""


class StandIn:
    def __init__(
        self,
        *,
        respond: Callable[[dict[str, Any]], Answer] | None = None,
        default: Answer | None = None,
        latency: float = 0.0,
        model: str = "standin-model",
    ) -> None:
        self.respond = respond
        self.default = default or Answer()
        self.latency = latency
        self.model = model
        self.requests: list[Recorded] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._queue: deque[Answer] = deque()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- scripting --------------------------------------------------------------------------

    def push(self, *answers: Answer) -> None:
        with self._lock:
            self._queue.extend(answers)

    def chat_requests(self) -> list[Recorded]:
        with self._lock:
            return [r for r in self.requests if r.path.endswith("/chat/completions")]

    @property
    def url(self) -> str:
        assert self._server is not None, "start the stand-in first"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    # -- lifecycle --------------------------------------------------------------------------

    def start(self) -> StandIn:
        standin = self

        class Handler(_Handler):
            owner = standin

        self._server = _Server(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        # A short poll makes stop() quick (shutdown waits for the serving loop to look).
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,),
                                        daemon=True, name="openai-standin")
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()  # wakes slow answers so shutdown does not wait for them
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> StandIn:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- serving ----------------------------------------------------------------------------

    def _next_answer(self, body: dict[str, Any]) -> Answer:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        if self.respond is not None:
            return self.respond(body)
        return self.default

    def _completion(self, body: dict[str, Any], answer: Answer) -> dict[str, Any]:
        prompt = sum(len(str(m.get("content", "")).split()) for m in body.get("messages", []))
        out: dict[str, Any] = {
            "id": f"chatcmpl-standin-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", self.model),
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": answer.content},
                "finish_reason": answer.finish_reason,
                "logprobs": None,
            }],
        }
        if answer.usage:
            completion = len((answer.content or "").split())
            out["usage"] = {"prompt_tokens": prompt, "completion_tokens": completion,
                            "total_tokens": prompt + completion}
        return out


class _Server(ThreadingHTTPServer):
    request_queue_size = 256
    """socketserver's default backlog is 5: 32 clients connecting at once would see dropped
    SYNs and a one-second retransmit, which is the stand-in's fault, not the client's."""


class _Handler(BaseHTTPRequestHandler):
    owner: StandIn
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    """Headers and body go out in separate writes; with Nagle on, the second waits for the
    client's delayed ACK (40 ms) on a keep-alive connection."""

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        pass

    def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client gave up (its timeout): nothing to do

    def do_GET(self) -> None:
        owner = self.owner
        with owner._lock:
            owner.requests.append(Recorded(self.path, {}, _lower(self.headers)))
        if self.path.rstrip("/").endswith("/models"):
            self._send(200, {"object": "list", "data": [
                {"id": owner.model, "object": "model", "created": 0, "owned_by": "standin"}]})
        else:
            self._send(404, _error(f"no route {self.path}", "not_found"))

    def do_POST(self) -> None:
        owner = self.owner
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError as exc:
            self._send(400, _error(f"request body is not JSON: {exc}", "invalid_request_error"))
            return
        with owner._lock:
            owner.requests.append(Recorded(self.path, body, _lower(self.headers)))
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send(404, _error(f"no route {self.path}", "not_found"))
            return
        with owner._lock:
            owner.in_flight += 1
            owner.max_in_flight = max(owner.max_in_flight, owner.in_flight)
        try:
            try:
                answer = owner._next_answer(body)
            except Exception as exc:  # a test's respond() failing must show up in the test
                answer = Answer(status=500, error=_error(f"stand-in respond() failed: {exc!r}",
                                                         "standin_error"))
            wait = owner.latency + answer.delay
            if wait > 0:
                owner._stop.wait(wait)
        finally:
            # Before the reply is written: once the client has it, it may send the next request,
            # which must not find this one still counted.
            with owner._lock:
                owner.in_flight -= 1
        if answer.status == 200:
            self._send(200, owner._completion(body, answer), answer.headers)
        else:
            self._send(answer.status, answer.error or _error("error", "error"), answer.headers)


def _lower(headers: Any) -> dict[str, str]:
    """HTTP header names are case-insensitive; the client sends a mix."""
    return {k.lower(): v for k, v in headers.items()}
