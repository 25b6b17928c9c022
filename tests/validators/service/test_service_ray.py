"""`python -m validators serve --ray`: the same service as a Ray Serve deployment.

The slow test starts the real command in a subprocess (a Ray instance of its own, Ray Serve's
HTTP proxy on a free loopback port, one CPU replica) and drives it with the real client; only
CPU replicas can run here (no GPU), so the cuda side is covered by the placement plan alone."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from service_server import ROOT, TASK, reference_program, start_server, wrong_program

from validators.client import ServiceError, ValidationClient
from validators.service.app import ServiceConfig
from validators.service.pool import _descendants, _start_times
from validators.service.ray_app import HEADROOM, RayUnavailable, plan

TOKEN = "ray-s3cret"


def test_plan_gives_cpu_replicas_one_cpu_per_worker_without_a_gpu():
    chosen = plan(ServiceConfig(backend="auto", workers=3, queue=5), replicas=2, cluster_gpus=0)
    assert chosen.backend == "cpu" and chosen.name == "validation-cpu"
    assert chosen.actor_options == {"num_cpus": 3} and chosen.replicas == 2
    assert chosen.max_ongoing_requests == 3 + 5 + HEADROOM


def test_plan_gives_gpu_replicas_the_cuda_backend():
    for backend in ("auto", "cuda"):
        chosen = plan(ServiceConfig(backend=backend, workers=2), replicas=4, cluster_gpus=4)
        assert chosen.backend == "cuda" and chosen.actor_options == {"num_gpus": 1}
    # Asked for explicitly, cpu stays cpu on a GPU cluster.
    assert plan(ServiceConfig(backend="cpu"), 1, cluster_gpus=4).backend == "cpu"


def test_plan_refuses_replicas_its_own_ray_instance_cannot_place():
    with pytest.raises(RayUnavailable, match="--backend cuda: 1 replica.* has 0"):
        plan(ServiceConfig(backend="cuda"), 1, cluster_gpus=0, cluster_cpus=2)
    with pytest.raises(RayUnavailable, match="--replicas 2 x --workers 2: .* has 2"):
        plan(ServiceConfig(backend="cpu", workers=2), 2, cluster_gpus=0, cluster_cpus=2)
    assert plan(ServiceConfig(backend="cpu", workers=1), 2, 0, cluster_cpus=2).replicas == 2


def test_plan_leaves_gpu_placement_to_a_cluster_that_may_grow():
    # An autoscaling cluster (docker/ray-cluster.yaml) has no GPU until a cuda replica asks.
    chosen = plan(ServiceConfig(backend="cuda"), 2, cluster_gpus=0, cluster_cpus=None)
    assert chosen.backend == "cuda" and chosen.actor_options == {"num_gpus": 1}


@pytest.mark.parametrize("args, message", [
    (["--route-prefix", "cpu"], "--route-prefix must start with '/'"),
    (["--replicas", "0"], "--replicas must be at least 1"),
])
def test_ray_options_are_checked_before_starting_ray(args, message):
    proc = subprocess.run([sys.executable, "-m", "validators", "serve", "--ray", *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr


def test_ray_with_a_bad_task_folder_fails_before_starting_ray(tmp_path):
    missing = tmp_path / "no-such-tasks"
    proc = subprocess.run([sys.executable, "-m", "validators", "serve", "--ray", "--backend",
                           "cpu", "--tasks", str(missing)], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 2
    assert str(missing) in proc.stderr and "Traceback" not in proc.stderr


def _alive(recorded: dict[int, bytes]) -> list[str]:
    """The recorded processes still running (same pid and start time, not a zombie)."""
    out = []
    for pid, started in _start_times(list(recorded)).items():
        stat = Path(f"/proc/{pid}/stat").read_bytes() if Path(f"/proc/{pid}").exists() else b""
        if started == recorded[pid] and stat and stat[stat.rindex(b")") + 2:][:1] != b"Z":
            out.append(f"{pid} {_name(pid)}")
    return out


def _name(pid: int) -> str:
    try:
        args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return "?"
    return " ".join(a.decode(errors="replace") for a in args[:4])


@pytest.mark.slow
def test_ray_serve_deployment_validates_scores_and_stops_cleanly(tmp_path):
    pytest.importorskip("ray.serve", reason="ray[serve] is not installed (the serve extra)")
    # Mounted below a prefix, as a cpu deployment beside a cuda one on a cluster would be.
    started = time.time()
    server = start_server(tmp_path, "--ray", "--backend", "cpu", "--workers", "1", "--queue", "2",
                          "--route-prefix", "/cpu", token=TOKEN, ready_seconds=180, prefix="/cpu")
    try:
        recorded = _start_times(_descendants(server.proc.pid))
        names_by_pid = {pid: _name(pid) for pid in recorded}
        names = " ".join(names_by_pid.values())
        # What answers is Ray: its own processes, a Serve replica, the replica's worker pool.
        assert "raylet" in names and "gcs_server" in names, names
        assert "ray::ServeReplica:validation-cpu" in names, names
        assert "multiprocessing.spawn" in names, names

        with ValidationClient(server.url, token=TOKEN, retries=0) as client:
            health = client.health()
            assert health["status"] == "ok" and health["backend"] == "cpu"
            assert health["capacity"] == 1 + 2

            ok = client.validate(reference_program(), task_id=TASK)
            assert ok["status"] == "passed" and ok["backend"] == "cpu" and len(ok["cases"]) == 5
            bad = client.validate(wrong_program(), task_id=TASK)
            assert bad["status"] == "failed" and "output y" in bad["reason"]

            fence = "```cuda\n{}\n```"
            scored = client.score(TASK, ["no code here", fence.format(reference_program()),
                                         fence.format(wrong_program())])
            assert [r["status"] for r in scored["results"]] == ["no_code_block", "passed",
                                                                 "failed"]
            assert [r["reward"] for r in scored["results"]] == pytest.approx([0.0, 1.1, 0.1])

            metrics = client.request("GET", "/metrics").text
            assert 'ckd_verdicts_total{status="passed"} 2.0' in metrics
            # The app sees its routes below the prefix (the route label is not "other").
            assert 'ckd_requests_total{code="200",route="/v1/validate"} 2.0' in metrics

        with ValidationClient(server.url, token="wrong", retries=0) as intruder:
            with pytest.raises(ServiceError) as refused:
                intruder.validate(reference_program(), task_id=TASK)
            assert refused.value.status == 401
    finally:
        code = server.stop()
    assert code == 0, server.log_text()[-3000:]
    # The replica's last line is in its own Ray log; the copy Ray forwards to the command's
    # output can be cut off by ray.shutdown() on a loaded machine.
    replicas = [pid for pid in recorded if "ServeReplica" in names_by_pid[pid]]
    said = server.log_text() + _ray_worker_logs(replicas, since=started)
    assert '"msg": "stopped", "unfinished": 0' in said
    # Ray's workers and the replica's resource tracker end on their own a moment after the
    # command: what is still alive after a while was left behind.
    deadline = time.monotonic() + 30
    while (left := _alive(recorded)) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not left, f"processes left after the server stopped: {left}"


def _ray_worker_logs(pids: list[int], since: float) -> str:
    """The log files Ray's workers of these pids wrote during this test (any session folder
    under Ray's temporary root: the pid and the time pick this test's)."""
    root = Path(os.environ.get("RAY_TMPDIR") or tempfile.gettempdir()) / "ray"
    texts = []
    for pid in pids:
        for path in root.glob(f"session_*/logs/worker-*-{pid}.*"):
            if path.stat().st_mtime >= since:
                texts.append(path.read_text(errors="replace"))
    return "\n".join(texts)
