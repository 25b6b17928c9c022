// Half-warp rows of different lengths: each 16-lane segment runs its own trip count of width-16
// shuffles (a prefix sum per row), so the two halves of a warp reach different shuffles.
#include <cstdio>
#include <cstdlib>
__device__ float row_prefix_total(int n, const float* w) {
  float sum = 0.f, last = 0.f;
  int mn = ((n + blockDim.x - 1) / blockDim.x) * blockDim.x;
  for (int i = threadIdx.x; i < mn; i += blockDim.x) {
    last = __shfl_sync(0xffffffff, sum, blockDim.x - 1, blockDim.x);
    sum = i < n ? w[i] : 0.f;
    for (int j = 1; j < blockDim.x; j *= 2) {
      float v = __shfl_up_sync(0xffffffff, sum, j, blockDim.x);
      if (threadIdx.x >= j) sum += v;
    }
    sum += last;
  }
  return __shfl_sync(0xffffffff, sum, blockDim.x - 1, blockDim.x);
}
__global__ void row_sums(int rows, const int* start, const float* w, float* out) {
  for (int row = threadIdx.y + blockIdx.y * blockDim.y; row < rows; row += gridDim.y * blockDim.y) {
    float s = row_prefix_total(start[row + 1] - start[row], w + start[row]);
    if (threadIdx.x == 0) out[row] = s;
  }
}
int main() {
  const int rows = 37;
  int h_start[rows + 1];
  h_start[0] = 0;
  for (int r = 0; r < rows; r++) h_start[r + 1] = h_start[r] + (r * 7) % 53;
  int n = h_start[rows];
  float* h_w = (float*)malloc(n * sizeof(float));
  for (int i = 0; i < n; i++) h_w[i] = (float)(i % 5);
  int* d_start; float *d_w, *d_out;
  cudaMalloc(&d_start, sizeof h_start);
  cudaMalloc(&d_w, n * sizeof(float));
  cudaMalloc(&d_out, rows * sizeof(float));
  cudaMemcpy(d_start, h_start, sizeof h_start, cudaMemcpyHostToDevice);
  cudaMemcpy(d_w, h_w, n * sizeof(float), cudaMemcpyHostToDevice);
  row_sums<<<dim3(1, 3), dim3(16, 4)>>>(rows, d_start, d_w, d_out);
  float out[rows];
  cudaMemcpy(out, d_out, sizeof out, cudaMemcpyDeviceToHost);
  int bad = 0;
  for (int r = 0; r < rows; r++) {
    float want = 0.f;
    for (int i = h_start[r]; i < h_start[r + 1]; i++) want += h_w[i];
    if (out[r] != want) bad++;
  }
  printf("%s %d\n", bad ? "FAIL" : "PASS", bad);
  return bad != 0;
}
