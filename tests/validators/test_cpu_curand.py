"""cuRAND on the cpu backend (include/curand_kernel.h, include/curand.h).

The programs (tests/validators/cpu_programs/curand_{device,host}.cu) run on the real backend and
print what they draw; a small reference written here from the published algorithms recomputes
every value: Marsaglia's xorwow with cuRAND's seed scrambling, its offsets stepped one by one
or jumped by powers of the one-step matrix over GF(2) (2^67 steps per subsequence), Philox4x32-10
(checked against Random123's known answers), and L'Ecuyer's MRG32k3a (2^76 values per
subsequence, checked against its published first value). Uniform values must agree bit for
bit; values through logf/sincos agree to a few ulps (the GPU uses its own math library).
"""

from __future__ import annotations

import functools
import math
import shutil
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from schemas import Program, Status
from validators.backends.cpu import CpuBackend
from validators.build_cache import BuildCache
from validators.engine import run_program

PROGRAMS = Path(__file__).resolve().parent / "cpu_programs"
pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed")

M32 = 0xFFFFFFFF
SEED = 0x123456789ABCDEF
THREADS, DRAWS = 4, 6
F32_INV32 = float(np.float32("2.3283064e-10"))  # cuRAND's literal; not 2**-32 exactly
F32_2PI = float(np.float32("6.2831855"))
F32_INV32_2PI = float(np.float32(np.float32(F32_INV32) * np.float32(F32_2PI)))


# --- exact arithmetic -----------------------------------------------------------------------


def f32(q: Fraction | float) -> float:
    """q rounded once to the nearest float32 (ties to even), as a GPU's fma.rn.f32 rounds."""
    q = Fraction(q)
    if q == 0:
        return 0.0
    sign, q = (-1 if q < 0 else 1), abs(q)
    e = q.numerator.bit_length() - q.denominator.bit_length()
    if Fraction(2) ** e > q:
        e -= 1
    scale = Fraction(2) ** (23 - e)
    return sign * float(round(q * scale) / scale)


def fmaf(a: float, b: float, c: float) -> float:
    return f32(Fraction(a) * Fraction(b) + Fraction(c))


def fma(a: float, b: float, c: float) -> float:
    return float(Fraction(a) * Fraction(b) + Fraction(c))


def uniform(x: int) -> float:
    return fmaf(f32(x), F32_INV32, F32_INV32 / 2)


def uniform_hq(x: int, y: int) -> float:
    return fma(float(x ^ (y << 21)), 2.0**-53, 2.0**-54)


def box_muller(x: int, y: int) -> tuple[float, float]:
    u, v = uniform(x), fmaf(f32(y), F32_INV32_2PI, F32_INV32_2PI / 2)
    s = math.sqrt(-2.0 * math.log(u))
    return s * math.sin(v), s * math.cos(v)


def box_muller_double(x0: int, x1: int, y0: int, y1: int) -> tuple[float, float]:
    u = fma(float(x0 ^ (x1 << 21)), 2.0**-53, 2.0**-54)
    v = fma(float(y0 ^ (y1 << 21)), 2.0**-52, 2.0**-53)
    s = math.sqrt(-2.0 * math.log(u))
    return s * math.sin(math.pi * v), s * math.cos(math.pi * v)


# --- the generators, as streams of 32-bit words -------------------------------------------


def _xorwow_step(v: list[int]) -> list[int]:
    t = v[0] ^ (v[0] >> 2)
    return [v[1], v[2], v[3], v[4], (v[4] ^ ((v[4] << 4) & M32)) ^ (t ^ ((t << 1) & M32))]


def _pack(v: list[int]) -> int:
    return sum(w << (32 * i) for i, w in enumerate(v))


def _unpack(x: int) -> list[int]:
    return [(x >> (32 * i)) & M32 for i in range(5)]


def _apply(cols: tuple[int, ...], x: int) -> int:
    r, i = 0, 0
    while x:
        if x & 1:
            r ^= cols[i]
        x, i = x >> 1, i + 1
    return r


@functools.lru_cache(None)
def _xorwow_power(k: int) -> tuple[int, ...]:
    """The one-step map raised to 2^k, as the images of the 160 basis bits."""
    if k == 0:
        return tuple(_pack(_xorwow_step(_unpack(1 << i))) for i in range(160))
    p = _xorwow_power(k - 1)
    return tuple(_apply(p, c) for c in p)


def _xorwow_jump(v: list[int], steps: int) -> list[int]:
    x, b = _pack(v), 0
    while steps:
        if steps & 1:
            x = _apply(_xorwow_power(b), x)
        steps, b = steps >> 1, b + 1
    return _unpack(x)


class Xorwow:
    def __init__(self, seed: int, subsequence: int = 0, offset: int = 0, stepped: bool = False):
        t0 = (1099087573 * ((seed & M32) ^ 0xAAD26B49)) & M32
        t1 = (2591861531 * ((seed >> 32) ^ 0xF7DCEFDD)) & M32
        self.d = (6615241 + t1 + t0 + 362437 * offset) & M32
        v = [(123456789 + t0) & M32, 362436069 ^ t0, (521288629 + t1) & M32, 88675123 ^ t1, (5783321 + t0) & M32]
        if stepped:
            assert subsequence == 0
            for _ in range(offset):
                v = _xorwow_step(v)
        else:
            v = _xorwow_jump(v, (subsequence << 67) + offset)
        self.v = v

    def next(self) -> int:
        self.v = _xorwow_step(self.v)
        self.d = (self.d + 362437) & M32
        return (self.v[4] + self.d) & M32


def philox4x32_10(ctr: list[int], key: list[int]) -> list[int]:
    c, k = list(ctr), list(key)
    for r in range(10):
        if r:
            k = [(k[0] + 0x9E3779B9) & M32, (k[1] + 0xBB67AE85) & M32]
        p0, p1 = 0xD2511F53 * c[0], 0xCD9E8D57 * c[2]
        c = [(p1 >> 32) ^ c[1] ^ k[0], p1 & M32, (p0 >> 32) ^ c[3] ^ k[1], p0 & M32]
    return c


class Philox:
    """Value p of a stream is word p % 4 of the block at counter p // 4 (128 bits)."""

    def __init__(self, seed: int, subsequence: int = 0, offset: int = 0):
        self.key = [seed & M32, seed >> 32]
        self.pos = (subsequence << 66) + offset

    def next(self) -> int:
        block = self.pos // 4
        self.pos += 1
        return philox4x32_10([(block >> (32 * i)) & M32 for i in range(4)], self.key)[(self.pos - 1) % 4]

    def next4(self) -> list[int]:
        return [self.next() for _ in range(4)]


MRG_M1, MRG_M2 = 4294967087, 4294944443


class Mrg32k3a:
    def __init__(self, seed: int, subsequence: int = 0, offset: int = 0, sequence: int = 0):
        s1, s2 = [12345] * 3, [12345] * 3
        if seed:
            x1, x2 = (seed & M32) ^ 0x55555555, (seed >> 32) ^ 0xAAAAAAAA
            s1 = [x1 * 12345 % MRG_M1, x2 * 12345 % MRG_M1, x1 * 12345 % MRG_M1]
            s2 = [x2 * 12345 % MRG_M2, x1 * 12345 % MRG_M2, x2 * 12345 % MRG_M2]
        n = (sequence << 127) + (subsequence << 76) + offset  # skipahead_sequence: 2^127
        a1 = [[0, 1, 0], [0, 0, 1], [-810728, 1403580, 0]]
        a2 = [[0, 1, 0], [0, 0, 1], [-1370589, 0, 527612]]
        self.s1, self.s2 = self._power(a1, n, MRG_M1, s1), self._power(a2, n, MRG_M2, s2)

    @staticmethod
    def _power(a: list[list[int]], n: int, m: int, s: list[int]) -> list[int]:
        def mul(x, y):
            return [[sum(x[i][k] * y[k][j] for k in range(3)) % m for j in range(3)] for i in range(3)]

        r = [[int(i == j) for j in range(3)] for i in range(3)]
        while n:
            if n & 1:
                r = mul(a, r)
            a, n = mul(a, a), n >> 1
        return [sum(r[i][k] * s[k] for k in range(3)) % m for i in range(3)]

    def step(self) -> int:
        p1 = (1403580 * self.s1[1] - 810728 * self.s1[0]) % MRG_M1
        p2 = (527612 * self.s2[2] - 1370589 * self.s2[0]) % MRG_M2
        self.s1, self.s2 = [self.s1[1], self.s1[2], p1], [self.s2[1], self.s2[2], p2]
        return p1 - p2 if p1 > p2 else p1 - p2 + MRG_M1

    def next(self) -> int:
        return int(self.step() * 1.000000048662)


# --- the distributions, drawn as the device functions draw them -----------------------------


def draws(kind: str, g) -> dict[str, list[float]]:
    """What draw_floats prints for one thread: uniform, uniform_double, normal, normal_double,
    log_normal(0.5, 0.25), poisson(3.5), six of each."""
    out: dict[str, list[float]] = {}
    if kind == "mrg":
        out["uniform"] = [f32(g.step() * 2.3283065498378288e-10) for _ in range(DRAWS)]
        out["uniform_double"] = [g.step() * 2.3283065498378288e-10 for _ in range(DRAWS)]
    else:
        out["uniform"] = [uniform(g.next()) for _ in range(DRAWS)]
        if kind == "xorwow":
            out["uniform_double"] = [uniform_hq(g.next(), g.next()) for _ in range(DRAWS)]
        else:  # Philox's double takes one 32-bit value
            out["uniform_double"] = [fma(float(g.next()), 2.0**-32, 2.0**-32) for _ in range(DRAWS)]

    def pair():
        if kind == "mrg":
            x = f32(g.step() * 2.3283065498378288e-10)
            y = float(np.float32(f32(g.step() * 2.3283065498378288e-10)) * np.float32(F32_2PI))
            s = math.sqrt(-2.0 * math.log(x))
            return s * math.sin(y), s * math.cos(y)
        return box_muller(g.next(), g.next())

    def pair_double():
        if kind == "mrg":
            x, y = g.step() * 2.3283065498378288e-10, g.step() * 2.3283065498378288e-10 * 2.0
            s = math.sqrt(-2.0 * math.log(x))
            return s * math.sin(math.pi * y), s * math.cos(math.pi * y)
        if kind == "philox":
            return box_muller_double(*g.next4())
        return box_muller_double(g.next(), g.next(), g.next(), g.next())

    out["normal"] = [v for _ in range(DRAWS // 2) for v in pair()]
    out["normal_double"] = [v for _ in range(DRAWS // 2) for v in pair_double()]
    out["log_normal"] = [math.exp(0.5 + 0.25 * v) for _ in range(DRAWS // 2) for v in pair()]
    uni = (lambda: f32(g.step() * 2.3283065498378288e-10)) if kind == "mrg" else (lambda: uniform(g.next()))
    pois = []
    for _ in range(DRAWS):
        k, p = 0, np.float32(f32(math.exp(3.5)))
        while True:
            k += 1
            p = np.float32(p * np.float32(uni()))
            if not p > 1.0:
                break
        pois.append(k - 1)
    out["poisson"] = pois
    return out


GENERATORS = {"xorwow": Xorwow, "philox": Philox, "mrg": Mrg32k3a}


# --- the device API -------------------------------------------------------------------------


def _parse(stdout: str) -> dict[str, list[str]]:
    return {name: values for name, *values in (line.split() for line in stdout.splitlines() if line.strip())}


@functools.lru_cache(None)
def _run(name: str, cache_dir: str) -> dict[str, list[str]]:
    backend = CpuBackend(cache=BuildCache(Path(cache_dir)), schedules=["forward"], race=False)
    res = run_program(Program(source=(PROGRAMS / name).read_text()), backend)
    assert res.status == Status.PASSED, (res.reason, res.compile.diagnostics[-2000:])
    return _parse(res.outcome.stdout)


@pytest.fixture(scope="module")
def device(tmp_path_factory) -> dict[str, list[str]]:
    return _run("curand_device.cu", str(tmp_path_factory.mktemp("curand")))


@pytest.fixture(scope="module")
def host(tmp_path_factory) -> dict[str, list[str]]:
    return _run("curand_host.cu", str(tmp_path_factory.mktemp("curand_host")))


@pytest.mark.parametrize("kind", GENERATORS)
def test_device_bits_per_subsequence_and_offset(device, kind):
    for offset, name in ((0, f"{kind}_bits"), (17, f"{kind}_bits_off17")):
        got = [int(v) for v in device[name]]
        for t in range(THREADS):
            g = GENERATORS[kind](SEED, t, offset)
            assert got[t * DRAWS : (t + 1) * DRAWS] == [g.next() for _ in range(DRAWS)], (name, t)


def test_device_xorwow_offsets_stepped(device):
    # The reference's GF(2) jump agrees with stepping, Weyl word included.
    a, b = Xorwow(SEED, 0, 1000, stepped=True), Xorwow(SEED, 0, 1000)
    assert (a.v, a.d) == (b.v, b.d)
    # Offset 17 by plain stepping: independent of any jump table.
    g = Xorwow(SEED, 0, 17, stepped=True)
    assert [int(v) for v in device["xorwow_bits_off17"][:DRAWS]] == [g.next() for _ in range(DRAWS)]


@pytest.mark.parametrize("kind", GENERATORS)
def test_device_skipahead(device, kind):
    # skipahead_sequence(3) then skipahead(1000003): MRG32k3a's sequences are 2^127 values, not
    # curand_init's 2^76-value subsequences.
    make = (lambda off: Mrg32k3a(SEED, 0, off, sequence=3)) if kind == "mrg" else (
        lambda off: GENERATORS[kind](SEED, 3, off))
    first = make(1000003).next()
    g2 = make(1000003 + 1 + (1 << 40) + 7)
    assert [int(v) for v in device[f"{kind}_skips"]] == [first, g2.next()]


@pytest.mark.parametrize("kind", GENERATORS)
def test_device_distributions(device, kind):
    for t in range(THREADS):
        expected = draws(kind, GENERATORS[kind](SEED, t, 0))
        for what, values in expected.items():
            got = [float(v) for v in device[f"{kind}_{what}"][t * DRAWS : (t + 1) * DRAWS]]
            if what in ("uniform", "uniform_double", "poisson"):
                assert got == values, (kind, what, t)
            else:  # through logf and sincos: the GPU's math library is not the host's
                rtol = 1e-12 if what == "normal_double" else 2e-6
                np.testing.assert_allclose(got, values, rtol=rtol, atol=rtol, err_msg=f"{kind} {what} {t}")


def test_device_philox_vectors_and_known_answers(device):
    # The reference against Random123's kat_vectors (philox4x32 10: counter, key -> output).
    assert philox4x32_10([0] * 4, [0, 0]) == [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]
    pi = philox4x32_10([0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344], [0xA4093822, 0x299F31D0])
    assert pi == [0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1]
    # L'Ecuyer's MRG32k3a from its default seed (12345 x 6) starts with 0.1270111220...
    assert Mrg32k3a(0).step() / (MRG_M1 + 1) == pytest.approx(0.127011122046577, rel=1e-12)
    g = Philox(SEED, 5, 2)
    bits = g.next4()
    uni = [uniform(x) for x in g.next4()]
    x = g.next4()
    nrm = [*box_muller(x[0], x[1]), *box_muller(x[2], x[3])]
    bits += g.next4()
    assert [int(v) for v in device["philox_curand4"]] == bits
    assert [float(v) for v in device["philox_uniform4"]] == uni
    np.testing.assert_allclose([float(v) for v in device["philox_normal4"]], nrm, rtol=2e-6, atol=2e-6)
    assert [int(v) for v in device["philox_kat"]] == [
        0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8,
        0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1,
        0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD,
    ]  # fmt: skip
    assert float(device["mrg_default_seed"][0]) == pytest.approx(0.127011122046577, rel=1e-8)


def test_device_state_sizes_match_curand(device):
    # cuRAND's states are 48, 64 and 48 bytes: buffers sized with sizeof hold the same count.
    assert device["sizes"] == ["48", "64", "48"]


# --- the host API ---------------------------------------------------------------------------


@pytest.mark.parametrize("kind", GENERATORS)
def test_host_api_one_sequence_from_seed_and_offset(host, kind):
    g = GENERATORS[kind](1234, 0, 5)
    n = 8
    assert [int(v) for v in host[f"{kind}_bits"]] == [g.next() for _ in range(n)]
    if kind == "mrg":
        uni = [f32(g.step() * 2.3283065498378288e-10) for _ in range(n)]
        unid = [g.step() * 2.3283065498378288e-10 for _ in range(n)]
    else:
        uni = [uniform(g.next()) for _ in range(n)]
        unid = (
            [uniform_hq(g.next(), g.next()) for _ in range(n)]
            if kind == "xorwow"
            else [fma(float(g.next()), 2.0**-32, 2.0**-32) for _ in range(n)]
        )
    assert [float(v) for v in host[f"{kind}_uniform"]] == uni
    assert [float(v) for v in host[f"{kind}_uniform_double"]] == unid
    assert [float(v) for v in host[f"{kind}_twice"]] == [2 * u for u in uni]
    normals = [float(v) for v in host[f"{kind}_normal"]]
    assert len(normals) == n and abs(np.mean(normals) - 1.0) < 3.0
