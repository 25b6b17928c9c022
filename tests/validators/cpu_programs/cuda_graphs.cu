// CUDA graphs: a stream capture (an upload, a fill, a kernel whose argument changes after the
// launch, a kernel on a forked stream joined back, a host function) replayed three times after
// its graph is destroyed; an explicit graph whose dependency runs a node made later first.
#include <cstdio>
__global__ void axpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += a * x[i];
}
__global__ void scale(float* y, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] *= s;
}
static int host_calls = 0;
static void note(void*) { host_calls++; }
int main() {
  const int n = 1000;
  float *x, *y;
  cudaMalloc(&x, n * 4); cudaMalloc(&y, n * 4);
  cudaMemset(x, 0, n * 4);
  static float h[n];
  for (int i = 0; i < n; i++) h[i] = 1.0f;
  cudaStream_t s, s2;
  cudaStreamCreate(&s); cudaStreamCreate(&s2);
  cudaEvent_t fork, join;
  cudaEventCreate(&fork); cudaEventCreate(&join);
  // Stream capture: upload, two kernels (one on a forked stream), a host function.
  cudaGraph_t g;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  cudaMemcpyAsync(x, h, n * 4, cudaMemcpyHostToDevice, s);
  cudaMemsetAsync(y, 0, n * 4, s);
  float a = 2.0f;
  axpy<<<(n + 255) / 256, 256, 0, s>>>(a, x, y, n);
  a = 100.0f;  // captured by value at the launch: the graph keeps 2
  cudaEventRecord(fork, s);
  cudaStreamWaitEvent(s2, fork, 0);
  scale<<<(n + 255) / 256, 256, 0, s2>>>(y, 3.0f, n);
  cudaEventRecord(join, s2);
  cudaStreamWaitEvent(s, join, 0);
  cudaLaunchHostFunc(s, note, nullptr);
  cudaStreamCaptureStatus st;
  cudaStreamIsCapturing(s, &st);
  cudaStreamEndCapture(s, &g);
  float probe = -1;
  cudaMemcpy(&probe, x, 4, cudaMemcpyDeviceToHost);  // nothing ran yet: x is not uploaded
  cudaGraphExec_t e;
  cudaGraphInstantiate(&e, g, 0);
  cudaGraphDestroy(g);  // the instance stays valid
  for (int rep = 0; rep < 3; rep++) cudaGraphLaunch(e, s);
  cudaStreamSynchronize(s);
  cudaMemcpy(h, y, n * 4, cudaMemcpyDeviceToHost);
  // Explicit graph: scale after memset after nothing, declared in reverse creation order.
  cudaGraph_t g2; cudaGraphCreate(&g2, 0);
  cudaGraphNode_t k, m;
  int nn = n; float f = 0.5f;
  void* args[] = {&y, &f, &nn};
  cudaKernelNodeParams kp = {};
  kp.func = (void*)scale; kp.gridDim = dim3((n + 255) / 256); kp.blockDim = dim3(256); kp.kernelParams = args;
  cudaGraphAddKernelNode(&k, g2, nullptr, 0, &kp);
  f = 7.0f;  // copied when the node was made
  cudaMemsetParams mp = {}; mp.dst = y; mp.value = 0x40000000u; mp.elementSize = 4; mp.width = n; mp.height = 1;
  cudaGraphAddMemsetNode(&m, g2, nullptr, 0, &mp);
  cudaGraphAddDependencies(g2, &m, &k, nullptr, 1);  // fill 2.0 first, then scale by 0.5
  size_t count = 0; cudaGraphGetNodes(g2, nullptr, &count);
  cudaGraphExec_t e2; cudaGraphInstantiate(&e2, g2, nullptr, nullptr, 0);
  cudaGraphLaunch(e2, 0);
  float z; cudaMemcpy(&z, y, 4, cudaMemcpyDeviceToHost);
  printf("%d %g %g %d %zu %g %s\n", (int)st, probe, h[n - 1], host_calls, count, z,
         cudaGetErrorName(cudaGetLastError()));
  return 0;
}
