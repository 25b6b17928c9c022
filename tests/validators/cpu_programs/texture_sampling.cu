// Samples texture objects under every address mode x filter mode x coordinate mode and prints
// each result as hex floats ("name index c0 c1 c2 c3"); tests/validators/test_cpu_texture.py
// compares them with a NumPy model of the Programming Guide's texture fetching formulas.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#ifndef W
#define W 5
#endif
#ifndef H
#define H 4
#endif
#ifndef M
#define M 96
#endif
#define D 3

#define CHECK(x)                                                                   \
  do {                                                                             \
    cudaError_t e_ = (x);                                                          \
    if (e_ != cudaSuccess) {                                                       \
      printf("CUDA error %s at line %d: %s\n", #x, __LINE__, cudaGetErrorString(e_)); \
      exit(1);                                                                     \
    }                                                                              \
  } while (0)

template <class T>
static void load(const char* name, T* dst, size_t n) {
  char path[256];
  snprintf(path, sizeof path, "data/%s.bin", name);
  FILE* f = fopen(path, "rb");
  if (!f || fread(dst, sizeof(T), n, f) != n) {
    printf("cannot read %s\n", path);
    exit(1);
  }
  fclose(f);
}

__global__ void sample2d(cudaTextureObject_t tf, cudaTextureObject_t tc, const float2* xy, float* of, float4* oc, int m) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= m) return;
  of[i] = tex2D<float>(tf, xy[i].x, xy[i].y);
  oc[i] = tex2D<float4>(tc, xy[i].x, xy[i].y);
}

__global__ void sample1d(cudaTextureObject_t t, const float* x, float* o, int m) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < m) tex1D(&o[i], t, x[i]);  // the pointer form
}

__global__ void sample3d(cudaTextureObject_t t, const float4* p, float* o, int m) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < m) o[i] = tex3D<float>(t, p[i].x, p[i].y, p[i].z);
}

__global__ void fetch1d(cudaTextureObject_t tf, cudaTextureObject_t ti, cudaTextureObject_t tc, const int* idx,
                        float* of, int* oi, float* oc, int m) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= m) return;
  of[i] = tex1Dfetch<float>(tf, idx[i]);
  oi[i] = tex1Dfetch<int>(ti, idx[i]);
  oc[i] = tex1Dfetch<float>(tc, idx[i]);
}

static void print(const char* name, const float* v, int n, int comps) {
  for (int i = 0; i < n; ++i) {
    printf("%s %d", name, i);
    for (int c = 0; c < comps; ++c) printf(" %a", v[i * comps + c]);
    printf("\n");
  }
}

static cudaTextureDesc desc(cudaTextureAddressMode am, cudaTextureFilterMode fm, cudaTextureReadMode rm, int norm) {
  cudaTextureDesc td;
  memset(&td, 0, sizeof td);
  td.addressMode[0] = td.addressMode[1] = td.addressMode[2] = am;
  td.filterMode = fm;
  td.readMode = rm;
  td.normalizedCoords = norm;
  td.borderColor[0] = 0.25f;
  td.borderColor[1] = -0.5f;
  td.borderColor[2] = 0.75f;
  td.borderColor[3] = 1.0f;
  return td;
}

int main() {
  static float ftex[H * W];
  static uchar4 ctex[H * W];
  static float2 cu[M], cn[M];
  load("ftex", ftex, H * W);
  load("ctex", ctex, H * W);
  load("coords_u", cu, M);
  load("coords_n", cn, M);

  // 2D: a float texture and a uchar4 texture read as normalized floats, both CUDA arrays.
  cudaChannelFormatDesc fd = cudaCreateChannelDesc<float>();
  cudaChannelFormatDesc cd = cudaCreateChannelDesc<uchar4>();
  cudaArray_t fa, ca;
  CHECK(cudaMallocArray(&fa, &fd, W, H));
  CHECK(cudaMallocArray(&ca, &cd, W, H));
  CHECK(cudaMemcpy2DToArray(fa, 0, 0, ftex, W * sizeof(float), W * sizeof(float), H, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpyToArray(ca, 0, 0, ctex, sizeof ctex, cudaMemcpyHostToDevice));
  static float back[H * W];
  CHECK(cudaMemcpy2DFromArray(back, W * sizeof(float), fa, 0, 0, W * sizeof(float), H, cudaMemcpyDeviceToHost));
  printf("roundtrip: %d\n", memcmp(back, ftex, sizeof back) == 0);

  float2* dxy;
  float* dof;
  float4* doc;
  CHECK(cudaMalloc(&dxy, M * sizeof(float2)));
  CHECK(cudaMalloc(&dof, M * sizeof(float)));
  CHECK(cudaMalloc(&doc, M * sizeof(float4)));
  static float hof[M];
  static float4 hoc[M];
  const char* modes[] = {"wrap", "clamp", "mirror", "border"};
  const char* filters[] = {"point", "linear"};
  for (int am = 0; am < 4; ++am)
    for (int fm = 0; fm < 2; ++fm)
      for (int norm = 0; norm < 2; ++norm) {
        cudaResourceDesc rf;
        memset(&rf, 0, sizeof rf);
        rf.resType = cudaResourceTypeArray;
        rf.res.array.array = fa;
        cudaResourceDesc rc = rf;
        rc.res.array.array = ca;
        cudaTextureDesc tdf = desc((cudaTextureAddressMode)am, (cudaTextureFilterMode)fm, cudaReadModeElementType, norm);
        cudaTextureDesc tdc = desc((cudaTextureAddressMode)am, (cudaTextureFilterMode)fm, cudaReadModeNormalizedFloat, norm);
        cudaTextureObject_t tf, tc;
        CHECK(cudaCreateTextureObject(&tf, &rf, &tdf, nullptr));
        CHECK(cudaCreateTextureObject(&tc, &rc, &tdc, nullptr));
        CHECK(cudaMemcpy(dxy, norm ? cn : cu, M * sizeof(float2), cudaMemcpyHostToDevice));
        sample2d<<<(M + 31) / 32, 32>>>(tf, tc, dxy, dof, doc, M);
        CHECK(cudaGetLastError());
        CHECK(cudaMemcpy(hof, dof, sizeof hof, cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(hoc, doc, sizeof hoc, cudaMemcpyDeviceToHost));
        char name[64];
        snprintf(name, sizeof name, "f2d/%s/%s/%d", modes[am], filters[fm], norm);
        print(name, hof, M, 1);
        snprintf(name, sizeof name, "c2d/%s/%s/%d", modes[am], filters[fm], norm);
        print(name, &hoc[0].x, M, 4);
        CHECK(cudaDestroyTextureObject(tf));
        CHECK(cudaDestroyTextureObject(tc));
      }

  // A pitched 2D resource over cudaMallocPitch memory (linear filter, clamp, unnormalized).
  float* pitched;
  size_t pitch;
  CHECK(cudaMallocPitch(&pitched, &pitch, W * sizeof(float), H));
  CHECK(cudaMemcpy2D(pitched, pitch, ftex, W * sizeof(float), W * sizeof(float), H, cudaMemcpyHostToDevice));
  {
    cudaResourceDesc r;
    memset(&r, 0, sizeof r);
    r.resType = cudaResourceTypePitch2D;
    r.res.pitch2D.devPtr = pitched;
    r.res.pitch2D.desc = fd;
    r.res.pitch2D.width = W;
    r.res.pitch2D.height = H;
    r.res.pitch2D.pitchInBytes = pitch;
    cudaTextureDesc td = desc(cudaAddressModeClamp, cudaFilterModeLinear, cudaReadModeElementType, 0);
    cudaTextureObject_t t;
    CHECK(cudaCreateTextureObject(&t, &r, &td, nullptr));
    cudaResourceDesc got;
    CHECK(cudaGetTextureObjectResourceDesc(&got, t));
    printf("resdesc: %d %d\n", got.resType == cudaResourceTypePitch2D, got.res.pitch2D.pitchInBytes == pitch);
    CHECK(cudaMemcpy(dxy, cu, M * sizeof(float2), cudaMemcpyHostToDevice));
    sample2d<<<(M + 31) / 32, 32>>>(t, t, dxy, dof, doc, M);
    CHECK(cudaMemcpy(hof, dof, sizeof hof, cudaMemcpyDeviceToHost));
    print("pitch2d", hof, M, 1);
    // A pitch that is not a multiple of 32 bytes is refused, as on a GPU.
    r.res.pitch2D.pitchInBytes = W * sizeof(float) + 4;
    cudaTextureObject_t bad;
    printf("badpitch: %d\n", (int)cudaCreateTextureObject(&bad, &r, &td, nullptr));
    cudaGetLastError();
    CHECK(cudaDestroyTextureObject(t));
  }

  // 1D: tex1D on a 1D array (first row of ftex, linear filter, border) with the x coordinates.
  {
    cudaArray_t a1;
    CHECK(cudaMallocArray(&a1, &fd, W));
    CHECK(cudaMemcpyToArray(a1, 0, 0, ftex, W * sizeof(float), cudaMemcpyHostToDevice));
    cudaResourceDesc r;
    memset(&r, 0, sizeof r);
    r.resType = cudaResourceTypeArray;
    r.res.array.array = a1;
    cudaTextureDesc td = desc(cudaAddressModeBorder, cudaFilterModeLinear, cudaReadModeElementType, 0);
    cudaTextureObject_t t;
    CHECK(cudaCreateTextureObject(&t, &r, &td, nullptr));
    static float xs[M];
    for (int i = 0; i < M; ++i) xs[i] = cu[i].x;
    float *dx, *dout;
    CHECK(cudaMalloc(&dx, sizeof xs));
    CHECK(cudaMalloc(&dout, sizeof xs));
    CHECK(cudaMemcpy(dx, xs, sizeof xs, cudaMemcpyHostToDevice));
    sample1d<<<(M + 31) / 32, 32>>>(t, dx, dout, M);
    CHECK(cudaMemcpy(hof, dout, sizeof hof, cudaMemcpyDeviceToHost));
    print("tex1d", hof, M, 1);
    CHECK(cudaDestroyTextureObject(t));
    CHECK(cudaFreeArray(a1));
    CHECK(cudaFree(dx));
    CHECK(cudaFree(dout));
  }

  // 3D: a W x H x D float array filled with cudaMemcpy3D (ftex scaled per slice), trilinear,
  // normalized coordinates, wrap.
  {
    static float vol[D * H * W];
    for (int z = 0; z < D; ++z)
      for (int i = 0; i < H * W; ++i) vol[z * H * W + i] = ftex[i] * (float)(z + 1);
    cudaArray_t a3;
    CHECK(cudaMalloc3DArray(&a3, &fd, make_cudaExtent(W, H, D)));
    cudaMemcpy3DParms p = {0};
    p.srcPtr = make_cudaPitchedPtr(vol, W * sizeof(float), W, H);
    p.dstArray = a3;
    p.extent = make_cudaExtent(W, H, D);
    p.kind = cudaMemcpyHostToDevice;
    CHECK(cudaMemcpy3D(&p));
    cudaResourceDesc r;
    memset(&r, 0, sizeof r);
    r.resType = cudaResourceTypeArray;
    r.res.array.array = a3;
    cudaTextureDesc td = desc(cudaAddressModeWrap, cudaFilterModeLinear, cudaReadModeElementType, 1);
    cudaTextureObject_t t;
    CHECK(cudaCreateTextureObject(&t, &r, &td, nullptr));
    static float4 pts[M];
    for (int i = 0; i < M; ++i) pts[i] = make_float4(cn[i].x, cn[i].y, cn[(i * 7) % M].x, 0.0f);
    float4* dp;
    CHECK(cudaMalloc(&dp, sizeof pts));
    CHECK(cudaMemcpy(dp, pts, sizeof pts, cudaMemcpyHostToDevice));
    sample3d<<<(M + 31) / 32, 32>>>(t, dp, dof, M);
    CHECK(cudaMemcpy(hof, dof, sizeof hof, cudaMemcpyDeviceToHost));
    print("tex3d", hof, M, 1);
    CHECK(cudaDestroyTextureObject(t));
    CHECK(cudaFreeArray(a3));
    CHECK(cudaFree(dp));
  }

  // tex1Dfetch over linear memory: float, int (element type) and unsigned char (normalized),
  // indices inside and outside [0, L).
  {
    const int L = H * W;
    float* lf;
    int* li;
    unsigned char* lc;
    CHECK(cudaMalloc(&lf, L * sizeof(float)));
    CHECK(cudaMalloc(&li, L * sizeof(int)));
    CHECK(cudaMalloc(&lc, L));
    static int hi[H * W];
    static unsigned char hc[H * W];
    for (int i = 0; i < L; ++i) {
      hi[i] = (int)(ftex[i] * 1000.0f);
      hc[i] = ctex[i].y;
    }
    CHECK(cudaMemcpy(lf, ftex, L * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(li, hi, L * sizeof(int), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(lc, hc, L, cudaMemcpyHostToDevice));
    cudaTextureObject_t t[3];
    void* ptrs[3] = {lf, li, lc};
    cudaChannelFormatDesc ds[3] = {fd, cudaCreateChannelDesc<int>(), cudaCreateChannelDesc<unsigned char>()};
    size_t sizes[3] = {L * sizeof(float), L * sizeof(int), (size_t)L};
    for (int k = 0; k < 3; ++k) {
      cudaResourceDesc r;
      memset(&r, 0, sizeof r);
      r.resType = cudaResourceTypeLinear;
      r.res.linear.devPtr = ptrs[k];
      r.res.linear.desc = ds[k];
      r.res.linear.sizeInBytes = sizes[k];
      cudaTextureDesc td = desc(cudaAddressModeClamp, cudaFilterModePoint,
                                k == 2 ? cudaReadModeNormalizedFloat : cudaReadModeElementType, 0);
      CHECK(cudaCreateTextureObject(&t[k], &r, &td, nullptr));
    }
    // Linear filtering of an integer texture read as integers is refused.
    {
      cudaResourceDesc r;
      memset(&r, 0, sizeof r);
      r.resType = cudaResourceTypeLinear;
      r.res.linear.devPtr = li;
      r.res.linear.desc = ds[1];
      r.res.linear.sizeInBytes = sizes[1];
      cudaTextureDesc td = desc(cudaAddressModeClamp, cudaFilterModeLinear, cudaReadModeElementType, 0);
      cudaTextureObject_t bad;
      printf("intlinear: %d\n", (int)cudaCreateTextureObject(&bad, &r, &td, nullptr));
      cudaGetLastError();
    }
    static int idx[M];
    for (int i = 0; i < M; ++i) idx[i] = i - 8;  // -8 .. M-9: both sides of [0, L)
    int *didx, *doi;
    float *dof2, *doc2;
    CHECK(cudaMalloc(&didx, sizeof idx));
    CHECK(cudaMalloc(&doi, M * sizeof(int)));
    CHECK(cudaMalloc(&dof2, M * sizeof(float)));
    CHECK(cudaMalloc(&doc2, M * sizeof(float)));
    CHECK(cudaMemcpy(didx, idx, sizeof idx, cudaMemcpyHostToDevice));
    fetch1d<<<(M + 31) / 32, 32>>>(t[0], t[1], t[2], didx, dof2, doi, doc2, M);
    CHECK(cudaGetLastError());
    static int hoi[M];
    static float hoc2[M];
    CHECK(cudaMemcpy(hof, dof2, sizeof hof, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(hoi, doi, sizeof hoi, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(hoc2, doc2, sizeof hoc2, cudaMemcpyDeviceToHost));
    print("fetch_f", hof, M, 1);
    for (int i = 0; i < M; ++i) printf("fetch_i %d %d\n", i, hoi[i]);
    print("fetch_c", hoc2, M, 1);
    for (int k = 0; k < 3; ++k) CHECK(cudaDestroyTextureObject(t[k]));
  }
  CHECK(cudaFreeArray(fa));
  CHECK(cudaFreeArray(ca));
  printf("done\n");
  return 0;
}
