"""The CUDA Math API's SIMD (`__vadd2` ... `__vsubus4`) and DPX (`__vimax3_s32`,
`__viaddmax_s16x2_relu`, `__vibmin_u32`, ...) intrinsics on the `cpu` backend, every one of them
checked against a NumPy model written from the documented semantics.

One program (built once) calls every intrinsic on each (a, b, c) word triple of the inputs and
writes the results to a file. The inputs hold every pair of edge lane values (0, 1, 2, -1, -2,
the signed and unsigned minimum and maximum and their neighbours) in every lane, for halfword
and byte lanes, every triple of edge 32-bit values, and random words.

The model, per lane of width w (16 for `*2`/`*16x2`, 8 for `*4`, 32 for `*_s32`/`*_u32`):
lanes read as signed or unsigned as the name says; plain results wrap to the lane; `ss` clamps
to the signed range, `us` to the unsigned one; `__vcmp*` give all ones, `__vset*` 1, where the
comparison holds; `__vavgu` is (a+b+1)>>1, `__vhaddu` (a+b)>>1, `__vavgs` rounds half away from
zero (the PTX ISA's vavrg); `__vsad*` sum the absolute lane differences; DPX: `_relu` clamps
below at 0, the sum in `__viadd*` wraps in the lane, `__vibmax`/`__vibmin` report a >= b
(a <= b) per lane.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable

import numpy as np
import pytest

from schemas import Program, Status
from validators.backends.cpu import CpuBackend
from validators.build_cache import BuildCache
from validators.cpu.cuda_intrinsics import is_cuda_intrinsic
from validators.engine import run_program
from validators.sandbox import Limits, run_sandboxed

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed")

I64 = np.int64

# --- the reference model -------------------------------------------------------------------


def lanes(word: np.ndarray, width: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """(unsigned, signed) value of each lane, lowest lane first."""
    w = word.astype(I64)
    out = []
    for shift in range(0, 32, width):
        u = (w >> shift) & ((1 << width) - 1)
        s = np.where(u >= 1 << (width - 1), u - (1 << width), u)
        out.append((u, s))
    return out


def pack(values: list[np.ndarray], width: int) -> np.ndarray:
    mask = (1 << width) - 1
    r = np.zeros(values[0].shape, dtype=I64)
    for k, v in enumerate(values):
        r |= (v.astype(I64) & mask) << (k * width)
    return r.astype(np.uint32)


def clamp_s(v: np.ndarray, width: int) -> np.ndarray:
    return np.clip(v, -(1 << (width - 1)), (1 << (width - 1)) - 1)


def clamp_u(v: np.ndarray, width: int) -> np.ndarray:
    return np.clip(v, 0, (1 << width) - 1)


def avg_away_from_zero(s: np.ndarray) -> np.ndarray:
    return np.where(s >= 0, (s + 1) >> 1, s >> 1)


LaneOp = Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int], np.ndarray]


def all_ones(cond: np.ndarray, width: int) -> np.ndarray:
    return np.where(cond, (1 << width) - 1, 0)


# stem -> (operands, op(ua, ub, sa, sb, width))
SIMD: dict[str, tuple[int, LaneOp]] = {
    "__vabs": (1, lambda ua, ub, sa, sb, w: np.abs(sa)),
    "__vabsss": (1, lambda ua, ub, sa, sb, w: clamp_s(np.abs(sa), w)),
    "__vneg": (1, lambda ua, ub, sa, sb, w: -sa),
    "__vnegss": (1, lambda ua, ub, sa, sb, w: clamp_s(-sa, w)),
    "__vabsdiffs": (2, lambda ua, ub, sa, sb, w: np.abs(sa - sb)),
    "__vabsdiffu": (2, lambda ua, ub, sa, sb, w: np.abs(ua - ub)),
    "__vadd": (2, lambda ua, ub, sa, sb, w: ua + ub),
    "__vaddss": (2, lambda ua, ub, sa, sb, w: clamp_s(sa + sb, w)),
    "__vaddus": (2, lambda ua, ub, sa, sb, w: clamp_u(ua + ub, w)),
    "__vsub": (2, lambda ua, ub, sa, sb, w: ua - ub),
    "__vsubss": (2, lambda ua, ub, sa, sb, w: clamp_s(sa - sb, w)),
    "__vsubus": (2, lambda ua, ub, sa, sb, w: clamp_u(ua - ub, w)),
    "__vavgs": (2, lambda ua, ub, sa, sb, w: avg_away_from_zero(sa + sb)),
    "__vavgu": (2, lambda ua, ub, sa, sb, w: (ua + ub + 1) >> 1),
    "__vhaddu": (2, lambda ua, ub, sa, sb, w: (ua + ub) >> 1),
    "__vmaxs": (2, lambda ua, ub, sa, sb, w: np.maximum(sa, sb)),
    "__vmaxu": (2, lambda ua, ub, sa, sb, w: np.maximum(ua, ub)),
    "__vmins": (2, lambda ua, ub, sa, sb, w: np.minimum(sa, sb)),
    "__vminu": (2, lambda ua, ub, sa, sb, w: np.minimum(ua, ub)),
}
COMPARISONS = {
    "eq": (False, np.equal), "ne": (False, np.not_equal),
    "ges": (True, np.greater_equal), "geu": (False, np.greater_equal),
    "gts": (True, np.greater), "gtu": (False, np.greater),
    "les": (True, np.less_equal), "leu": (False, np.less_equal),
    "lts": (True, np.less), "ltu": (False, np.less),
}
for _suffix, (_signed, _cmp) in COMPARISONS.items():
    def _compare(ua, ub, sa, sb, w, signed=_signed, cmp=_cmp):
        return cmp(sa, sb) if signed else cmp(ua, ub)

    SIMD[f"__vcmp{_suffix}"] = (2, lambda *x, f=_compare: all_ones(f(*x), x[4]))
    SIMD[f"__vset{_suffix}"] = (2, lambda *x, f=_compare: f(*x).astype(I64))


def simd_reference(stem: str, width: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    _, op = SIMD[stem]
    return pack([op(ua, ub, sa, sb, width) for (ua, sa), (ub, sb) in
                 zip(lanes(a, width), lanes(b, width), strict=True)], width)


def sad_reference(signed: bool, width: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    total = np.zeros(a.shape, dtype=I64)
    for (ua, sa), (ub, sb) in zip(lanes(a, width), lanes(b, width), strict=True):
        total += np.abs(sa - sb) if signed else np.abs(ua - ub)
    return total.astype(np.uint32)


def relu(v: np.ndarray) -> np.ndarray:
    return np.maximum(v, 0)


def wrap(v: np.ndarray, width: int, signed: bool) -> np.ndarray:
    u = v & ((1 << width) - 1)
    return np.where(u >= 1 << (width - 1), u - (1 << width), u) if signed else u


DPX_OPS: dict[str, Callable[[np.ndarray, np.ndarray, np.ndarray, int, bool], np.ndarray]] = {
    "__vimax3": lambda x, y, z, w, s: np.maximum(np.maximum(x, y), z),
    "__vimin3": lambda x, y, z, w, s: np.minimum(np.minimum(x, y), z),
    "__viaddmax": lambda x, y, z, w, s: np.maximum(wrap(x + y, w, s), z),
    "__viaddmin": lambda x, y, z, w, s: np.minimum(wrap(x + y, w, s), z),
}
TWO_OPERAND_RELU = {
    "__vimax": lambda x, y: np.maximum(x, y),
    "__vimin": lambda x, y: np.minimum(x, y),
}


def dpx_reference(name: str, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    stem, kind = name.split("_", 3)[2], name.split("_", 3)[3]
    stem = "__" + stem
    is_relu = kind.endswith("_relu")
    kind = kind.removesuffix("_relu")
    width = 32 if kind.endswith("32") else 16
    signed = kind.startswith("s")
    results = []
    for (ua, sa), (ub, sb), (uc, sc) in zip(lanes(a, width), lanes(b, width), lanes(c, width),
                                            strict=True):
        x, y, z = (sa, sb, sc) if signed else (ua, ub, uc)
        if stem in TWO_OPERAND_RELU:
            r = TWO_OPERAND_RELU[stem](x, y)
        else:
            r = DPX_OPS[stem](x, y, z, width, signed)
        results.append(relu(r) if is_relu else r)
    return pack(results, width)


def select_reference(name: str, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """__vibmax/__vibmin: the result and the predicates (hi * 2 + lo, or the one predicate)."""
    is_max = name.startswith("__vibmax")
    width = 32 if name.endswith("32") else 16
    signed = name.split("_")[-1].startswith("s")
    results, preds = [], []
    for (ua, sa), (ub, sb) in zip(lanes(a, width), lanes(b, width), strict=True):
        x, y = (sa, sb) if signed else (ua, ub)
        p = x >= y if is_max else x <= y
        results.append(np.where(p, x, y))
        preds.append(p.astype(I64))
    pred = preds[0] if width == 32 else preds[1] * 2 + preds[0]
    return pack(results, width), pred.astype(np.uint32)


# --- the intrinsics and how the program calls them -----------------------------------------

SIMD_NAMES = [f"{stem}{n}" for stem in SIMD for n in (2, 4)]
SAD_NAMES = ["__vsads2", "__vsads4", "__vsadu2", "__vsadu4"]
DPX3_NAMES = [f"{stem}_{kind}" for stem in DPX_OPS
              for kind in ("s32", "s32_relu", "u32", "s16x2", "s16x2_relu", "u16x2")]
DPX2_NAMES = ["__vimax_s32_relu", "__vimin_s32_relu", "__vimax_s16x2_relu", "__vimin_s16x2_relu"]
SELECT_NAMES = [f"__vib{m}_{k}" for m in ("max", "min") for k in ("s32", "u32", "s16x2", "u16x2")]


def call(name: str) -> str:
    signed32 = name.endswith(("_s32", "_s32_relu"))
    x, y, z = ("(int)x", "(int)y", "(int)z") if signed32 else ("x", "y", "z")
    if name in SELECT_NAMES:
        if name.endswith("32"):
            return f"{{ bool p; r = (unsigned){name}({x}, {y}, &p); q = p; }}"
        return f"{{ bool h, l; r = {name}(x, y, &h, &l); q = h * 2u + l; }}"
    if name in DPX3_NAMES:
        return f"r = (unsigned){name}({x}, {y}, {z});"
    if name in SIMD_NAMES and SIMD[name[:-1]][0] == 1:
        return f"r = {name}(x);"
    return f"r = (unsigned){name}({x}, {y});"


ALL_NAMES = SIMD_NAMES + SAD_NAMES + DPX3_NAMES + DPX2_NAMES + SELECT_NAMES


def program() -> str:
    body = []
    for k, name in enumerate(ALL_NAMES):
        body.append(f"  {call(name)} out[(size_t){k} * n + i] = r;")
        if name in SELECT_NAMES:
            body.append(f"  pred[(size_t){SELECT_NAMES.index(name)} * n + i] = q;")
    return (
        r"""
#include <cstdio>
#include <vector>
static std::vector<unsigned> slurp(const char* path) {
  FILE* f = fopen(path, "rb");
  fseek(f, 0, SEEK_END);
  std::vector<unsigned> v(ftell(f) / 4);
  fseek(f, 0, SEEK_SET);
  if (fread(v.data(), 4, v.size(), f) != v.size()) return {};
  fclose(f);
  return v;
}
__global__ void every_intrinsic(const unsigned* a, const unsigned* b, const unsigned* c,
                                unsigned* out, unsigned* pred, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const unsigned x = a[i], y = b[i], z = c[i];
  unsigned r = 0, q = 0;
"""
        + "\n".join(body)
        + r"""
}
int main() {
  std::vector<unsigned> in = slurp("abc.bin");
  const int n = (int)(in.size() / 3);
  unsigned *a, *out, *pred;
  cudaMalloc(&a, in.size() * 4);
  cudaMemcpy(a, in.data(), in.size() * 4, cudaMemcpyHostToDevice);
  cudaMalloc(&out, (size_t)NFUNCS * n * 4);
  cudaMalloc(&pred, (size_t)NPREDS * n * 4);
  every_intrinsic<<<(n + 255) / 256, 256>>>(a, a + n, a + 2 * n, out, pred, n);
  std::vector<unsigned> host((size_t)NFUNCS * n), preds((size_t)NPREDS * n);
  cudaMemcpy(host.data(), out, host.size() * 4, cudaMemcpyDeviceToHost);
  cudaMemcpy(preds.data(), pred, preds.size() * 4, cudaMemcpyDeviceToHost);
  FILE* f = fopen("out.bin", "wb");
  fwrite(host.data(), 4, host.size(), f);
  fwrite(preds.data(), 4, preds.size(), f);
  fclose(f);
  printf("%s\n", cudaGetErrorString(cudaDeviceSynchronize()));
}
"""
    )


# --- inputs --------------------------------------------------------------------------------


def edge_lanes(width: int) -> list[int]:
    m = (1 << width) - 1
    smax, smin = (1 << (width - 1)) - 1, 1 << (width - 1)
    return [0, 1, 2, m, m - 1, smax, smax - 1, smin, smin + 1]  # -1, -2 are m, m - 1


def inputs() -> np.ndarray:
    rng = np.random.default_rng(2024)
    a, b, c = [], [], []
    h = edge_lanes(16)  # every pair of edge halfwords in each lane
    hw = [(hi << 16) | lo for hi in h for lo in h]
    for i, x in enumerate(hw):
        for j, y in enumerate(hw):
            a.append(x)
            b.append(y)
            c.append(hw[(i * 7 + j * 3) % len(hw)])
    e = edge_lanes(8)  # every byte word of edge lanes against each rotation of its lanes
    for idx in np.ndindex(*(len(e),) * 4):
        word = sum(e[k] << (8 * j) for j, k in enumerate(idx))
        for t in range(len(e)):
            a.append(word)
            b.append(sum(e[(k + t) % len(e)] << (8 * j) for j, k in enumerate(idx)))
            c.append(sum(e[(k + 2 * t) % len(e)] << (8 * j) for j, k in enumerate(idx)))
    w = edge_lanes(32)
    for x in w:
        for y in w:
            for z in w:
                a.append(x)
                b.append(y)
                c.append(z)
    r = rng.integers(0, 1 << 32, size=(3, 20000), dtype=np.uint64)
    return np.concatenate([np.array([a, b, c], dtype=np.uint64), r], axis=1).astype(np.uint32)


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> dict[str, object]:
    root = tmp_path_factory.mktemp("simd")
    backend = CpuBackend(cache=BuildCache(root / "builds"))
    defines = {"NFUNCS": len(ALL_NAMES), "NPREDS": len(SELECT_NAMES)}
    exe = backend.build(Program(source=program(), filename="main.cu"), defines)
    assert exe.compile.ok, exe.compile.diagnostics
    work = root / "work"
    work.mkdir()
    abc = inputs()
    abc.tofile(work / "abc.bin")
    argv, env = backend.command(exe, [])
    out = run_sandboxed(argv, work, limits=Limits(wall_seconds=120, cpu_seconds=240), env=env)
    assert out.exit_code == 0 and out.stdout.strip() == "no error", out.stderr
    n = abc.shape[1]
    raw = np.fromfile(work / "out.bin", np.uint32)
    got = raw[: len(ALL_NAMES) * n].reshape(len(ALL_NAMES), n)
    preds = raw[len(ALL_NAMES) * n:].reshape(len(SELECT_NAMES), n)
    return {"abc": abc, "got": dict(zip(ALL_NAMES, got, strict=True)),
            "pred": dict(zip(SELECT_NAMES, preds, strict=True))}


def assert_words(got: np.ndarray, want: np.ndarray, abc: np.ndarray, name: str) -> None:
    bad = np.flatnonzero(got != want)
    if bad.size:
        i = bad[0]
        a, b, c = (f"{v:#010x}" for v in abc[:, i])
        pytest.fail(f"{name}({a}, {b}, {c}) = {got[i]:#010x}, expected {want[i]:#010x} "
                    f"({bad.size} of {got.size} wrong)")


@pytest.mark.parametrize("name", SIMD_NAMES)
def test_simd_intrinsic(results, name):
    a, b, _ = results["abc"]
    width = 16 if name.endswith("2") else 8
    want = simd_reference(name[:-1], width, a, b)
    assert_words(results["got"][name], want, results["abc"], name)


@pytest.mark.parametrize("name", SAD_NAMES)
def test_sum_of_absolute_differences(results, name):
    a, b, _ = results["abc"]
    want = sad_reference(name[6] == "s", 16 if name.endswith("2") else 8, a, b)
    assert_words(results["got"][name], want, results["abc"], name)


@pytest.mark.parametrize("name", DPX3_NAMES + DPX2_NAMES)
def test_dpx_intrinsic(results, name):
    a, b, c = results["abc"]
    assert_words(results["got"][name], dpx_reference(name, a, b, c), results["abc"], name)


@pytest.mark.parametrize("name", SELECT_NAMES)
def test_dpx_select_and_predicates(results, name):
    a, b, _ = results["abc"]
    want, want_pred = select_reference(name, a, b)
    assert_words(results["got"][name], want, results["abc"], name)
    assert_words(results["pred"][name], want_pred, results["abc"], name + " predicates")


def test_the_inputs_reach_saturation_and_both_predicate_outcomes(results):
    # Guards the inputs, not the shim: each clamp and each predicate value actually occurs.
    a, b, _ = results["abc"]
    assert (simd_reference("__vaddss", 8, a, b) != simd_reference("__vadd", 8, a, b)).any()
    assert (simd_reference("__vsubus", 16, a, b) != simd_reference("__vsub", 16, a, b)).any()
    _, pred = select_reference("__vibmax_s16x2", a, b)
    assert set(np.unique(pred)) == {0, 1, 2, 3}


# --- an intrinsic the shim lacks --------------------------------------------------------------

MISSING = r"""
__global__ void k(int* o, int a, unsigned b) { o[0] = %s(a, b, 0); }
int main() { int* o; cudaMalloc(&o, 4); k<<<1, 1>>>(o, 1, 2u); return cudaDeviceSynchronize(); }
"""


def test_a_missing_cuda_intrinsic_is_needs_gpu_naming_it(tmp_path):
    # __dp2a_lo (Integer Intrinsics) is documented but not in the shim.
    backend = CpuBackend(cache=BuildCache(tmp_path))
    run = run_program(Program(source=MISSING % "__dp2a_lo"), backend)
    assert run.status == Status.NEEDS_GPU, run.reason
    assert "uses CUDA intrinsic __dp2a_lo, which the cpu backend does not provide" in run.reason


def test_a_programs_own_undeclared_name_stays_a_compile_error(tmp_path):
    backend = CpuBackend(cache=BuildCache(tmp_path))
    run = run_program(Program(source=MISSING % "__dp2a_low"), backend)
    assert run.status == Status.COMPILE_ERROR, run.reason


@pytest.mark.parametrize("name", ALL_NAMES + ["__fadd_rz", "__float2ll_rd", "__ldcs", "__fns"])
def test_documented_names_are_known_intrinsics(name):
    assert is_cuda_intrinsic(name)


@pytest.mark.parametrize("name", ["__vadd8", "__vsum4", "__vimax_u32_relu", "__my_helper",
                                  "__fadd", "__popcnt", "__vimax3_s64"])
def test_other_names_are_not(name):
    assert not is_cuda_intrinsic(name)
