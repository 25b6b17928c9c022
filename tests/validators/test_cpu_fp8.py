"""cuda_fp8.h on the CPU shim: every conversion checked through a real program the `cpu` backend
builds and runs, against PyTorch's float8 types and CUDA's documented semantics.

One program (built once per module) converts: a large set of floats (every fp8 value, the
midpoints between neighbours and the floats right next to them, subnormals, values past the
largest finite value, inf, NaN, -0.0, random values over the whole exponent range), the same as
doubles plus doubles a hair off the midpoints, all 65536 __half and all 65536 __nv_bfloat16
bit patterns, and all 256 codes of each format back to float/double/__half/__nv_bfloat16/integers,
plus the x2/x4 vector types. Outputs are compared here.
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import numpy as np
import pytest

from schemas import Program
from validators.analysis import analyze
from validators.backends.cpu import CpuBackend
from validators.build_cache import BuildCache
from validators.sandbox import Limits, run_sandboxed

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed")

REPO = Path(__file__).resolve().parents[2]
HECBENCH = REPO / ".." / "shared" / "data" / "hecbench"

FORMATS = {"e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2}
MAX = {"e4m3": 448.0, "e5m2": 57344.0}
MAXCODE = {"e4m3": 0x7E, "e5m2": 0x7B}
# NaN for E4M3 (no infinities), +inf for E5M2: what __NV_NOSAT gives on overflow.
NOSAT_OVERFLOW = {"e4m3": 0x7F, "e5m2": 0x7C}
CANONICAL_NAN_F32 = 0x7FFFFFFF
CANONICAL_NAN_F16 = 0x7FFF

PROGRAM = r"""
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_fp8.h>

static std::vector<char> slurp(const char* path) {
  FILE* f = fopen(path, "rb");
  if (!f) { fprintf(stderr, "cannot open %s\n", path); exit(1); }
  fseek(f, 0, SEEK_END);
  std::vector<char> data(ftell(f));
  fseek(f, 0, SEEK_SET);
  if (fread(data.data(), 1, data.size(), f) != data.size()) exit(1);
  fclose(f);
  return data;
}

template <class T> static T* to_device(const std::vector<char>& host) {
  T* d;
  cudaMalloc(&d, host.size());
  cudaMemcpy(d, host.data(), host.size(), cudaMemcpyHostToDevice);
  return d;
}

template <class T> static T* alloc(size_t n) {
  T* d;
  cudaMalloc(&d, n * sizeof(T));
  return d;
}

template <class T> static void dump(const char* path, const T* d, size_t n) {
  std::vector<T> host(n);
  cudaMemcpy(host.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost);
  FILE* f = fopen(path, "wb");
  fwrite(host.data(), sizeof(T), n, f);
  fclose(f);
  cudaFree((void*)d);
}

// Columns: ctor e4m3, ctor e5m2, SATFINITE e4m3, NOSAT e4m3, SATFINITE e5m2, NOSAT e5m2.
__global__ void encode_f32(const float* in, int n, unsigned char* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = in[i];
  unsigned char* o = out + 6 * i;
  o[0] = __nv_fp8_e4m3(v).__x;
  o[1] = __nv_fp8_e5m2(v).__x;
  o[2] = __nv_cvt_float_to_fp8(v, __NV_SATFINITE, __NV_E4M3);
  o[3] = __nv_cvt_float_to_fp8(v, __NV_NOSAT, __NV_E4M3);
  o[4] = __nv_cvt_float_to_fp8(v, __NV_SATFINITE, __NV_E5M2);
  o[5] = __nv_cvt_float_to_fp8(v, __NV_NOSAT, __NV_E5M2);
}

__global__ void encode_f64(const double* in, int n, unsigned char* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double v = in[i];
  unsigned char* o = out + 6 * i;
  o[0] = __nv_fp8_e4m3(v).__x;
  o[1] = __nv_fp8_e5m2(v).__x;
  o[2] = __nv_cvt_double_to_fp8(v, __NV_SATFINITE, __NV_E4M3);
  o[3] = __nv_cvt_double_to_fp8(v, __NV_NOSAT, __NV_E4M3);
  o[4] = __nv_cvt_double_to_fp8(v, __NV_SATFINITE, __NV_E5M2);
  o[5] = __nv_cvt_double_to_fp8(v, __NV_NOSAT, __NV_E5M2);
}

// Every 16-bit pattern, as __half and as __nv_bfloat16.
__global__ void encode_16bit(unsigned char* half_out, unsigned char* bf16_out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= 65536) return;
  __half_raw hr{(unsigned short)i};
  __half h(hr);
  unsigned char* o = half_out + 6 * i;
  o[0] = __nv_fp8_e4m3(h).__x;
  o[1] = __nv_fp8_e5m2(h).__x;
  o[2] = __nv_cvt_halfraw_to_fp8(hr, __NV_SATFINITE, __NV_E4M3);
  o[3] = __nv_cvt_halfraw_to_fp8(hr, __NV_NOSAT, __NV_E4M3);
  o[4] = __nv_cvt_halfraw_to_fp8(hr, __NV_SATFINITE, __NV_E5M2);
  o[5] = __nv_cvt_halfraw_to_fp8(hr, __NV_NOSAT, __NV_E5M2);
  __nv_bfloat16_raw br{(unsigned short)i};
  __nv_bfloat16 b(br);
  o = bf16_out + 6 * i;
  o[0] = __nv_fp8_e4m3(b).__x;
  o[1] = __nv_fp8_e5m2(b).__x;
  o[2] = __nv_cvt_bfloat16raw_to_fp8(br, __NV_SATFINITE, __NV_E4M3);
  o[3] = __nv_cvt_bfloat16raw_to_fp8(br, __NV_NOSAT, __NV_E4M3);
  o[4] = __nv_cvt_bfloat16raw_to_fp8(br, __NV_SATFINITE, __NV_E5M2);
  o[5] = __nv_cvt_bfloat16raw_to_fp8(br, __NV_NOSAT, __NV_E5M2);
}

// Per code and format (e4m3 then e5m2): float, double, __half bits two ways, bf16 bits, and
// the integer conversions.
__global__ void decode(float* f, double* d, unsigned short* h, unsigned short* b, int* ints,
                       long long* ll) {
  int c = threadIdx.x;
  __nv_fp8_e4m3 x4;
  __nv_fp8_e5m2 x5;
  x4.__x = (__nv_fp8_storage_t)c;
  x5.__x = (__nv_fp8_storage_t)c;
  f[2 * c] = (float)x4;
  f[2 * c + 1] = static_cast<float>(x5);
  d[2 * c] = (double)x4;
  d[2 * c + 1] = (double)x5;
  h[4 * c] = __nv_cvt_fp8_to_halfraw(x4.__x, __NV_E4M3).x;
  h[4 * c + 1] = __nv_cvt_fp8_to_halfraw(x5.__x, __NV_E5M2).x;
  h[4 * c + 2] = __half_as_ushort((__half)x4);
  h[4 * c + 3] = __half_as_ushort((__half)x5);
  b[2 * c] = __bfloat16_as_ushort((__nv_bfloat16)x4);
  b[2 * c + 1] = __bfloat16_as_ushort((__nv_bfloat16)x5);
  int* o = ints + 8 * c;
  o[0] = (int)x4; o[1] = (unsigned char)x4; o[2] = (signed char)x4; o[3] = (bool)x4;
  o[4] = (int)x5; o[5] = (unsigned char)x5; o[6] = (signed char)x5; o[7] = (bool)x5;
  ll[2 * c] = (long long)x4;
  ll[2 * c + 1] = (long long)x5;
}

// Vector types over groups of four inputs a, b, c, d.
// q (uint32): x4 e4m3 from float4, from two __half2, from two __nv_bfloat162, from double4,
//             then the same four for e5m2.
// p (uint16): x2 e4m3 from float2(a, b), __half2, __nv_bfloat162, double2, then e5m2; then
//             __nv_cvt_float2_to_fp8x2 NOSAT e5m2, __nv_cvt_halfraw2_to_fp8x2 NOSAT e4m3,
//             __nv_cvt_bfloat16raw2_to_fp8x2 SATFINITE e5m2, __nv_cvt_double2_to_fp8x2 NOSAT e4m3.
__global__ void vectors(const float* in, int groups, unsigned* q, unsigned short* p) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= groups) return;
  float a = in[4 * i], b = in[4 * i + 1], c = in[4 * i + 2], e = in[4 * i + 3];
  float4 f4 = make_float4(a, b, c, e);
  __half2 hlo = __floats2half2_rn(a, b), hhi = __floats2half2_rn(c, e);
  __nv_bfloat162 blo = __floats2bfloat162_rn(a, b), bhi = __floats2bfloat162_rn(c, e);
  double4 d4 = make_double4(a, b, c, e);
  unsigned* oq = q + 8 * i;
  oq[0] = __nv_fp8x4_e4m3(f4).__x;
  oq[1] = __nv_fp8x4_e4m3(hlo, hhi).__x;
  oq[2] = __nv_fp8x4_e4m3(blo, bhi).__x;
  oq[3] = __nv_fp8x4_e4m3(d4).__x;
  oq[4] = __nv_fp8x4_e5m2(f4).__x;
  oq[5] = __nv_fp8x4_e5m2(hlo, hhi).__x;
  oq[6] = __nv_fp8x4_e5m2(blo, bhi).__x;
  oq[7] = __nv_fp8x4_e5m2(d4).__x;
  float2 f2 = make_float2(a, b);
  double2 d2 = make_double2(a, b);
  unsigned short* op = p + 12 * i;
  op[0] = __nv_fp8x2_e4m3(f2).__x;
  op[1] = __nv_fp8x2_e4m3(hlo).__x;
  op[2] = __nv_fp8x2_e4m3(blo).__x;
  op[3] = __nv_fp8x2_e4m3(d2).__x;
  op[4] = __nv_fp8x2_e5m2(f2).__x;
  op[5] = __nv_fp8x2_e5m2(hlo).__x;
  op[6] = __nv_fp8x2_e5m2(blo).__x;
  op[7] = __nv_fp8x2_e5m2(d2).__x;
  op[8] = __nv_cvt_float2_to_fp8x2(f2, __NV_NOSAT, __NV_E5M2);
  __half2_raw hraw;
  memcpy(&hraw, &hlo, sizeof(hraw));
  op[9] = __nv_cvt_halfraw2_to_fp8x2(hraw, __NV_NOSAT, __NV_E4M3);
  op[10] = __nv_cvt_bfloat16raw2_to_fp8x2(blo, __NV_SATFINITE, __NV_E5M2);
  op[11] = __nv_cvt_double2_to_fp8x2(d2, __NV_NOSAT, __NV_E4M3);
}

// Vector decodes of packed codes: lanes of x4 -> float4, x2 -> float2, __half2, halfraw2.
__global__ void vector_decode(const unsigned* packed, int n, float* f, unsigned short* h) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __nv_fp8x4_e4m3 q4;
  __nv_fp8x4_e5m2 q5;
  q4.__x = packed[i];
  q5.__x = packed[i];
  float4 a = (float4)q4, b = (float4)q5;
  __nv_fp8x2_e4m3 p4;
  __nv_fp8x2_e5m2 p5;
  p4.__x = (__nv_fp8x2_storage_t)(packed[i] & 0xFFFF);
  p5.__x = (__nv_fp8x2_storage_t)(packed[i] & 0xFFFF);
  float2 c = (float2)p4, e = (float2)p5;
  float* o = f + 12 * i;
  o[0] = a.x; o[1] = a.y; o[2] = a.z; o[3] = a.w;
  o[4] = b.x; o[5] = b.y; o[6] = b.z; o[7] = b.w;
  o[8] = c.x; o[9] = c.y; o[10] = e.x; o[11] = e.y;
  __half2 h4 = (__half2)p4;
  __half2_raw r5 = __nv_cvt_fp8x2_to_halfraw2(p5.__x, __NV_E5M2);
  unsigned short* oh = h + 4 * i;
  oh[0] = __half_as_ushort(h4.x); oh[1] = __half_as_ushort(h4.y);
  oh[2] = r5.x; oh[3] = r5.y;
}

int main() {
  std::vector<char> f32 = slurp("data/f32.bin"), f64 = slurp("data/f64.bin"),
                    packed = slurp("data/packed.bin");
  int n32 = f32.size() / 4, n64 = f64.size() / 8, npk = packed.size() / 4, groups = n32 / 4;
  float* d32 = to_device<float>(f32);
  double* d64 = to_device<double>(f64);
  unsigned* dpk = to_device<unsigned>(packed);
  unsigned char *e32 = alloc<unsigned char>(6 * n32), *e64 = alloc<unsigned char>(6 * n64);
  unsigned char *eh = alloc<unsigned char>(6 * 65536), *eb = alloc<unsigned char>(6 * 65536);
  encode_f32<<<(n32 + 255) / 256, 256>>>(d32, n32, e32);
  encode_f64<<<(n64 + 255) / 256, 256>>>(d64, n64, e64);
  encode_16bit<<<256, 256>>>(eh, eb);
  float* df = alloc<float>(512);
  double* dd = alloc<double>(512);
  unsigned short *dh = alloc<unsigned short>(1024), *db = alloc<unsigned short>(512);
  int* di = alloc<int>(8 * 256);
  long long* dl = alloc<long long>(512);
  decode<<<1, 256>>>(df, dd, dh, db, di, dl);
  unsigned* vq = alloc<unsigned>(8 * groups);
  unsigned short* vp = alloc<unsigned short>(12 * groups);
  vectors<<<(groups + 255) / 256, 256>>>(d32, groups, vq, vp);
  float* vf = alloc<float>(12 * npk);
  unsigned short* vh = alloc<unsigned short>(4 * npk);
  vector_decode<<<(npk + 255) / 256, 256>>>(dpk, npk, vf, vh);
  if (cudaDeviceSynchronize() != cudaSuccess) { fprintf(stderr, "kernel failed\n"); return 1; }
  dump("data/enc_f32.bin", e32, 6 * n32);
  dump("data/enc_f64.bin", e64, 6 * n64);
  dump("data/enc_half.bin", eh, 6 * 65536);
  dump("data/enc_bf16.bin", eb, 6 * 65536);
  dump("data/dec_f32.bin", df, 512);
  dump("data/dec_f64.bin", dd, 512);
  dump("data/dec_half.bin", dh, 1024);
  dump("data/dec_bf16.bin", db, 512);
  dump("data/dec_int.bin", di, 8 * 256);
  dump("data/dec_ll.bin", dl, 512);
  dump("data/vec_q.bin", vq, 8 * groups);
  dump("data/vec_p.bin", vp, 12 * groups);
  dump("data/vec_dec_f.bin", vf, 12 * npk);
  dump("data/vec_dec_h.bin", vh, 4 * npk);
  printf("done\n");
  return 0;
}
"""

ENCODE_COLUMNS = ["ctor_e4m3", "ctor_e5m2", "sat_e4m3", "nosat_e4m3", "sat_e5m2", "nosat_e5m2"]


def widen(x: np.ndarray) -> np.ndarray:
    """float32 -> float64 as C++ does it; a signalling NaN becomes quiet (and raises the
    invalid flag, which NumPy would warn about)."""
    with np.errstate(invalid="ignore"):
        return x.astype(np.float64)


# --- what the outputs must be --------------------------------------------------------------------
def fp8_values(fmt: str) -> np.ndarray:
    """float32 value of each of the 256 codes, decoded by PyTorch."""
    codes = torch.arange(256, dtype=torch.int32).to(torch.uint8)
    return codes.view(FORMATS[fmt]).float().numpy()


def torch_encode(x: np.ndarray, fmt: str) -> np.ndarray:
    return (
        torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32))
        .to(FORMATS[fmt])
        .view(torch.uint8)
        .numpy()
    )


def expected_from_floats(x: np.ndarray, fmt: str, satfinite: bool) -> np.ndarray:
    """CUDA's code for float32 inputs `x`: PyTorch's conversion, with CUDA's documented rules
    where PyTorch's differ.

    - PyTorch keeps the sign of a NaN (0xFF); CUDA makes every float NaN the canonical 0x7F.
    - float8_e4m3fn in PyTorch saturates (inf and overflow -> +/-448), which is CUDA's
      __NV_SATFINITE; __NV_NOSAT gives NaN past max + half an ulp (464: a tie there rounds to
      448, whose mantissa is even).
    - float8_e5m2 in PyTorch does not saturate (overflow -> +/-inf), which is CUDA's __NV_NOSAT;
      __NV_SATFINITE turns every +/-inf result, inf inputs included, into +/-57344.
    """
    x = np.asarray(x, dtype=np.float32)
    code = torch_encode(x, fmt).copy()
    sign = np.where(np.signbit(x), 0x80, 0).astype(np.uint8)
    if fmt == "e4m3" and not satfinite:
        over = np.abs(x) > np.float32(464.0)
        code[over] = NOSAT_OVERFLOW["e4m3"] | sign[over]
    if fmt == "e5m2" and satfinite:
        inf = (code & 0x7F) == 0x7C
        code[inf] = MAXCODE["e5m2"] | sign[inf]
    code[np.isnan(x)] = 0x7F
    return code


def reference_encode(x: np.ndarray, fmt: str, satfinite: bool) -> np.ndarray:
    """An exact model of CUDA's rounding for float64 inputs (PyTorch converts a double through
    float32, rounding twice): nearest fp8 value on the grid of finite magnitudes, ties to the
    even code; past the largest value, a virtual next grid point (one ulp up, odd-even rule
    alike) decides overflow. NaN inputs of type double keep their sign; E5M2 also keeps the two
    leading payload bits, made quiet (0x7E | bits)."""
    x = np.asarray(x, dtype=np.float64)
    maxcode = MAXCODE[fmt]
    grid = fp8_values(fmt)[: maxcode + 1].astype(np.float64)  # codes 0..maxcode, increasing
    ulp_top = grid[maxcode] - grid[maxcode - 1]
    grid = np.append(grid, grid[maxcode] + ulp_top)  # code maxcode + 1: overflow
    a = np.abs(np.where(np.isnan(x), 0.0, x))
    a = np.minimum(a, grid[-1])  # anything beyond (inf included) overflows
    hi = np.clip(np.searchsorted(grid, a, side="left"), 0, len(grid) - 1)
    lo = np.maximum(hi - 1, 0)
    d_lo, d_hi = a - grid[lo], grid[hi] - a
    code = np.where(d_lo < d_hi, lo, hi)
    tie = d_lo == d_hi
    code = np.where(tie, np.where(lo % 2 == 0, lo, hi), code)
    code = np.where(a == grid[hi], hi, code)
    over = code > maxcode
    code = np.where(over, maxcode if satfinite else NOSAT_OVERFLOW[fmt], code).astype(np.uint8)
    code |= np.where(np.signbit(x), 0x80, 0).astype(np.uint8)
    nan = np.isnan(x)
    bits = x.view(np.uint64)
    sign = np.where(np.signbit(x), 0x80, 0)
    if fmt == "e4m3":
        nan_code = 0x7F | sign
    else:
        nan_code = 0x7E | ((bits >> np.uint64(50)) & np.uint64(3)).astype(np.int64) | sign
    code[nan] = nan_code[nan].astype(np.uint8)
    return code


def float_inputs() -> np.ndarray:
    """Every fp8 value of both formats, the midpoints between neighbours and the floats next to
    them, subnormal ranges, values past both maxima, specials, and random values."""
    parts = []
    for fmt in FORMATS:
        v = fp8_values(fmt).astype(np.float64)
        finite = np.unique(np.abs(v[np.isfinite(v)]))
        mids = (finite[:-1] + finite[1:]) / 2  # exact in float32 (one more bit than fp8)
        top = finite[-1] + (finite[-1] - finite[-2]) / 2  # the overflow threshold
        mids = np.append(mids, [top, finite[-1] / 2**20])
        m32 = mids.astype(np.float32)
        parts += [
            v.astype(np.float32),
            m32,
            np.nextafter(m32, np.float32(np.inf)),
            np.nextafter(m32, np.float32(0)),
        ]
    rng = np.random.default_rng(8)
    parts += [
        rng.uniform(0, 2.0**-6, 4000).astype(np.float32),  # E4M3 subnormals and below
        rng.uniform(0, 2.0**-14, 4000).astype(np.float32),  # E5M2 subnormals and below
        rng.uniform(400, 70000, 4000).astype(np.float32),  # around both maxima
        (2.0 ** rng.uniform(-30, 20, 40000)).astype(np.float32),
        rng.standard_normal(8000).astype(np.float32),
        np.array(
            [0.0, np.inf, np.nan, 1e-45, 1e-40, 3.4e38, 2.0**-9, 2.0**-10, 2.0**-16, 2.0**-17]
            + [464.0, 465.0, 61440.0, 1e6],
            dtype=np.float32,
        ),
        np.array([0x7FC00001, 0x7F800001, 0x7FFFFFFF], dtype=np.uint32).view(np.float32),
    ]
    x = np.concatenate(parts).astype(np.float32)
    x = np.concatenate([x, -x])  # both signs, so -0.0, -inf and -NaN too
    return x[: len(x) - len(x) % 4]  # whole groups of four for the vector kernel


def double_inputs(floats: np.ndarray) -> np.ndarray:
    """The floats as doubles, doubles a hair (2^-40 relative) either side of every midpoint
    (rounding through float32 would land on the midpoint and round to even), and doubles
    beyond float32's range."""
    parts = [widen(floats)]
    for fmt in FORMATS:
        v = fp8_values(fmt).astype(np.float64)
        finite = np.unique(np.abs(v[np.isfinite(v)]))
        mids = np.append((finite[:-1] + finite[1:]) / 2, finite[-1] * (1 + 2.0**-4))
        parts += [mids * (1 + 2.0**-40), mids * (1 - 2.0**-40)]
    parts.append(np.array([1e300, 1e-300, 5e-324, np.finfo(np.float64).max]))
    parts.append(
        np.array([0x7FF8000000000000, 0x7FF4000000000000], dtype=np.uint64).view(np.float64)
    )
    x = np.concatenate(parts)
    return np.concatenate([x, -x])


def packed_codes() -> np.ndarray:
    """Every code in every lane of a packed x2/x4 word, in varied company."""
    c = np.arange(256, dtype=np.uint32)
    return np.concatenate(
        [
            c | ((255 - c) << 8) | (((c + 1) & 255) << 16) | (((c * 7) & 255) << 24),
            ((c * 13) & 255) | (c << 8) | (((c * 5) & 255) << 16) | (((c + 128) & 255) << 24),
            ((c * 3) & 255) | (((c + 77) & 255) << 8) | (c << 16) | (c << 24),
        ]
    ).astype(np.uint32)


# --- the program, built and run once ------------------------------------------------------------
@pytest.fixture(scope="module")
def run(tmp_path_factory) -> dict[str, np.ndarray]:
    root = tmp_path_factory.mktemp("fp8")
    backend = CpuBackend(cache=BuildCache(root / "builds"))
    exe = backend.build(Program(source=PROGRAM, filename="main.cu"), {})
    assert exe.compile.ok, exe.compile.diagnostics
    work = root / "work"
    (work / "data").mkdir(parents=True)
    floats, doubles, packed = float_inputs(), None, packed_codes()
    doubles = double_inputs(floats)
    floats.tofile(work / "data" / "f32.bin")
    doubles.tofile(work / "data" / "f64.bin")
    packed.tofile(work / "data" / "packed.bin")
    argv, env = backend.command(exe, [])
    out = run_sandboxed(argv, work, limits=Limits(wall_seconds=120, cpu_seconds=240), env=env)
    assert out.exit_code == 0 and out.stdout.strip() == "done", out.stderr
    d = work / "data"
    return {
        "f32": floats,
        "f64": doubles,
        "packed": packed,
        "enc_f32": np.fromfile(d / "enc_f32.bin", np.uint8).reshape(-1, 6),
        "enc_f64": np.fromfile(d / "enc_f64.bin", np.uint8).reshape(-1, 6),
        "enc_half": np.fromfile(d / "enc_half.bin", np.uint8).reshape(-1, 6),
        "enc_bf16": np.fromfile(d / "enc_bf16.bin", np.uint8).reshape(-1, 6),
        "dec_f32": np.fromfile(d / "dec_f32.bin", np.float32).reshape(256, 2),
        "dec_f64": np.fromfile(d / "dec_f64.bin", np.float64).reshape(256, 2),
        "dec_half": np.fromfile(d / "dec_half.bin", np.uint16).reshape(256, 4),
        "dec_bf16": np.fromfile(d / "dec_bf16.bin", np.uint16).reshape(256, 2),
        "dec_int": np.fromfile(d / "dec_int.bin", np.int32).reshape(256, 8),
        "dec_ll": np.fromfile(d / "dec_ll.bin", np.int64).reshape(256, 2),
        "vec_q": np.fromfile(d / "vec_q.bin", np.uint32).reshape(-1, 8),
        "vec_p": np.fromfile(d / "vec_p.bin", np.uint16).reshape(-1, 12),
        "vec_dec_f": np.fromfile(d / "vec_dec_f.bin", np.float32).reshape(-1, 12),
        "vec_dec_h": np.fromfile(d / "vec_dec_h.bin", np.uint16).reshape(-1, 4),
    }


def assert_codes(got: np.ndarray, want: np.ndarray, inputs: np.ndarray, what: str) -> None:
    bad = np.flatnonzero(got != want)
    if len(bad):
        rows = [f"{inputs[i]!r}: got {got[i]:#04x}, want {want[i]:#04x}" for i in bad[:10]]
        pytest.fail(f"{what}: {len(bad)} of {len(got)} differ, e.g.\n" + "\n".join(rows))


# --- decoding ---------------------------------------------------------------------------------
@pytest.mark.parametrize("col, fmt", [(0, "e4m3"), (1, "e5m2")])
def test_every_code_decodes_to_torchs_value(run, col, fmt):
    got = run["dec_f32"][:, col]
    want = fp8_values(fmt)
    nan = np.isnan(want)
    assert nan.sum() == (2 if fmt == "e4m3" else 6)
    assert np.array_equal(got[~nan].view(np.uint32), want[~nan].view(np.uint32))  # -0.0 too
    # CUDA widens through the canonical __half NaN: sign and payload dropped.
    assert (got[nan].view(np.uint32) == CANONICAL_NAN_F32).all()
    dbl = run["dec_f64"][:, col]
    assert np.array_equal(dbl[~nan], want[~nan].astype(np.float64)) and np.isnan(dbl[nan]).all()
    assert np.array_equal(np.signbit(dbl[~nan]), np.signbit(want[~nan]))


@pytest.mark.parametrize("col, fmt", [(0, "e4m3"), (1, "e5m2")])
def test_every_code_widens_to_half_and_bfloat16(run, col, fmt):
    codes = torch.arange(256, dtype=torch.int32).to(torch.uint8).view(FORMATS[fmt])
    want_h = codes.to(torch.float16).view(torch.int16).numpy().view(np.uint16).copy()
    want_b = codes.to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)
    nan = np.isnan(fp8_values(fmt))
    want_h[nan] = CANONICAL_NAN_F16
    for got in (run["dec_half"][:, col], run["dec_half"][:, 2 + col]):
        assert np.array_equal(got, want_h)
    got_b = run["dec_bf16"][:, col]
    assert np.array_equal(got_b[~nan], want_b[~nan])
    assert ((got_b[nan] & 0x7F80) == 0x7F80).all() and (got_b[nan] & 0x7F).all()  # NaN


@pytest.mark.parametrize("col, fmt", [(0, "e4m3"), (1, "e5m2")])
def test_integer_and_bool_conversions_truncate_and_saturate(run, col, fmt):
    v = fp8_values(fmt).astype(np.float64)
    nan = np.isnan(v)
    safe = np.where(nan, 0.0, v)

    def conv(lo: int, hi: int) -> np.ndarray:
        return np.where(nan, 0, np.clip(np.trunc(np.clip(safe, -1e30, 1e30)), lo, hi))

    got = run["dec_int"][:, 4 * col : 4 * col + 4]
    assert np.array_equal(got[:, 0], conv(-(2**31), 2**31 - 1))
    assert np.array_equal(got[:, 1], conv(0, 255))
    assert np.array_equal(got[:, 2], conv(-128, 127))
    assert np.array_equal(got[:, 3], (np.arange(256) & 0x7F) != 0)  # nonzero, NaN included
    ll = run["dec_ll"][:, col]
    big = np.isinf(v)  # E5M2 infinities saturate
    assert np.array_equal(ll[big], np.where(v[big] > 0, 2**63 - 1, -(2**63)))
    ok = ~nan & ~big
    assert np.array_equal(ll[ok], np.trunc(v[ok]).astype(np.int64))
    assert (ll[nan] == np.iinfo(np.int64).min).all()  # 0x8000000000000000, as __half2ll_rz


# --- encoding -----------------------------------------------------------------------------------
@pytest.mark.parametrize("col", range(6), ids=ENCODE_COLUMNS)
def test_floats_encode_as_torch_and_cuda_document(run, col):
    name = ENCODE_COLUMNS[col]
    fmt = name[-4:]
    satfinite = not name.startswith("nosat")  # the class constructors use __NV_SATFINITE
    x = run["f32"]
    assert_codes(run["enc_f32"][:, col], expected_from_floats(x, fmt, satfinite), x, name)


def test_the_inputs_reach_every_rounding_case(run):
    x = run["f32"]
    assert np.isnan(x).sum() >= 8 and np.isinf(x).sum() >= 2
    assert (x.view(np.uint32) == 0x80000000).any()  # -0.0
    for fmt in FORMATS:
        # Every code is produced (PyTorch makes only 0x7F/0xFF of the E5M2 NaNs).
        missing = set(range(256)) - set(np.unique(torch_encode(x, fmt)).tolist())
        assert missing <= ({0x7D, 0x7E, 0xFD, 0xFE} if fmt == "e5m2" else set()), missing
        assert (np.abs(x) > MAX[fmt]).sum() > 1000


def test_special_values_follow_cuda(run):
    x = np.array([np.inf, -np.inf, 1e6, -1e6, 464.0, 465.0, 61440.0, -0.0], dtype=np.float32)
    cols = {c: expected_from_floats(x, c[-4:], not c.startswith("nosat")) for c in ENCODE_COLUMNS}
    # Spelled out once, from the CUDA documentation, to pin the adjustments above.
    assert list(cols["sat_e4m3"]) == [0x7E, 0xFE, 0x7E, 0xFE, 0x7E, 0x7E, 0x7E, 0x80]
    assert list(cols["nosat_e4m3"]) == [0x7F, 0xFF, 0x7F, 0xFF, 0x7E, 0x7F, 0x7F, 0x80]
    assert list(cols["sat_e5m2"]) == [0x7B, 0xFB, 0x7B, 0xFB, 0x5F, 0x5F, 0x7B, 0x80]
    assert list(cols["nosat_e5m2"]) == [0x7C, 0xFC, 0x7C, 0xFC, 0x5F, 0x5F, 0x7C, 0x80]
    idx = [int(np.flatnonzero(run["f32"].view(np.uint32) == v.view(np.uint32))[0]) for v in x]
    for col, name in enumerate(ENCODE_COLUMNS):
        assert list(run["enc_f32"][idx, col]) == list(cols[name]), name


def test_the_double_model_agrees_with_torch_on_floats(run):
    # The exact model used for doubles is checked against PyTorch where both must agree.
    x = run["f32"]
    for fmt in FORMATS:
        for sat in (True, False):
            want = expected_from_floats(x, fmt, sat)
            model = reference_encode(widen(x), fmt, sat)
            nan = np.isnan(x)
            assert_codes(model[~nan], want[~nan], x[~nan], f"model {fmt} sat={sat}")


@pytest.mark.parametrize("col", range(6), ids=ENCODE_COLUMNS)
def test_doubles_round_once(run, col):
    name = ENCODE_COLUMNS[col]
    x = run["f64"]
    want = reference_encode(x, name[-4:], not name.startswith("nosat"))
    assert_codes(run["enc_f64"][:, col], want, x, name)


@pytest.mark.parametrize("kind", ["half", "bf16"])
@pytest.mark.parametrize("col", range(6), ids=ENCODE_COLUMNS)
def test_every_half_and_bfloat16_pattern_encodes(run, kind, col):
    bits = np.arange(65536, dtype=np.uint16)
    if kind == "half":
        x = bits.view(np.float16).astype(np.float32)
    else:
        x = (bits.astype(np.uint32) << 16).view(np.float32)
    name = ENCODE_COLUMNS[col]
    want = expected_from_floats(x, name[-4:], not name.startswith("nosat"))
    assert_codes(run[f"enc_{kind}"][:, col], want, x, f"{kind} {name}")


# --- vector types -------------------------------------------------------------------------------
def _pack(codes: np.ndarray) -> np.ndarray:
    """[groups, lanes] uint8 codes -> one little-endian word per group (lane 0 lowest)."""
    out = np.zeros(len(codes), dtype=np.uint64)
    for lane in range(codes.shape[1]):
        out |= codes[:, lane].astype(np.uint64) << np.uint64(8 * lane)
    return out


def test_vector_constructors_pack_lanes_in_order(run):
    x = run["f32"].reshape(-1, 4)
    with np.errstate(over="ignore"):  # past 65504 a __half is inf, as in CUDA
        as_half = x.astype(np.float16).astype(np.float32)
    as_bf16 = torch.from_numpy(x).to(torch.bfloat16).float().numpy()
    q, p = run["vec_q"], run["vec_p"]

    def want(src: np.ndarray, fmt: str, sat: bool, double: bool) -> np.ndarray:
        # double4/double2 sources take the double path (a NaN keeps its sign there)
        flat = src.ravel()
        if double:
            return reference_encode(widen(flat), fmt, sat).reshape(src.shape)
        return expected_from_floats(flat, fmt, sat).reshape(src.shape)

    sources = [(x, False), (as_half, False), (as_bf16, False), (x, True)]
    for k, fmt in enumerate(FORMATS):
        for j, (src, double) in enumerate(sources):  # float4, __half2 x2, bf162 x2, double4
            codes = want(src, fmt, True, double)
            assert np.array_equal(q[:, 4 * k + j], _pack(codes)), (fmt, j)
            assert np.array_equal(p[:, 4 * k + j], _pack(codes[:, :2])), (fmt, j)
    pairs = {
        8: (x, "e5m2", False, False),
        9: (as_half, "e4m3", False, False),
        10: (as_bf16, "e5m2", True, False),
        11: (x, "e4m3", False, True),
    }
    for col, (src, fmt, sat, double) in pairs.items():
        assert np.array_equal(p[:, col], _pack(want(src[:, :2], fmt, sat, double))), col


def test_vector_decodes_match_the_scalar_ones(run):
    packed = run["packed"]
    lanes = np.stack([(packed >> (8 * k)) & 0xFF for k in range(4)], axis=1)
    f, h = run["vec_dec_f"], run["vec_dec_h"]
    for k in range(len(FORMATS)):
        table = run["dec_f32"][:, k].view(np.uint32)  # checked against torch above
        got = f[:, 4 * k : 4 * k + 4].view(np.uint32)
        assert np.array_equal(got, table[lanes])
        assert np.array_equal(f[:, 8 + 2 * k : 10 + 2 * k].view(np.uint32), table[lanes[:, :2]])
        halves = run["dec_half"][:, k]
        assert np.array_equal(h[:, 2 * k : 2 * k + 2], halves[lanes[:, :2]])


# --- the backend ----------------------------------------------------------------------------------
def test_fp8_is_no_longer_a_gpu_only_feature():
    src = "#include <cuda_fp8.h>\n__global__ void k(__nv_fp8_e4m3* o) { o[0] = __nv_fp8_e4m3(1.f); }\n"
    assert "fp8" in analyze(src).features
    assert CpuBackend().unsupported_features(["fp8", "half", "bfloat16"]) == []


def test_a_missing_fp8_name_is_still_reported_as_the_feature(tmp_path):
    # Names the shim lacks (the CUDA 12.8 e8m0 scale type) stay `needs_gpu`, naming fp8.
    src = "#include <cuda_fp8.h>\nint main() { __nv_fp8_e8m0 s; (void)s; return 0; }\n"
    exe = CpuBackend(cache=BuildCache(tmp_path)).build(Program(source=src), {})
    assert not exe.compile.ok
    assert exe.needs_gpu and exe.needs_gpu.startswith("fp8"), exe.needs_gpu


def _load_hecbench_cpu():
    path = REPO / "benchmarks" / "hecbench_cpu.py"
    spec = importlib.util.spec_from_file_location("hecbench_cpu_for_fp8_test", path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.skipif(
    not (HECBENCH / "addBiasQKV-cuda").is_dir(), reason="no ../shared/data/hecbench"
)
def test_hecbench_addbiasqkv_runs(tmp_path, monkeypatch):
    bench = _load_hecbench_cpu()
    # Its timing loop launches 2 x 1000 kernels of 6.3M threads (~6 min here); two per loop
    # do the same work, which is all a test needs.
    scaling = [("int repeat = 1000;", "int repeat = 2;", "timing loop: 1000 -> 2")]
    monkeypatch.setitem(bench.SOURCE_SCALING, "addBiasQKV-cuda", scaling)
    backend = CpuBackend(cache=BuildCache(tmp_path / "builds"))
    row = bench.run_one(backend, HECBENCH / "addBiasQKV-cuda", ["forward"], ["plain"])
    assert row["verdict"] == "ran", row
    assert "fp8" in analyze((HECBENCH / "addBiasQKV-cuda" / "main.cu").read_text()).features
