# syntax=docker/dockerfile:1
# CPU worker and Ray head (target `cpu`, the default) and the validation service (target
# `service`): Python 3.11 on Debian bookworm, g++ 12 for the cpu backend (CUDA programs compiled
# as C++20 against the project's shim), torch's CPU build, Ray. Build from the repository root:
#   docker build -f docker/cpu.Dockerfile -t cuda-kernel-data-cpu:0.1.0 .
#   docker build -f docker/cpu.Dockerfile --target service -t cuda-kernel-data-service:0.1.0 .

# the same CPython patch release in every image: Ray refuses a node whose Python differs from
# the head's down to the patch level (RAY_DEFAULT_PYTHON_VERSION_MATCH_LEVEL=patch)
ARG PYTHON_VERSION=3.11.7

FROM python:${PYTHON_VERSION}-slim-bookworm AS base

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_ROOT_USER_ACTION=ignore

SHELL ["/bin/bash", "-o", "pipefail", "-c"]

# bookworm's g++/gcc are 12: the cpu backend needs C++20, the sandbox launcher gcc; unshare,
# prlimit and setpriv (util-linux) are in the base already; wget for the probes of KubeRay
# operators older than Ray 2.53
RUN apt-get update \
    && apt-get install -y --no-install-recommends g++ gcc libc6-dev wget \
    && rm -rf /var/lib/apt/lists/* \
    && test "$(g++ -dumpversion | cut -d. -f1)" = 12

COPY docker/constraints.txt /opt/constraints.txt
# torch from its CPU index first (the PyPI wheel would pull several GB of CUDA libraries);
# the constraints pin its version
RUN python -m pip install --index-url https://download.pytorch.org/whl/cpu -c /opt/constraints.txt torch \
    && python -m pip install -c /opt/constraints.txt nvidia-cuda-cccl

COPY pyproject.toml README.md /src/
COPY schemas /src/schemas
COPY sources /src/sources
COPY validators /src/validators
COPY builder /src/builder
COPY cuset /src/cuset
# ray[default] adds the dashboard and job server the head needs for `ray job submit`
RUN python -m pip install -c /opt/constraints.txt "ray[default]" "/src[build,modules,serve]" \
    && rm -rf /src

ENV CKD_CCCL_DIR=/usr/local/lib/python3.11/site-packages/nvidia/cu13/include/cccl
RUN test -f "$CKD_CCCL_DIR/thrust/version.h" \
    && useradd --create-home --uid 1000 --shell /bin/bash ckd

USER 1000:1000
WORKDIR /home/ckd
# a real build of one built-in task on the cpu backend: the image compiles and runs CUDA
# programs, or it is not built
RUN python -m builder run --limit 1 --quick --executor local --backend cpu --no-progress \
        --out /tmp/smoke \
    && rm -rf /tmp/smoke /home/ckd/.cache

FROM base AS service
# owned by ckd, so a named volume mounted here (docker/compose.yaml) is writable
RUN mkdir -p /home/ckd/.cache/cuda-kernel-data
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=4)"]
CMD ["python", "-m", "validators", "serve", "--host", "0.0.0.0", "--port", "8000", "--backend", "cpu"]

FROM base AS cpu
CMD ["bash"]
