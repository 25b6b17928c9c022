// 2x bilinear upscaling (OH = 2H, OW = 2W) of an H x W float image through a texture object (normalized
// coordinates, clamp, linear filtering): the image-processing idiom of scraped CUDA code.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#ifndef H
#define H 24
#endif
#ifndef W
#define W 20
#endif
#ifndef OH
#define OH (2 * H)
#endif
#ifndef OW
#define OW (2 * W)
#endif

__global__ void upscale(cudaTextureObject_t img, float* out, int ow, int oh) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < ow && y < oh) out[y * ow + x] = tex2D<float>(img, (x + 0.5f) / ow, (y + 0.5f) / oh);
}

int main() {
  static float img[H * W], out[OH * OW];
  FILE* f = fopen("data/img.bin", "rb");
  if (!f || fread(img, sizeof(float), H * W, f) != H * W) return 1;
  fclose(f);
  cudaChannelFormatDesc desc = cudaCreateChannelDesc(32, 0, 0, 0, cudaChannelFormatKindFloat);
  cudaArray_t arr;
  cudaMallocArray(&arr, &desc, W, H);
  cudaMemcpy2DToArray(arr, 0, 0, img, W * sizeof(float), W * sizeof(float), H, cudaMemcpyHostToDevice);
  cudaResourceDesc res = {};
  res.resType = cudaResourceTypeArray;
  res.res.array.array = arr;
  cudaTextureDesc td = {};
  td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;
  td.filterMode = cudaFilterModeLinear;
  td.readMode = cudaReadModeElementType;
  td.normalizedCoords = 1;
  cudaTextureObject_t tex;
  if (cudaCreateTextureObject(&tex, &res, &td, NULL) != cudaSuccess) return 1;
  float* d_out;
  cudaMalloc(&d_out, sizeof out);
  dim3 block(16, 8), grid((OW + 15) / 16, (OH + 7) / 8);
  upscale<<<grid, block>>>(tex, d_out, OW, OH);
  if (cudaDeviceSynchronize() != cudaSuccess) return 1;
  cudaMemcpy(out, d_out, sizeof out, cudaMemcpyDeviceToHost);
  f = fopen("data/out.bin", "wb");
  fwrite(out, sizeof(float), OH * OW, f);
  fclose(f);
  cudaDestroyTextureObject(tex);
  cudaFreeArray(arr);
  cudaFree(d_out);
  return 0;
}
