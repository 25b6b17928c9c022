// Kernels the rewrite runs in warp lockstep (validators/cpu/lockstep.py), each checked against a
// host computation: `prog <name>` runs one and exits 0 when every output matches, 1 otherwise.
#include <cassert>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define ROWS 37
#define TILE (ROWS + 3)
__constant__ int c_scale;
enum { kSteps = 9 };

// Chains of FMAs: pure statements, one guard.
__global__ void fma_chain(const float* a, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = a[i], acc = 0.f;
  for (int k = 0; k < 64; ++k) acc = fmaf(acc, x, 0.5f);
  c[i] = acc;
}

// 2D blocks whose x extent is not a multiple of 32; each thread walks its column.
__global__ void column_sums(const float* A, double* out, int rows, int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y * blockDim.y + threadIdx.y;
  if (c >= cols || r >= 3) return;
  double s = 0.0;
  for (int k = 0; k < rows; ++k) s += A[(size_t)k * cols + c] * (r + 1);
  out[r * cols + c] = s;
}

// A thread-dependent branch around a loop, with an else, and a return inside the loop.
__global__ void branches(const int* v, int* out, int n, int limit) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int x = v[i];
  int acc = 0;
  if (x % 3 == 0) {
    for (int k = 0; k < 20; ++k) {
      acc += x + k;
      if (acc > limit) { out[i] = -acc; return; }
    }
  } else {
    for (int k = 0; k < 10; k += 2) acc -= k * x;
  }
  out[i] = acc;
}

// Uniform conditions (a parameter), nested uniform loops with several update forms, a per-lane
// while loop with break and return, and a switch with its own breaks.
__global__ void mixed(const int* v, int* out, int n, int mode) {
  const int stride = blockDim.x * gridDim.x;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int acc = 0;
  if (mode > 0) {
    for (unsigned k = 1; k < 64u; k <<= 1) {
      for (int j = ROWS; j > 0; j -= 5) {
        int t = v[(i + j) % n];
        switch (t & 3) {
          case 0: acc += t; break;
          case 1: acc -= j; break;
          default: acc ^= (int)k;
        }
      }
      int w = 0;
      while (true) {
        if (w > (v[i] & 7)) break;
        if (v[i] == 77 && k == 8) { out[i] = 7777; return; }
        ++w;
      }
      acc += w;
    }
  } else {
    acc = -1;
  }
  out[i] = acc + (stride & 1);
}

// A device function that reads threadIdx (the lane's index must be set for the call), constant
// memory, an enumerator and a macro as loop bounds, a pointer local, a float2 local.
__device__ int lane_term(int k) { return (int)(threadIdx.x % 7) * k; }
__global__ void calls(const float* A, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float* row = A + (size_t)i * TILE;
  float2 p = make_float2(0.f, 0.f);
  for (int k = 0; k < TILE; ++k) {
    p.x += row[k] * c_scale;
    p.y += (float)lane_term(k % kSteps);
  }
  out[i] = p.x + p.y;
}

// Integer division by a per-thread value that is zero exactly for the threads that left: the
// division must not run for them.
__global__ void divide(const int* d, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int q = d[i];
  if (q == 0) return;
  int acc = 0;
  for (int k = 0; k < 100; ++k) acc += (k * 7 + i) / q;
  out[i] = acc;
}

// A local declared inside the loop, and a grid-stride loop inside a uniform loop.
__global__ void inner(const float* a, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int total = gridDim.x * blockDim.x;
  float acc = 0.f;
  for (int rep = 0; rep < 3; ++rep) {
    float bump = rep * 0.25f;
    for (int j = i; j < n; j += total) acc += a[j] + bump;
  }
  if (i < n) out[i] = acc;
}

// A grid-stride loop around a uniform loop, a while loop whose trip count differs per thread,
// and a return from inside the grid-stride loop.
__global__ void strided(const int* v, int* out, int n, int stop) {
  for (int idx = blockIdx.x * blockDim.x + threadIdx.x; idx < n; idx += gridDim.x * blockDim.x) {
    int acc = 0;
    for (int k = 0; k < 5; ++k) acc += v[idx] * k;
    int steps = 0, x = v[idx];
    while (x > 1) {
      x = (x % 2) ? 3 * x + 1 : x / 2;
      ++steps;
    }
    out[idx] = acc + 1000 * steps;
    if (v[idx] == stop) return;
  }
}

// `continue` and `break` in a uniform loop and in a grid-stride loop, at the loop's level and
// inside a per-lane statement.
__global__ void leaving(const int* v, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int acc = 0;
  for (int k = 0; k < 40; ++k) {
    if ((v[(i + k) % n] & 3) == 0) continue;
    acc += v[(i + k) % n];
    if (acc > 300 + i) break;
  }
  for (int j = i; j < n; j += 37) {
    if (v[j] % 5 == 0) { acc -= 1; continue; }
    switch (v[j] % 4) {
      case 1: acc += 2; break;
      case 2: if (acc > 1000) break; acc *= 3; break;
      default: continue;
    }
    acc ^= j;
    if (acc < -50) break;
  }
  out[i] = acc;
}

// A spin lock between the threads of a block: a thread's release comes in a later statement
// than its acquire, so lanes taking statements in turn would wait forever. No copy.
__global__ void locked(int* lock, int* total, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  for (int k = 0; k < 3; ++k) {
    while (atomicCAS(lock, 0, 1) != 0) {
    }
    *total += k + 1;
    atomicExch(lock, 0);
  }
}

// 3D blocks: the lanes of a chunk span rows and planes.
__global__ void blocks3d(int* out) {
  unsigned x = threadIdx.x, y = threadIdx.y, z = threadIdx.z;
  unsigned flat = ((blockIdx.x * blockDim.z + z) * blockDim.y + y) * blockDim.x + x;
  int acc = 0;
  for (int k = 0; k < 4; ++k) acc += (int)(x * 100 + y * 10 + z) + k;
  out[flat] = acc;
}

// An assert that fails for one thread inside a loop: the report names that thread.
__global__ void asserting(const int* v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  for (int k = 0; k < 4; ++k) assert(v[i] + k != 1003);
}

template <class T>
static int compare(const char* what, const std::vector<T>& got, const std::vector<T>& want, double tol = 0) {
  for (size_t i = 0; i < want.size(); ++i) {
    double g = (double)got[i], w = (double)want[i];
    if (std::fabs(g - w) > tol * (1 + std::fabs(w))) {
      printf("%s: element %zu is %.9g, expected %.9g\n", what, i, g, w);
      return 1;
    }
  }
  printf("%s: ok\n", what);
  return 0;
}

template <class T>
static T* to_device(const std::vector<T>& h) {
  T* d;
  cudaMalloc(&d, h.size() * sizeof(T));
  cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice);
  return d;
}
template <class T>
static std::vector<T> from_device(const T* d, size_t n) {
  std::vector<T> h(n);
  cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost);
  return h;
}

int main(int argc, char** argv) {
  const char* which = argc > 1 ? argv[1] : "all";
  auto want = [&](const char* k) { return !strcmp(which, "all") || !strcmp(which, k); };
  int bad = 0;
  if (want("fma_chain")) {
    const int n = 1000;
    std::vector<float> a(n), ref(n);
    for (int i = 0; i < n; ++i) a[i] = (i % 17) / 17.0f;
    for (int i = 0; i < n; ++i) { float acc = 0.f; for (int k = 0; k < 64; ++k) acc = fmaf(acc, a[i], 0.5f); ref[i] = acc; }
    float *da = to_device(a), *dc = to_device(std::vector<float>(n, -1.f));
    fma_chain<<<(n + 127) / 128, 128>>>(da, dc, n);
    bad += compare("fma_chain", from_device(dc, n), ref);
  }
  if (want("column_sums")) {
    const int rows = 50, cols = 70;
    std::vector<float> A(rows * cols);
    for (int i = 0; i < rows * cols; ++i) A[i] = (float)((i * 37) % 101) - 50.f;
    std::vector<double> ref(3 * cols);
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < cols; ++c) { double s = 0; for (int k = 0; k < rows; ++k) s += A[k * cols + c] * (r + 1); ref[r * cols + c] = s; }
    float* dA = to_device(A);
    double* dout = to_device(std::vector<double>(3 * cols, 0.0));
    column_sums<<<dim3(2, 1), dim3(48, 4)>>>(dA, dout, rows, cols);
    bad += compare("column_sums", from_device(dout, 3 * cols), ref);
  }
  if (want("branches")) {
    const int n = 300, limit = 500;
    std::vector<int> v(n), ref(n);
    for (int i = 0; i < n; ++i) v[i] = (i * 7) % 41;
    for (int i = 0; i < n; ++i) {
      int x = v[i], acc = 0;
      bool done = false;
      if (x % 3 == 0) {
        for (int k = 0; k < 20; ++k) { acc += x + k; if (acc > limit) { ref[i] = -acc; done = true; break; } }
      } else {
        for (int k = 0; k < 10; k += 2) acc -= k * x;
      }
      if (!done) ref[i] = acc;
    }
    int *dv = to_device(v), *dout = to_device(std::vector<int>(n, 0));
    branches<<<(n + 63) / 64, 64>>>(dv, dout, n, limit);
    bad += compare("branches", from_device(dout, n), ref);
  }
  if (want("mixed")) {
    const int n = 200;
    std::vector<int> v(n), ref(n);
    for (int i = 0; i < n; ++i) v[i] = i == 150 ? 77 : (i * 13) % 29;
    const int blocks = (n + 95) / 96, stride = blocks * 96;
    for (int mode = 0; mode < 2; ++mode) {
      for (int i = 0; i < n; ++i) {
        int acc = 0;
        bool done = false;
        if (mode > 0) {
          for (unsigned k = 1; k < 64u && !done; k <<= 1) {
            for (int j = ROWS; j > 0; j -= 5) {
              int t = v[(i + j) % n];
              switch (t & 3) { case 0: acc += t; break; case 1: acc -= j; break; default: acc ^= (int)k; }
            }
            int w = 0;
            while (true) {
              if (w > (v[i] & 7)) break;
              if (v[i] == 77 && k == 8) { ref[i] = 7777; done = true; break; }
              ++w;
            }
            acc += w;
          }
        } else {
          acc = -1;
        }
        if (!done) ref[i] = acc + (stride & 1);
      }
      int *dv = to_device(v), *dout = to_device(std::vector<int>(n, 0));
      mixed<<<blocks, 96>>>(dv, dout, n, mode);
      bad += compare(mode ? "mixed (mode 1)" : "mixed (mode 0)", from_device(dout, n), ref);
    }
  }
  if (want("calls")) {
    const int n = 90, scale = 3;
    cudaMemcpyToSymbol(c_scale, &scale, sizeof scale);
    std::vector<float> A(n * TILE), ref(n);
    for (int i = 0; i < n * TILE; ++i) A[i] = (float)(i % 13) * 0.5f;
    for (int i = 0; i < n; ++i) {
      float x = 0.f, y = 0.f;
      int tx = i % 64;
      for (int k = 0; k < TILE; ++k) { x += A[i * TILE + k] * scale; y += (float)((tx % 7) * (k % kSteps)); }
      ref[i] = x + y;
    }
    float *dA = to_device(A), *dout = to_device(std::vector<float>(n, 0.f));
    calls<<<(n + 63) / 64, 64>>>(dA, dout, n);
    bad += compare("calls", from_device(dout, n), ref, 1e-6);
  }
  if (want("divide")) {
    const int n = 130;
    std::vector<int> d(n), ref(n, -5);
    for (int i = 0; i < n; ++i) d[i] = i % 4 == 0 ? 0 : i % 9 + 1;
    for (int i = 0; i < n; ++i) {
      if (d[i] == 0) continue;
      int acc = 0;
      for (int k = 0; k < 100; ++k) acc += (k * 7 + i) / d[i];
      ref[i] = acc;
    }
    int *dd = to_device(d), *dout = to_device(std::vector<int>(n, -5));
    divide<<<(n + 31) / 32, 32>>>(dd, dout, n);
    bad += compare("divide", from_device(dout, n), ref);
  }
  if (want("inner")) {
    const int n = 1000, blocks = 3, threads = 64, total = blocks * threads;
    std::vector<float> a(n), ref(n, 0.f);
    for (int i = 0; i < n; ++i) a[i] = (i % 11) * 0.125f;
    for (int i = 0; i < total && i < n; ++i) {
      float acc = 0.f;
      for (int rep = 0; rep < 3; ++rep)
        for (int j = i; j < n; j += total) acc += a[j] + rep * 0.25f;
      ref[i] = acc;
    }
    float *da = to_device(a), *dout = to_device(std::vector<float>(n, 0.f));
    inner<<<blocks, threads>>>(da, dout, n);
    bad += compare("inner", from_device(dout, n), ref);
  }
  if (want("strided")) {
    const int n = 700, blocks = 2, threads = 96, stop = 9, total = blocks * threads;
    std::vector<int> v(n), ref(n, -1);
    for (int i = 0; i < n; ++i) v[i] = (i * 31) % 50 + 1;
    for (int t = 0; t < total; ++t)
      for (int idx = t; idx < n; idx += total) {
        int acc = 0;
        for (int k = 0; k < 5; ++k) acc += v[idx] * k;
        int steps = 0, x = v[idx];
        while (x > 1) { x = (x % 2) ? 3 * x + 1 : x / 2; ++steps; }
        ref[idx] = acc + 1000 * steps;
        if (v[idx] == stop) break;
      }
    int *dv = to_device(v), *dout = to_device(std::vector<int>(n, -1));
    strided<<<blocks, threads>>>(dv, dout, n, stop);
    bad += compare("strided", from_device(dout, n), ref);
  }
  if (want("leaving")) {
    const int n = 150;
    std::vector<int> v(n), ref(n);
    for (int i = 0; i < n; ++i) v[i] = (i * 17 + 3) % 23;
    for (int i = 0; i < n; ++i) {
      int acc = 0;
      for (int k = 0; k < 40; ++k) {
        if ((v[(i + k) % n] & 3) == 0) continue;
        acc += v[(i + k) % n];
        if (acc > 300 + i) break;
      }
      for (int j = i; j < n; j += 37) {
        if (v[j] % 5 == 0) { acc -= 1; continue; }
        bool skip = false;
        switch (v[j] % 4) {
          case 1: acc += 2; break;
          case 2: if (acc > 1000) break; acc *= 3; break;
          default: skip = true;
        }
        if (skip) continue;
        acc ^= j;
        if (acc < -50) break;
      }
      ref[i] = acc;
    }
    int *dv = to_device(v), *dout = to_device(std::vector<int>(n, 0));
    leaving<<<(n + 63) / 64, 64>>>(dv, dout, n);
    bad += compare("leaving", from_device(dout, n), ref);
  }
  if (want("locked")) {
    const int n = 100;
    int *lock = to_device(std::vector<int>(1, 0)), *total = to_device(std::vector<int>(1, 0));
    locked<<<2, 64>>>(lock, total, n);
    bad += compare("locked", from_device(total, 1), std::vector<int>(1, n * 6));
  }
  if (want("blocks3d")) {
    const dim3 block(40, 3, 2);
    const int nb = 2, per = 40 * 3 * 2;
    std::vector<int> ref(nb * per);
    for (int b = 0; b < nb; ++b)
      for (int z = 0; z < 2; ++z)
        for (int y = 0; y < 3; ++y)
          for (int x = 0; x < 40; ++x) {
            int acc = 0;
            for (int k = 0; k < 4; ++k) acc += x * 100 + y * 10 + z + k;
            ref[((b * 2 + z) * 3 + y) * 40 + x] = acc;
          }
    int* dout = to_device(std::vector<int>(nb * per, 0));
    blocks3d<<<nb, block>>>(dout);
    bad += compare("blocks3d", from_device(dout, nb * per), ref);
  }
  if (!strcmp(which, "asserting")) {
    const int n = 100;
    std::vector<int> v(n);
    for (int i = 0; i < n; ++i) v[i] = i == 70 ? 1001 : i;
    int* dv = to_device(v);
    asserting<<<2, 64>>>(dv, n);
    cudaError_t e = cudaDeviceSynchronize();
    printf("asserting: %s\n", cudaGetErrorString(e));
    return e == cudaSuccess;
  }
  return bad ? 1 : 0;
}
