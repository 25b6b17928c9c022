"""Prometheus metrics of one server (its own registry, so several apps in one process, as in
the tests, do not collide)."""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

LATENCY_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)


class Metrics:
    def __init__(self, queue_depth: Callable[[], float], busy: Callable[[], float]) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.requests = Counter("ckd_requests", "HTTP requests by route and status code",
                                ["route", "code"], registry=r)
        self.latency = Histogram("ckd_request_seconds", "HTTP request latency by route",
                                 ["route"], buckets=LATENCY_BUCKETS, registry=r)
        self.verdicts = Counter("ckd_verdicts", "validation verdicts by status", ["status"],
                                registry=r)
        self.validation = Histogram("ckd_validation_seconds", "time a worker spent on one job",
                                    buckets=LATENCY_BUCKETS, registry=r)
        self.build_cache = Counter("ckd_build_cache", "program builds by cache outcome",
                                   ["outcome"], registry=r)
        self.rejected = Counter("ckd_rejected", "requests refused before validation",
                                ["reason"], registry=r)
        self.worker_restarts = Counter("ckd_worker_restarts",
                                       "workers replaced after a timeout or crash", registry=r)
        Gauge("ckd_queue_depth", "admitted jobs waiting for a worker", registry=r
              ).set_function(queue_depth)
        Gauge("ckd_workers_busy", "workers running a job", registry=r).set_function(busy)

    def record_result(self, result: dict, seconds: float) -> None:
        self.verdicts.labels(result.get("status", "unknown")).inc()
        self.validation.observe(seconds)
        compile_info = result.get("compile")
        if compile_info:
            self.build_cache.labels("hit" if compile_info.get("cached") else "miss").inc()

    def render(self) -> bytes:
        return generate_latest(self.registry)
