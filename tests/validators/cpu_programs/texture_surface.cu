// Surface objects: a kernel writes a CUDA array through surf2Dwrite (x in bytes), another reads
// it back through surf2Dread (Zero and Clamp boundary modes) and a texture object on the same
// array; boundary-mode writes outside the surface; the array copied back. -DTRAP=1 writes
// outside the surface with the default (Trap) mode.
#include <cstdio>
#include <cuda_runtime.h>

#ifndef W
#define W 6
#endif
#ifndef H
#define H 5
#endif
#ifndef TRAP
#define TRAP 0
#endif
#define PX (W + 4)
#define PY (H + 4)

__global__ void fill(cudaSurfaceObject_t s, const float* in) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < W && y < H) surf2Dwrite(in[y * W + x] * 2.0f + 1.0f, s, x * (int)sizeof(float), y);
  if (TRAP && x == 0 && y == 0) surf2Dwrite(0.0f, s, W * (int)sizeof(float), 0);
}

__global__ void probe(cudaSurfaceObject_t s, cudaTextureObject_t t, float* z, float* c, float* tx) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= PX * PY) return;
  int x = i % PX - 2, y = i / PX - 2;
  z[i] = surf2Dread<float>(s, x * 4, y, cudaBoundaryModeZero);
  surf2Dread(&c[i], s, x * 4, y, cudaBoundaryModeClamp);
  tx[i] = tex2D<float>(t, x + 0.5f, y + 0.5f);
}

__global__ void edges(cudaSurfaceObject_t s) {
  surf2Dwrite(-7.0f, s, (W + 3) * 4, -1, cudaBoundaryModeClamp);  // lands on (W-1, 0)
  surf2Dwrite(-9.0f, s, -4, 1, cudaBoundaryModeZero);              // dropped
}

int main() {
  static float in[W * H], back[W * H], hz[PX * PY], hc[PX * PY], ht[PX * PY];
  for (int i = 0; i < W * H; ++i) in[i] = (float)((i * 37) % 11) - 5.0f + 0.25f * i;
  cudaChannelFormatDesc fd = cudaCreateChannelDesc<float>();
  cudaArray_t a;
  if (cudaMallocArray(&a, &fd, W, H, cudaArraySurfaceLoadStore) != cudaSuccess) return 2;
  cudaResourceDesc r = {};
  r.resType = cudaResourceTypeArray;
  r.res.array.array = a;
  cudaSurfaceObject_t s;
  if (cudaCreateSurfaceObject(&s, &r) != cudaSuccess) return 3;
  cudaTextureDesc td = {};
  td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;
  cudaTextureObject_t t;
  if (cudaCreateTextureObject(&t, &r, &td, nullptr) != cudaSuccess) return 4;
  float *din, *dz, *dc, *dt;
  cudaMalloc(&din, sizeof in);
  cudaMalloc(&dz, sizeof hz);
  cudaMalloc(&dc, sizeof hc);
  cudaMalloc(&dt, sizeof ht);
  cudaMemcpy(din, in, sizeof in, cudaMemcpyHostToDevice);
  fill<<<dim3(1, 2), dim3(8, 4)>>>(s, din);
  probe<<<(PX * PY + 63) / 64, 64>>>(s, t, dz, dc, dt);
  edges<<<1, 1>>>(s);
  if (cudaDeviceSynchronize() != cudaSuccess) return 5;
  cudaMemcpy(hz, dz, sizeof hz, cudaMemcpyDeviceToHost);
  cudaMemcpy(hc, dc, sizeof hc, cudaMemcpyDeviceToHost);
  cudaMemcpy(ht, dt, sizeof ht, cudaMemcpyDeviceToHost);
  cudaMemcpy2DFromArray(back, W * sizeof(float), a, 0, 0, W * sizeof(float), H, cudaMemcpyDeviceToHost);
  for (int i = 0; i < PX * PY; ++i) printf("probe %d %a %a %a\n", i, hz[i], hc[i], ht[i]);
  for (int i = 0; i < W * H; ++i) printf("array %d %a\n", i, back[i]);
  // An array made without cudaArraySurfaceLoadStore cannot back a surface.
  cudaArray_t plain;
  cudaMallocArray(&plain, &fd, W, H);
  r.res.array.array = plain;
  cudaSurfaceObject_t bad;
  printf("noflag: %d\n", (int)cudaCreateSurfaceObject(&bad, &r));
  cudaDestroySurfaceObject(s);
  cudaDestroyTextureObject(t);
  cudaFreeArray(a);
  cudaFreeArray(plain);
  return 0;
}
