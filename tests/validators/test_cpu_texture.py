"""Texture objects on the CPU shim, checked against a NumPy model of the CUDA Programming Guide's
texture fetching formulas (appendix "Texture Fetching"): point sampling reads texel floor(u);
linear filtering reads floor(u - 0.5) and the next texel with weight frac(u - 0.5) in 9-bit
fixed point (8 fractional bits); clamp / wrap / mirror / border addressing per texel index,
wrap and mirror only with normalized coordinates (clamp otherwise); NormalizedFloat maps
unsigned 8-bit texels to v / 255."""

from __future__ import annotations

import shutil
import zlib
from pathlib import Path

import numpy as np
import pytest

from schemas import InputCase, Program, Reference, Status, Task, TensorSpec
from validators.analysis import analyze
from validators.backends.cpu import CpuBackend
from validators.build_cache import BuildCache
from validators.engine import check, run_program
from validators.sandbox import Limits, run_sandboxed

PROGRAMS = Path(__file__).resolve().parent / "cpu_programs"
W, H, D, M = 5, 4, 3, 96
MODES = ["wrap", "clamp", "mirror", "border"]  # cudaTextureAddressMode order
BORDER = np.array([0.25, -0.5, 0.75, 1.0])
# The float just below 0.5: u - 0.5 = -2**-25, whose fraction rounds up to 1.0 in float32.
BELOW_HALF = 0.5 - 2.0**-25

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed")


# --- the model -------------------------------------------------------------------------------
def address(i: np.ndarray, n: int, mode: str, normalized: bool) -> np.ndarray:
    """Texel index after addressing; -1 stands for the border."""
    if not normalized and mode in ("wrap", "mirror"):
        mode = "clamp"
    if mode == "clamp":
        return np.clip(i, 0, n - 1)
    if mode == "wrap":
        return np.mod(i, n)
    if mode == "mirror":
        r = np.mod(i, 2 * n)
        return np.where(r < n, r, 2 * n - 1 - r)
    return np.where((i >= 0) & (i < n), i, -1)


def sample(
    texels: np.ndarray,
    coords: list[np.ndarray],
    mode: str,
    linear: bool,
    normalized: bool,
    *,
    quantize: bool = True,
) -> np.ndarray:
    """`texels` has shape (D, H, W, C); `coords` holds float32 x[, y[, z]] arrays."""
    dims = len(coords)
    sizes = [texels.shape[2], texels.shape[1], texels.shape[0]][:dims]
    comps = texels.shape[3]
    u = [
        np.float32(c) * np.float32(n) if normalized else np.float32(c)
        for c, n in zip(coords, sizes, strict=True)
    ]

    def fetch(idx: list[np.ndarray]) -> np.ndarray:
        border = np.zeros(idx[0].shape, bool)
        for i in idx:
            border |= i < 0
        full = [np.maximum(i, 0) for i in idx] + [np.zeros_like(idx[0])] * (3 - dims)
        vals = texels[full[2], full[1], full[0]]
        return np.where(border[:, None], BORDER[:comps], vals)

    if not linear:
        return fetch(
            [
                address(np.floor(x).astype(np.int64), n, mode, normalized)
                for x, n in zip(u, sizes, strict=True)
            ]
        )
    lo, hi, alpha = [], [], []
    for x, n in zip(u, sizes, strict=True):
        b = x - np.float32(0.5)
        f = np.floor(b)
        a = (b - f).astype(np.float64)
        alpha.append(np.floor(a * 256 + 0.5) / 256 if quantize else a)
        lo.append(address(f.astype(np.int64), n, mode, normalized))
        hi.append(address(f.astype(np.int64) + 1, n, mode, normalized))
    out = np.zeros((len(u[0]), comps))
    for corner in range(1 << dims):
        w = np.ones(len(u[0]))
        idx = []
        for d in range(dims):
            up = (corner >> d) & 1
            idx.append(hi[d] if up else lo[d])
            w = w * (alpha[d] if up else 1 - alpha[d])
        out += w[:, None] * fetch(idx)
    return out


# --- inputs and the program's output -------------------------------------------------------------
def _rng(name: str) -> np.random.Generator:
    return np.random.default_rng([7, zlib.crc32(name.encode())])


def _coords(
    lo: float, hi_x: float, hi_y: float, special: list[tuple[float, float]], name: str
) -> np.ndarray:
    rng = _rng(name)
    n = M - len(special)
    x = rng.integers(int(lo * 1024), int(hi_x * 1024), n) / 1024
    y = rng.integers(int(lo * 1024), int(hi_y * 1024), n) / 1024
    pts = np.array(special + list(zip(x, y, strict=True)), dtype=np.float32)
    return pts


def make_inputs(folder: Path) -> dict[str, np.ndarray]:
    data = folder / "data"
    data.mkdir(parents=True)
    ftex = _rng("ftex").uniform(-2, 2, (H, W)).astype(np.float32)
    ctex = _rng("ctex").integers(0, 256, (H, W, 4), dtype=np.uint8)
    # Texel centres, texel edges, the texture's borders and outside it, then random points
    # on a 1/1024 grid (weights on both sides of a 1/256 step, ties included).
    special_u = [(0.5, 0.5), (0.0, 0.0), (W, H), (W - 0.5, H - 0.5), (-0.5, -0.5), (-1.0, 2.0),
                 (W + 1.25, 1.5), (2.0, H + 0.75), (1.75, 1.25), (3.001953125, 0.998046875),
                 (-3.0, -2.5), (W + 3.0, H + 3.0), (BELOW_HALF, 1.0), (2.0, BELOW_HALF)]  # fmt: skip
    special_n = [(0.0, 0.0), (1.0, 1.0), (0.5, 0.5), (-0.1, 0.3), (1.1, -0.2), (0.999, 0.001),
                 (-1.0, -1.0), (2.0, 1.5), (1.5, 2.25), (-0.75, 0.6), (0.1, 0.125), (0.3, 0.9)]  # fmt: skip
    coords_u = _coords(-3.0, W + 3.0, H + 3.0, special_u, "coords_u")
    coords_n = _coords(-1.5, 2.5, 2.5, special_n, "coords_n")
    arrays = {"ftex": ftex, "ctex": ctex, "coords_u": coords_u, "coords_n": coords_n}
    for name, arr in arrays.items():
        (data / f"{name}.bin").write_bytes(arr.tobytes())
    return arrays


def parse(stdout: str) -> dict[str, np.ndarray]:
    rows: dict[str, list[list[float]]] = {}
    for line in stdout.splitlines():
        parts = line.split()
        if parts and parts[0].endswith(":"):  # "name: values"
            rows[parts[0][:-1]] = [[_num(p) for p in parts[1:]]]
        elif len(parts) >= 3:  # "name index values"
            rows.setdefault(parts[0], []).append([_num(p) for p in parts[2:]])
        elif parts:
            rows[parts[0]] = []
    return {k: np.array(v) for k, v in rows.items()}


def _num(text: str) -> float:
    return float.fromhex(text) if "0x" in text else float(text)


def expected(inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    ftex = inputs["ftex"].astype(np.float64)[None, :, :, None]
    ctex = (inputs["ctex"].astype(np.float64) / 255.0).astype(np.float32)[None].astype(np.float64)
    cu, cn = inputs["coords_u"], inputs["coords_n"]
    out: dict[str, np.ndarray] = {}
    for m in MODES:
        for f, linear in (("point", False), ("linear", True)):
            for norm in (0, 1):
                c = cn if norm else cu
                xy = [c[:, 0], c[:, 1]]
                out[f"f2d/{m}/{f}/{norm}"] = sample(ftex, xy, m, linear, bool(norm))
                out[f"c2d/{m}/{f}/{norm}"] = sample(ctex, xy, m, linear, bool(norm))
    out["pitch2d"] = sample(ftex, [cu[:, 0], cu[:, 1]], "clamp", True, False)
    out["tex1d"] = sample(ftex[:, :1], [cu[:, 0]], "border", True, False)
    vol = np.stack([inputs["ftex"] * np.float32(z + 1) for z in range(D)]).astype(np.float64)
    pts = [cn[:, 0], cn[:, 1], cn[(np.arange(M) * 7) % M, 0]]
    out["tex3d"] = sample(vol[..., None], pts, "wrap", True, True)
    idx = np.arange(M) - 8
    inside = (idx >= 0) & (idx < H * W)
    safe = np.clip(idx, 0, H * W - 1)
    out["fetch_f"] = np.where(inside, inputs["ftex"].ravel()[safe], 0.0)[:, None]
    ints = (inputs["ftex"] * np.float32(1000)).astype(np.int32).ravel()
    out["fetch_i"] = np.where(inside, ints[safe], 0)[:, None]
    chan = (inputs["ctex"][..., 1].astype(np.float64) / 255.0).astype(np.float32).ravel()
    out["fetch_c"] = np.where(inside, chan[safe], 0.0)[:, None]
    return out


def compare(got: dict[str, np.ndarray], want: dict[str, np.ndarray]) -> list[str]:
    bad = []
    for name, w in want.items():
        g = got.get(name)
        if g is None or g.shape != w.shape:
            bad.append(f"{name}: shape {None if g is None else g.shape} != {w.shape}")
        elif not np.allclose(g, w, rtol=1e-5, atol=2e-6):
            worst = int(np.argmax(np.abs(g - w).max(axis=1)))
            bad.append(f"{name}[{worst}]: got {g[worst]} want {w[worst]}")
    return bad


# --- tests -----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def backend(tmp_path_factory) -> CpuBackend:
    return CpuBackend(cache=BuildCache(tmp_path_factory.mktemp("builds")))


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> tuple[Path, dict[str, np.ndarray]]:
    folder = tmp_path_factory.mktemp("texture-inputs")
    return folder / "data", make_inputs(folder)


def _check_output(stdout: str, arrays: dict[str, np.ndarray]) -> None:
    got = parse(stdout)
    assert got["roundtrip"].tolist() == [[1.0]]  # cudaMemcpy2DFromArray gives the texels back
    assert got["resdesc"].tolist() == [[1.0, 1.0]]  # cudaGetTextureObjectResourceDesc
    assert got["badpitch"].tolist() == [[1.0]]  # cudaErrorInvalidValue
    assert got["intlinear"].tolist() == [[1.0]]  # linear filtering needs float results
    assert "done" in got
    bad = compare(got, expected(arrays))
    assert not bad, "\n".join(bad[:20])


def test_sampling_matches_the_programming_guide_formulas(backend, inputs):
    data, arrays = inputs
    source = (PROGRAMS / "texture_sampling.cu").read_text()
    assert "texture" in analyze(source).features and backend.unsupported_features(["texture"]) == []
    res = run_program(Program(source=source), backend, workdir_files=[data])
    assert res.status == Status.PASSED, (res.reason, res.outcome and res.outcome.stdout[-2000:])
    _check_output(res.outcome.stdout, arrays)


def test_sampling_under_asan_and_reverse_schedule(backend, inputs, tmp_path):
    data, arrays = inputs
    exe = backend.build(
        Program(source=(PROGRAMS / "texture_sampling.cu").read_text()), {}, variant="asan"
    )
    assert exe.compile.ok, exe.compile.diagnostics
    shutil.copytree(data, tmp_path / "data")
    argv, env = backend.command(exe, [], schedule="reverse")
    out = run_sandboxed(
        argv, tmp_path, limits=Limits().with_overrides(backend.sandbox_overrides(exe)), env=env
    )
    assert out.exit_code == 0, out.stderr[-3000:]
    assert backend.classify(exe, out).status is None
    _check_output(out.stdout, arrays)


def test_the_model_exercises_the_9_bit_weights(inputs):
    # Without the 8-bit fraction the model differs from itself by more than the tolerance, so
    # the comparison above checks the quantisation, not only the bilinear formula.
    _, arrays = inputs
    ftex = arrays["ftex"].astype(np.float64)[None, :, :, None]
    c = arrays["coords_u"]
    q = sample(ftex, [c[:, 0], c[:, 1]], "clamp", True, False)
    exact = sample(ftex, [c[:, 0], c[:, 1]], "clamp", True, False, quantize=False)
    assert np.abs(q - exact).max() > 1e-4


# 2x upscaling samples at u = x/2 + 0.25 texels: weights 0.25 and 0.75, exact in 8 bits.
RESIZE_REFERENCE = """
import numpy as np

def reference(inputs, sizes):
    img = inputs["img"].astype(np.float64)
    h, w = img.shape

    def axis(n):
        u = (np.arange(2 * n) + 0.5) / 2 - 0.5
        i = np.floor(u).astype(int)
        a = u - i
        return np.clip(i, 0, n - 1), np.clip(i + 1, 0, n - 1), a

    y0, y1, b = axis(h)
    x0, x1, a = axis(w)
    top = img[y0][:, x0] * (1 - a) + img[y0][:, x1] * a
    bottom = img[y1][:, x0] * (1 - a) + img[y1][:, x1] * a
    out = top * (1 - b)[:, None] + bottom * b[:, None]
    return {"out": out.astype(np.float32)}
"""


def resize_task() -> Task:
    return Task(
        name="texture_upscale",
        description="2x bilinear upscaling of an H x W float image (texture, clamp)",
        inputs=[TensorSpec(name="img", dtype="float32", shape=["H", "W"])],
        outputs=[TensorSpec(name="out", dtype="float32", shape=["OH", "OW"])],
        sizes={"H": 24, "W": 20, "OH": 48, "OW": 40},
        cases=[
            InputCase(name="c0", seed=1),
            InputCase(name="odd", seed=2, sizes={"H": 7, "W": 9, "OH": 14, "OW": 18}),
        ],
        reference=Reference(code=RESIZE_REFERENCE),
    )


def test_an_image_kernel_verifies_through_check(backend):
    source = (PROGRAMS / "texture_resize.cu").read_text()
    result = check(resize_task(), Program(source=source), backend=backend)
    assert result.status == Status.PASSED, result.reason
    # Sampling texel corners instead of centres (the classic missing +0.5) is caught.
    wrong = source.replace("(x + 0.5f) / ow, (y + 0.5f) / oh", "(float)x / ow, (float)y / oh")
    assert wrong != source
    result = check(resize_task(), Program(source=wrong), backend=backend, thorough=False)
    assert result.status == Status.FAILED, result.reason


LEGACY = """
#include <cstdio>
texture<float, 2, cudaReadModeElementType> texRef;
__global__ void k(float* o) { o[threadIdx.x] = tex2D(texRef, threadIdx.x + 0.5f, 0.5f); }
int main() {
  cudaChannelFormatDesc d = cudaCreateChannelDesc<float>();
  cudaArray* a;
  cudaMallocArray(&a, &d, 4, 4);
  cudaBindTextureToArray(texRef, a, d);
  float* o;
  cudaMalloc(&o, 16);
  k<<<1, 4>>>(o);
  return 0;
}
"""


def test_legacy_texture_references_need_a_gpu(backend):
    assert "texture" in analyze(LEGACY).features
    res = run_program(Program(source=LEGACY), backend)
    assert res.status == Status.NEEDS_GPU, res.reason
    assert "texture" in res.reason and "legacy" in res.reason


def _surface_expected(w: int = 6, h: int = 5) -> tuple[np.ndarray, np.ndarray]:
    i = np.arange(w * h)
    vals = (((i * 37) % 11) - 5.0 + 0.25 * i).astype(np.float32) * np.float32(2) + np.float32(1)
    img = vals.reshape(h, w)
    px, py = w + 4, h + 4
    x = np.arange(px * py) % px - 2
    y = np.arange(px * py) // px - 2
    inside = (x >= 0) & (x < w) & (y >= 0) & (y < h)
    clamped = img[np.clip(y, 0, h - 1), np.clip(x, 0, w - 1)]
    probe = np.stack([np.where(inside, clamped, 0.0), clamped, clamped], axis=1)
    after = img.copy()
    after[0, w - 1] = -7.0  # the Clamp-mode write outside the surface
    return probe, after.reshape(-1, 1)


def test_surface_objects_write_and_read_an_array(backend):
    source = (PROGRAMS / "texture_surface.cu").read_text()
    assert {"texture", "surface"} <= set(analyze(source).features)
    assert backend.unsupported_features(["texture", "surface"]) == []
    res = run_program(Program(source=source), backend)
    assert res.status == Status.PASSED, (res.reason, res.outcome and res.outcome.stderr[-2000:])
    got = parse(res.outcome.stdout)
    probe, after = _surface_expected()
    np.testing.assert_array_equal(got["probe"], probe)
    np.testing.assert_array_equal(got["array"], after)
    assert got["noflag"].tolist() == [[1.0]]  # no cudaArraySurfaceLoadStore: invalid value


def test_surface_write_outside_in_trap_mode_is_a_runtime_error(backend):
    source = (PROGRAMS / "texture_surface.cu").read_text()
    res = run_program(Program(source=source), backend, defines={"TRAP": 1})
    assert res.status == Status.RUNTIME_ERROR, res.reason
    assert "invalid memory access: surf2Dwrite of 4 bytes at byte x=24" in res.reason


LEGACY_SURFACE = """
surface<void, 2> outSurf;
__global__ void k() { surf2Dwrite(1.0f, outSurf, 4 * threadIdx.x, 0); }
int main() { k<<<1, 4>>>(); return 0; }
"""


def test_legacy_surface_references_need_a_gpu(backend):
    res = run_program(Program(source=LEGACY_SURFACE), backend)
    assert res.status == Status.NEEDS_GPU, res.reason
    assert "surface" in res.reason and "legacy" in res.reason


def test_fetch_through_a_destroyed_object_is_reported(backend):
    src = """
#include <cstdio>
__global__ void k(cudaTextureObject_t t, float* o) { o[0] = tex1Dfetch<float>(t, 0); }
int main() {
  float* d;
  cudaMalloc(&d, 64);
  cudaResourceDesc r = {};
  r.resType = cudaResourceTypeLinear;
  r.res.linear.devPtr = d;
  r.res.linear.desc = cudaCreateChannelDesc<float>();
  r.res.linear.sizeInBytes = 64;
  cudaTextureDesc td = {};
  cudaTextureObject_t t;
  if (cudaCreateTextureObject(&t, &r, &td, nullptr) != cudaSuccess) return 2;
  cudaDestroyTextureObject(t);
  k<<<1, 1>>>(t, d);
  cudaDeviceSynchronize();
  return 0;
}
"""
    res = run_program(Program(source=src), backend)
    assert res.status != Status.PASSED
    assert "invalid texture object" in res.outcome.stderr
