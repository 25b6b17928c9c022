"""A bounded pool of validation worker processes with a bounded queue and per-job timeouts.

Each worker process builds one `Engine` and reuses it (its build and reference caches stay
warm). A job that outlives its timeout gets its worker killed with every process below it —
the sandbox launcher included, and the sandbox kills the program's tree when its launcher dies
— and a fresh worker takes the slot, so a program that never ends costs one request, not a
worker. Admission is decided at once: when `workers + queue` jobs are already admitted, or the
caller already holds its share of them, the caller gets `PoolFull` and answers 429 rather than
letting requests pile up unboundedly. Admitted slots belong to an `Admission`, a context manager:
whatever way a request ends (an answer, an exception, a cancellation), leaving the `with` block
gives back every slot it still holds, so no failure after admission can shrink the pool.
"""

from __future__ import annotations

import asyncio
import math
import multiprocessing as mp
import os
import signal
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

SNAPSHOT_SECONDS = 0.5
"""While a job runs, how often the processes below its worker are listed (see `_Worker.call`)."""
READY_SECONDS = 600.0
"""How long a new worker may take to build its Engine (a cold cache compiles the shims)."""
PRIOR_JOB_SECONDS = 5.0
"""The job time `Retry-After` assumes until a job has finished (then it is the observed mean)."""
MEAN_WEIGHT = 0.2
"""Weight of the newest job in the moving mean of job time (recent load counts most)."""
STUCK_GRACE = 30.0
"""A job on a worker longer than the timeout plus this was not stopped: the pool is unhealthy."""

PROGRAM_SHARE = 0.6
"""The part of a job's timeout the program's own runs may take by default, all together
(`Engine.program_seconds`); the rest is for the builds, the references and the sandboxes'
set-up, which are the service's time."""
IDLE_HOLD_SECONDS = 10.0
"""Slots admitted but given to no job for this long, while a worker is free, are blocked."""


class PoolFull(Exception):
    """No room for the job now; retry after `retry_after` seconds."""

    def __init__(self, retry_after: int, why: str = "the validation queue is full") -> None:
        super().__init__(f"{why}; retry after {retry_after} s")
        self.retry_after = retry_after


class PoolClosed(Exception):
    """The server is shutting down and takes no new work."""


class JobTimeout(Exception):
    """The job ran past its timeout; its worker was replaced."""


class WorkerFailed(Exception):
    """The worker died or could not run the job (not the program's fault)."""


@dataclass
class JobOutcome:
    result: dict[str, Any]
    seconds: float
    kernel_seconds: float | None = None
    """The program's kernel time, when the job asked for it (the speed term) and it passed."""


async def _uncancelled(fut: asyncio.Future[Any]) -> Any:
    """Await `fut`; if the caller is cancelled, still wait for it: the worker (and its slot)
    must not be handed to another job while this one runs in it."""
    try:
        return await asyncio.shield(fut)
    except asyncio.CancelledError:
        await asyncio.wait([fut])
        raise


def _worker_main(conn: Any, backend: str, wall_seconds: float | None) -> None:
    """Worker process: build the Engine once, then answer jobs until told to stop."""
    # Own process group: the parent kills the group on timeout, and a terminal's Ctrl-C goes to
    # the server only, which then drains instead of losing jobs to KeyboardInterrupt.
    os.setpgid(0, 0)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent()
    from schemas import Program, Status, Task
    from validators.backends import BackendUnavailable, get_backend
    from validators.build_cache import BuildCache
    from validators.engine import DEFAULT_LIMITS, Engine
    from validators.reference import ReferenceRunner

    from . import kernelbench

    try:
        limits = DEFAULT_LIMITS
        if wall_seconds is not None:
            limits = limits.with_overrides(wall_seconds=wall_seconds,
                                           cpu_seconds=min(limits.cpu_seconds or wall_seconds,
                                                           wall_seconds))
        # A fresh case per check: callers see verdicts, and one learned from an answer must
        # not be met again (its reference, run every check, is not kept on disk).
        engine = Engine(get_backend(backend), limits=limits, cache=BuildCache(),
                        references=ReferenceRunner(persist=_published), fresh_per_check=True)
    except BackendUnavailable as exc:
        conn.send({"ready": False, "error": str(exc)})
        return
    conn.send({"ready": True, "backend": engine.backend.name})
    while True:
        try:
            job = conn.recv()
        except EOFError:
            return
        if job is None:
            return
        try:
            if job.get("kind") == kernelbench.JOB_KIND:
                result = kernelbench.run_job(job, engine.backend.name)
                conn.send({"ok": True, "result": result.model_dump(mode="json")})
                continue
            task = Task.model_validate_json(job["task"])
            program = Program(**job["program"])
            engine.program_seconds = job.get("program_seconds")
            result = engine.check(task, program, thorough=job.get("thorough", False))
            answer = {"ok": True, "result": result.model_dump(mode="json")}
            if job.get("speed") and result.status == Status.PASSED:
                # Kernel time alone (`Engine.kernel_seconds`), for the speed term.
                answer["kernel_seconds"] = engine.kernel_seconds(task, program)
            conn.send(answer)
        except Exception as exc:  # the engine's own failure is the job's answer, not a crash
            conn.send({"ok": False, "error": f"{type(exc).__name__}: {exc}"})


def _published(task: Any, case: Any) -> bool:
    """Whether `case` is one of the task's own cases (not one drawn for a check)."""
    return case in task.cases


def _die_with_parent() -> None:
    """A server killed outright (SIGKILL, OOM) must not leave its workers behind."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass  # not Linux: the workers then end when their pipe closes


class _Worker:
    """The parent's handle on one worker process; used by one thread at a time."""

    def __init__(self, ctx: Any, backend: str, wall_seconds: float | None) -> None:
        self._ctx, self._backend, self._wall = ctx, backend, wall_seconds
        self.process: Any = None
        self.conn: Any = None
        self.backend_name = backend

    def spawn(self) -> None:
        parent, child = self._ctx.Pipe()
        proc = self._ctx.Process(target=_worker_main, args=(child, self._backend, self._wall),
                                 daemon=True)
        proc.start()
        child.close()
        if not parent.poll(READY_SECONDS):
            _kill_group(proc)
            raise WorkerFailed(f"a worker did not start within {READY_SECONDS:.0f} s")
        try:
            hello = parent.recv()
        except EOFError:
            raise WorkerFailed(f"a worker died while starting (exit {proc.exitcode})") from None
        if not hello.get("ready"):
            proc.join(5)
            raise WorkerFailed(hello.get("error", "a worker could not start"))
        self.backend_name = hello["backend"]
        self.process, self.conn = proc, parent

    def call(self, job: dict[str, Any], timeout: float) -> dict[str, Any]:
        """Run one job; on timeout or death, replace the process before returning."""
        if self.process is None or not self.process.is_alive():
            self.spawn()
        below: dict[int, bytes] = {}
        try:
            self.conn.send(job)
            deadline = time.monotonic() + timeout
            while not self.conn.poll(min(SNAPSHOT_SECONDS, max(0.0, deadline - time.monotonic()))):
                if time.monotonic() >= deadline:
                    self.restart()
                    raise JobTimeout(f"validation took longer than the {timeout:g} s limit")
                # Who runs below the worker now: if it dies, they are orphans nobody else kills.
                below = _start_times(_descendants(self.process.pid))
            return self.conn.recv()
        except (EOFError, BrokenPipeError, ConnectionResetError, OSError) as exc:
            code = self.process.exitcode if self.process is not None else None
            _kill_same(below)
            self.restart()
            raise WorkerFailed(f"the worker died during the job (exit {code}): {exc}") from None

    def restart(self) -> None:
        self.stop(grace=0)
        self.spawn()

    def stop(self, grace: float = 5.0) -> None:
        proc, conn = self.process, self.conn
        self.process = self.conn = None
        if proc is None:
            return
        if grace > 0 and proc.is_alive():
            try:
                conn.send(None)
            except OSError:
                pass
            proc.join(grace)
        _kill_group(proc)
        proc.join(5)
        conn.close()


def _descendants(pid: int) -> list[int]:
    """Every process below `pid`, from /proc (the sandbox is Linux-only anyway)."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue  # gone meanwhile
        ppid = int(stat[stat.rindex(b")") + 2:].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        kids = children.get(todo.pop(), [])
        out.extend(kids)
        todo.extend(kids)
    return out


def _start_times(pids: list[int]) -> dict[int, bytes]:
    """pid -> its start time (field 22 of /proc/<pid>/stat), which tells a reused pid apart."""
    out = {}
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        out[pid] = stat[stat.rindex(b")") + 2:].split()[19]
    return out


def _kill_same(processes: dict[int, bytes]) -> None:
    """Kill the processes that are still the ones recorded (same pid, same start time)."""
    for pid, started in _start_times(list(processes)).items():
        if started == processes[pid]:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


def _kill_group(proc: Any) -> None:
    """Kill a worker and everything it started. The sandbox launcher runs in a session of its
    own (outside the worker's group); the C launcher dies with the thread that started it
    (PR_SET_PDEATHSIG), but the shell set-up and the `rlimits` mode do not, so what is below the
    worker is also found through /proc and killed, which makes the sandbox kill the program's
    tree."""
    if proc.pid is None:
        return
    below = _descendants(proc.pid) if proc.is_alive() else []
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    for pid in below:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    try:
        proc.kill()
    except (ProcessLookupError, AttributeError):
        pass


class Admission:
    """Slots one request holds. Use it as a context manager: leaving the block gives back every
    slot no job has given back yet, whatever ended the request."""

    def __init__(self, pool: WorkerPool, caller: str, n: int) -> None:
        self.pool, self.caller = pool, caller
        self.held = n
        """Slots not given back yet."""
        self.unassigned = n
        """Slots no job has started to use yet."""
        self.since = time.monotonic()

    def release(self, n: int = 1) -> None:
        n = min(n, self.held)
        if n > 0:
            self.held -= n
            self.unassigned = min(self.unassigned, self.held)
            self.pool._release(self, n)

    def __enter__(self) -> Admission:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release(self.held)


class WorkerPool:
    """`workers` processes on `backend`; at most `queue` admitted jobs wait for one, and one
    caller holds at most `caller_slots` of the `workers + queue` slots."""

    def __init__(self, backend: str, *, workers: int = 2, queue: int = 16,
                 timeout: float = 120.0, wall_seconds: float | None = None,
                 caller_share: float = 1.0, program_share: float = PROGRAM_SHARE) -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1 (got {workers})")
        if queue < 0:
            raise ValueError(f"queue must be 0 or more (got {queue})")
        if not 0 < caller_share <= 1:
            raise ValueError(f"caller_share must be in (0, 1] (got {caller_share})")
        self.backend = backend
        if not 0 <= program_share <= 1:
            raise ValueError(f"program_share must be in [0, 1] (got {program_share})")
        self.workers, self.queue, self.timeout = workers, queue, timeout
        self.program_share = program_share
        # One caller alone can always keep every worker busy: the share limits the queue.
        self.caller_slots = max(workers,
                                math.floor(caller_share * (workers + queue)))
        self._by_caller: dict[str, int] = {}
        self._admissions: set[Admission] = set()
        self._started: dict[int, float] = {}
        self.queued = 0
        self.mean_seconds: float | None = None
        self._ctx = mp.get_context("spawn")  # the server has threads: fork would copy locks
        self._all = [_Worker(self._ctx, backend, wall_seconds) for _ in range(workers)]
        self._idle: list[_Worker] = []
        self._slots: asyncio.Semaphore | None = None
        self._threads = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ckd-worker")
        self.admitted = 0
        self.running = 0
        self.restarts = 0
        self.closing = False
        self._drained: asyncio.Event | None = None
        self.backend_name = backend

    # --- life cycle ----------------------------------------------------------------------------

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        self._slots = asyncio.Semaphore(self.workers)
        self._drained = asyncio.Event()
        self._drained.set()
        await asyncio.gather(*(loop.run_in_executor(self._threads, w.spawn) for w in self._all))
        self._idle = list(self._all)
        self.backend_name = self._all[0].backend_name

    async def close(self, drain_seconds: float) -> int:
        """Refuse new jobs, wait up to `drain_seconds` for admitted ones, stop the workers.
        Returns how many jobs were still unfinished (0 after a clean drain)."""
        self.closing = True
        if self._drained is not None:
            try:
                await asyncio.wait_for(self._drained.wait(), drain_seconds)
            except TimeoutError:
                pass
        left = self.admitted
        loop = asyncio.get_running_loop()
        await asyncio.gather(*(loop.run_in_executor(None, w.stop) for w in self._all))
        self._threads.shutdown(wait=False, cancel_futures=True)
        return left

    # --- admission and running -----------------------------------------------------------------

    @property
    def capacity(self) -> int:
        return self.workers + self.queue

    @property
    def waiting(self) -> int:
        return max(0, self.admitted - self.running)

    def held_by(self, caller: str) -> int:
        return self._by_caller.get(caller, 0)

    def admit(self, n: int = 1, caller: str = "") -> Admission:
        """Reserve room for `n` jobs of `caller`, or raise `PoolClosed` / `PoolFull`. Use the
        answer as a context manager around the jobs (`with pool.admit(n, who) as a:`)."""
        if self.closing:
            raise PoolClosed("the server is shutting down")
        held = self.held_by(caller)
        if held + n > self.caller_slots:
            # Room comes back as this caller's own jobs end; they are somewhere among all the
            # admitted ones, so that many jobs ahead is the honest bound.
            raise PoolFull(self.wait_for(self.admitted),
                           f"this caller already holds {held} of its {self.caller_slots} "
                           f"validation slots")
        if self.admitted + n > self.capacity:
            raise PoolFull(self.wait_for(self.admitted + n - self.capacity))
        self.admitted += n
        self._by_caller[caller] = held + n
        assert self._drained is not None
        self._drained.clear()
        admission = Admission(self, caller, n)
        self._admissions.add(admission)
        return admission

    def wait_for(self, jobs: int) -> int:
        """Seconds until `jobs` more jobs have finished: the observed mean job time, spread
        over the workers (whole seconds, at least 1, as `Retry-After` takes)."""
        mean = PRIOR_JOB_SECONDS if self.mean_seconds is None else self.mean_seconds
        return max(1, math.ceil(max(1, jobs) * mean / self.workers))

    def _release(self, admission: Admission, n: int) -> None:
        self.admitted -= n
        left = self._by_caller.get(admission.caller, 0) - n
        if left > 0:
            self._by_caller[admission.caller] = left
        else:
            self._by_caller.pop(admission.caller, None)
        if admission.held == 0:
            self._admissions.discard(admission)
        if self.admitted == 0 and self._drained is not None:
            self._drained.set()

    def problems(self) -> list[str]:
        """Why this pool cannot serve as it should now (empty when healthy): workers that are
        not alive, a job running past its timeout, slots held that no job uses."""
        now = time.monotonic()
        out = []
        dead = sum(1 for w in self._idle if w.process is None or not w.process.is_alive())
        if dead:
            out.append(f"{dead} of {self.workers} idle workers are not running")
        overdue = [now - t for t in self._started.values() if now - t > self.timeout + STUCK_GRACE]
        if overdue:
            out.append(f"{len(overdue)} jobs have run {max(overdue):.0f} s, past the "
                       f"{self.timeout:g} s timeout")
        held = sum(a.held for a in self._admissions)
        if held != self.admitted:
            out.append(f"{self.admitted - held} admitted slots belong to no request")
        idle_held = sum(a.unassigned for a in self._admissions
                        if a.unassigned and now - a.since > IDLE_HOLD_SECONDS)
        if idle_held and self.running < self.workers:
            out.append(f"{idle_held} admitted slots have had no job for over "
                       f"{IDLE_HOLD_SECONDS:g} s while a worker is free")
        return out

    async def run(self, job: dict[str, Any], admission: Admission,
                  timeout: float | None = None) -> JobOutcome:
        """Run a job on a free worker, on one slot of `admission`, which it gives back when it
        ends. Raises JobTimeout or WorkerFailed."""
        assert self._slots is not None, "start() the pool first"
        if admission.unassigned < 1:
            raise RuntimeError("run() needs a slot of the admission that no job uses yet")
        admission.unassigned -= 1
        try:
            self.queued += 1
            try:
                await self._slots.acquire()
            finally:
                self.queued -= 1
            try:
                worker = self._idle.pop()
                self.running += 1
                started = time.monotonic()
                self._started[id(worker)] = started
                limit = timeout or self.timeout
                # The program's runs get a share of the job's time: spending it is the
                # program's `timeout` (a verdict), not the job's (none). 0: no share.
                job = {**job, "program_seconds": self.program_share * limit
                       if self.program_share else None}
                fut = asyncio.get_running_loop().run_in_executor(
                    self._threads, worker.call, job, limit)
                try:
                    answer = await _uncancelled(fut)
                except (JobTimeout, WorkerFailed):
                    self.restarts += 1
                    raise
                finally:
                    seconds = time.monotonic() - started
                    self.mean_seconds = seconds if self.mean_seconds is None else (
                        MEAN_WEIGHT * seconds + (1 - MEAN_WEIGHT) * self.mean_seconds)
                    del self._started[id(worker)]
                    self.running -= 1
                    self._idle.append(worker)
            finally:
                self._slots.release()
            if not answer.get("ok"):
                raise WorkerFailed(answer.get("error", "the worker gave no result"))
            return JobOutcome(answer["result"], seconds, answer.get("kernel_seconds"))
        finally:
            admission.release(1)
