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
  printf(bad ? "FAIL\n" : "PASS\n");
  return bad != 0;
}
