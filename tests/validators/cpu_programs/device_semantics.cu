// Part 3 (`divisions`): integer division and remainder by zero, and of the most negative value by
// -1, do not stop the program (x86: SIGFPE): a GPU has no divide instruction to trap. The values
// are CUDA's undefined ones a GPU gives (all ones; the dividend; wrapped; 0), each said once.
//
// Part 4 (`implicit_conversions`): the same conversions where no cast is written: a variable's
// initialiser, an assignment to an int member or element, a device function's `return`, through
// a typedef of float and a template's T, an argument to an int parameter, and targets named by
// an alias (glibc's `uint`, a typedef).
//
// Part 5 (`compound_conversions`): an integer's compound assignment of a float (`i += f`, `-=`,
// `*=`, `/=`; to a name, a member, a 64-bit name) converts its result as PTX's cvt.rzi does.
//
// Part 2 (`conversions`): explicit float-to-integer casts of device code convert as PTX's cvt.rzi
// does: toward zero, saturated to the type's range, NaN to 0 (x86: INT_MIN for both, and
// float-to-unsigned wraps through a 64-bit conversion).
//
// Device shifts by a run-time amount mean what PTX's shl/shr mean: the amount clamps to the
// width, so a shift by the width or more gives 0 (a signed right shift, the sign). x86 masks the
// amount (x << 32 == x), and Rodinia's huffman, packing `dw << (32 - bit)` with bit == 0,
// computed a wrong answer that its exit code did not report. The constructs around the shifts
// must still build as nvcc builds them: constant expressions, compound shifts (volatile, bit-field),
// a class's own operator<<, templates, device lambdas, barriers (a lockstep copy).
#include <cstdio>
#include <cstdint>
#include <iostream>

struct Bits {
  unsigned lo : 12;
  unsigned hi : 20;
};

struct Packer {  // a class with its own shift: still gets the number
  unsigned long long acc = 0;
  __device__ Packer& operator<<(int v) { acc = acc * 10 + v; return *this; }
};

template <int N> __device__ unsigned low_mask() {
  constexpr unsigned m = (1u << N) - 1u;  // constant expression: still one
  static_assert(((1u << N) >> N) == 1u, "constexpr shifts");
  return m;
}

// Host-only stream output in a __host__ __device__ function: `<< std::endl` is not a shift.
__host__ __device__ unsigned logged_shl(unsigned x, int s) {
#ifndef __CUDA_ARCH__
  std::cerr << "logged_shl " << x << std::endl;
#endif
  return x << s;
}

__host__ __device__ inline unsigned rotl(unsigned x, int r) { return (x << r) | (x >> (32 - r)); }

__global__ void shifts(const unsigned *in, const int *amt, long long *out) {
  __shared__ unsigned tile[1 << 5];
  int i = threadIdx.x;
  tile[i] = in[i % 4];
  __syncthreads();  // a barrier: the kernel gets a lockstep copy, which must carry the clamp
  unsigned x = tile[i];
  int b = amt[i % 8];
  long long *o = out + 16 * i;
  o[0] = x << (32 - b);
  o[1] = x >> (32 - b);
  int s = -(int)x;
  o[2] = s >> (32 - b);  // signed: sign fill
  unsigned long long w = x;
  o[3] = (long long)(w << (64 - 2 * b));
  volatile unsigned v = x;
  v <<= 32 - b;
  o[4] = v;
  unsigned c = x;
  c >>= (unsigned)(32 - b);
  o[5] = c;
  Bits bits{5, 7};
  bits.hi <<= b;  // a bit-field: keeps its own (x86) meaning, but builds
  o[6] = bits.hi;
  Packer p;
  p << b << 3;
  o[7] = (long long)p.acc;
  auto shl = [=] __device__ (unsigned y) { return y << (32 - b); };
  o[8] = shl(x);
  o[9] = low_mask<5>();
  o[10] = rotl(x, b);  // rotation by 0: both halves agree on every machine
  unsigned char ch = 0x81;
  o[11] = ch << (b + 24);  // promoted to int: b = 0 gives 0x81000000 as an int
  o[12] = x << (b - 40);  // a negative amount, read unsigned, clamps: 0
  o[13] = x << (b ? 1 : 2) << (b ? 1 : 2);  // chained
  o[14] = (x >> (b >> 1)) & 0xff;  // nested
}

struct Holder {
  unsigned bits : 7;
  __device__ operator int() const { return 42; }
};

__global__ void conversions(const float *f, const double *d, long long *out, int n) {
  int i = threadIdx.x;
  if (i >= n) return;
  long long *o = out + 8 * i;
  float x = f[i];
  o[0] = (int)x;
  o[1] = (unsigned)x;
  o[2] = static_cast<long long>(d[i]);
  o[3] = (long long)(unsigned long long)(d[i]);
  o[4] = int(x * 2.0f);
  Holder h{5};
  o[5] = (int)h + (int)h.bits;  // a class's conversion, a bit-field: still casts
  o[6] = (int64_t)(x);
  o[7] = (int)(unsigned)(x);
}

typedef float real;
typedef unsigned int count_t;  // and glibc's `uint` (<sys/types.h>)
struct Bin {
  int idx;
  unsigned count;
};

__device__ int twice_as_int(float v) { return v * 2.0f; }

__device__ long long widened(int v) { return v; }

template <typename T> __device__ void store(int *dst, const T *v, int i) { dst[i] = v[i]; }

__global__ void implicit_conversions(const float *f, long long *out, int *elems, int n) {
  int i = threadIdx.x;
  if (i >= n) return;
  long long *o = out + 6 * i;
  real x = f[i];
  int a = x;
  unsigned u = x;
  Bin bin;
  bin.idx = x;
  bin.count = f[i];
  o[0] = a;
  o[1] = u;
  o[2] = (long long)bin.idx - bin.idx + bin.count;
  o[3] = twice_as_int(x);
  uint by_libc = x;
  count_t by_typedef = f[i];
  o[4] = by_libc;
  o[5] = by_typedef;
  elems[2 * n + i] = widened(x);
  elems[i] = bin.idx;
  store(elems + n, f, i);
}

__global__ void compound_conversions(const float *f, long long *out, int n) {
  int i = threadIdx.x;
  if (i >= n) return;
  long long *o = out + 5 * i;
  int a = 1;
  a += f[i];
  unsigned u = 5;
  u *= f[i];
  Bin bin;
  bin.idx = 0;
  bin.idx -= f[i];
  int d = 7;
  d /= f[i];
  long long l = 0;
  l += f[i] * 2.0;
  o[0] = a;
  o[1] = u;
  o[2] = bin.idx;
  o[3] = d;
  o[4] = l;
}

__global__ void divisions(const int *num, const int *den, long long *out, int n) {
  int i = threadIdx.x;
  if (i >= n) return;
  long long *o = out + 6 * i;
  int a = num[i], b = den[i];
  unsigned ua = (unsigned)a, ub = (unsigned)b;
  o[0] = a / b;
  o[1] = a % b;
  o[2] = ua / ub;
  o[3] = ua % ub;
  int c = a;
  c /= b;
  o[4] = c;
  float f = 1.0f;
  o[5] = (long long)(f / b * 2.0f);  // a float divided by an int: IEEE's (1/0 is inf)
}

int main() {
  const int threads = 8;
  unsigned h_in[4] = {0xdeadbeefu, 0x12345678u, 0xffffffffu, 1u};
  int h_amt[8] = {0, 0, 4, 31, 1, 16, 0, 8};
  unsigned *d_in;
  int *d_amt;
  long long *d_out, h_out[16 * threads] = {0};
  cudaMalloc(&d_in, sizeof h_in);
  cudaMalloc(&d_amt, sizeof h_amt);
  cudaMalloc(&d_out, sizeof h_out);
  cudaMemset(d_out, 0, sizeof h_out);
  cudaMemcpy(d_in, h_in, sizeof h_in, cudaMemcpyHostToDevice);
  cudaMemcpy(d_amt, h_amt, sizeof h_amt, cudaMemcpyHostToDevice);
  shifts<<<1, threads>>>(d_in, d_amt, d_out);
  cudaMemcpy(h_out, d_out, sizeof h_out, cudaMemcpyDeviceToHost);
  int bad = logged_shl(1u, 3) != 8u;
  for (int i = 0; i < threads; i++) {
    unsigned x = h_in[i % 4];
    int b = h_amt[i % 8];
    unsigned n = 32 - b;
    long long *o = h_out + 16 * i;
    // What a GPU gives (PTX: amounts of the width or more clamp).
    long long want[15] = {
        n >= 32 ? 0 : (long long)(unsigned)(x << n),
        n >= 32 ? 0 : (long long)(x >> n),
        n >= 32 ? ((int)-(int)x < 0 ? -1 : 0) : (long long)((int)-(int)x >> n),
        (64 - 2 * b) >= 64 ? 0 : (long long)((unsigned long long)x << (64 - 2 * b)),
        n >= 32 ? 0 : (long long)(unsigned)(x << n),
        n >= 32 ? 0 : (long long)(x >> n),
        (long long)((7u << (b & 31)) & 0xfffffu),
        (long long)b * 10 + 3,
        n >= 32 ? 0 : (long long)(unsigned)(x << n),
        31,
        (long long)(b == 0 ? x : ((x << b) | (x >> (32 - b)))),
        b + 24 >= 32 ? 0 : (long long)(int)((unsigned)0x81 << (b + 24)),
        0,
        (long long)(unsigned)(x << (b ? 2 : 4)),
        (long long)((x >> (b >> 1)) & 0xff),
    };
    for (int k = 0; k < 15; k++)
      if (o[k] != want[k]) {
        printf("thread %d check %d: %llx, a GPU gives %llx\n", i, k, (unsigned long long)o[k],
               (unsigned long long)want[k]);
        bad++;
      }
  }
  {
    const int n = 8;
    const float nan = nanf("");
    float hf[n] = {nan, -1.0f, 3e9f, -3e9f, 5e9f, 2.75f, -2.75f, 1e20f};
    double hd[n] = {(double)nan, -1.0, 1e19, -1e19, 3e19, 2.5, -0.5, 1e300};
    float *df;
    double *dd;
    long long *dout, hout[8 * n];
    cudaMalloc(&df, sizeof hf);
    cudaMalloc(&dd, sizeof hd);
    cudaMalloc(&dout, sizeof hout);
    cudaMemcpy(df, hf, sizeof hf, cudaMemcpyHostToDevice);
    cudaMemcpy(dd, hd, sizeof hd, cudaMemcpyHostToDevice);
    conversions<<<1, n>>>(df, dd, dout, n);
    cudaMemcpy(hout, dout, sizeof hout, cudaMemcpyDeviceToHost);
    const long long IMAX = 2147483647LL, IMIN = -2147483648LL, UMAX = 4294967295LL;
    const long long LMAX = 9223372036854775807LL, LMIN = -LMAX - 1;
    // What cvt.rzi gives: NaN -> 0, saturated, toward zero.
    long long want[n][8] = {
        {0, 0, LMIN, LMIN, 0, 47, LMIN, 0},  // NaN: 0 from a float to 32 bits, else the top bit
        {-1, 0, -1, 0, -2, 47, -1, 0},
        {IMAX, 3000000000LL, LMAX, 0 /* below */, IMAX, 47, 3000000000LL, -1294967296LL},
        {IMIN, 0, LMIN, 0, IMIN, 47, -3000000000LL, 0},
        {IMAX, UMAX, LMAX, -1, IMAX, 47, 5000000000LL, -1},
        {2, 2, 2, 2, 5, 47, 2, 2},
        {-2, 0, 0, 0, -5, 47, -2, 0},
        {IMAX, UMAX, LMAX, -1, IMAX, 47, LMAX, -1},
    };
    want[2][3] = (long long)10000000000000000000ULL;  // 1e19 fits a u64; as a signed one, wraps
    for (int i = 0; i < n; i++)
      for (int k = 0; k < 8; k++)
        if (hout[8 * i + k] != want[i][k]) {
          printf("conversion %d of value %d: %lld, a GPU gives %lld\n", k, i, hout[8 * i + k], want[i][k]);
          bad++;
        }
  }
  {
    const int n = 4;
    int hn[n] = {7, -7, (int)0x80000000, 9}, hd[n] = {0, 0, -1, 2};
    int *dn, *dd;
    long long *dout, hout[6 * n];
    cudaMalloc(&dn, sizeof hn);
    cudaMalloc(&dd, sizeof hd);
    cudaMalloc(&dout, sizeof hout);
    cudaMemcpy(dn, hn, sizeof hn, cudaMemcpyHostToDevice);
    cudaMemcpy(dd, hd, sizeof hd, cudaMemcpyHostToDevice);
    divisions<<<1, n>>>(dn, dd, dout, n);
    if (cudaDeviceSynchronize() != cudaSuccess) bad++;
    cudaMemcpy(hout, dout, sizeof hout, cudaMemcpyDeviceToHost);
    const long long INF_AS_LL = (long long)0x7fffffffffffffffLL;  // inf saturates (cvt.rzi)
    long long want[n][6] = {
        {-1, 7, 0xffffffffLL, 7, -1, INF_AS_LL},
        {-1, -7, 0xffffffffLL, 0xfffffff9LL, -1, INF_AS_LL},
        {(int)0x80000000, 0, 0, 0x80000000LL, (int)0x80000000, -2},
        {4, 1, 4, 1, 4, 1},
    };
    for (int i = 0; i < n; i++)
      for (int k = 0; k < 6; k++)
        if (hout[6 * i + k] != want[i][k]) {
          printf("division %d of pair %d: %lld, a GPU gives %lld\n", k, i, hout[6 * i + k], want[i][k]);
          bad++;
        }
  }
  {
    const int n = 8;
    const float nan = nanf("");
    float hf[n] = {nan, -1.0f, 3e9f, -3e9f, 5e9f, 2.75f, -2.75f, 1e20f};
    float *df;
    long long *dout, hout[6 * n];
    int *delems, helems[3 * n];
    cudaMalloc(&df, sizeof hf);
    cudaMalloc(&dout, sizeof hout);
    cudaMalloc(&delems, sizeof helems);
    cudaMemcpy(df, hf, sizeof hf, cudaMemcpyHostToDevice);
    implicit_conversions<<<1, n>>>(df, dout, delems, n);
    cudaMemcpy(hout, dout, sizeof hout, cudaMemcpyDeviceToHost);
    cudaMemcpy(helems, delems, sizeof helems, cudaMemcpyDeviceToHost);
    const long long IMAX = 2147483647LL, IMIN = -2147483648LL, UMAX = 4294967295LL;
    const long long as_int[n] = {0, -1, IMAX, IMIN, IMAX, 2, -2, IMAX};
    const long long as_unsigned[n] = {0, 0, 3000000000LL, 0, UMAX, 2, 0, UMAX};
    const long long twice[n] = {0, -2, IMAX, IMIN, IMAX, 5, -5, IMAX};
    for (int i = 0; i < n; i++) {
      long long want[6] = {as_int[i], as_unsigned[i], as_unsigned[i], twice[i], as_unsigned[i], as_unsigned[i]};
      for (int k = 0; k < 6; k++)
        if (hout[6 * i + k] != want[k]) {
          printf("implicit conversion %d of value %d: %lld, a GPU gives %lld\n", k, i, hout[6 * i + k], want[k]);
          bad++;
        }
      for (int k = 0; k < 3; k++)
        if (helems[k * n + i] != as_int[i]) {
          printf("implicit conversion to an element %d of value %d: %d, a GPU gives %lld\n", k, i,
                 helems[k * n + i], as_int[i]);
          bad++;
        }
    }
    compound_conversions<<<1, n>>>(df, dout, n);
    cudaMemcpy(hout, dout, sizeof hout, cudaMemcpyDeviceToHost);
    const long long LMIN = (long long)(1ULL << 63), LMAX = 9223372036854775807LL;
    const long long compound[n][5] = {
        {0, 0, 0, 0, LMIN},           {0, 0, 1, -7, -2},         {IMAX, UMAX, IMIN, 0, 6000000000LL},
        {IMIN, 0, IMAX, 0, -6000000000LL}, {IMAX, UMAX, IMIN, 0, 10000000000LL}, {3, 13, -2, 2, 5},
        {-1, 0, 2, -2, -5},           {IMAX, UMAX, IMIN, 0, LMAX}};
    for (int i = 0; i < n; i++)
      for (int k = 0; k < 5; k++)
        if (hout[5 * i + k] != compound[i][k]) {
          printf("compound conversion %d of value %d: %lld, a GPU gives %lld\n", k, i, hout[5 * i + k], compound[i][k]);
          bad++;
        }
  }
  printf(bad ? "FAIL\n" : "PASS\n");
  return bad != 0;
}
