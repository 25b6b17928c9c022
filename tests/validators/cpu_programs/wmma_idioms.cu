// WMMA idioms seen in the wild, each checked against a plain host loop (exact integer or small
// integer-valued data, so any layout or indexing error shows): bare names through
// `using namespace nvcuda::wmma`, int8 inputs with an int accumulator (m32n8k16), m8n32k16 with
// a __half accumulator stored to half*, arrays of fragments, tiles staged in __shared__ memory
// between __syncthreads (no __align__), two warps per block, and mma_sync's satf argument
// (an overflowing __half result becomes 65504 instead of inf). Prints one "name ok|bad" line per check.
#include <cstdio>
#include <cuda_fp16.h>
#include <mma.h>
using namespace nvcuda::wmma;

#define MT 64
#define NT 32
#define KT 32

// int8: C (MT x NT, int) = A (MT x KT, row-major) @ B (KT x NT, col-major); m32n8k16.
__global__ void int8_gemm(const signed char* a, const signed char* b, int* c) {
  int warp = threadIdx.x / 32 + blockIdx.x * (blockDim.x / 32);
  int tiles_n = NT / 8;
  int row = (warp / tiles_n) * 32, col = (warp % tiles_n) * 8;
  fragment<matrix_a, 32, 8, 16, signed char, row_major> af[KT / 16];
  fragment<matrix_b, 32, 8, 16, signed char, col_major> bf[KT / 16];
  fragment<accumulator, 32, 8, 16, int> acc;
  fill_fragment(acc, 0);
  for (int s = 0; s < KT / 16; s++) {
    load_matrix_sync(af[s], a + row * KT + s * 16, KT);
    load_matrix_sync(bf[s], b + col * KT + s * 16, KT);
  }
  for (int s = 0; s < KT / 16; s++) mma_sync(acc, af[s], bf[s], acc);
  store_matrix_sync(c + row * NT + col, acc, NT, mem_row_major);
}

// half: C (MT x NT, half) = A @ B with tiles staged in shared memory; m8n32k16, half acc.
__global__ void half_staged(const half* a, const half* b, half* c) {
  __shared__ half sa[2][8 * 16];
  __shared__ half sb[16 * 32];
  int w = threadIdx.x / 32;
  int row = (blockIdx.x * 2 + w) * 8;
  fragment<accumulator, 8, 32, 16, half> acc;
  fill_fragment(acc, __float2half(0.0f));
  for (int k = 0; k < KT; k += 16) {
    for (int i = threadIdx.x % 32; i < 8 * 16; i += 32) sa[w][i] = a[(row + i / 16) * KT + k + i % 16];
    for (int i = threadIdx.x; i < 16 * 32; i += blockDim.x) sb[i] = b[(k + i / 32) * NT + i % 32];
    __syncthreads();
    fragment<matrix_a, 8, 32, 16, half, row_major> af;
    fragment<matrix_b, 8, 32, 16, half, row_major> bf;
    load_matrix_sync(af, sa[w], 16);
    load_matrix_sync(bf, sb, 32);
    mma_sync(acc, af, bf, acc);
    __syncthreads();
  }
  for (int i = 0; i < acc.num_elements; i++) acc.x[i] = __hmul(acc.x[i], __float2half(2.0f));
  store_matrix_sync(c + row * NT, acc, NT, mem_row_major);
}

// 16 products of 256 * 256 overflow half: inf, or the largest half (65504) with satf.
__global__ void satf(float* out) {
  fragment<matrix_a, 16, 16, 16, half, row_major> af;
  fragment<matrix_b, 16, 16, 16, half, col_major> bf;
  fragment<accumulator, 16, 16, 16, half> acc, sat;
  fill_fragment(af, 256.0f);
  fill_fragment(bf, 256.0f);
  fill_fragment(acc, 0.0f);
  mma_sync(sat, af, bf, acc, true);
  mma_sync(acc, af, bf, acc);
  if (threadIdx.x == 0) {
    out[0] = __half2float(acc.x[0]);
    out[1] = __half2float(sat.x[sat.num_elements - 1]);
  }
}

int main() {
  static signed char a8[MT * KT], b8[NT * KT];
  static half ah[MT * KT], bh[KT * NT], ch[MT * NT];
  static int c8[MT * NT];
  for (int i = 0; i < MT * KT; i++) {
    a8[i] = (signed char)((i * 37) % 255 - 127);
    ah[i] = __float2half((float)((i * 7) % 9 - 4));
  }
  for (int i = 0; i < NT * KT; i++) {
    b8[i] = (signed char)((i * 53) % 251 - 125);
    bh[i] = __float2half((float)((i * 5) % 7 - 3));
  }
  signed char *da8, *db8;
  int* dc8;
  half *dah, *dbh, *dch;
  cudaMalloc(&da8, sizeof a8);
  cudaMalloc(&db8, sizeof b8);
  cudaMalloc(&dc8, sizeof c8);
  cudaMalloc(&dah, sizeof ah);
  cudaMalloc(&dbh, sizeof bh);
  cudaMalloc(&dch, sizeof ch);
  cudaMemcpy(da8, a8, sizeof a8, cudaMemcpyHostToDevice);
  cudaMemcpy(db8, b8, sizeof b8, cudaMemcpyHostToDevice);
  cudaMemcpy(dah, ah, sizeof ah, cudaMemcpyHostToDevice);
  cudaMemcpy(dbh, bh, sizeof bh, cudaMemcpyHostToDevice);
  int8_gemm<<<(MT / 32) * (NT / 8) / 2, 64>>>(da8, db8, dc8);
  half_staged<<<MT / 16, 64>>>(dah, dbh, dch);
  float* dsat;
  cudaMallocManaged(&dsat, 2 * sizeof(float));
  satf<<<1, 32>>>(dsat);
  if (cudaDeviceSynchronize() != cudaSuccess) return 1;
  cudaMemcpy(c8, dc8, sizeof c8, cudaMemcpyDeviceToHost);
  cudaMemcpy(ch, dch, sizeof ch, cudaMemcpyDeviceToHost);
  int bad8 = 0, badh = 0;
  for (int i = 0; i < MT; i++)
    for (int j = 0; j < NT; j++) {
      int s = 0;
      float h = 0;
      for (int k = 0; k < KT; k++) {
        s += a8[i * KT + k] * b8[j * KT + k];
        h += __half2float(ah[i * KT + k]) * __half2float(bh[k * NT + j]);
      }
      bad8 += c8[i * NT + j] != s;
      badh += __half2float(ch[i * NT + j]) != 2 * h;  // small integers: exact in half
    }
  printf("int8_m32n8k16 %s\n", bad8 ? "bad" : "ok");
  printf("half_m8n32k16_staged %s\n", badh ? "bad" : "ok");
  printf("satf %s\n", dsat[0] > 1e30f && dsat[1] == 65504.0f ? "ok" : "bad");
  return 0;
}
