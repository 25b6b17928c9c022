// Tensor-core GEMM in the style of the WMMA tutorial: one warp per 16x16 tile of D, a K loop of
// mma_sync, an alpha/beta epilogue over frag.x[i]. D = ALPHA * A @ B + BETA * C, all row-major
// on the host (A: M x K, B: K x N, C and D: M x N, float32 files); on the device the matrices
// have padded leading dimensions (LDPAD elements). -DUSE_BF16: __nv_bfloat16 inputs;
// -DB_COL_MAJOR: B stored column-major; -DACC_HALF: __half accumulator and C.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <mma.h>
using namespace nvcuda;

#ifndef M
#define M 64
#endif
#ifndef N
#define N 48
#endif
#ifndef K
#define K 80
#endif
#ifndef LDPAD
#define LDPAD 8
#endif
#define ALPHA 1.5f
#define BETA -0.5f

#ifdef USE_BF16
typedef __nv_bfloat16 in_t;
#else
typedef half in_t;
#endif
#ifdef ACC_HALF
typedef half acc_t;
#else
typedef float acc_t;
#endif
#ifdef B_COL_MAJOR
typedef wmma::col_major b_layout;
#else
typedef wmma::row_major b_layout;
#endif

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
  fprintf(stderr, "CUDA error %s at %s:%d\n", cudaGetErrorString(e), __FILE__, __LINE__); return 1; } } while (0)

const int WM = 16, WN = 16, WK = 16;

__global__ void gemm_wmma(const in_t* a, const in_t* b, acc_t* c, int m, int n, int k,
                          int lda, int ldb, int ldc, float alpha, float beta) {
  int warpM = (blockIdx.x * blockDim.x + threadIdx.x) / warpSize;
  int warpN = blockIdx.y * blockDim.y + threadIdx.y;
  wmma::fragment<wmma::matrix_a, WM, WN, WK, in_t, wmma::row_major> a_frag;
  wmma::fragment<wmma::matrix_b, WM, WN, WK, in_t, b_layout> b_frag;
  wmma::fragment<wmma::accumulator, WM, WN, WK, acc_t> acc_frag;
  wmma::fragment<wmma::accumulator, WM, WN, WK, acc_t> c_frag;
  wmma::fill_fragment(acc_frag, 0.0f);
  int row = warpM * WM, col = warpN * WN;
  if (row >= m || col >= n) return;  // the whole warp leaves together
  for (int i = 0; i < k; i += WK) {
    wmma::load_matrix_sync(a_frag, a + row * lda + i, lda);
#ifdef B_COL_MAJOR
    wmma::load_matrix_sync(b_frag, b + col * ldb + i, ldb);
#else
    wmma::load_matrix_sync(b_frag, b + i * ldb + col, ldb);
#endif
    wmma::mma_sync(acc_frag, a_frag, b_frag, acc_frag);
  }
  wmma::load_matrix_sync(c_frag, c + row * ldc + col, ldc, wmma::mem_row_major);
  for (int i = 0; i < c_frag.num_elements; i++)
    c_frag.x[i] = (acc_t)(alpha * (float)acc_frag.x[i] + beta * (float)c_frag.x[i]);
  wmma::store_matrix_sync(c + row * ldc + col, c_frag, ldc, wmma::mem_row_major);
}

static bool read_file(const char* path, float* dst, size_t n) {
  FILE* f = fopen(path, "rb");
  if (!f) { fprintf(stderr, "cannot open %s\n", path); return false; }
  size_t got = fread(dst, sizeof(float), n, f);
  fclose(f);
  if (got != n) { fprintf(stderr, "%s: expected %zu floats, got %zu\n", path, n, got); return false; }
  return true;
}

int main() {
  std::vector<float> a(M * K), b(K * N), c(M * N), d(M * N);
  if (!read_file("data/a.bin", a.data(), a.size()) || !read_file("data/b.bin", b.data(), b.size()) ||
      !read_file("data/c.bin", c.data(), c.size()))
    return 1;
  const int lda = K + LDPAD, ldc = N + LDPAD;
#ifdef B_COL_MAJOR
  const int ldb = K + LDPAD, b_elems = N * ldb;
#else
  const int ldb = N + LDPAD, b_elems = K * ldb;
#endif
  // Padding holds a large value: reading it would show in the result.
  std::vector<in_t> ha(M * lda, in_t(1000.0f)), hb(b_elems, in_t(1000.0f));
  std::vector<acc_t> hc(M * ldc, acc_t(1000.0f));
  for (int r = 0; r < M; r++)
    for (int j = 0; j < K; j++) ha[r * lda + j] = in_t(a[r * K + j]);
  for (int r = 0; r < K; r++)
    for (int j = 0; j < N; j++) {
#ifdef B_COL_MAJOR
      hb[j * ldb + r] = in_t(b[r * N + j]);
#else
      hb[r * ldb + j] = in_t(b[r * N + j]);
#endif
    }
  for (int r = 0; r < M; r++)
    for (int j = 0; j < N; j++) hc[r * ldc + j] = acc_t(c[r * N + j]);
  in_t *da, *db;
  acc_t* dc;
  CHECK(cudaMalloc(&da, ha.size() * sizeof(in_t)));
  CHECK(cudaMalloc(&db, hb.size() * sizeof(in_t)));
  CHECK(cudaMalloc(&dc, hc.size() * sizeof(acc_t)));
  CHECK(cudaMemcpy(da, ha.data(), ha.size() * sizeof(in_t), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(db, hb.data(), hb.size() * sizeof(in_t), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dc, hc.data(), hc.size() * sizeof(acc_t), cudaMemcpyHostToDevice));
  dim3 block(128, 4);  // 4 x 4 warps: a 64 x 64 tile of D per block
  dim3 grid((M + 63) / 64, (N + 63) / 64);
  gemm_wmma<<<grid, block>>>(da, db, dc, M, N, K, lda, ldb, ldc, ALPHA, BETA);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaMemcpy(hc.data(), dc, hc.size() * sizeof(acc_t), cudaMemcpyDeviceToHost));
  for (int r = 0; r < M; r++)
    for (int j = 0; j < N; j++) d[r * N + j] = (float)hc[r * ldc + j];
  FILE* f = fopen("data/d.bin", "wb");
  if (!f || fwrite(d.data(), sizeof(float), d.size(), f) != d.size()) return 1;
  fclose(f);
  printf("ok\n");
  return 0;
}
