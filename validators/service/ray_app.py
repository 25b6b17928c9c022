"""The same FastAPI application on Ray Serve: `python -m validators serve --ray`.

Each replica builds the app of `validators.service.app` itself (`__serve_build_asgi_app__`:
a worker pool and a metrics registry do not pickle, so nothing is built in the driver) and
runs its lifespan, so a replica is exactly one uvicorn server's worth of service: its own
pool of `--workers` processes (each validating in the sandbox, replaced on `--timeout`), its
own `--queue`, auth, limits and metrics. Ray Serve's HTTP proxy listens on `--host:--port`
and spreads requests over the replicas.

Replica resources decide the backend: `cuda` replicas ask Ray for one GPU each (Ray sets
CUDA_VISIBLE_DEVICES for them), `cpu` replicas for one CPU per worker process; `auto` is
`cuda` when the cluster has a GPU, else `cpu`. On the command's own Ray instance, replicas
that could never be placed (no GPU, too few CPUs) are refused up front, since Ray would
otherwise wait forever to place them.

Ray Serve needs `ray[serve]`; without it this module still imports and `deploy` raises
`RayUnavailable` with the reason.
"""

from __future__ import annotations

import signal
import threading
from dataclasses import dataclass, replace
from typing import Any

from .app import ServiceConfig, create_app
from .logs import get_logger, setup_logging

HEADROOM = 8
"""Requests a replica takes beyond its pool's capacity, so that /healthz, /metrics and the
pool's own 429 still answer while every worker and queue slot is taken."""


class RayUnavailable(RuntimeError):
    """Ray Serve cannot be used here; the message says why."""


@dataclass(frozen=True)
class ReplicaPlan:
    """What one Ray Serve application of the service looks like."""

    backend: str
    replicas: int
    actor_options: dict[str, float]
    max_ongoing_requests: int

    @property
    def name(self) -> str:
        return f"validation-{self.backend}"


def plan(config: ServiceConfig, replicas: int, cluster_gpus: float,
         cluster_cpus: float | None = None) -> ReplicaPlan:
    """The deployment for `config.backend` on a cluster with `cluster_gpus` GPUs now.

    `cluster_cpus` is given for a cluster that cannot grow (the command's own Ray instance):
    replicas that could never all be placed there are refused instead of waited for. A cluster
    given by address may have an autoscaler that adds GPU nodes on demand (docker's
    ray-cluster.yaml starts with none), so `cuda` replicas are left to Ray to place there."""
    if replicas < 1:
        raise ValueError(f"replicas must be at least 1 (got {replicas})")
    fixed = cluster_cpus is not None
    backend = config.backend
    if backend == "auto":
        backend = "cuda" if cluster_gpus >= 1 else "cpu"
    if backend == "cuda":
        options: dict[str, float] = {"num_gpus": 1}
        if fixed and cluster_gpus < replicas:
            raise RayUnavailable(f"--backend cuda: {replicas} replica(s) need one GPU each and "
                                 f"this Ray instance has {cluster_gpus:g} (use --backend cpu, "
                                 f"or --address a cluster with GPU nodes)")
    elif backend == "cpu":
        options = {"num_cpus": config.workers}
        if fixed and cluster_cpus < replicas * config.workers:
            raise RayUnavailable(f"--replicas {replicas} x --workers {config.workers}: cpu "
                                 f"replicas take one CPU per worker and this Ray instance has "
                                 f"{cluster_cpus:g}")
    else:
        raise RayUnavailable(f"--backend {backend}: Ray Serve replicas run cuda or cpu only")
    return ReplicaPlan(backend, replicas, options,
                       max_ongoing_requests=config.workers + config.queue + HEADROOM)


def _serve() -> Any:
    try:
        from ray import serve
    except ImportError as exc:
        raise RayUnavailable(f"--ray needs Ray Serve (pip install 'ray[serve]'): {exc}") from None
    return serve


def application(config: ServiceConfig, chosen: ReplicaPlan, log_level: str = "info") -> Any:
    """The bound Ray Serve application whose replicas serve `config` on `chosen.backend`."""
    serve = _serve()
    replica_config = replace(config, backend=chosen.backend)

    @serve.deployment(
        name=chosen.name, num_replicas=chosen.replicas, ray_actor_options=chosen.actor_options,
        max_ongoing_requests=chosen.max_ongoing_requests,
        # Ray's graceful stop must outlast the app's own drain, or it would kill the replica
        # while admitted validations still run in its pool.
        graceful_shutdown_timeout_s=config.drain_bound() + 10)
    @serve.ingress()
    class Validation:
        """One replica: the FastAPI app, its worker pool and metrics live in this actor."""

        def __init__(self, service_config: ServiceConfig, level: str) -> None:
            self.service_config, self.level = service_config, level

        def __serve_build_asgi_app__(self) -> Any:
            setup_logging(self.level)
            return create_app(self.service_config)

    return Validation.bind(replica_config, log_level)


def deploy(config: ServiceConfig, *, host: str = "127.0.0.1", port: int = 8000,
           address: str | None = None, replicas: int = 1, route_prefix: str = "/",
           log_level: str = "info") -> None:
    """Run the service on Ray Serve until SIGTERM or SIGINT, then remove it again.

    Without `address` a Ray instance of its own is started (and stopped at the end); with one,
    the application joins that cluster and only the application is deleted at the end. The
    API is mounted at `route_prefix` (one application per prefix on a cluster)."""
    serve = _serve()
    import ray

    setup_logging(log_level)
    log = get_logger()
    stop = threading.Event()
    _stop_on_signals(stop)  # a signal during the (slow) start-up is not lost either
    # "local" starts a fresh instance even when another one runs on this machine (None would
    # join one found there).
    ray.init(address=address or "local", include_dashboard=False if address is None else None,
             logging_level="warning")
    _stop_on_signals(stop)  # ray.init replaced the SIGTERM handler with a bare sys.exit
    chosen = None
    try:
        resources = ray.cluster_resources()
        chosen = plan(config, replicas, resources.get("GPU", 0),
                      resources.get("CPU", 0) if address is None else None)
        # One application per prefix: a second command on the cluster must not replace this one.
        app_name = chosen.name + route_prefix.rstrip("/").replace("/", "_")
        serve.start(http_options={"host": host, "port": port})
        if not stop.is_set():
            try:
                serve.run(application(config, chosen, log_level), name=app_name,
                          route_prefix=route_prefix)
            except RuntimeError as exc:  # DEPLOY_FAILED: its message carries the replica's error
                raise RayUnavailable(f"the {app_name} application did not start on Ray "
                                     f"Serve ({exc}); the replicas' errors are in the log "
                                     f"above") from None
            url = f"http://{host}:{port}{route_prefix.rstrip('/')}"
            log.info("ready", extra={"url": url, "backend": chosen.backend,
                                     "replicas": chosen.replicas, "ray": address or "local"})
        while not stop.wait(1.0):
            pass
        log.info("stopping", extra={"application": app_name})
    finally:
        if chosen is not None:
            try:
                # Each replica drains as uvicorn would: admitted jobs finish, workers stop.
                serve.delete(app_name)
            except Exception as exc:  # the cluster may already be gone; nothing left to delete
                log.warning("could not delete the application", extra={"error": str(exc)})
        if address is None:
            serve.shutdown()
        ray.shutdown()


def _stop_on_signals(stop: threading.Event) -> None:
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
