"""Layered and cubemap textures and surfaces on the CPU shim (cudaMalloc3DArray with
cudaArrayLayered / cudaArrayCubemap, tex1DLayered, tex2DLayered, texCubemap, texCubemapLayered,
surf{1,2}DLayered, surfCubemap{,Layered}): cpu_programs/texture_layered_cubemap.cu checks every
fetched value against its own host model and prints PASS; here it runs under the plain and the
ASan builds. A fetch of the wrong kind (tex2D on a layered array, tex2DLayered on a plain one)
stops the run and names the call the texture takes."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from schemas import Program, Status
from validators.analysis import analyze
from validators.backends import get_backend
from validators.engine import run_program

PROGRAMS = Path(__file__).resolve().parent / "cpu_programs"

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed")


@pytest.mark.parametrize("variant", ["plain", "asan"])
def test_layered_and_cubemap_textures_match_the_host_model(variant):
    source = (PROGRAMS / "texture_layered_cubemap.cu").read_text()
    backend = get_backend("cpu")
    assert {"texture", "surface"} <= set(analyze(source).features)
    assert backend.unsupported_features(["texture", "surface"]) == []
    res = run_program(
        Program(source=source, filename="main.cu"), backend, variant=variant, schedule="reverse"
    )
    out = res.outcome.stdout if res.outcome is not None else ""
    assert res.status == Status.PASSED, (res.reason, out[-3000:])
    assert out.strip().endswith("PASS"), out[-3000:]
    assert " 0 mismatches" in out


WRONG_KIND = r"""
#include <cstdio>
__global__ void k(cudaTextureObject_t t, float* o) {
#if LAYERED_ARRAY
  o[0] = tex2D<float>(t, 0.5f, 0.5f);
#else
  o[0] = tex2DLayered<float>(t, 0.5f, 0.5f, 0);
#endif
}
int main() {
  cudaChannelFormatDesc d = cudaCreateChannelDesc<float>();
  cudaArray_t a;
  if (cudaMalloc3DArray(&a, &d, make_cudaExtent(4, 4, LAYERED_ARRAY ? 2 : 0),
                        LAYERED_ARRAY ? cudaArrayLayered : 0) != cudaSuccess) return 2;
  cudaResourceDesc r = {};
  r.resType = cudaResourceTypeArray;
  r.res.array.array = a;
  cudaTextureDesc td = {};
  cudaTextureObject_t t;
  if (cudaCreateTextureObject(&t, &r, &td, nullptr) != cudaSuccess) return 3;
  float* o;
  cudaMalloc(&o, sizeof(float));
  k<<<1, 1>>>(t, o);
  cudaDeviceSynchronize();
  printf("done\n");
  return 0;
}
"""


@pytest.mark.parametrize(
    ("layered", "message"),
    [
        (1, "tex2D on a texture object whose array is read with tex2DLayered"),
        (0, "tex2DLayered on a texture object whose array is read with tex1D/tex2D/tex3D"),
    ],
)
def test_a_fetch_of_the_wrong_kind_is_reported(layered, message):
    res = run_program(
        Program(source=WRONG_KIND), get_backend("cpu"), defines={"LAYERED_ARRAY": layered}
    )
    assert res.status == Status.RUNTIME_ERROR, res.reason
    assert message in res.reason or (res.outcome is not None and message in res.outcome.stderr), (
        res.reason
    )
