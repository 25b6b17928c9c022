// Device intrinsics at the edges of their inputs, with the values a GPU computes (PTX ISA, CUDA
// Math API): each line that differs is printed, PASS when none does. Inputs come from device
// memory so that g++ cannot fold them.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <climits>

struct In {
  float nan, inf, one, three, m1, big3e9, big5e9, e19, p127, tiny, onep, e6, f[4];
  double dnan, dm1, d1e10, d1e19, dpoint1, d[4];
  int imin, imax, zero;
  unsigned umax;
  unsigned long long ullmax;
};

__device__ int fails;

__device__ bool same(double a, double b) {
  return (a != a && b != b) || __double_as_longlong(a) == __double_as_longlong(b);
}
__device__ void check_i(const char* name, unsigned long long got, unsigned long long want) {
  if (got != want) { atomicAdd(&fails, 1); printf("%s: 0x%llx, GPU 0x%llx\n", name, got, want); }
}
__device__ void check_f(const char* name, double got, double want) {
  if (!same(got, want)) { atomicAdd(&fails, 1); printf("%s: %.17g, GPU %.17g\n", name, got, want); }
}
#define I(EXPR, WANT) check_i(#EXPR, (unsigned long long)(EXPR), (unsigned long long)(WANT))
#define F(EXPR, WANT) check_f(#EXPR, (double)(EXPR), (double)(WANT))

__global__ void edges(const In* p) {
  const In& in = *p;
  // cvt to an integer saturates; NaN gives 0, or 1 << (width - 1) from a double or to 64 bits.
  I(__float2int_rn(in.nan), 0);
  I(__float2int_ru(in.big3e9), INT_MAX);
  I(__float2int_rz(-in.big3e9), INT_MIN);
  I(__float2uint_rn(in.m1), 0u);
  I(__float2uint_rz(in.big5e9), UINT_MAX);
  I(__float2ll_rz(in.e19), LLONG_MAX);
  I(__float2ll_rn(in.nan), LLONG_MIN);
  I(__float2ull_rn(in.m1), 0ull);
  I(__float2ull_rn(in.nan), 0x8000000000000000ull);
  I(__double2int_rn(in.dnan), INT_MIN);
  I(__double2int_rz(in.d1e10), INT_MAX);
  I(__double2uint_rn(in.dnan), 0x80000000u);
  I(__double2uint_rn(in.dm1), 0u);
  I(__double2ll_rz(in.d1e19), LLONG_MAX);
  I(__double2ull_rn(in.dm1), 0ull);
  // div.approx: the reciprocal of |y| in (2^126, 2^128) is flushed to zero.
  F(__fdividef(in.one, in.p127), 0.0f);
  F(__fdividef(in.inf, in.p127), NAN);
  // x reduced before the multiply by pi.
  F(sinpif(in.e6), 0.0f);
  F(cospif(in.e6), 1.0f);
  F(sinpi((double)in.e6 * 1e9), 0.0);
  // Directed rounding.
  F(__fadd_ru(in.one, in.tiny), 1.00000012f);
  F(__fadd_rd(in.one, -in.one), -0.0f);
  F(__fmul_rd(in.onep, 2.0f - in.onep), 0.99999994f);
  F(__fdiv_rd(in.one, in.three), 0.333333313f);
  F(__fsqrt_ru(2.0f * in.one), 1.41421366f);
  F(__fmaf_ru(in.one, in.one, in.tiny), 1.00000012f);
  F(__frcp_rz(in.three), 0.333333313f);
  F(__frsqrt_rn(in.onep), 0.99999994f);
  F(__dadd_ru((double)in.one, 1e-20), 1.0000000000000002);
  F(__ddiv_rd((double)in.one, 3.0), 0.33333333333333331);
  F(__fma_rd(-(double)in.one, 1.0, -1e-30), -1.0000000000000002);
  F(__double2float_rd(in.dpoint1), 0.099999994f);
  F(__uint2float_rd(in.umax), 4294967040.0f);
  F(__ull2float_rz(in.ullmax), 18446742974197923840.0f);
  // _rn arithmetic is never contracted into an FMA.
  F(__fmul_rn(in.f[0], in.f[1]) - __fmul_rn(in.f[2], in.f[3]), 0.0f);
  F(__fadd_rn(in.f[0] * in.f[1], -__fmul_rn(in.f[2], in.f[3])), 0.0f);
  F(__dmul_rn(in.d[0], in.d[1]) - __dmul_rn(in.d[2], in.d[3]), 0.0);
  // Wrapping, not signed overflow.
  I(__sad(in.imax, in.imin, 0u), 0xFFFFFFFFu);
}

int main() {
  In h;
  h.nan = NAN; h.inf = INFINITY; h.one = 1.0f; h.three = 3.0f; h.m1 = -1.0f; h.big3e9 = 3e9f;
  h.big5e9 = 5e9f; h.e19 = 1e19f; h.p127 = 0x1p127f; h.tiny = 1e-10f; h.onep = 1.0f + 0x1p-23f;
  h.e6 = 1e6f;
  h.dnan = NAN; h.dm1 = -1.0; h.d1e10 = 1e10; h.d1e19 = 1e19; h.dpoint1 = 0.1;
  for (int i = 0; i < 4; ++i) { h.f[i] = 1.000244140625f; h.d[i] = 1.000244140625; }
  h.imin = INT_MIN; h.imax = INT_MAX; h.zero = 0; h.umax = UINT_MAX; h.ullmax = ULLONG_MAX;
  In* d;
  cudaMalloc(&d, sizeof(In));
  cudaMemcpy(d, &h, sizeof(In), cudaMemcpyHostToDevice);
  edges<<<1, 1>>>(d);
  cudaDeviceSynchronize();
  int f = -1;
  cudaMemcpyFromSymbol(&f, fails, sizeof f);
  printf(f == 0 ? "PASS\n" : "FAIL: %d\n", f);
  return f != 0;
}
