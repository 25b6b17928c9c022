// Device clock() and clock64() count SM cycles at the clock rate the device reports, as delay
// kernels assume (cuda-samples' simpleHyperQ spins `clockRate * ms` cycles of clock()); host
// clock() keeps the C library's meaning (process CPU time, CLOCKS_PER_SEC per second). The
// shim's device clock() was libc's, so a 30 ms delay kernel spun for 30 s of CPU time.
#include <chrono>
#include <cstdio>
#include <ctime>

__global__ void spin32(clock_t cycles, long long *out) {
  clock_t start = clock(), now = start;
  while (now - start < cycles) now = clock();
  *out = (long long)(now - start);
}

__global__ void spin64(long long cycles, long long *out) {
  long long start = clock64(), now = start;
  while (now - start < cycles) now = clock64();
  out[threadIdx.x] = now - start;
}

static double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int main() {
  int khz = 0;
  cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0);
  long long *d, h[4] = {0};
  cudaMalloc(&d, sizeof(h));
  const long long cycles = (long long)khz * 30;  // 30 ms of the SM clock
  bool ok = khz > 0;

  auto t0 = std::chrono::steady_clock::now();
  spin32<<<1, 1>>>((clock_t)cycles, d);
  cudaMemcpy(h, d, sizeof(long long), cudaMemcpyDeviceToHost);
  double wall = seconds_since(t0);
  // Cycles are wall time at the reported rate: the spin cannot end before 30 ms have passed.
  if (!(h[0] >= cycles && wall >= 0.029)) { printf("clock(): %lld cycles in %.4f s\n", h[0], wall); ok = false; }

  t0 = std::chrono::steady_clock::now();
  spin64<<<1, 4>>>(cycles, d);
  cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);
  wall = seconds_since(t0);
  for (int i = 0; i < 4; ++i) ok = ok && h[i] >= cycles;
  if (wall < 0.029) { printf("clock64(): %.4f s\n", wall); ok = false; }

  // Host clock(): the process's CPU time in CLOCKS_PER_SEC units. Idle runtime threads may add
  // to it, so 10 ms of it take a few ms of wall time, never the 7 us that 10,000 cycles take.
  t0 = std::chrono::steady_clock::now();
  clock_t c0 = clock();
  volatile unsigned long long sink = 0;
  while (clock() - c0 < CLOCKS_PER_SEC / 100) sink = sink + 1;
  wall = seconds_since(t0);
  if (wall < 0.003) { printf("host clock(): 10 ms of CPU in %.4f s of wall time\n", wall); ok = false; }

  cudaFree(d);
  printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
