// A transpose whose bound check is off by one: the last row reads one float past `in`.
#include <cstdio>
#include <cuda_runtime.h>
#ifndef ROWS
#define ROWS 20
#endif
#ifndef COLS
#define COLS 13
#endif
__global__ void transpose(const float* in, float* out, int rows, int cols) {
  __shared__ float tile[8][9];
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x <= cols && y < rows) tile[threadIdx.y][threadIdx.x] = in[y * cols + x];
  __syncthreads();
  if (x < cols && y < rows) out[x * rows + y] = tile[threadIdx.y][threadIdx.x];
}
int main() {
  static float h[ROWS * COLS];
  FILE* f = fopen("data/input.bin", "rb");
  if (!f || fread(h, sizeof(float), ROWS * COLS, f) != ROWS * COLS) return 1;
  fclose(f);
#ifdef ALSO_READ_ETC
  char path[32];
  snprintf(path, sizeof path, "/etc/%s", "hostname");
  FILE* e = fopen(path, "r");
  if (e) fclose(e);
#endif
  float *in, *out;
  cudaMalloc(&in, sizeof h);
  cudaMalloc(&out, sizeof h);
  cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice);
  transpose<<<dim3(2, 3), dim3(8, 8)>>>(in, out, ROWS, COLS);
  cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);
  f = fopen("data/output.bin", "wb");
  fwrite(h, sizeof(float), ROWS * COLS, f);
  fclose(f);
  return 0;
}
