// cuRAND device API: every thread seeds its own state with curand_init(seed, subsequence,
// offset) and prints what it draws, so the test recomputes each value from the published
// algorithms. Also compiles with nvcc (-lcurand not needed for the device API).
#include <cstdio>
#include <curand_kernel.h>

#define THREADS 4
#define DRAWS 6

template <class State>
__global__ void draw_bits(unsigned long long seed, unsigned long long offset, unsigned int* out) {
  int t = threadIdx.x;
  State s;
  curand_init(seed, t, offset, &s);
  for (int i = 0; i < DRAWS; ++i) out[t * DRAWS + i] = curand(&s);
}

template <class State>
__global__ void draw_floats(unsigned long long seed, float* uni, double* unid, float* nrm,
                            double* nrmd, float* lognrm, unsigned int* pois) {
  int t = threadIdx.x;
  State s;
  curand_init(seed, t, 0, &s);
  for (int i = 0; i < DRAWS; ++i) uni[t * DRAWS + i] = curand_uniform(&s);
  for (int i = 0; i < DRAWS; ++i) unid[t * DRAWS + i] = curand_uniform_double(&s);
  for (int i = 0; i < DRAWS; ++i) nrm[t * DRAWS + i] = curand_normal(&s);
  for (int i = 0; i < DRAWS; ++i) nrmd[t * DRAWS + i] = curand_normal_double(&s);
  for (int i = 0; i < DRAWS; ++i) lognrm[t * DRAWS + i] = curand_log_normal(&s, 0.5f, 0.25f);
  for (int i = 0; i < DRAWS; ++i) pois[t * DRAWS + i] = curand_poisson(&s, 3.5);
}

// skipahead / skipahead_sequence on a state seeded at (0, 0) must land where curand_init does.
template <class State>
__global__ void draw_skips(unsigned long long seed, unsigned int* out) {
  State s;
  curand_init(seed, 0, 0, &s);
  skipahead_sequence(3ull, &s);
  skipahead(1000003ull, &s);
  out[0] = curand(&s);
  skipahead((1ull << 40) + 7, &s);
  out[1] = curand(&s);
}

__global__ void philox_vectors(unsigned long long seed, uint4* bits, float4* uni, float4* nrm) {
  curandStatePhilox4_32_10_t s;
  curand_init(seed, 5, 2, &s);  // offset 2: curand4 straddles two counter blocks
  bits[0] = curand4(&s);
  uni[0] = curand_uniform4(&s);
  nrm[0] = curand_normal4(&s);
  bits[1] = curand4(&s);
}

// Random123's known answers, reached through curand_init and skipahead: the counter block's low
// 64 bits are offset / 4, its high 64 bits the subsequence, the key the seed.
__global__ void mrg_first(double* out) {
  curandStateMRG32k3a_t s;
  curand_init(0ull, 0ull, 0ull, &s);
  out[0] = curand_uniform_double(&s);
}

__global__ void philox_kat(uint4* out) {
  curandStatePhilox4_32_10_t s;
  curand_init(0ull, 0ull, 0ull, &s);
  out[0] = curand4(&s);
  curand_init(0x299f31d0a4093822ull, 0x0370734413198a2eull, 0ull, &s);
  for (int i = 0; i < 4; ++i) skipahead(0x85a308d3243f6a88ull, &s);
  out[1] = curand4(&s);
  curand_init(~0ull, ~0ull, 0ull, &s);
  for (int i = 0; i < 4; ++i) skipahead(0xfffffffffffffffcull, &s);
  skipahead(12ull, &s);
  out[2] = curand4(&s);
}

template <class T>
static T* dev(int n) {
  T* p;
  cudaMalloc(&p, n * sizeof(T));
  return p;
}
template <class T>
static void show(const char* name, const T* d, int n) {
  T h[THREADS * DRAWS * 4];
  cudaMemcpy(h, d, n * sizeof(T), cudaMemcpyDeviceToHost);
  printf("%s", name);
  for (int i = 0; i < n; ++i) {
    if constexpr (sizeof(T) == 4 && T(0.5) == 0) printf(" %u", (unsigned)h[i]);
    else printf(" %.17g", (double)h[i]);
  }
  printf("\n");
}

template <class State>
static void run(const char* gen, unsigned long long seed) {
  const int n = THREADS * DRAWS;
  unsigned int* bits = dev<unsigned int>(n);
  draw_bits<State><<<1, THREADS>>>(seed, 0, bits);
  char name[64];
  snprintf(name, sizeof name, "%s_bits", gen);
  show(name, bits, n);
  draw_bits<State><<<1, THREADS>>>(seed, 17, bits);
  snprintf(name, sizeof name, "%s_bits_off17", gen);
  show(name, bits, n);
  float *uni = dev<float>(n), *nrm = dev<float>(n), *lognrm = dev<float>(n);
  double *unid = dev<double>(n), *nrmd = dev<double>(n);
  unsigned int* pois = dev<unsigned int>(n);
  draw_floats<State><<<1, THREADS>>>(seed, uni, unid, nrm, nrmd, lognrm, pois);
  snprintf(name, sizeof name, "%s_uniform", gen); show(name, uni, n);
  snprintf(name, sizeof name, "%s_uniform_double", gen); show(name, unid, n);
  snprintf(name, sizeof name, "%s_normal", gen); show(name, nrm, n);
  snprintf(name, sizeof name, "%s_normal_double", gen); show(name, nrmd, n);
  snprintf(name, sizeof name, "%s_log_normal", gen); show(name, lognrm, n);
  snprintf(name, sizeof name, "%s_poisson", gen); show(name, pois, n);
  draw_skips<State><<<1, 1>>>(seed, bits);
  snprintf(name, sizeof name, "%s_skips", gen); show(name, bits, 2);
  cudaFree(bits); cudaFree(uni); cudaFree(nrm); cudaFree(lognrm); cudaFree(unid); cudaFree(nrmd);
  cudaFree(pois);
}

int main() {
  const unsigned long long seed = 0x123456789abcdefULL;
  run<curandState>("xorwow", seed);
  run<curandStatePhilox4_32_10_t>("philox", seed);
  run<curandStateMRG32k3a_t>("mrg", seed);
  uint4* bits = dev<uint4>(2);
  float4 *uni = dev<float4>(1), *nrm = dev<float4>(1);
  philox_vectors<<<1, 1>>>(seed, bits, uni, nrm);
  show("philox_curand4", reinterpret_cast<unsigned int*>(bits), 8);
  show("philox_uniform4", reinterpret_cast<float*>(uni), 4);
  show("philox_normal4", reinterpret_cast<float*>(nrm), 4);
  uint4* kat = dev<uint4>(3);
  philox_kat<<<1, 1>>>(kat);
  show("philox_kat", reinterpret_cast<unsigned int*>(kat), 12);
  // seed 0 keeps L'Ecuyer's default state (12345 in all six words).
  double* first = dev<double>(1);
  mrg_first<<<1, 1>>>(first);
  show("mrg_default_seed", first, 1);
  printf("sizes %zu %zu %zu\n", sizeof(curandState), sizeof(curandStatePhilox4_32_10_t),
         sizeof(curandStateMRG32k3a_t));
  return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1;
}
