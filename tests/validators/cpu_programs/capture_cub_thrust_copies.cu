// Stream capture of CUB, Thrust (par_nosync.on), symbol, array and 3-D async copies: all are
// nodes of the graph, so nothing runs at capture and each of 3 launches applies them once more.
// Then the calls a GPU refuses in a capture: their errors, the capture invalidated.
#include <cub/cub.cuh>
#include <thrust/device_ptr.h>
#include <thrust/execution_policy.h>
#include <thrust/reduce.h>
#include <thrust/sequence.h>
#include <thrust/system_error.h>
#include <thrust/transform.h>

#include <cstdio>
#include <cstdlib>

#define CK(x)                                                                         \
  do {                                                                                \
    cudaError_t e_ = (x);                                                             \
    if (e_ != cudaSuccess) {                                                          \
      printf("%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorName(e_));         \
      exit(1);                                                                        \
    }                                                                                 \
  } while (0)
#define EXPECT(c)                                         \
  do {                                                    \
    if (!(c)) {                                           \
      printf("FAIL line %d: %s\n", __LINE__, #c);         \
      exit(1);                                            \
    }                                                     \
  } while (0)

constexpr int N = 8;
__device__ int g_sym[N];

__global__ void bump(int* p) { p[threadIdx.x] += 1; }
__global__ void read_sym(int* out) { out[threadIdx.x] = g_sym[threadIdx.x] * 10; }
struct twice {
  __host__ __device__ int operator()(int x) const { return 2 * x; }
};
static int g_callbacks = 0;
static void CUDART_CB callback(cudaStream_t, cudaError_t, void*) { g_callbacks++; }

int main() {
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  int *d_in, *d_sum, *d_scan, *d_sorted, *d_fromsym, *d_symx10, *d_arr, *d_3d, *d_thr, *d_seq;
  int** all[] = {&d_in, &d_sum, &d_scan, &d_sorted, &d_fromsym, &d_symx10, &d_arr, &d_3d, &d_thr, &d_seq};
  for (int** p : all) {
    CK(cudaMalloc(p, N * sizeof(int)));
    CK(cudaMemset(*p, 0, N * sizeof(int)));
  }
  int h[N];
  for (int i = 0; i < N; i++) h[i] = (i * 5) % N + 1;  // a permutation of 1..N
  CK(cudaMemcpy(d_in, h, sizeof h, cudaMemcpyHostToDevice));

  size_t bytes_reduce = 0, bytes_scan = 0, bytes_sort = 0;
  CK(cub::DeviceReduce::Sum(nullptr, bytes_reduce, d_in, d_sum, N, s));
  CK(cub::DeviceScan::InclusiveSum(nullptr, bytes_scan, d_in, d_scan, N, s));
  void* temp;
  CK(cudaMalloc(&temp, 1 << 16));
  size_t temp_bytes = 1 << 16;

  cudaArray_t arr;
  cudaChannelFormatDesc desc = cudaCreateChannelDesc<int>();
  CK(cudaMallocArray(&arr, &desc, N, 1));
  int h_sym[N], h_row[N];

  cudaGraph_t graph;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  bump<<<1, N, 0, s>>>(d_in);
  // A size query inside the capture still answers at the call.
  CK(cub::DeviceRadixSort::SortKeys(nullptr, bytes_sort, d_in, d_sorted, N, 0, 32, s));
  EXPECT(bytes_sort > 0);
  CK(cub::DeviceReduce::Sum(temp, temp_bytes, d_in, d_sum, N, s));
  CK(cub::DeviceScan::InclusiveSum(temp, temp_bytes, d_in, d_scan, N, s));
  CK(cub::DeviceRadixSort::SortKeys(temp, temp_bytes, d_in, d_sorted, N, 0, 32, s));
  CK(cudaMemcpyToSymbolAsync(g_sym, h_sym, sizeof h_sym, 0, cudaMemcpyHostToDevice, s));
  read_sym<<<1, N, 0, s>>>(d_symx10);
  CK(cudaMemcpyFromSymbolAsync(d_fromsym, g_sym, sizeof h_sym, 0, cudaMemcpyDeviceToDevice, s));
  CK(cudaMemcpy2DToArrayAsync(arr, 0, 0, h_row, sizeof h_row, sizeof h_row, 1, cudaMemcpyHostToDevice, s));
  CK(cudaMemcpy2DFromArrayAsync(d_arr, sizeof h_row, arr, 0, 0, sizeof h_row, 1, cudaMemcpyDeviceToDevice, s));
  cudaMemcpy3DParms p3 = {};
  p3.srcPtr = make_cudaPitchedPtr(d_in, N * sizeof(int), N * sizeof(int), 1);
  p3.dstPtr = make_cudaPitchedPtr(d_3d, N * sizeof(int), N * sizeof(int), 1);
  p3.extent = make_cudaExtent(N * sizeof(int), 1, 1);
  p3.kind = cudaMemcpyDeviceToDevice;
  CK(cudaMemcpy3DAsync(&p3, s));
  p3.dstPtr.ptr = d_sum;  // the captured copy keeps the parameters of the call
  thrust::device_ptr<int> t_in(d_in), t_thr(d_thr), t_seq(d_seq);
  thrust::transform(thrust::cuda::par_nosync.on(s), t_in, t_in + N, t_thr, twice());
  thrust::sequence(thrust::cuda::par_nosync.on(s), t_seq, t_seq + N, 100);
  CK(cudaStreamEndCapture(s, &graph));
  cudaGraphExec_t exec;
  CK(cudaGraphInstantiate(&exec, graph, 0));

  // Nothing ran at capture.
  int got[N];
  CK(cudaMemcpy(got, d_in, sizeof got, cudaMemcpyDeviceToHost));
  for (int i = 0; i < N; i++) EXPECT(got[i] == h[i]);
  int* untouched[] = {d_sum, d_scan, d_sorted, d_fromsym, d_symx10, d_arr, d_3d, d_thr, d_seq};
  for (int* d : untouched) {
    CK(cudaMemcpy(got, d, sizeof got, cudaMemcpyDeviceToHost));
    for (int i = 0; i < N; i++) EXPECT(got[i] == 0);
  }

  for (int launch = 1; launch <= 3; launch++) {
    for (int i = 0; i < N; i++) h_sym[i] = launch * 100 + i, h_row[i] = launch * 1000 + i;
    CK(cudaGraphLaunch(exec, s));
    CK(cudaStreamSynchronize(s));
    int in[N], v[N];
    CK(cudaMemcpy(in, d_in, sizeof in, cudaMemcpyDeviceToHost));
    int sum = 0;
    for (int i = 0; i < N; i++) {
      EXPECT(in[i] == h[i] + launch);
      sum += in[i];
    }
    CK(cudaMemcpy(v, d_sum, sizeof v, cudaMemcpyDeviceToHost));
    EXPECT(v[0] == sum);
    CK(cudaMemcpy(v, d_scan, sizeof v, cudaMemcpyDeviceToHost));
    for (int i = 0, acc = 0; i < N; i++) {
      acc += in[i];
      EXPECT(v[i] == acc);
    }
    CK(cudaMemcpy(v, d_sorted, sizeof v, cudaMemcpyDeviceToHost));
    for (int i = 0; i < N; i++) EXPECT(v[i] == i + 1 + launch);
    CK(cudaMemcpy(v, d_symx10, sizeof v, cudaMemcpyDeviceToHost));
    for (int i = 0; i < N; i++) EXPECT(v[i] == 10 * h_sym[i]);
    CK(cudaMemcpy(v, d_fromsym, sizeof v, cudaMemcpyDeviceToHost));
    for (int i = 0; i < N; i++) EXPECT(v[i] == h_sym[i]);
    CK(cudaMemcpy(v, d_arr, sizeof v, cudaMemcpyDeviceToHost));
    for (int i = 0; i < N; i++) EXPECT(v[i] == h_row[i]);
    CK(cudaMemcpy(v, d_3d, sizeof v, cudaMemcpyDeviceToHost));
    for (int i = 0; i < N; i++) EXPECT(v[i] == in[i]);
    CK(cudaMemcpy(v, d_thr, sizeof v, cudaMemcpyDeviceToHost));
    for (int i = 0; i < N; i++) EXPECT(v[i] == 2 * in[i]);
    CK(cudaMemcpy(v, d_seq, sizeof v, cudaMemcpyDeviceToHost));
    for (int i = 0; i < N; i++) EXPECT(v[i] == 100 + i);
    CK(cudaMemset(d_seq, 0, N * sizeof(int)));
    printf("launch %d ok\n", launch);
  }

  // Refused in a capture: the call's error, the capture invalidated, no graph.
  cudaGraph_t none;
  cudaStreamCaptureStatus st;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  EXPECT(cudaStreamAddCallback(s, callback, nullptr, 0) == cudaErrorStreamCaptureUnsupported);
  CK(cudaStreamIsCapturing(s, &st));
  EXPECT(st == cudaStreamCaptureStatusInvalidated);
  EXPECT(cudaStreamEndCapture(s, &none) == cudaErrorStreamCaptureInvalidated && none == nullptr);
  EXPECT(g_callbacks == 0);
  (void)cudaGetLastError();

  cudaEvent_t ev;
  CK(cudaEventCreate(&ev));
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  CK(cudaEventRecord(ev, s));
  EXPECT(cudaEventQuery(ev) == cudaErrorCapturedEvent);
  EXPECT(cudaEventSynchronize(ev) == cudaErrorCapturedEvent);
  CK(cudaStreamEndCapture(s, &none));
  CK(cudaGraphDestroy(none));
  (void)cudaGetLastError();

  // Thrust's par synchronises the stream after each algorithm; par_nosync's reduce copies its
  // result to the host: both refused in a capture, with Thrust's exception.
  int thrown = 0;
  for (int nosync = 0; nosync < 2; nosync++) {
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    try {
      if (nosync)
        (void)thrust::reduce(thrust::cuda::par_nosync.on(s), t_in, t_in + N);
      else
        thrust::transform(thrust::cuda::par.on(s), t_in, t_in + N, t_thr, twice());
    } catch (const thrust::system_error&) {
      thrown++;
    }
    EXPECT(cudaStreamEndCapture(s, &none) == cudaErrorStreamCaptureInvalidated && none == nullptr);
    (void)cudaGetLastError();
  }
  EXPECT(thrown == 2);
  int v[N];
  CK(cudaMemcpy(v, d_thr, sizeof v, cudaMemcpyDeviceToHost));
  for (int i = 0; i < N; i++) EXPECT(v[i] == 2 * (h[i] + 3));  // the refused transform did not run

  CK(cudaGraphExecDestroy(exec));
  CK(cudaGraphDestroy(graph));
  CK(cudaEventDestroy(ev));
  CK(cudaFreeArray(arr));
  for (int** p : all) CK(cudaFree(*p));
  CK(cudaFree(temp));
  CK(cudaStreamDestroy(s));
  printf("PASS\n");
  return 0;
}
