# syntax=docker/dockerfile:1
# GPU worker: the CUDA 13.0 toolkit (nvcc, compute-sanitizer) on Ubuntu 24.04, the same
# CPython as the CPU image, g++ 12 (nvcc's host compiler and the cpu backend's), the project
# with its `gpu` extra, torch's CPU build (references run on the CPU), Ray. Build from the
# repository root:
#   docker build -f docker/gpu.Dockerfile -t cuda-kernel-data-gpu:0.1.0 .

# the same CPython patch release in every image: Ray refuses a node whose Python differs from
# the head's down to the patch level (RAY_DEFAULT_PYTHON_VERSION_MATCH_LEVEL=patch); Ubuntu
# has no 3.11 of its own, so the interpreter is the official image's, copied in
ARG PYTHON_VERSION=3.11.7

FROM python:${PYTHON_VERSION}-slim-bookworm AS cpython

FROM nvidia/cuda:13.0.2-devel-ubuntu24.04 AS gpu

ARG DEBIAN_FRONTEND=noninteractive
# CKD_CUDA_ARCH: the one architecture nvcc builds for, read at run time: match the cluster's
# GPUs (sm_80 A100, sm_90 H100) with `docker run -e` or the cluster file's env
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_ROOT_USER_ACTION=ignore \
    CKD_CUDA_ARCH=sm_90

SHELL ["/bin/bash", "-o", "pipefail", "-c"]

# the shared libraries the copied CPython's modules load (ssl, sqlite3, ctypes, bz2, lzma,
# readline, curses, dbm, uuid, zlib, expat), gcc/g++ 12 made the default compilers, and wget
# (KubeRay operators before Ray 2.53 probe the node with it)
RUN apt-get update \
    && apt-get install -y --no-install-recommends \
        ca-certificates gcc-12 g++-12 libbz2-1.0 libexpat1 libffi8 libgdbm6t64 liblzma5 \
        libncursesw6 libreadline8t64 libsqlite3-0 libssl3t64 libuuid1 util-linux wget zlib1g \
    && rm -rf /var/lib/apt/lists/* \
    && ln -sf /usr/bin/gcc-12 /usr/bin/gcc \
    && ln -sf /usr/bin/g++-12 /usr/bin/g++ \
    && test "$(g++ -dumpversion | cut -d. -f1)" = 12 \
    && nvcc --version

COPY --from=cpython /usr/local/bin/python3.11 /usr/local/bin/python3.11
COPY --from=cpython /usr/local/lib/python3.11 /usr/local/lib/python3.11
COPY --from=cpython /usr/local/lib/libpython3.11.so.1.0 /usr/local/lib/libpython3.11.so.1.0
COPY --from=cpython /usr/local/include/python3.11 /usr/local/include/python3.11
RUN ldconfig \
    && ln -s /usr/local/bin/python3.11 /usr/local/bin/python3 \
    && ln -s /usr/local/bin/python3.11 /usr/local/bin/python \
    && python -c "import ssl, sqlite3, ctypes, bz2, lzma, readline, uuid, zlib, pyexpat, pip"

COPY docker/constraints.txt /opt/constraints.txt
# torch from its CPU index (the PyPI wheel would pull several GB of CUDA 12 libraries the
# validators never use: references run on the CPU); the constraints pin its version
RUN python -m pip install --index-url https://download.pytorch.org/whl/cpu -c /opt/constraints.txt torch

COPY pyproject.toml README.md /src/
COPY schemas /src/schemas
COPY sources /src/sources
COPY validators /src/validators
COPY builder /src/builder
COPY cuset /src/cuset
# ray[default] adds the dashboard agent and the metrics exporter every node runs
RUN python -m pip install -c /opt/constraints.txt "ray[default]" "/src[build,modules,serve,gpu]" \
    && rm -rf /src \
    && if id ubuntu >/dev/null 2>&1; then userdel --remove ubuntu; fi \
    && useradd --create-home --uid 1000 --shell /bin/bash ckd

USER 1000:1000
WORKDIR /home/ckd
# no GPU while an image builds: nvcc compiles a built-in program (sm_90, no run), and a real
# build of one built-in task runs on the cpu backend
RUN nvcc -arch="$CKD_CUDA_ARCH" -o /tmp/kernel \
        "$(python -c 'import pathlib, sources.builtin as b; print(sorted(pathlib.Path(b.__file__).parent.glob("tasks/*/main.cu"))[0])')" \
    && python -m builder run --limit 1 --quick --executor local --backend cpu --no-progress \
        --out /tmp/smoke \
    && rm -rf /tmp/kernel /tmp/smoke /home/ckd/.cache

CMD ["bash"]
