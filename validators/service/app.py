"""The FastAPI application: routes, error bodies, the body-size/drain/access-log middleware.

`create_app(config)` builds everything; the pool of worker processes starts with the app's
lifespan and stops (after draining) with it. Every error answer is `{"error": "..."}` naming
the input and the reason; 429 and 503 carry `Retry-After`.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from fastapi import Depends, FastAPI, Header, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST
from pydantic import ValidationError

from schemas import Program, SchemaError, Status, Task, ValidationResult

from ..anticheat import NO_KERNEL_LAUNCH
from ..disclosure import redact_fresh
from ..extract import extract_program
from . import kernelbench
from .auth import token_ok
from .logs import get_logger
from .metrics import Metrics
from .models import (
    ErrorBody,
    ScoreItem,
    ScoreRequest,
    ScoreResponse,
    TaskInfo,
    TasksResponse,
    ValidateRequest,
    ValidateResponse,
)
from .pool import (
    PROGRAM_SHARE,
    Admission,
    JobTimeout,
    PoolClosed,
    PoolFull,
    WorkerFailed,
    WorkerPool,
)
from .tasks import TaskSet, load_task_set

SPEEDUP_CAP = 3.0
"""r_max: the speed term counts a speed-up over the reference up to this factor (the server's
default, `--speed-cap`; a request may give its own), so one very fast (or mis-timed) sample
cannot dominate a batch's rewards."""


@dataclass
class ServiceConfig:
    backend: str = "auto"
    workers: int = 2
    queue: int = 16
    timeout: float = 120.0
    """Seconds one validation may take before its worker is killed and replaced (504)."""
    max_body_bytes: int = 1 << 20
    alpha: float = 1.0
    """Weight of correct (the recipe's beta: see the service README's reward contract)."""
    beta: float = 0.1
    """Weight of compiled (the recipe's alpha)."""
    speed_cap: float = SPEEDUP_CAP
    score_check: str = "thorough"
    """The check behind every reward (`thorough` or `fast`): the operator's choice, never a
    request's (a policy optimises against whatever check scores it)."""
    tasks: str = "builtin"
    token: str | None = None
    drain_seconds: float | None = None
    """How long shutdown waits for admitted jobs (default: `drain_bound()`)."""
    wall_seconds: float | None = None
    program_share: float = PROGRAM_SHARE
    """The part of `timeout` a program's own runs may take, all together, before it is
    `timeout` (a verdict); 0: only the per-run limits (a slow program then runs the job into
    `timeout`, no verdict)."""
    """Sandbox wall-clock limit per run (default: the engine's)."""
    caller_share: float = 0.5
    """Most of the `workers + queue` slots one caller (client address) may hold at once."""
    header_timeout: float = 10.0
    """Seconds a connection may take to send a request's headers (then it is closed)."""
    body_timeout: float = 30.0
    """Seconds a request may take to send its body once its headers are in (then 408)."""
    max_connections: int = 1024
    """Open connections the server keeps; more are closed as they arrive."""
    max_client_connections: int = 64
    """Open connections one client address may have; more are closed as they arrive."""
    public_metrics: bool = False
    """Serve /metrics without the token (when a token is configured)."""
    public_docs: bool = False
    """Serve /docs, /redoc and /openapi.json without the token (when a token is configured)."""

    def drain_bound(self) -> float:
        """Long enough for every admitted job to finish: a full queue runs in rounds of
        `workers` jobs, each round at most `timeout` long."""
        if self.drain_seconds is not None:
            return self.drain_seconds
        rounds = -(-(self.workers + self.queue) // self.workers)
        return rounds * self.timeout + 10


class Service:
    """The state behind one app: configuration, task set, worker pool, metrics."""

    def __init__(self, config: ServiceConfig, task_set: TaskSet | None = None) -> None:
        self.config = config
        self.tasks = task_set or load_task_set(config.tasks)
        self.pool = WorkerPool(config.backend, workers=config.workers, queue=config.queue,
                               timeout=config.timeout, wall_seconds=config.wall_seconds,
                               caller_share=config.caller_share,
                               program_share=config.program_share)
        self.metrics = Metrics(queue_depth=lambda: self.pool.waiting,
                               busy=lambda: self.pool.running)
        self.draining = False
        self._reference_seconds: dict[str, asyncio.Future[float]] = {}
        self.log = get_logger()

    def begin_drain(self) -> None:
        """Called on SIGTERM/SIGINT, before the server stops listening: new work gets 503."""
        if not self.draining:
            self.draining = True
            self.pool.closing = True
            self.log.info("draining", extra={"admitted": self.pool.admitted})

    @property
    def backend_name(self) -> str:
        return self.pool.backend_name

    # --- running jobs ------------------------------------------------------------------------

    async def run_check(self, task: Task, program: Program, thorough: bool,
                        admission: Admission, *, speed: bool = False) -> dict[str, Any]:
        """One job through the pool on a slot of `admission`; records its metrics. With
        `speed`, a passing program's kernel time comes back as `kernel_seconds`."""
        job = {"task": task.model_dump_json(), "program": program.model_dump(mode="json"),
               "thorough": thorough, "speed": speed}
        return await self.run_job(job, task.name, thorough, admission, speed=speed)

    async def run_kernelbench(self, task_id: str, answer: str, thorough: bool,
                              admission: Admission) -> dict[str, Any]:
        """A KernelBench answer checked against the problem `task_id` (`kernelbench.run_job`)."""
        job = kernelbench.job(task_id, self.tasks.problems[task_id], answer, thorough)
        return await self.run_job(job, task_id, thorough, admission)

    async def run_job(self, job: dict[str, Any], task_name: str, thorough: bool,
                      admission: Admission, *, speed: bool = False) -> dict[str, Any]:
        try:
            outcome = await self.pool.run(job, admission)
        except (JobTimeout, WorkerFailed):
            self.metrics.worker_restarts.inc()
            raise
        self.metrics.record_result(outcome.result, outcome.seconds)
        result = outcome.result
        if result.get("fresh_seed") is not None:
            # Withheld from the caller; here it reproduces the verdict (`--fresh-seed`).
            self.log.info("fresh seed", extra={
                "request_id": REQUEST_ID_VAR.get(), "task": task_name,
                "program_digest": result.get("program_digest"),
                "fresh_seed": result["fresh_seed"], "thorough": thorough})
        shown = redact_fresh(ValidationResult.model_validate(result)).model_dump(mode="json")
        out = {**shown, "check": "thorough" if thorough else "fast"}
        if speed:  # for the speed term only: not a field of a validation answer
            out["kernel_seconds"] = outcome.kernel_seconds
        return out

    def admit(self, n: int, caller: str) -> Admission:
        """Slots for `n` jobs of `caller`, to be used as `with svc.admit(...) as admission:`."""
        try:
            return self.pool.admit(n, caller)
        except PoolFull as exc:
            self.metrics.rejected.labels("queue_full").inc()
            raise HTTPException(429, str(exc),
                                headers={"Retry-After": str(exc.retry_after)}) from None
        except PoolClosed as exc:
            self.metrics.rejected.labels("shutting_down").inc()
            raise HTTPException(503, str(exc), headers={"Retry-After": "5"}) from None

    async def reference_seconds(self, task_id: str, caller: str) -> float:
        """Kernel seconds of the task's reference program (`Engine.kernel_seconds`), measured
        once per server."""
        fut = self._reference_seconds.get(task_id)
        if fut is None:
            fut = asyncio.get_running_loop().create_future()
            self._reference_seconds[task_id] = fut
            try:
                with self.admit(1, caller) as admission:
                    result = await self.run_check(self.tasks.tasks[task_id],
                                                  Program(source=self.tasks.references[task_id]),
                                                  False, admission, speed=True)
                if result["status"] != Status.PASSED:
                    raise HTTPException(500, f"the reference program of task {task_id!r} "
                                             f"does not pass: {result['reason']}")
                if not result.get("kernel_seconds"):
                    raise HTTPException(500, f"the reference program of task {task_id!r} "
                                             f"could not be timed (no launch timed, or a timed "
                                             f"run failed)")
                fut.set_result(result["kernel_seconds"])
            except BaseException as exc:
                # Not cached: the next request measures again.
                del self._reference_seconds[task_id]
                if isinstance(exc, Exception):
                    fut.set_exception(exc)
                    fut.exception()  # marked retrieved: no "never retrieved" warning
                else:
                    fut.cancel()
                raise
        return await fut


def _error(status: int, message: str, headers: dict[str, str] | None = None,
           detail: list[dict[str, Any]] | None = None) -> JSONResponse:
    body = ErrorBody(error=message, detail=detail).model_dump(exclude_none=True)
    return JSONResponse(body, status_code=status, headers=headers)


def _field(loc: tuple[Any, ...] | list[Any]) -> str:
    return ".".join(str(p) for p in loc if p != "body") or "body"


def _compiled(result: dict[str, Any]) -> bool:
    """The compile term of a CUDA program: it built, and it is a kernel program. One that
    launches no kernel (an empty `main`, a host-only answer) earns nothing for building; nor does
    one that needs a GPU the backend lacks (no verdict on it)."""
    if not (result.get("compile") and result["compile"].get("ok")):
        return False
    if result["status"] == Status.NEEDS_GPU:
        return False
    return not (result["status"] == Status.REJECTED
                and NO_KERNEL_LAUNCH in str(result.get("reason", "")))


def _caller(request: Request) -> str:
    """Who holds slots, for fairness: the client's address (the token, when there is one, is
    shared by every caller, so it authenticates but does not tell callers apart)."""
    return request.client.host if request.client else ""


def _program(where: str, source: str, filename: str = "main.cu",
             extra_flags: list[str] | None = None) -> Program:
    """The `Program` of a request, or 422 naming `where`: built before any slot is taken, so
    that input a worker could not take (say, a lone UTF-16 surrogate) costs no slot."""
    try:
        program = Program(source=source, filename=filename, extra_flags=extra_flags or [])
        program.model_dump_json().encode("utf-8")
    except (ValidationError, ValueError) as exc:
        reason = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
        raise HTTPException(422, f"{where}: {reason}") from None
    return program


class _ServiceRef:
    """The app's Service, built when the app starts (in its process: under Ray Serve the app
    is pickled to the replicas first, and a pool or metrics registry does not pickle)."""

    service: Service | None = None

    def __getattr__(self, name: str) -> Any:
        if self.service is None:
            raise RuntimeError("the validation service has not started")
        return getattr(self.service, name)


def create_app(config: ServiceConfig, task_set: TaskSet | None = None) -> FastAPI:
    svc: Any = _ServiceRef()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        svc.service = Service(config, task_set)
        await svc.pool.start()
        svc.log.info("ready", extra={"backend": svc.backend_name, "workers": config.workers,
                                     "queue": config.queue, "tasks": len(svc.tasks)})
        for skipped in svc.tasks.skipped:
            svc.log.warning("task skipped", extra={"reason": skipped})
        yield
        svc.begin_drain()
        left = await svc.pool.close(config.drain_bound())
        svc.log.info("stopped", extra={"unfinished": left})

    app = FastAPI(title="CUDA kernel validation service", version="1",
                  description="Validate CUDA programs against tasks; score model completions.",
                  lifespan=lifespan)
    app.state.service = svc

    async def require_token(authorization: str | None = Header(default=None)) -> None:
        if not token_ok(config.token, authorization):
            svc.metrics.rejected.labels("unauthorized").inc()
            raise HTTPException(401, "missing or wrong bearer token (Authorization: Bearer ...)",
                                headers={"WWW-Authenticate": "Bearer"})

    @app.exception_handler(HTTPException)
    async def _http_error(request: Request, exc: HTTPException) -> JSONResponse:
        return _error(exc.status_code, str(exc.detail), headers=exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        bad_json = next((e for e in errors if e.get("type") == "json_invalid"), None)
        if bad_json is not None:
            where = bad_json.get("ctx", {}).get("error", "")
            return _error(400, f"the request body is not valid JSON ({where})".replace(" ()", ""))
        parts = [f"{_field(e.get('loc', ()))}: {e.get('msg', 'invalid')}" for e in errors]
        detail = [{"loc": list(e.get("loc", ())), "msg": e.get("msg"), "type": e.get("type")}
                  for e in errors]
        return _error(422, "invalid request: " + "; ".join(parts), detail=detail)

    def resolve_task(task_id: str | None, inline: dict[str, Any] | None) -> Task:
        if inline is not None:
            try:
                return Task.parse(inline, origin="request field task")
            except SchemaError as exc:
                raise HTTPException(422, " ".join(str(exc).split())) from None
        task = svc.tasks.get(task_id or "")
        if task is None:
            raise HTTPException(404, f"unknown task_id {task_id!r} (GET /v1/tasks lists the "
                                     f"{len(svc.tasks)} known ones)")
        return task

    @app.post("/v1/validate", response_model=ValidateResponse,
              dependencies=[Depends(require_token)],
              responses={k: {"model": ErrorBody} for k in (400, 401, 404, 413, 422, 429, 503,
                                                           504)})
    async def validate(req: ValidateRequest, request: Request) -> Any:
        """Validate one program against a task (by id or inline); for a KernelBench task the
        program is the Python answer (`ModelNew`)."""
        kb = req.task is None and req.task_id in svc.tasks.problems
        task = None if kb else resolve_task(req.task_id, req.task)
        body = req.program_body()
        program = _program("program", body.source, body.filename, body.extra_flags)
        try:
            with svc.admit(1, _caller(request)) as admission:
                if task is None:
                    return await svc.run_kernelbench(req.task_id or "", program.source,
                                                     req.thorough, admission)
                return await svc.run_check(task, program, req.thorough, admission)
        except JobTimeout as exc:
            raise HTTPException(504, f"{exc}; the worker was replaced") from None
        except WorkerFailed as exc:
            raise HTTPException(500, f"validation failed inside the service: {exc}") from None

    @app.post("/v1/score", response_model=ScoreResponse, dependencies=[Depends(require_token)],
              responses={k: {"model": ErrorBody} for k in (400, 401, 404, 413, 422, 429, 503)})
    async def score(req: ScoreRequest, request: Request) -> ScoreResponse:
        """Reward each completion: alpha * correct + beta * compiled
        (+ speed * min(speed-up, speed_cap) * correct); see the README's reward contract."""
        kb = req.task_id in svc.tasks.problems
        task = None if kb else resolve_task(req.task_id, None)
        thorough = config.score_check == "thorough"
        if req.thorough is not None and req.thorough != thorough:
            raise HTTPException(422, f"thorough: this server scores every completion with the "
                                     f"{config.score_check} check, which its operator chose "
                                     f"(--score-check); a request cannot choose another: leave "
                                     f"the field out")
        alpha = config.alpha if req.alpha is None else req.alpha
        beta = config.beta if req.beta is None else req.beta
        cap = config.speed_cap if req.speed_cap is None else req.speed_cap
        if req.speed > 0 and svc.backend_name != "cuda":
            raise HTTPException(400, f"speed: the speed term needs the cuda backend (this "
                                     f"server runs {svc.backend_name})")
        if req.speed > 0 and kb:
            raise HTTPException(400, f"speed: task {req.task_id!r} is a KernelBench problem, "
                                     f"whose answers are not timed yet (validators.kernelbench "
                                     f"has no cuda timing); send speed 0")
        if req.speed > 0 and req.task_id not in svc.tasks.references:
            raise HTTPException(400, f"speed: task {req.task_id!r} has no reference program")
        # A KernelBench answer is Python (its CUDA inside a string); shown first in a ```cpp
        # block, the kernel alone is not the answer.
        sources = [extract_program(c, language="python" if kb else None)
                   for c in req.completions]
        found = [i for i, s in enumerate(sources) if s and s.strip()]
        programs: dict[int, Program] = {}
        bad: list[str] = []
        for i in found:
            try:
                programs[i] = _program(f"completions[{i}]", sources[i] or "")
            except HTTPException as exc:
                bad.append(str(exc.detail))
        if bad:
            raise HTTPException(422, "invalid request: " + "; ".join(bad))
        ref_seconds = (await svc.reference_seconds(req.task_id, _caller(request))
                       if req.speed > 0 else None)
        if len(found) > svc.pool.capacity:
            raise HTTPException(413, f"completions: {len(found)} programs exceed this server's "
                                     f"capacity of {svc.pool.capacity} (workers + queue, see "
                                     f"/healthz); send at most that many per request")
        if len(found) > svc.pool.caller_slots:
            raise HTTPException(413, f"completions: {len(found)} programs exceed the "
                                     f"{svc.pool.caller_slots} slots one caller may hold "
                                     f"(caller_capacity in /healthz); send at most that many "
                                     f"per request")

        async def one(i: int, admission: Admission) -> ScoreItem:
            try:
                if task is None:
                    r = await svc.run_kernelbench(req.task_id, programs[i].source, thorough,
                                                  admission)
                else:
                    r = await svc.run_check(task, programs[i], thorough, admission,
                                            speed=ref_seconds is not None)
            except JobTimeout as exc:  # the service's limit, not the program's: no reward
                return ScoreItem(index=i, program_found=True, compiled=False, correct=False,
                                 reward=None, status="service_timeout", reason=str(exc))
            except WorkerFailed as exc:
                return ScoreItem(index=i, program_found=True, compiled=False, correct=False,
                                 reward=None, status="service_error", reason=str(exc))
            if r["status"] == Status.ERROR:  # no verdict on the program: never a reward of 0
                return ScoreItem(index=i, program_found=True, compiled=False, correct=False,
                                 reward=None, status=r["status"], reason=r.get("reason", ""),
                                 error_origin=r.get("error_origin"))
            compiled = kernelbench.compiled(r) if task is None else _compiled(r)
            correct = r["status"] == Status.PASSED
            reward = alpha * correct + beta * compiled
            speedup = None
            if ref_seconds is not None and correct and r.get("kernel_seconds"):
                # Kernel time alone, measured the same way for the reference (not the build,
                # the sandbox, the context or the host code); none when the timed runs fail.
                speedup = ref_seconds / max(r["kernel_seconds"], 1e-9)
                reward += req.speed * min(speedup, cap)
            return ScoreItem(index=i, program_found=True, compiled=compiled, correct=correct,
                             reward=reward, status=r["status"], reason=r.get("reason", ""),
                             speedup=speedup)

        no_block = ("the completion has no ```python code block (nor one without a language)"
                    if kb else "the completion has no fenced code block")
        scored: dict[int, ScoreItem] = {}
        if found:
            with svc.admit(len(found), _caller(request)) as admission:
                # A task group: should one job fail, the others are cancelled and waited for
                # before the slots go back, so no slot is free while its job still runs.
                async with asyncio.TaskGroup() as group:
                    jobs = [group.create_task(one(i, admission)) for i in found]
                scored = {i: job.result() for i, job in zip(found, jobs, strict=True)}
        items = [scored.get(i) or ScoreItem(
            index=i, program_found=False, compiled=False, correct=False, reward=0.0,
            status="no_code_block", reason=no_block)
            for i in range(len(sources))]
        return ScoreResponse(task_id=req.task_id, backend=svc.backend_name,
                             check=config.score_check, alpha=alpha, beta=beta, speed=req.speed,
                             speed_cap=cap, kind="kernelbench" if kb else "task", results=items)

    @app.get("/v1/tasks", response_model=TasksResponse, dependencies=[Depends(require_token)])
    async def tasks() -> TasksResponse:
        """The task ids this server validates against, with their descriptions."""
        listed = [TaskInfo(id=name, description=t.description, cases=len(t.cases),
                           inputs=[s.name for s in t.inputs], outputs=[s.name for s in t.outputs])
                  for name, t in svc.tasks.tasks.items()]
        # KernelBench inputs are drawn by the problem's get_inputs() at every check: no cases.
        listed += [TaskInfo(id=name, kind="kernelbench", cases=0, inputs=[], outputs=[],
                            description=f"KernelBench problem {name}: write ModelNew with "
                                        f"custom CUDA kernels")
                   for name in svc.tasks.problems]
        return TasksResponse(source=svc.tasks.source, tasks=sorted(listed, key=lambda t: t.id))

    @app.get("/healthz")
    async def healthz() -> JSONResponse:
        """200 while serving; 503 while draining or degraded (load balancers stop routing
        here), `problems` saying what is wrong."""
        problems = svc.pool.problems()
        status = "draining" if svc.draining else "degraded" if problems else "ok"
        body = {"status": status, "backend": svc.backend_name,
                "workers": config.workers, "capacity": svc.pool.capacity,
                "caller_capacity": svc.pool.caller_slots, "busy": svc.pool.running,
                "queued": svc.pool.waiting, "tasks": len(svc.tasks),
                "problems": problems}
        return JSONResponse(body, status_code=200 if status == "ok" else 503)

    @app.get("/metrics")
    async def metrics() -> Response:
        return Response(svc.metrics.render(), media_type=CONTENT_TYPE_LATEST)

    app.add_middleware(Guard, svc=svc)
    return app


ROUTES = ("/v1/validate", "/v1/score", "/v1/tasks", "/healthz", "/metrics", "/docs",
          "/openapi.json")
DOC_PATHS = ("/docs", "/docs/oauth2-redirect", "/redoc", "/openapi.json")
REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")
REQUEST_ID_VAR: ContextVar[str] = ContextVar("request_id", default="")
"""The id of the request being handled (set by `Guard`), for log lines of the routes."""
DISCARD_LIMIT = 64 << 20
"""Bytes of an oversized body read (and dropped) before the 413, so the client, still sending,
sees the answer instead of a reset connection; past this the connection is just closed."""

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


class _TooLarge(Exception):
    """The body passed `--max-body-bytes`."""


class Guard:
    """ASGI wrapper in front of the FastAPI app: body-size limit (413), refusal while draining
    (503), request ids, one JSON access-log line and the request metrics per request."""

    def __init__(self, app: Callable[..., Awaitable[None]], svc: Any) -> None:
        self.app, self.svc = app, svc

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.monotonic()
        path = _route_path(scope)
        route = path if path in ROUTES else "other"
        given = _header(scope, b"x-request-id") or ""
        # A caller's id is kept for tracing only if it cannot forge or flood a log line.
        rid = given if REQUEST_ID.fullmatch(given) else uuid.uuid4().hex[:16]
        REQUEST_ID_VAR.set(rid)
        status = {"code": 500}

        async def send_logged(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
                message.setdefault("headers", []).append((b"x-request-id", rid.encode()))
            await send(message)

        try:
            await self._handle(scope, receive, send_logged, path)
        finally:
            seconds = time.monotonic() - started
            self.svc.metrics.requests.labels(route, str(status["code"])).inc()
            self.svc.metrics.latency.labels(route).observe(seconds)
            self.svc.log.info("request", extra={
                "request_id": rid, "method": scope.get("method"), "path": path,
                "status": status["code"], "ms": round(seconds * 1000, 1),
                "client": (scope.get("client") or ("", 0))[0]})

    async def _handle(self, scope: Scope, receive: Receive, send: Send, path: str) -> None:
        if self.svc.draining and path.startswith("/v1/"):
            self.svc.metrics.rejected.labels("shutting_down").inc()
            await _send_json(send, 503, {"error": "the server is shutting down"},
                             [(b"retry-after", b"5")])
            return
        config = self.svc.config
        # /v1/* checks the token in its routes; what else tells about the server does here.
        guarded = ((path == "/metrics" and not config.public_metrics)
                   or (path in DOC_PATHS and not config.public_docs))
        if guarded and not token_ok(config.token, _header(scope, b"authorization")):
            self.svc.metrics.rejected.labels("unauthorized").inc()
            await _send_json(send, 401, {"error": f"{path}: missing or wrong bearer token "
                                                  f"(Authorization: Bearer ...)"},
                             [(b"www-authenticate", b"Bearer")])
            return
        try:
            async with asyncio.timeout(config.body_timeout):
                body = await self._read_body(scope, receive)
        except _TooLarge:
            self.svc.metrics.rejected.labels("too_large").inc()
            await _send_json(send, 413, {"error": f"the request body is larger than the "
                                                  f"{config.max_body_bytes} byte limit "
                                                  f"(--max-body-bytes)"},
                             [(b"connection", b"close")])
            return
        except TimeoutError:
            self.svc.metrics.rejected.labels("slow_body").inc()
            await _send_json(send, 408, {"error": f"the request body did not arrive within "
                                                  f"{config.body_timeout:g} s (--body-timeout)"},
                             [(b"connection", b"close")])
            return
        if body is None:
            return
        sent = False

        async def replay() -> dict[str, Any]:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _read_body(self, scope: Scope, receive: Receive) -> bytes | None:
        """The whole body, or None when the client went away; `_TooLarge` past the limit."""
        limit = self.svc.config.max_body_bytes
        declared = _header(scope, b"content-length")
        chunks: list[bytes] = []
        size = 0
        too_big = declared is not None and declared.isdigit() and int(declared) > limit
        more = not too_big
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            body = message.get("body", b"")
            size += len(body)
            more = message.get("more_body", False)
            if size > limit:
                too_big = True
                break
            chunks.append(body)
        if too_big:
            await self._discard(receive, size)
            raise _TooLarge
        return b"".join(chunks)

    @staticmethod
    async def _discard(receive: Receive, size: int) -> None:
        while size < DISCARD_LIMIT:
            message = await receive()
            if message["type"] != "http.request":
                return
            size += len(message.get("body", b""))
            if not message.get("more_body", False):
                return


def _route_path(scope: Scope) -> str:
    """The path below the app's mount point: Ray Serve's `--route-prefix` arrives as the
    scope's `root_path`, still leading `path`."""
    path, root = scope.get("path", ""), scope.get("root_path", "")
    if root and path.startswith(root) and path[len(root):len(root) + 1] in ("", "/"):
        return path[len(root):] or "/"
    return path


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return value.decode("latin-1")
    return None


async def _send_json(send: Send, status: int, body: dict[str, Any],
                     headers: list[tuple[bytes, bytes]] | None = None) -> None:
    data = json.dumps(body).encode()
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()),
        *(headers or [])]})
    await send({"type": "http.response.body", "body": data})
