"""`python -m validators serve`: the validation service over HTTP (see validators/service).

Runs uvicorn on one process with a pool of worker processes behind it, or, with `--ray`,
deploys the same application on Ray Serve. Exit code 2 for bad options or an unusable backend.
"""

from __future__ import annotations

import argparse
import os
import signal

from validators.backends import BACKEND_NAMES
from validators.cli.errors import fail

SCORE_CHECKS = ("thorough", "fast")
SCORE_CHECK_ENV = "CKD_SCORE_CHECK"


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "serve", help="serve validation and completion scoring over HTTP",
        description="An HTTP API (OpenAPI at /docs): POST /v1/validate, POST /v1/score, "
                    "GET /v1/tasks, /healthz, /metrics.",
    )
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--backend", default="auto", choices=BACKEND_NAMES)
    p.add_argument("--workers", type=int, default=2, help="validation worker processes")
    p.add_argument("--queue", type=int, default=16,
                   help="jobs that may wait for a worker; beyond it requests get 429")
    p.add_argument("--timeout", type=float, default=120.0,
                   help="seconds per validation before its worker is replaced (504)")
    p.add_argument("--program-share", type=float, default=None, metavar="F",
                   help="part of --timeout a program's own runs may take, all together, before "
                        "it is `timeout` (a verdict); 0: per-run limits only (default 0.6)")
    p.add_argument("--max-body-bytes", type=int, default=1 << 20,
                   help="largest request body accepted (413 beyond)")
    p.add_argument("--tasks", default="builtin",
                   help="'builtin', a folder of task folders, a builder dataset folder, or "
                        "kernelbench:DIR, a folder of KernelBench problem files (task id: the "
                        "file's stem; answers are Python ModelNew modules)")
    p.add_argument("--token-env", metavar="NAME",
                   help="require 'Authorization: Bearer <token>', the token read from $NAME")
    p.add_argument("--caller-share", type=float, default=0.5,
                   help="most of the workers + queue slots one client address may hold")
    p.add_argument("--header-timeout", type=float, default=10.0,
                   help="seconds a connection may take to send a request's headers")
    p.add_argument("--body-timeout", type=float, default=30.0,
                   help="seconds a request may take to send its body (408 beyond)")
    p.add_argument("--max-connections", type=int, default=1024,
                   help="open connections kept; more are closed as they arrive")
    p.add_argument("--max-client-connections", type=int, default=64,
                   help="open connections one client address may have")
    p.add_argument("--public-metrics", action="store_true",
                   help="serve /metrics without the token")
    p.add_argument("--public-docs", action="store_true",
                   help="serve /docs, /redoc and /openapi.json without the token")
    p.add_argument("--alpha", type=float, default=1.0, help="score: weight of correct")
    p.add_argument("--beta", type=float, default=0.1, help="score: weight of compiled")
    p.add_argument("--speed-cap", type=float, default=None, metavar="R_MAX",
                   help="score: the speed-up over the reference counted at most (requests may "
                        "give their own speed_cap; default: validators.service.app.SPEEDUP_CAP, 3)")
    p.add_argument("--score-check", choices=SCORE_CHECKS,
                   default=os.environ.get(SCORE_CHECK_ENV) or "thorough",
                   help="the check behind every reward of /v1/score: 'thorough' (every build "
                        "variant and schedule) or 'fast'; requests cannot change it (default: "
                        f"${SCORE_CHECK_ENV}, else thorough)")
    p.add_argument("--log-level", default="info", choices=("debug", "info", "warning", "error"))
    p.add_argument("--ray", action="store_true", help="deploy on Ray Serve instead of uvicorn")
    p.add_argument("--address", help="Ray cluster address (with --ray; default: a Ray instance "
                                     "of its own on this machine)")
    p.add_argument("--replicas", type=int, default=1, help="Ray Serve replicas (with --ray)")
    p.add_argument("--route-prefix", default="/",
                   help="where the API is mounted on Ray Serve's proxy (with --ray), so a cuda "
                        "and a cpu deployment can share one cluster, e.g. /cuda and /cpu")


def main(args: argparse.Namespace) -> int:
    from validators.backends import BackendUnavailable, get_backend
    from validators.service.app import ServiceConfig
    from validators.service.tasks import TaskSetError, load_task_set

    for name in ("workers", "replicas", "max_connections", "max_client_connections"):
        if getattr(args, name) < 1:
            return fail(f"--{name.replace('_', '-')} must be at least 1 "
                        f"(got {getattr(args, name)})")
    for name in ("queue", "max_body_bytes"):
        if getattr(args, name) < 0:
            return fail(f"--{name.replace('_', '-')} must not be negative")
    if args.score_check not in SCORE_CHECKS:  # a default from the environment skips choices
        return fail(f"${SCORE_CHECK_ENV}: {args.score_check!r} is not a check (one of "
                    f"{', '.join(SCORE_CHECKS)})")
    if not args.route_prefix.startswith("/"):
        return fail(f"--route-prefix must start with '/' (got {args.route_prefix!r})")
    for name in ("timeout", "header_timeout", "body_timeout"):
        if not getattr(args, name) > 0:
            return fail(f"--{name.replace('_', '-')} must be positive (got {getattr(args, name)})")
    if args.speed_cap is not None and not args.speed_cap > 0:
        return fail(f"--speed-cap must be positive (got {args.speed_cap})")
    if not 0 < args.caller_share <= 1:
        return fail(f"--caller-share must be above 0 and at most 1 (got {args.caller_share})")
    if args.program_share is not None and not 0 <= args.program_share <= 1:
        return fail(f"--program-share must be between 0 and 1 (got {args.program_share})")
    token = None
    if args.token_env:
        token = os.environ.get(args.token_env)
        if not token:
            return fail(f"--token-env {args.token_env}: the environment variable is unset or "
                        "empty (refusing to serve without the token it should hold)")
    config = ServiceConfig(backend=args.backend, workers=args.workers, queue=args.queue,
                           timeout=args.timeout, max_body_bytes=args.max_body_bytes,
                           alpha=args.alpha, beta=args.beta,
                           score_check=args.score_check,
                           tasks=args.tasks, token=token,
                           caller_share=args.caller_share, header_timeout=args.header_timeout,
                           body_timeout=args.body_timeout, max_connections=args.max_connections,
                           max_client_connections=args.max_client_connections,
                           public_metrics=args.public_metrics, public_docs=args.public_docs)
    if args.speed_cap is not None:
        config.speed_cap = args.speed_cap
    if args.program_share is not None:
        config.program_share = args.program_share
    if args.ray:
        from validators.service.ray_app import RayUnavailable, deploy

        try:
            load_task_set(args.tasks)  # a bad --tasks fails here, not in every replica
            deploy(config, host=args.host, port=args.port, address=args.address,
                   replicas=args.replicas, route_prefix=args.route_prefix,
                   log_level=args.log_level)
        except (RayUnavailable, TaskSetError) as exc:
            return fail(str(exc))
        return 0
    try:
        get_backend(args.backend)  # fail here, in one line, rather than in every worker
        task_set = load_task_set(args.tasks)
    except (BackendUnavailable, TaskSetError) as exc:
        return fail(str(exc))
    return serve(config, task_set, host=args.host, port=args.port, log_level=args.log_level)


def serve(config: object, task_set: object, *, host: str, port: int,
          log_level: str = "info") -> int:
    import uvicorn

    from validators.service.app import ServiceConfig, create_app
    from validators.service.conn import http_protocol_class, limited_protocol
    from validators.service.logs import get_logger, uvicorn_log_config

    assert isinstance(config, ServiceConfig)
    app = create_app(config, task_set)  # type: ignore[arg-type]
    ref = app.state.service
    drain = config.drain_bound()

    class DrainingServer(uvicorn.Server):
        stopped_by: int | None = None

        # Refuse new work from the first signal on, while uvicorn waits for in-flight requests.
        def handle_exit(self, sig: int, frame: object) -> None:
            if self.stopped_by is None:
                self.stopped_by = sig
            if ref.service is not None:
                ref.begin_drain()
            super().handle_exit(sig, frame)  # type: ignore[arg-type]

    connections = _allow_open_files(config.max_connections)
    if connections < config.max_connections:
        get_logger().warning("connection cap lowered to fit the open-file limit", extra={
            "max_connections": connections})
    protocol = limited_protocol(http_protocol_class(), header_timeout=config.header_timeout,
                                max_connections=connections,
                                max_client_connections=config.max_client_connections)
    server = DrainingServer(uvicorn.Config(
        app, host=host, port=port, log_config=uvicorn_log_config(log_level),
        log_level=log_level, access_log=False, timeout_graceful_shutdown=int(drain) + 1,
        lifespan="on", http=protocol))
    try:
        server.run()
    except KeyboardInterrupt:
        # uvicorn re-raises the SIGINT it handled once the shutdown is complete.
        return 130
    if server.stopped_by is not None:
        return _exit_for_signal(server.stopped_by)
    return 0 if server.started else 2


FILES_RESERVED = 64
"""Open files kept for what is not a connection: the listening socket, the pool's pipes, the
log, /proc reads."""


def _allow_open_files(connections: int) -> int:
    """Raise the soft open-file limit so that `connections` sockets and `FILES_RESERVED` more
    fit, and answer the connection cap that does fit: past the limit accept() fails and nobody
    is served, so the cap must close connections before the limit is reached."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = connections + FILES_RESERVED
    if soft != resource.RLIM_INFINITY and soft < want:
        soft = want if hard == resource.RLIM_INFINITY else min(want, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    if soft == resource.RLIM_INFINITY:
        return connections
    return max(1, min(connections, soft - FILES_RESERVED))


def _exit_for_signal(sig: int) -> int:
    """The exit status of a server that a signal stopped, when uvicorn's re-raise of it did
    not end the process. uvicorn re-raises through the disposition the process inherited, and
    a process started in the background by a non-interactive shell (or by any parent that
    ignores the signal) inherits SIG_IGN for SIGINT: the re-raise is then a no-op and the
    server exited 0, as if nothing had stopped it. A supervisor must see the signal either
    way: SIGINT ends as the shell's 130 (what KeyboardInterrupt gives), any other signal is
    raised again with its default action, so the process ends killed by it."""
    if sig == signal.SIGINT:
        return 130
    signal.signal(sig, signal.SIG_DFL)
    signal.raise_signal(sig)
    return 128 + sig  # not reached for a signal whose default action ends the process
