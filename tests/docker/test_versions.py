"""The images, the Ray cluster file, the compose file and pyproject.toml agree on versions:
Ray (pinned once in docker/constraints.txt, inside pyproject's range, the cluster's
rayVersion), CPython (one patch release in both images: Ray refuses a node whose Python
differs from the head's), torch (the version scripts/test.sh tests), the CUDA release, and
the images' tags (the project version)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import yaml
from dockerfile_lint import global_args, instructions, stages
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
DOCKER = ROOT / "docker"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
IMAGE_EXTRAS = ("build", "modules", "serve", "gpu")  # what the two images install


def pins() -> dict[str, Version]:
    out = {}
    for line in (DOCKER / "constraints.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            req = Requirement(line)
            (spec,) = req.specifier
            assert spec.operator == "==", f"constraints.txt: {line}: not an exact pin"
            out[canonicalize_name(req.name)] = Version(spec.version)
    return out


def project_requirements() -> list[Requirement]:
    project = PYPROJECT["project"]
    reqs = [Requirement(r) for r in project["dependencies"]]
    for extra in IMAGE_EXTRAS:
        reqs += [Requirement(r) for r in project["optional-dependencies"][extra]]
    return reqs


def cluster() -> dict:
    (rc,) = [d for d in yaml.safe_load_all((DOCKER / "ray-cluster.yaml").read_text())
             if d["kind"] == "RayCluster"]
    return rc


def cluster_images() -> dict[str, str]:
    spec = cluster()["spec"]
    groups = {"head": spec["headGroupSpec"]} | {g["groupName"]: g for g in spec["workerGroupSpecs"]}
    return {name: g["template"]["spec"]["containers"][0]["image"] for name, g in groups.items()}


def test_every_direct_dependency_of_the_images_is_pinned_inside_its_range():
    p = pins()
    for req in project_requirements():
        name = canonicalize_name(req.name)
        assert name in p, f"{req.name} ({req}) has no pin in docker/constraints.txt"
        assert req.specifier.contains(p[name], prereleases=True), (
            f"docker/constraints.txt pins {name}=={p[name]}, outside pyproject's {req}")


def test_ray_pin_is_below_pyprojects_cap_and_is_the_clusters_ray():
    # ray appears once per extra that needs it (ray[data] for build, ray[serve] for serve)
    rays = [r for r in project_requirements() if r.name == "ray"]
    assert rays, "pyproject.toml no longer requires ray"
    for ray in rays:
        assert any(s.operator == "<" for s in ray.specifier), f"pyproject's ray cap is gone: {ray}"
        assert ray.specifier.contains(pins()["ray"])
    assert cluster()["spec"]["rayVersion"] == str(pins()["ray"])


def test_torch_pin_is_the_tested_one():
    tested = re.search(r"torch==([\w.]+)", (ROOT / "scripts" / "test.sh").read_text())[1]
    assert str(pins()["torch"]) == tested


def test_one_cpython_in_both_images_and_it_satisfies_requires_python():
    versions = {}
    for name in ("cpu.Dockerfile", "gpu.Dockerfile"):
        text = (DOCKER / name).read_text()
        versions[name] = global_args(instructions(text))["PYTHON_VERSION"]
        images = [s.image for s in stages(text)]
        assert f"python:{versions[name]}-slim-bookworm" in images
    (version,) = set(versions.values())
    assert re.fullmatch(r"\d+\.\d+\.\d+", version), "a patch release, not a moving minor tag"
    from packaging.specifiers import SpecifierSet

    assert SpecifierSet(PYPROJECT["project"]["requires-python"]).contains(version)
    minor = ".".join(version.split(".")[:2])
    # the CPU image's CCCL path and the GPU image's copied interpreter name that minor
    for name in ("cpu.Dockerfile", "gpu.Dockerfile"):
        named = set(re.findall(r"python(\d+\.\d+)", (DOCKER / name).read_text()))
        assert named <= {minor}, (name, named)


def test_cuda_release_of_the_gpu_image_matches_the_cccl_headers_of_the_cpu_image():
    (base,) = [s.image for s in stages((DOCKER / "gpu.Dockerfile").read_text())
               if s.image.startswith("nvidia/cuda:")]
    cuda = re.match(r"nvidia/cuda:(\d+\.\d+)\.\d+-devel-ubuntu\d+\.\d+$", base)
    assert cuda, f"{base}: a devel image pinned to a CUDA patch release"
    cccl = pins()["nvidia-cuda-cccl"]
    assert f"{cccl.major}.{cccl.minor}" == cuda[1]
    assert f"/nvidia/cu{cccl.major}/include/cccl" in (DOCKER / "cpu.Dockerfile").read_text()


def test_image_tags_are_the_project_version_everywhere():
    version = PYPROJECT["project"]["version"]
    assert cluster_images() == {"head": f"cuda-kernel-data-cpu:{version}",
                                "gpu": f"cuda-kernel-data-gpu:{version}",
                                "cpu": f"cuda-kernel-data-cpu:{version}"}
    compose = yaml.safe_load((DOCKER / "compose.yaml").read_text())
    assert compose["services"]["validators"]["image"] == f"cuda-kernel-data-service:{version}"
    readme = (DOCKER / "README.md").read_text()
    tags = set(re.findall(r"cuda-kernel-data-(?:cpu|gpu|service):[\w.]+", readme))
    assert tags == {f"cuda-kernel-data-{k}:{version}" for k in ("cpu", "gpu", "service")}


def test_cluster_groups_and_their_resources():
    spec = cluster()["spec"]
    assert spec["headGroupSpec"]["rayStartParams"]["num-cpus"] == "0"
    groups = {g["groupName"]: g for g in spec["workerGroupSpecs"]}
    assert set(groups) == {"gpu", "cpu"}
    for name, g in groups.items():
        res = g["template"]["spec"]["containers"][0]["resources"]
        assert res["limits"]["cpu"] and res["limits"]["memory"]
        assert ("nvidia.com/gpu" in res["limits"]) == (name == "gpu")
        mounts = g["template"]["spec"]["containers"][0]["volumeMounts"]
        assert {"name": "data", "mountPath": "/data"} in mounts  # the shared stage cache
