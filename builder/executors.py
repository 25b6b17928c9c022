"""Who runs the per-record stages: in this process (`local`), or on Ray (`ray`).

Executors only schedule: each applies `apply_stage` for a chain of stages to every envelope
and hands finished envelopes back as they complete (in any order; the pipeline sorts).
"""

from __future__ import annotations

import logging
import os
import socket
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from .cache import StageCache
from .item import Envelope, Rejection, StageEvent
from .stages.base import Stage, apply_stage, stage_error_message


class ExecutorError(RuntimeError):
    """The executor cannot run here (e.g. a Ray address that does not answer)."""


@dataclass
class StageResources:
    num_cpus: float = 1.0
    num_gpus: float = 0.0


def _apply_chain(stages: list[Stage], env: Envelope, cache: StageCache | None) -> Envelope:
    for stage in stages:
        env = apply_stage(stage, env, cache)
    return env


class LocalExecutor:
    """Runs everything in this process, one record at a time. For tests and debugging."""

    name = "local"

    def run(
        self,
        stages: list[Stage],
        envelopes: list[Envelope],
        cache: StageCache | None,
        resources: dict[str, StageResources] | None = None,
    ) -> Iterator[Envelope]:
        for env in envelopes:
            yield _apply_chain(stages, env, cache)

    def gpus(self) -> float:
        return 0.0

    def close(self) -> None:
        pass


class _StageFn:
    """A picklable row -> row function for `Dataset.map`."""

    def __init__(self, stage: Stage, cache: StageCache | None):
        self.stage = stage
        self.cache = cache

    def __call__(self, row: dict[str, Any]) -> dict[str, Any]:
        env = apply_stage(self.stage, Envelope.from_row(row), self.cache)
        return env.to_row()


def run_threaded(
    stages: list[Stage], envelopes: list[Envelope], cache: StageCache | None, *, threads: int,
) -> Iterator[Envelope]:
    """The chain over every envelope in a pool of `threads` threads of this process, yielding
    each as it finishes. For stages that mostly wait on a remote service (the LLM): their
    concurrency is the endpoint's to bear, not this machine's cores, so it is not tied to the
    executor's CPU slots."""
    from concurrent.futures import ThreadPoolExecutor, as_completed

    if not envelopes:
        return
    with ThreadPoolExecutor(max_workers=max(1, threads), thread_name_prefix="stage") as pool:
        futures = [pool.submit(_apply_chain, stages, env, cache) for env in envelopes]
        for fut in as_completed(futures):
            yield fut.result()


def probe_address(address: str, timeout: float = 3.0) -> None:
    """Fail fast when a `host:port` or `ray://host:port` address does not answer (ray.init
    would otherwise retry for a long time)."""
    if address in ("auto", "local"):
        return
    hostport = address.split("://", 1)[-1].rstrip("/")
    host, sep, port = hostport.rpartition(":")
    if not sep or not port.isdigit():
        raise ExecutorError(f"--address {address}: expected host:port or ray://host:port")
    try:
        with socket.create_connection((host or "127.0.0.1", int(port)), timeout=timeout):
            pass
    except OSError as exc:
        raise ExecutorError(
            f"--address {address}: no Ray cluster answers there ({exc.strerror or exc})"
        ) from None


class RayExecutor:
    """Schedules stages with Ray Data: one `map` per stage, streaming between them, each
    asking for its own resources (the validate stage asks for a GPU on the cuda backend)."""

    name = "ray"

    def __init__(self, *, workers: int, address: str | None = None):
        os.environ.setdefault("RAY_DEDUP_LOGS", "0")
        os.environ.setdefault("RAY_AUTH_MODE", "disabled")
        warnings.filterwarnings("ignore", module="ray")
        import ray

        self.ray = ray
        self.workers = workers
        self.address = address
        if address:
            probe_address(address)
        kwargs: dict[str, Any] = dict(
            include_dashboard=False,
            log_to_driver=False,
            logging_level=logging.ERROR,
            configure_logging=True,
        )
        try:
            if address and address != "local":
                ray.init(address=address, **kwargs)
            else:
                ray.init(num_cpus=workers, **kwargs)
        except Exception as exc:
            raise ExecutorError(
                f"ray.init({address or 'local'}): {stage_error_message(exc)}"
            ) from None
        import ray.data

        ctx = ray.data.DataContext.get_current()
        ctx.enable_progress_bars = False
        ctx.print_on_execution_start = False
        ctx.enable_auto_log_stats = False
        for name in ("ray", "ray.data", "ray._private"):
            logging.getLogger(name).setLevel(logging.ERROR)

    def run(
        self,
        stages: list[Stage],
        envelopes: list[Envelope],
        cache: StageCache | None,
        resources: dict[str, StageResources] | None = None,
    ) -> Iterator[Envelope]:
        if not envelopes:
            return
        import ray.data

        resources = resources or {}
        # One block per record where a record's work is heavy and uneven (validation), so
        # workers balance; cheap stages take a few records per task to save overhead.
        heavy = any(s.name in resources for s in stages)
        blocks = len(envelopes) if heavy else min(len(envelopes), max(1, self.workers) * 4)
        ds = ray.data.from_items([e.to_row() for e in envelopes], override_num_blocks=blocks)
        for stage in stages:
            res = resources.get(stage.name, StageResources())
            kwargs: dict[str, Any] = {"num_cpus": res.num_cpus}
            if res.num_gpus:
                kwargs["num_gpus"] = res.num_gpus
            with warnings.catch_warnings():
                # Ray Data retries a task whose worker died forever by default; a record
                # that kills its worker every time would hang the build. There is no named
                # parameter for this yet, hence the (deprecated) remote-args pass-through;
                # it is removed in Ray 2.64, so pyproject.toml pins ray below that.
                warnings.simplefilter("ignore")
                ds = ds.map(_StageFn(stage, cache), max_retries=1, **kwargs)
        done: set[str] = set()
        try:
            for row in ds.iter_rows():
                env = Envelope.from_row(row)
                done.add(env.item.id)
                yield env
        except Exception as exc:
            # A worker died (or Ray Data gave up) part-way: finished stages are cached, so
            # redo the rest record by record and pin a crash on the stage that caused it.
            note = stage_error_message(exc)
            rest = [e for e in envelopes if e.item.id not in done]
            yield from self._isolate(stages, rest, cache, resources, note)

    def _isolate(
        self,
        stages: list[Stage],
        envelopes: list[Envelope],
        cache: StageCache | None,
        resources: dict[str, StageResources],
        note: str,
    ) -> Iterator[Envelope]:
        """Each record's chain as its own task, no retries; a record whose task dies is
        re-run stage by stage to find the stage that kills its worker."""
        ray = self.ray
        res = [resources.get(s.name, StageResources()) for s in stages]
        cpus = max(r.num_cpus for r in res)
        gpus = max(r.num_gpus for r in res)

        @ray.remote(max_retries=0)
        def chain(env: Envelope) -> Envelope:
            return _apply_chain(stages, env, cache)

        @ray.remote(max_retries=0)
        def one(stage: Stage, env: Envelope) -> Envelope:
            return apply_stage(stage, env, cache)

        pending = {chain.options(num_cpus=cpus, num_gpus=gpus).remote(e): e for e in envelopes}
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            env = pending.pop(ready[0])
            try:
                yield ray.get(ready[0])
                continue
            except Exception:
                pass
            for stage, r in zip(stages, res, strict=True):
                try:
                    env = ray.get(one.options(num_cpus=r.num_cpus, num_gpus=r.num_gpus).remote(stage, env))
                except Exception as exc:
                    item = env.item.model_copy(deep=True)
                    item.rejection = Rejection(
                        stage=stage.name,
                        reason=f"stage_error:{stage.name}",
                        detail=f"worker crashed: {stage_error_message(exc)}",
                    )
                    env = Envelope(item=item, events=[*env.events, StageEvent(stage=stage.name, note=note)])
                    break
            yield env

    def gpus(self) -> float:
        return float(self.ray.cluster_resources().get("GPU", 0))

    def close(self) -> None:
        if self.ray.is_initialized():
            self.ray.shutdown()


def make_executor(kind: str, *, workers: int, address: str | None = None) -> LocalExecutor | RayExecutor:
    if kind == "local":
        return LocalExecutor()
    if kind == "ray":
        return RayExecutor(workers=workers, address=address)
    raise ExecutorError(f"--executor {kind}: unknown (known: local, ray)")

