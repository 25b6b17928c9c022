// Each of 4 threads logs its index twice through a shared counter (a race on purpose): the log
// shows whether the threads of a warp take each loop iteration together.
#include <cstdio>
__global__ void order(int* log, int* pos) {
  for (int k = 0; k < 2; ++k) log[(*pos)++] = (int)threadIdx.x;
}
int main() {
  int *log, *pos, h[8];
  cudaMalloc(&log, 8 * sizeof(int)); cudaMalloc(&pos, sizeof(int));
  cudaMemset(pos, 0, sizeof(int));
  order<<<1, 4>>>(log, pos);
  cudaMemcpy(h, log, sizeof h, cudaMemcpyDeviceToHost);
  for (int i = 0; i < 8; ++i) printf("%d ", h[i]);
  printf("\n");
  return 0;
}
