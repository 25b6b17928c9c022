"""The same FastAPI application on Ray Serve: `python -m validators serve --ray`.

A thin wrapper: each replica builds the app of `validators.service.app` (its own worker pool
and task set) and Ray Serve routes HTTP to it through `serve.ingress`. `--backend cuda` gives
GPU replicas (one GPU each), `cpu` CPU replicas (one CPU per worker process); `auto` deploys
both, the GPU application under `/cuda` and the CPU one under `/cpu`.

Ray Serve needs `ray[serve]`; without it this module still imports and `deploy` raises
`RayUnavailable` with the reason.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from .app import ServiceConfig, create_app


class RayUnavailable(RuntimeError):
    """Ray Serve cannot be used here; the message says why."""


def _serve() -> Any:
    try:
        from ray import serve
    except ImportError as exc:
        raise RayUnavailable(f"--ray needs Ray Serve (pip install 'ray[serve]'): {exc}") from None
    return serve


def application(config: ServiceConfig, replicas: int = 1) -> Any:
    """A bound Ray Serve application for one backend (`cpu` or `cuda`)."""
    serve = _serve()
    gpu = config.backend == "cuda"
    options = {"num_gpus": 1} if gpu else {"num_cpus": config.workers}

    @serve.deployment(name=f"validation-{config.backend}", num_replicas=replicas,
                      ray_actor_options=options)
    @serve.ingress(create_app(config))
    class Validation:
        """One replica: the FastAPI app (and its worker pool) lives in this actor."""

    return Validation.bind()


def deploy(config: ServiceConfig, *, address: str | None = None, replicas: int = 1) -> None:
    """Start (or join) a Ray cluster and run the application(s) until interrupted."""
    serve = _serve()
    import ray

    ray.init(address=address)
    if config.backend == "auto":
        for backend in ("cuda", "cpu"):
            serve.run(application(replace(config, backend=backend), replicas),
                      name=backend, route_prefix=f"/{backend}")
    else:
        serve.run(application(config, replicas), name=config.backend, route_prefix="/")
    import time

    while True:  # the driver keeps the applications up until interrupted
        time.sleep(3600)
