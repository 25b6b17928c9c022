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
    p.add_argument("--max-body-bytes", type=int, default=1 << 20,
                   help="largest request body accepted (413 beyond)")
    p.add_argument("--tasks", default="builtin",
                   help="'builtin', a folder of task folders, or a builder dataset folder")
    p.add_argument("--token-env", metavar="NAME",
                   help="require 'Authorization: Bearer <token>', the token read from $NAME")
    p.add_argument("--alpha", type=float, default=1.0, help="score: weight of correct")
    p.add_argument("--beta", type=float, default=0.1, help="score: weight of compiled")
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

    for name in ("workers", "replicas"):
        if getattr(args, name) < 1:
            return fail(f"--{name} must be at least 1 (got {getattr(args, name)})")
    for name in ("queue", "max_body_bytes"):
        if getattr(args, name) < 0:
            return fail(f"--{name.replace('_', '-')} must not be negative")
    if not args.route_prefix.startswith("/"):
        return fail(f"--route-prefix must start with '/' (got {args.route_prefix!r})")
    if args.timeout <= 0:
        return fail(f"--timeout must be positive (got {args.timeout})")
    token = None
    if args.token_env:
        token = os.environ.get(args.token_env)
        if not token:
            return fail(f"--token-env {args.token_env}: the environment variable is unset or "
                        "empty (refusing to serve without the token it should hold)")
    config = ServiceConfig(backend=args.backend, workers=args.workers, queue=args.queue,
                           timeout=args.timeout, max_body_bytes=args.max_body_bytes,
                           alpha=args.alpha, beta=args.beta, tasks=args.tasks, token=token)
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
    from validators.service.logs import uvicorn_log_config

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

    server = DrainingServer(uvicorn.Config(
        app, host=host, port=port, log_config=uvicorn_log_config(log_level),
        log_level=log_level, access_log=False, timeout_graceful_shutdown=int(drain) + 1,
        lifespan="on"))
    try:
        server.run()
    except KeyboardInterrupt:
        # uvicorn re-raises the SIGINT it handled once the shutdown is complete.
        return 130
    if server.stopped_by is not None:
        return _exit_for_signal(server.stopped_by)
    return 0 if server.started else 2


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
