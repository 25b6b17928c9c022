// cuRAND host API: generators filling device memory, then a kernel that uses the values, so
// the test can recompute them (one sequence per generator on the cpu backend; see its README).
// Builds with nvcc ... -lcurand.
#include <cstdio>
#include <curand.h>

#define N 8
#define CHECK(x) do { curandStatus_t st_ = (x); if (st_ != CURAND_STATUS_SUCCESS) { \
  printf("error %d at line %d\n", (int)st_, __LINE__); return 1; } } while (0)

__global__ void twice(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 2.0f * in[i];
}

static void show_u(const char* name, const unsigned int* d) {
  unsigned int h[N];
  cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
  printf("%s", name);
  for (int i = 0; i < N; ++i) printf(" %u", h[i]);
  printf("\n");
}
template <class T>
static void show_f(const char* name, const T* d) {
  T h[N];
  cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
  printf("%s", name);
  for (int i = 0; i < N; ++i) printf(" %.17g", (double)h[i]);
  printf("\n");
}

static int one(const char* gen, curandRngType_t type) {
  unsigned int* bits;
  float *uni, *nrm, *dbl;
  double *unid, *nrmd;
  cudaMalloc(&bits, N * sizeof(unsigned int));
  cudaMalloc(&uni, N * sizeof(float));
  cudaMalloc(&nrm, N * sizeof(float));
  cudaMalloc(&dbl, N * sizeof(float));
  cudaMalloc(&unid, N * sizeof(double));
  cudaMalloc(&nrmd, N * sizeof(double));
  cudaStream_t stream;
  cudaStreamCreate(&stream);
  curandGenerator_t g;
  CHECK(curandCreateGenerator(&g, type));
  CHECK(curandSetStream(g, stream));
  CHECK(curandSetPseudoRandomGeneratorSeed(g, 1234ull));
  CHECK(curandSetGeneratorOffset(g, 5ull));
  CHECK(curandGenerate(g, bits, N));
  CHECK(curandGenerateUniform(g, uni, N));  // continues where curandGenerate stopped
  CHECK(curandGenerateUniformDouble(g, unid, N));
  CHECK(curandGenerateNormal(g, nrm, N, 1.0f, 2.0f));
  CHECK(curandGenerateNormalDouble(g, nrmd, N, -1.0, 0.5));
  if (curandGenerateNormal(g, nrm, 3, 0.0f, 1.0f) != CURAND_STATUS_LENGTH_NOT_MULTIPLE) return 1;
  twice<<<1, N, 0, stream>>>(uni, dbl, N);
  cudaStreamSynchronize(stream);
  char name[64];
  snprintf(name, sizeof name, "%s_bits", gen); show_u(name, bits);
  snprintf(name, sizeof name, "%s_uniform", gen); show_f(name, uni);
  snprintf(name, sizeof name, "%s_uniform_double", gen); show_f(name, unid);
  snprintf(name, sizeof name, "%s_normal", gen); show_f(name, nrm);
  snprintf(name, sizeof name, "%s_normal_double", gen); show_f(name, nrmd);
  snprintf(name, sizeof name, "%s_twice", gen); show_f(name, dbl);
  CHECK(curandDestroyGenerator(g));
  cudaStreamDestroy(stream);
  cudaFree(bits); cudaFree(uni); cudaFree(nrm); cudaFree(dbl); cudaFree(unid); cudaFree(nrmd);
  return 0;
}

int main() {
  if (one("xorwow", CURAND_RNG_PSEUDO_DEFAULT)) return 1;
  if (one("philox", CURAND_RNG_PSEUDO_PHILOX4_32_10)) return 1;
  if (one("mrg", CURAND_RNG_PSEUDO_MRG32K3A)) return 1;
  return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1;
}
