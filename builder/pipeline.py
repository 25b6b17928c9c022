"""The build: gather -> extract -> dedup -> specify -> validate -> annotate -> filter -> write.

Per-record stages run on an executor (Ray by default) through the stage cache; the two
stages that need every record at once (gather, dedup) and the writer run here. Records are
ordered by id wherever order matters, so a build's output depends only on its inputs and
settings, not on scheduling, interruption or cache state.
"""

from __future__ import annotations

import json
import shutil
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

from schemas import BuildManifest, DatasetRecord, StageStats

from .cache import StageCache, atomic_write_text
from .card import card_markdown
from .config import BuildConfig
from .environment import environment
from .executors import ExecutorError, StageResources, make_executor, probe_address
from .failfast import FailFast
from .item import Envelope, Item
from .records import make_record
from .report import FUNNEL_PNG, REPORT_MD, plot_funnel, report_markdown
from .stages import Annotate, DedupConfig, Extract, Filter, Specify, Validate, dedup, gather
from .stages.archive import PER_TASK_REASON, archive_summary, choose_per_task
from .stages.base import Stage, stage_error_message
from .stages.filter import FilterConfig
from .stages.kernelbench_form import FORMATS, KERNELBENCH
from .stages.validate import seed_key
from .writer import write_shards

TIMINGS_JSON = "timings.json"
STAGE_ORDER = ("gather", "extract", "dedup", "decontaminate", "specify", "validate", "annotate",
               "filter", "write")


class BuildError(RuntimeError):
    """The build cannot start or go on; one line naming the input and the reason."""


@dataclass
class BuildResult:
    out: Path
    manifest: BuildManifest
    records: list[DatasetRecord]
    rejections: list[dict[str, str]]
    wall_seconds: float
    notes: list[str] = field(default_factory=list)
    phases: dict[str, float] = field(default_factory=dict)
    """Wall-clock seconds of each phase: gather, ray_start, extract, dedup, chain
    (specify -> validate -> annotate -> filter, streamed), write."""


class Progress:
    """What the pipeline tells a display; the default tells nobody."""

    def phase(self, name: str, total: int) -> None: ...

    def advance(self, name: str, n: int = 1) -> None: ...

    def done(self, name: str) -> None: ...


# ---------------------------------------------------------------- preflight


def check_output(out: Path) -> None:
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".write-probe"
        probe.write_text("ok")
        probe.unlink()
    except OSError as exc:
        raise BuildError(f"--out {out}: not writable ({exc.strerror or exc})") from None


def resolve_backend(name: str, *, local: bool = True):
    """The backend object for `name`, or BuildError saying why it cannot work here.

    With a local cluster a GPU backend must find a GPU on this machine; with a remote
    cluster the GPUs are the workers' (checked against the cluster's resources instead)."""
    try:
        from validators.backends import get_backend
    except ImportError as exc:
        raise BuildError(f"--backend {name}: the validation backends are not installed ({exc})") from None
    try:
        backend = get_backend(name)
    except Exception as exc:
        raise BuildError(f"--backend {name}: {stage_error_message(exc)}") from None
    why = backend.available()
    if why:
        raise BuildError(f"--backend {name}: unavailable here: {why}")
    probe = getattr(backend, "gpu", None)
    if local and backend.name == "cuda" and callable(probe):
        gpu = probe()
        if not gpu.ok:
            raise BuildError(f"--backend {name}: needs_gpu: unavailable here: {gpu.reason()}")
    return backend


def check_sources(names: list[str], options: dict[str, dict] | None = None) -> None:
    from sources.base import UnknownSource, get_source

    for n in names:
        try:
            get_source(n, **(options or {}).get(n, {}))
        except UnknownSource as exc:
            raise BuildError(f"--sources: {exc}") from None
        except Exception as exc:
            raise BuildError(f"--sources {n}: {stage_error_message(exc)}") from None


# ---------------------------------------------------------------- stats


class Stats:
    def __init__(self) -> None:
        self.stages: dict[str, StageStats] = {n: StageStats(name=n) for n in STAGE_ORDER}
        self.discarded_notes: list[str] = []

    def count_events(self, envs: list[Envelope], stage_names: list[str]) -> None:
        for env in envs:
            for ev in env.events:
                if ev.stage not in stage_names:
                    continue
                st = self.stages[ev.stage]
                st.records_in += 1
                st.seconds += ev.seconds
                st.cached += int(ev.cached)
                if ev.cache_discarded:
                    st.cache_discarded += 1
                    self.discarded_notes.append(f"{env.item.id} ({ev.stage}): {ev.note}")
            rej = env.item.rejection
            if rej is not None and rej.stage in stage_names:
                r = self.stages[rej.stage].rejected
                r[rej.reason] = r.get(rej.reason, 0) + 1
        for name in stage_names:
            st = self.stages[name]
            st.records_out = st.records_in - sum(st.rejected.values())

    def driver_stage(self, name: str, items_in: int, rejected: Counter[str], seconds: float) -> None:
        st = self.stages[name]
        st.records_in = items_in
        st.rejected = dict(sorted(rejected.items()))
        st.records_out = items_in - sum(rejected.values())
        st.seconds = seconds


# ---------------------------------------------------------------- build


def build(cfg: BuildConfig, progress: Progress | None = None) -> BuildResult:
    progress = progress or Progress()
    t_start = time.perf_counter()
    out = Path(cfg.out)
    check_output(out)
    check_sources(cfg.sources, cfg.source_options)
    unused = sorted(set(cfg.source_options) - set(cfg.sources))
    if unused:
        raise BuildError(f"options given for source(s) {', '.join(unused)}, which --sources does "
                         f"not name (--sources {','.join(cfg.sources)})")
    if cfg.format not in FORMATS:
        raise BuildError(f"--format {cfg.format}: must be one of {', '.join(FORMATS)}")
    if cfg.per_task < 1:
        raise BuildError(f"--per-task {cfg.per_task}: must be at least 1")
    if cfg.repair_rounds < 0:
        raise BuildError(f"--repair-rounds {cfg.repair_rounds}: must not be negative")
    if not 0.0 <= cfg.min_kernel_kept <= 1.0:
        raise BuildError(f"--min-kernel-kept {cfg.min_kernel_kept}: must be within [0, 1]")
    decontam = load_decontamination(cfg.decontaminate)
    if cfg.workers < 1:
        raise BuildError(f"--workers {cfg.workers}: must be at least 1")
    if not 0.0 < cfg.gpu_per_validation <= 1.0:  # also NaN
        raise BuildError(f"--gpu-per-validation {cfg.gpu_per_validation}: must be in (0, 1]")
    if not cfg.near_dup_threshold > 0.0:  # also NaN
        raise BuildError(
            f"--near-dup-threshold {cfg.near_dup_threshold}: must be above 0 (>= 1 disables)"
        )
    if cfg.cache_root.exists() and not cfg.cache_root.is_dir():
        raise BuildError(f"--cache-dir {cfg.cache_root}: exists and is not a folder")
    if cfg.address and cfg.executor == "ray":
        try:
            probe_address(cfg.address)
        except ExecutorError as exc:
            raise BuildError(str(exc)) from None
    remote = bool(cfg.address) and cfg.address != "local" and cfg.executor == "ray"
    backend = resolve_backend(cfg.backend, local=not remote)
    cache = StageCache(cfg.cache_root)
    if not cfg.resume:
        cache.clear([Extract.name, Specify.name, Validate.name, Annotate.name, Filter.name])
        shutil.rmtree(out / "data", ignore_errors=True)
    stats = Stats()
    notes: list[str] = []
    phases: dict[str, float] = {}

    # gather
    t0 = time.perf_counter()
    gathered = gather(cfg.sources, limit=cfg.limit, options=cfg.source_options,
                      licenses=cfg.licenses)
    notes += gathered.errors
    if decontam is not None:
        notes += decontam.notes()
    items = gathered.items
    progress.phase("gather", len(items))
    progress.advance("gather", len(items))
    progress.done("gather")
    stats.driver_stage(
        "gather", len(items),
        Counter(it.rejection.reason for it in items if it.rejection),
        time.perf_counter() - t0,
    )
    phases["gather"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    try:
        executor = make_executor(cfg.executor, workers=cfg.workers, address=cfg.address)
    except ExecutorError as exc:
        raise BuildError(str(exc)) from None
    phases["executor_start"] = time.perf_counter() - t0
    if remote and backend.name == "cuda" and not executor.gpus():
        executor.close()
        raise BuildError(f"--backend cuda: needs_gpu: the Ray cluster at {cfg.address} has no GPU")
    try:
        # extract
        t0 = time.perf_counter()
        dcfg = DedupConfig(near_threshold=cfg.near_dup_threshold)
        envs = _run(executor, [Extract(dcfg)], [Envelope(item=it) for it in items], cache, {}, progress, "extract")
        phases["extract"] = time.perf_counter() - t0
        stats.count_events(envs, ["extract"])

        # dedup
        t0 = time.perf_counter()
        alive_before = sum(e.item.alive for e in envs)
        deduped = dedup([e.item for e in envs], dcfg)
        by_id = {e.item.id: e.events for e in envs}
        envs = [Envelope(item=it, events=by_id[it.id]) for it in deduped]
        stats.driver_stage(
            "dedup", alive_before,
            Counter(e.item.rejection.reason for e in envs if e.item.rejection and e.item.rejection.stage == "dedup"),
            time.perf_counter() - t0,
        )
        phases["dedup"] = time.perf_counter() - t0

        # decontaminate (code): benchmark items must not leak into the dataset
        t0 = time.perf_counter()
        decontam_rejects: Counter[str] = Counter()
        decontam_in = sum(e.item.alive for e in envs)
        if decontam is not None:
            envs = _driver_pass(envs, lambda items: decontam.code(items))
            decontam_rejects += _rejections_at(envs, "decontaminate")

        # specify: on the driver in a thread pool (the LLM is remote; its concurrency is the
        # endpoint's), through the stage cache
        t1 = time.perf_counter()
        specify = Specify(specifiers(cfg))
        envs = _run_threaded(specify, envs, cache, threads=_llm_threads(cfg), progress=progress)
        phases["specify"] = time.perf_counter() - t1
        stats.count_events(envs, ["specify"])

        # decontaminate (prompts): what the LLM wrote may quote a benchmark's task
        t1 = time.perf_counter()
        if decontam is not None:
            before = _rejections_at(envs, "decontaminate")
            envs = _driver_pass(envs, lambda items: decontam.prompts(items))
            decontam_rejects += _rejections_at(envs, "decontaminate") - before
        stats.driver_stage("decontaminate", decontam_in, decontam_rejects,
                           (t1 - t0) + (time.perf_counter() - t1))
        phases["decontaminate"] = (t1 - t0) + (time.perf_counter() - t1)

        # validate (+ repair rounds) -> annotate -> filter
        chain: list[Stage] = [
            Validate(backend.name, thorough=cfg.thorough, repair=repairer(cfg),
                     seed_key=seed_key(cfg.cache_root), format=cfg.format),
            Annotate(format=cfg.format),
            Filter(FilterConfig(portable_only=cfg.portable_only,
                                kernelbench=cfg.format == KERNELBENCH)),
        ]
        resources = validation_resources(backend.name, cfg)
        t0 = time.perf_counter()
        envs = _run(executor, chain, envs, cache, resources, progress, "validate",
                    watch=FailFast(BuildError))
        phases["chain"] = time.perf_counter() - t0
        stats.count_events(envs, [s.name for s in chain])
    finally:
        executor.close()

    # write
    t0 = t_write = time.perf_counter()
    write_in = sum(e.item.alive for e in envs)
    records: list[DatasetRecord] = []
    write_rejects: Counter[str] = Counter()
    dropped = choose_per_task([e.item for e in envs], cfg.per_task)
    if dropped:
        write_rejects[PER_TASK_REASON] += dropped
    final: list[Item] = []
    for env in envs:
        it = env.item
        if it.alive:
            try:
                records.append(make_record(it))
            except Exception as exc:
                it.reject("write", "stage_error:write", stage_error_message(exc))
                write_rejects["stage_error:write"] += 1
        final.append(it)
    shards = write_shards(out, records, shard_records=cfg.shard_records)
    stats.driver_stage("write", write_in, write_rejects, time.perf_counter() - t0)

    rejections = [
        {
            "id": it.id,
            "stage": it.rejection.stage,
            "reason": it.rejection.reason,
            "detail": it.rejection.detail,
            "message": it.rejection.message(),
        }
        for it in sorted(final, key=lambda i: i.id)
        if it.rejection is not None
    ]
    atomic_write_text(out / "rejections.jsonl", "".join(json.dumps(r, sort_keys=True) + "\n" for r in rejections))

    splits = Counter(r.split for r in records)
    manifest = BuildManifest(
        created_at=datetime.now(UTC),
        tool_version=_tool_version(),
        config=cfg.manifest_config() | {"backend_resolved": backend.name},
        backend=backend.name,
        sources=list(cfg.sources),
        stages=[stats.stages[n] for n in STAGE_ORDER],
        shards=shards,
        splits={s: splits.get(s, 0) for s in ("train", "test")},
        environment=environment(),
        synthesis=synthesis_summary([e.item for e in envs], records),
        archive=archive_summary(final),
    )
    notes += [f"cache entry discarded and recomputed: {n}" for n in stats.discarded_notes]
    schedules = list(backend.schedules(thorough=cfg.thorough))
    variants = list(backend.variants(thorough=cfg.thorough))
    atomic_write_text(out / "manifest.json", manifest.model_dump_json(indent=2) + "\n")
    atomic_write_text(out / "README.md", card_markdown(records, manifest, schedules=schedules, variants=variants))
    plot_funnel(manifest, out / FUNNEL_PNG)
    phases["write"] = time.perf_counter() - t_write
    wall = time.perf_counter() - t_start
    atomic_write_text(out / REPORT_MD, report_markdown(manifest, wall, notes, phases))
    atomic_write_text(out / TIMINGS_JSON, json.dumps({"wall_seconds": wall, "phases": phases}, indent=2) + "\n")
    return BuildResult(out=out, manifest=manifest, records=records, rejections=rejections,
                       wall_seconds=wall, notes=notes, phases=phases)


# ---------------------------------------------------------------- LLM and decontamination


def specifiers(cfg: BuildConfig) -> list:
    """Who writes tasks: records that carry one first; with an LLM configured, PyTorch modules
    and raw CUDA code too."""
    from .stages.archive import FromArchive
    from .stages.specify import FromTask

    if cfg.format == KERNELBENCH:
        from .stages.kernelbench_form import (
            KernelBenchAnswerer,
            KernelBenchArchive,
            NotKernelBenchForm,
        )

        llm = [KernelBenchAnswerer(cfg.llm)] if cfg.llm is not None else []
        return [KernelBenchArchive(), *llm, NotKernelBenchForm()]
    out: list = [FromArchive(), FromTask()]
    if cfg.llm is not None:
        from .llm.specify import KernelSpecifier, ModuleSpecifier

        out += [ModuleSpecifier(cfg.llm, min_kernel_kept=cfg.min_kernel_kept),
                KernelSpecifier(cfg.llm, min_kernel_kept=cfg.min_kernel_kept)]
    return out


def repairer(cfg: BuildConfig):
    # The repair prompt asks for a standalone program; a KernelBench answer is judged as given.
    if cfg.llm is None or cfg.repair_rounds <= 0 or cfg.format == KERNELBENCH:
        return None
    from .llm.specify import Repairer

    return Repairer(cfg.llm, min_kernel_kept=cfg.min_kernel_kept, rounds=cfg.repair_rounds)


def _llm_threads(cfg: BuildConfig) -> int:
    return max(1, int(getattr(cfg.llm, "concurrency", 1) or 1)) if cfg.llm is not None else 1


def load_decontamination(paths: list[Path]):
    """The benchmark index, built once before anything runs (a bad file stops the build here
    with one line naming it)."""
    if not paths:
        return None
    from .decontam import DecontamError, build_index
    from .stages.decontaminate import decontaminate_code, decontaminate_prompts

    try:
        index, loaded = build_index([str(p) for p in paths])
    except DecontamError as exc:
        raise BuildError(f"--decontaminate: {exc}") from None
    return _Decontamination(index, loaded, decontaminate_code, decontaminate_prompts)


@dataclass
class _Decontamination:
    index: object
    loaded: list
    _code: object
    _prompts: object

    def code(self, items: list[Item]) -> list[Item]:
        return self._code(items, self.index)

    def prompts(self, items: list[Item]) -> list[Item]:
        return self._prompts(items, self.index)

    def notes(self) -> list[str]:
        out = []
        for lb in self.loaded:
            out.append(f"decontaminate: {lb.path}: {len(lb.items)} benchmark items ({lb.format})")
            out += [f"decontaminate: {lb.path}: {n}" for n in lb.notes]
        return out


def _driver_pass(envs: list[Envelope], fn) -> list[Envelope]:
    events = {e.item.id: e.events for e in envs}
    items = fn([e.item for e in envs])
    return sorted((Envelope(item=it, events=events[it.id]) for it in items), key=lambda e: e.item.id)


def _rejections_at(envs: list[Envelope], stage: str) -> Counter[str]:
    return Counter(e.item.rejection.reason for e in envs
                   if e.item.rejection is not None and e.item.rejection.stage == stage)


def _run_threaded(stage: Stage, envs: list[Envelope], cache: StageCache, *, threads: int,
                  progress: Progress) -> list[Envelope]:
    from .executors import run_threaded

    alive = [e for e in envs if e.item.alive]
    dead = [e for e in envs if not e.item.alive]
    progress.phase(stage.name, len(alive))
    done: list[Envelope] = []
    for env in run_threaded([stage], alive, cache, threads=threads):
        done.append(env)
        progress.advance(stage.name)
    progress.done(stage.name)
    return sorted(done + dead, key=lambda e: e.item.id)


def synthesis_summary(items: list[Item], records: list[DatasetRecord]) -> dict[str, int | float | str]:
    """Totals over every record an LLM worked on (kept or not), and the fidelity of the kept
    ones to their original kernels."""
    syn = [it.synthesis for it in items if it.synthesis is not None]
    if not syn:
        return {}
    kept_ids = {r.id for r in records}
    kept_syn = [it.synthesis for it in items if it.synthesis is not None and it.id in kept_ids]
    shares = [s.kernel_kept for s in kept_syn if s.kernel_kept is not None]
    out: dict[str, int | float | str] = {
        "model": ",".join(sorted({s.model for s in syn})),
        "prompt_version": ",".join(sorted({s.prompt_version for s in syn})),
        "records": len(syn),
        "records_kept": len(kept_syn),
        "calls": sum(s.calls for s in syn),
        "cached_calls": sum(s.cached_calls for s in syn),
        "prompt_tokens": sum(s.prompt_tokens for s in syn),
        "completion_tokens": sum(s.completion_tokens for s in syn),
        "answers_asked": sum(s.attempts for s in syn),
        "repair_rounds": sum(s.repair_rounds for s in syn),
        "kept_after_repair": sum(1 for s in kept_syn if s.repair_rounds > 0),
    }
    if shares:
        out["kernel_kept_mean"] = round(sum(shares) / len(shares), 4)
        out["kernel_kept_min"] = round(min(shares), 4)
        out["kernel_kept_verbatim"] = sum(1 for v in shares if v >= 0.9999)
        out["kernel_kept_measured"] = len(shares)
    return out


def validation_resources(backend: str, cfg: BuildConfig) -> dict[str, StageResources]:
    """What each validation task asks Ray for: a CPU, and on `cuda` a share of a GPU."""
    gpu = cfg.gpu_per_validation if backend == "cuda" else 0.0
    return {"validate": StageResources(num_cpus=1.0, num_gpus=gpu)}


def _run(executor, stages: list[Stage], envs: list[Envelope], cache: StageCache,
         resources: dict[str, StageResources], progress: Progress, phase: str,
         watch: Callable[[Envelope], None] | None = None) -> list[Envelope]:
    """Run `stages` over the live envelopes; `watch` sees each one as it finishes and may stop
    the build by raising."""
    alive = [e for e in envs if e.item.alive]
    dead = [e for e in envs if not e.item.alive]
    progress.phase(phase, len(alive))
    done: list[Envelope] = []
    for env in executor.run(stages, alive, cache, resources):
        done.append(env)
        progress.advance(phase)
        if watch is not None:
            watch(env)
    progress.done(phase)
    if len(done) != len(alive):
        missing = {e.item.id for e in alive} - {e.item.id for e in done}
        raise BuildError(f"executor {executor.name} lost {len(missing)} records (e.g. {sorted(missing)[:3]})")
    return sorted(done + dead, key=lambda e: e.item.id)


def _tool_version() -> str:
    try:
        return metadata.version("cuda-kernel-data")
    except metadata.PackageNotFoundError:
        return "0+unknown"

