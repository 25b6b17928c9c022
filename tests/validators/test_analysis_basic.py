"""analyze(): kernels, device functions, parameters, templates, launches, dim3."""

from __future__ import annotations

import json

from validators.analysis import Analysis, analyze

SAXPY = """\
#include <cstdio>
#ifndef N
#define N 1000
#endif

__device__ float scale(float a, float x) { return a * x; }

__global__ void saxpy(int n, float a, const float* __restrict__ x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = scale(a, x[i]) + y[i];
}

int main() {
  float *x, *y;
  int threads = 256;
  int blocks = (N + threads - 1) / threads;
  saxpy<<<blocks, threads>>>(N, 2.0f, x, y);
  return 0;
}
"""


def test_kernel_device_function_and_params() -> None:
    a = analyze(SAXPY)
    assert isinstance(a, Analysis)
    assert [k.name for k in a.kernels] == ["saxpy"]
    k = a.kernels[0]
    assert k.qualifiers == ["__global__"]
    assert k.return_type == "void"
    assert [(p.name, p.type) for p in k.params] == [
        ("n", "int"),
        ("a", "float"),
        ("x", "const float* __restrict__"),
        ("y", "float*"),
    ]
    assert k.line == 8
    assert a.text[k.body.start] == "{" and a.text[k.body.end - 1] == "}"
    assert a.text[k.span.start : k.span.start + 10] == "__global__"
    assert [f.name for f in a.device_functions] == ["scale"]
    assert a.errors == []


def test_launch_and_config_follow_back() -> None:
    a = analyze(SAXPY)
    (launch,) = a.launches
    assert launch.kernel == "saxpy"
    assert launch.config == ["blocks", "threads"]
    assert (launch.grid, launch.block, launch.shmem, launch.stream) == ("blocks", "threads", None, None)
    assert launch.args == ["N", "2.0f", "x", "y"]
    assert launch.function == "main" and not launch.in_device_code
    assert a.text[launch.config_span.start : launch.config_span.end] == "<<<blocks, threads>>>"
    assert (
        a.text[launch.call_span.start : launch.call_span.end]
        == "saxpy<<<blocks, threads>>>(N, 2.0f, x, y)"
    )
    assert a.span_texts("launch_config") == [
        "int threads = 256;",
        "int blocks = (N + threads - 1) / threads;",
        "<<<blocks, threads>>>",
    ]


def test_kernel_body_includes_reachable_device_functions_only() -> None:
    src = SAXPY.replace(
        "int main()", "__device__ int unused(int v) { return v; }\nint main()"
    )
    a = analyze(src)
    bodies = [(s.label, a.text[s.start : s.end]) for s in a.spans_of("kernel_body")]
    assert bodies[0] == ("scale", "{ return a * x; }")
    assert bodies[1][0] == "saxpy" and bodies[1][1].startswith("{\n  int i = blockIdx.x")
    assert len(bodies) == 2


def test_json_round_trip() -> None:
    a = analyze(SAXPY)
    again = Analysis.model_validate_json(a.model_dump_json())
    assert again == a
    assert json.loads(a.model_dump_json())["launches"][0]["kernel"] == "saxpy"
