// WMMA with tf32 (m16n16k8, float storage, inputs rounded with __float_to_tf32 after the load,
// as CUDA's tf32 sample does) and double (m8n8k4). D = A @ B and E = A @ B in double, row-major,
// one warp per output tile. A: M x K, B: K x N (float32 files); D, E: M x N (float32, float64).
#include <cstdio>
#include <vector>
#include <mma.h>
using namespace nvcuda;

#ifndef M
#define M 32
#endif
#ifndef N
#define N 48
#endif
#ifndef K
#define K 24
#endif

__global__ void gemm_tf32(const float* a, const float* b, float* d) {
  int row = blockIdx.y * 16, col = blockIdx.x * 16;
  wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> af;
  wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> bf;
  wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc;
  wmma::fill_fragment(acc, 0.0f);
  for (int k = 0; k < K; k += 8) {
    wmma::load_matrix_sync(af, a + row * K + k, K);
    wmma::load_matrix_sync(bf, b + k * N + col, N);
    for (int t = 0; t < af.num_elements; t++) af.x[t] = wmma::__float_to_tf32(af.x[t]);
    for (int t = 0; t < bf.num_elements; t++) bf.x[t] = wmma::__float_to_tf32(bf.x[t]);
    wmma::mma_sync(acc, af, bf, acc);
  }
  wmma::store_matrix_sync(d + row * N + col, acc, N, wmma::mem_row_major);
}

__global__ void gemm_f64(const double* a, const double* b, double* e) {
  int row = blockIdx.y * 8, col = blockIdx.x * 8;
  wmma::fragment<wmma::matrix_a, 8, 8, 4, double, wmma::row_major> af;
  wmma::fragment<wmma::matrix_b, 8, 8, 4, double, wmma::col_major> bf;  // B^T is row-major
  wmma::fragment<wmma::accumulator, 8, 8, 4, double> acc;
  wmma::fill_fragment(acc, 0.0);
  for (int k = 0; k < K; k += 4) {
    wmma::load_matrix_sync(af, a + row * K + k, K);
    wmma::load_matrix_sync(bf, b + col * K + k, K);
    wmma::mma_sync(acc, af, bf, acc);
  }
  // Stored column-major into E^T's place: E is read back transposed on the host.
  wmma::store_matrix_sync(e + col * M + row, acc, M, wmma::mem_col_major);
}

int main() {
  std::vector<float> a(M * K), b(K * N), d(M * N);
  FILE* f = fopen("data/a.bin", "rb");
  if (!f || fread(a.data(), 4, a.size(), f) != a.size()) return 1;
  fclose(f);
  f = fopen("data/b.bin", "rb");
  if (!f || fread(b.data(), 4, b.size(), f) != b.size()) return 1;
  fclose(f);
  std::vector<double> ad(a.begin(), a.end()), btd(K * N), et(M * N), e(M * N);
  for (int r = 0; r < K; r++)
    for (int c = 0; c < N; c++) btd[c * K + r] = b[r * N + c];
  float *da, *db, *dd;
  double *dad, *dbd, *de;
  cudaMalloc(&da, a.size() * 4);
  cudaMalloc(&db, b.size() * 4);
  cudaMalloc(&dd, d.size() * 4);
  cudaMalloc(&dad, ad.size() * 8);
  cudaMalloc(&dbd, btd.size() * 8);
  cudaMalloc(&de, et.size() * 8);
  cudaMemcpy(da, a.data(), a.size() * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(db, b.data(), b.size() * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(dad, ad.data(), ad.size() * 8, cudaMemcpyHostToDevice);
  cudaMemcpy(dbd, btd.data(), btd.size() * 8, cudaMemcpyHostToDevice);
  gemm_tf32<<<dim3(N / 16, M / 16), 32>>>(da, db, dd);
  gemm_f64<<<dim3(N / 8, M / 8), 32>>>(dad, dbd, de);
  if (cudaDeviceSynchronize() != cudaSuccess) return 1;
  cudaMemcpy(d.data(), dd, d.size() * 4, cudaMemcpyDeviceToHost);
  cudaMemcpy(et.data(), de, et.size() * 8, cudaMemcpyDeviceToHost);
  for (int r = 0; r < M; r++)
    for (int c = 0; c < N; c++) e[r * N + c] = et[c * M + r];
  f = fopen("data/d.bin", "wb");
  if (!f || fwrite(d.data(), 4, d.size(), f) != d.size()) return 1;
  fclose(f);
  f = fopen("data/e.bin", "wb");
  if (!f || fwrite(e.data(), 8, e.size(), f) != e.size()) return 1;
  fclose(f);
  return 0;
}
