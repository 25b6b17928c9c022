// Layered and cubemap textures and surfaces, every fetched value checked against a host model:
// - 2D layered float / uchar4 (NormalizedFloat) / int textures under each address mode, point
//   and linear filtering, normalized and unnormalized coordinates; the layer picks one image
//   (linear filtering never blends layers; layers 100 apart would show it) and a layer past the
//   last reads the last one;
// - 1D layered uchar2 (NormalizedFloat, linear, border) and float (point, mirror) textures;
// - cubemaps: a direction at every texel centre of every face (scaled by powers of two: only
//   the direction counts), directions whose face and texel were worked out by hand from the
//   Programming Guide's table, texels next to a face's edge under each address mode, and
//   seamlessCubemap (point clamps; linear takes the texel past an edge from the adjacent face,
//   and a corner tap is the mean of the other three);
// - layered cubemaps (the layer selects a cubemap of six faces);
// - surf1DLayered / surf2DLayered / surfCubemap / surfCubemapLayered writes and reads, boundary
//   modes on the layer;
// - the pointer, Lod and Grad forms; cudaMalloc3DArray's extents and flags, cudaArrayGetInfo,
//   cudaMemcpy3D of a sub-box into and out of a layered array.
// Prints PASS when every check holds, else the first mismatches and FAIL.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include <cuda_runtime.h>

#define CK(call)                                                                   \
  do {                                                                             \
    cudaError_t e_ = (call);                                                       \
    if (e_ != cudaSuccess) {                                                       \
      printf("%s:%d %s: %s\nFAIL\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      return 1;                                                                    \
    }                                                                              \
  } while (0)

static int g_bad = 0, g_checked = 0;
static void expect(const char* what, int i, double got, double want, double tol = 1e-5) {
  ++g_checked;
  if (std::fabs(got - want) <= tol * (1.0 + std::fabs(want))) return;
  if (g_bad++ < 20) printf("mismatch %s [%d]: got %.9g want %.9g\n", what, i, got, want);
}

// ------------------------------------------------------------------ host model
static const float kBorder[4] = {-3.0f, 0.5f, 7.0f, 1.0f};

static long addr(long i, long n, cudaTextureAddressMode m, bool norm) {
  if (i >= 0 && i < n) return i;
  if (!norm && (m == cudaAddressModeWrap || m == cudaAddressModeMirror)) m = cudaAddressModeClamp;
  if (m == cudaAddressModeClamp) return i < 0 ? 0 : n - 1;
  if (m == cudaAddressModeWrap) return ((i % n) + n) % n;
  if (m == cudaAddressModeMirror) {
    long r = ((i % (2 * n)) + 2 * n) % (2 * n);
    return r < n ? r : 2 * n - 1 - r;
  }
  return -1;  // border
}

// One image of w x h texels with c components (values already normalized), sampled at (x, y)
// (dims 1: x only). Coordinates are chosen so that every weight is a multiple of 1/8.
struct Image {
  int w, h, c;
  const float* v;
  double at(long x, long y, int k) const {
    if (x < 0 || y < 0) return kBorder[k];
    return v[(y * w + x) * c + k];
  }
};
static void model(const Image& im, int dims, float x, float y, cudaTextureAddressMode m, bool linear, bool norm,
                  double* out) {
  const double u = norm ? (double)x * im.w : x, t = norm ? (double)y * im.h : y;
  for (int k = 0; k < 4; ++k) out[k] = 0.0;
  if (!linear) {
    long i = addr((long)std::floor(u), im.w, m, norm);
    long j = dims > 1 ? addr((long)std::floor(t), im.h, m, norm) : 0;
    for (int k = 0; k < im.c; ++k) out[k] = im.at(i, j, k);
    return;
  }
  const double bu = u - 0.5, bt = t - 0.5;
  const long i0 = (long)std::floor(bu), j0 = (long)std::floor(bt);
  const double a = bu - i0, b = dims > 1 ? bt - j0 : 0.0;
  for (int dj = 0; dj < (dims > 1 ? 2 : 1); ++dj)
    for (int di = 0; di < 2; ++di) {
      const double wgt = (di ? a : 1 - a) * (dims > 1 ? (dj ? b : 1 - b) : 1.0);
      long i = addr(i0 + di, im.w, m, norm), j = dims > 1 ? addr(j0 + dj, im.h, m, norm) : 0;
      for (int k = 0; k < im.c; ++k) out[k] += wgt * im.at(i, j, k);
    }
}

// The direction pointing at (s, t) in [-1, 1] of face f, from the Programming Guide's table read
// backwards (|m| = 1).
static void face_dir(int f, double s, double t, float* d) {
  const double tab[6][3] = {{1, -t, -s}, {-1, -t, s}, {s, 1, t}, {s, -1, -t}, {s, -t, 1}, {-s, -t, -1}};
  for (int k = 0; k < 3; ++k) d[k] = (float)tab[f][k];
}

// ------------------------------------------------------------------ kernels
struct Q {
  float x, y, z;
  int layer;
};

__global__ void k_layered2d(cudaTextureObject_t t, const Q* q, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2DLayered<float>(t, q[i].x, q[i].y, q[i].layer);
}
__global__ void k_layered2d_c4(cudaTextureObject_t t, const Q* q, float4* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2DLayered<float4>(t, q[i].x, q[i].y, q[i].layer);
}
__global__ void k_layered2d_int(cudaTextureObject_t t, const Q* q, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2DLayered<int>(t, q[i].x, q[i].y, q[i].layer);
}
__global__ void k_layered1d_c2(cudaTextureObject_t t, const Q* q, float2* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex1DLayered<float2>(t, q[i].x, q[i].layer);
}
__global__ void k_layered1d(cudaTextureObject_t t, const Q* q, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex1DLayered<float>(t, q[i].x, q[i].layer);
}
__global__ void k_cube(cudaTextureObject_t t, const Q* q, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = texCubemap<float>(t, q[i].x, q[i].y, q[i].z);
}
__global__ void k_cube_c4(cudaTextureObject_t t, const Q* q, float4* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = texCubemap<float4>(t, q[i].x, q[i].y, q[i].z);
}
__global__ void k_cube_layered(cudaTextureObject_t t, const Q* q, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = texCubemapLayered<float>(t, q[i].x, q[i].y, q[i].z, q[i].layer);
}
__global__ void k_cube_ptr2(cudaTextureObject_t t, const Q* q, float2* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) texCubemap(&out[i], t, q[i].x, q[i].y, q[i].z);
}
// The pointer, Lod and Grad forms next to the value form: out[i * 4 + form].
__global__ void k_forms(cudaTextureObject_t l2, cudaTextureObject_t l1, cudaTextureObject_t cb,
                        cudaTextureObject_t cl, const Q* q, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float* o = out + i * 16;
  const Q p = q[i];
  o[0] = tex2DLayered<float>(l2, p.x, p.y, p.layer);
  tex2DLayered(&o[1], l2, p.x, p.y, p.layer);
  o[2] = tex2DLayeredLod<float>(l2, p.x, p.y, p.layer, 1.5f);
  tex2DLayeredGrad(&o[3], l2, p.x, p.y, p.layer, make_float2(1, 0), make_float2(0, 1));
  float2 v1;
  tex1DLayered(&v1, l1, p.x, p.layer);
  o[4] = tex1DLayered<float2>(l1, p.x, p.layer).x;
  o[5] = v1.x;
  o[6] = tex1DLayeredLod<float2>(l1, p.x, p.layer, 2.0f).x;
  tex1DLayeredGrad(&v1, l1, p.x, p.layer, 0.5f, 0.5f);
  o[7] = v1.x;
  o[8] = texCubemap<float>(cb, p.x, p.y, p.z);
  texCubemap(&o[9], cb, p.x, p.y, p.z);
  o[10] = texCubemapLod<float>(cb, p.x, p.y, p.z, 0.0f);
  texCubemapGrad(&o[11], cb, p.x, p.y, p.z, make_float4(1, 0, 0, 0), make_float4(0, 1, 0, 0));
  o[12] = texCubemapLayered<float>(cl, p.x, p.y, p.z, p.layer);
  texCubemapLayered(&o[13], cl, p.x, p.y, p.z, p.layer);
  texCubemapLayeredLod(&o[14], cl, p.x, p.y, p.z, p.layer, 3.0f);
  o[15] = texCubemapLayeredGrad<float>(cl, p.x, p.y, p.z, p.layer, make_float4(0, 0, 1, 0), make_float4(0, 1, 0, 0));
}

// Surfaces: each thread writes one element, x in bytes.
__global__ void k_surf_write(cudaSurfaceObject_t s2, cudaSurfaceObject_t s1, cudaSurfaceObject_t sc,
                             cudaSurfaceObject_t scl, int w, int h, int layers, int n1, int nc, int ncl) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < w * h * layers) {
    int x = i % w, y = i / w % h, l = i / (w * h);
    surf2DLayeredwrite(1000.0f * l + 10.0f * y + x + 0.25f, s2, x * 4, y, l);
  }
  if (i < w * layers) surf1DLayeredwrite(-(i % w) - 100 * (i / w), s1, (i % w) * 4, i / w);
  if (i < nc * nc * 6) {
    int x = i % nc, y = i / nc % nc, f = i / (nc * nc);
    surfCubemapwrite(make_float2(100.0f * f + 10 * y + x, -1.0f * f), sc, x * 8, y, f);
  }
  if (i < ncl * ncl * 12) {
    int x = i % ncl, y = i / ncl % ncl, lf = i / (ncl * ncl);
    surfCubemapLayeredwrite((short)(lf * 16 + y * 4 + x), scl, x * 2, y, lf);
  }
}
__global__ void k_surf_read(cudaSurfaceObject_t s2, cudaSurfaceObject_t s1, cudaSurfaceObject_t sc,
                            cudaSurfaceObject_t scl, float* o2, int* o1, float2* oc, short* ocl, float* edge,
                            int w, int h, int layers, int n1, int nc, int ncl) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < w * h * layers) o2[i] = surf2DLayeredread<float>(s2, (i % w) * 4, i / w % h, i / (w * h));
  if (i < w * layers) surf1DLayeredread(&o1[i], s1, (i % w) * 4, i / w);
  if (i < nc * nc * 6) oc[i] = surfCubemapread<float2>(sc, (i % nc) * 8, i / nc % nc, i / (nc * nc));
  if (i < ncl * ncl * 12) surfCubemapLayeredread(&ocl[i], scl, (i % ncl) * 2, i / ncl % ncl, i / (ncl * ncl));
  if (i == 0) {
    edge[0] = surf2DLayeredread<float>(s2, 4, 1, layers, cudaBoundaryModeZero);   // past the last layer: 0
    edge[1] = surf2DLayeredread<float>(s2, 4, 1, layers + 3, cudaBoundaryModeClamp);  // the last layer
    surf2DLayeredwrite(-5.0f, s2, 0, 0, -1, cudaBoundaryModeZero);                   // dropped
  }
}

// ------------------------------------------------------------------ host helpers
template <class T>
static T* dev_copy(const std::vector<T>& h) {
  T* d = nullptr;
  cudaMalloc(&d, h.size() * sizeof(T) + 1);
  cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice);
  return d;
}
template <class T>
static std::vector<T> host_copy(const T* d, size_t n) {
  std::vector<T> h(n);
  cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost);
  return h;
}
static cudaError_t fill_array(cudaArray_t a, const void* src, size_t elem, size_t w, size_t h, size_t d) {
  cudaMemcpy3DParms p = {};
  p.srcPtr = make_cudaPitchedPtr(const_cast<void*>(src), w * elem, w, h);
  p.dstArray = a;
  p.extent = make_cudaExtent(w, h, d);
  p.kind = cudaMemcpyHostToDevice;
  return cudaMemcpy3D(&p);
}
static cudaTextureObject_t make_tex(cudaArray_t a, cudaTextureAddressMode m, bool linear, bool norm,
                                    cudaTextureReadMode rm = cudaReadModeElementType, int seamless = 0) {
  cudaResourceDesc r = {};
  r.resType = cudaResourceTypeArray;
  r.res.array.array = a;
  cudaTextureDesc td = {};
  td.addressMode[0] = td.addressMode[1] = td.addressMode[2] = m;
  td.filterMode = linear ? cudaFilterModeLinear : cudaFilterModePoint;
  td.readMode = rm;
  td.normalizedCoords = norm;
  td.seamlessCubemap = seamless;
  for (int k = 0; k < 4; ++k) td.borderColor[k] = kBorder[k];
  cudaTextureObject_t t = 0;
  if (cudaCreateTextureObject(&t, &r, &td, nullptr) != cudaSuccess) printf("cudaCreateTextureObject failed\n");
  return t;
}
static unsigned g_seed = 12345u;
static int rnd(int lo, int hi) {  // [lo, hi)
  g_seed = g_seed * 1664525u + 1013904223u;
  return lo + (int)((g_seed >> 8) % (unsigned)(hi - lo));
}
static const cudaTextureAddressMode kModes[4] = {cudaAddressModeWrap, cudaAddressModeClamp, cudaAddressModeMirror,
                                                 cudaAddressModeBorder};
static const char* kModeNames[4] = {"wrap", "clamp", "mirror", "border"};

int main() {
  const int W = 8, H = 4, L = 3, NQ = 96;

  // ---------------------------------------------------------------- 2D layered textures
  std::vector<float> f2(W * H * L);
  std::vector<unsigned char> c2(W * H * L * 4);
  std::vector<int> i2(W * H * L);
  for (int l = 0; l < L; ++l)
    for (int y = 0; y < H; ++y)
      for (int x = 0; x < W; ++x) {
        int k = (l * H + y) * W + x;
        f2[k] = 100.0f * l + 10.0f * y + x + 0.5f * ((x * y) % 3);
        for (int c = 0; c < 4; ++c) c2[k * 4 + c] = (unsigned char)((k * 37 + c * 91 + l * 50) % 256);
        i2[k] = -1000 * l + 7 * k - 40;
      }
  cudaChannelFormatDesc fd = cudaCreateChannelDesc<float>();
  cudaChannelFormatDesc cd4 = cudaCreateChannelDesc<uchar4>();
  cudaChannelFormatDesc id = cudaCreateChannelDesc<int>();
  cudaArray_t af2, ac2, ai2;
  CK(cudaMalloc3DArray(&af2, &fd, make_cudaExtent(W, H, L), cudaArrayLayered));
  CK(cudaMalloc3DArray(&ac2, &cd4, make_cudaExtent(W, H, L), cudaArrayLayered));
  CK(cudaMalloc3DArray(&ai2, &id, make_cudaExtent(W, H, L), cudaArrayLayered));
  CK(fill_array(af2, f2.data(), 4, W, H, L));
  CK(fill_array(ac2, c2.data(), 4, W, H, L));
  CK(fill_array(ai2, i2.data(), 4, W, H, L));

  // Queries: normalized coordinates on a 1/64 grid over [-1.5, 2.5), unnormalized ones on a
  // 1/8 grid over [-3, W + 3) x [-3, H + 3); layers 0 .. L + 1 (the last two past the end).
  std::vector<Q> qn(NQ), qu(NQ);
  for (int i = 0; i < NQ; ++i) {
    qn[i] = {rnd(-96, 160) / 64.0f, rnd(-96, 160) / 64.0f, 0.0f, i % (L + 2)};
    qu[i] = {rnd(-24, 8 * (W + 3)) / 8.0f, rnd(-24, 8 * (H + 3)) / 8.0f, 0.0f, (i / 3) % (L + 2)};
  }
  qu[0] = {0.5f, 0.5f, 0, 0};
  qu[1] = {W - 0.5f, H - 0.5f, 0, L - 1};
  qu[2] = {2.0f, 1.5f, 0, 1};  // halfway between two texels of layer 1 only
  Q* dqn = dev_copy(qn);
  Q* dqu = dev_copy(qu);
  float* dout;
  float4* dout4;
  int* douti;
  float2* dout2;
  CK(cudaMalloc(&dout, NQ * 16 * sizeof(float)));
  CK(cudaMalloc(&dout4, 2 * NQ * sizeof(float4)));  // the cubemap checks read up to 102 values
  CK(cudaMalloc(&douti, NQ * sizeof(int)));
  CK(cudaMalloc(&dout2, NQ * sizeof(float2)));
  auto clamp_layer = [](int l, int n) { return l >= n ? n - 1 : l; };

  char what[96];
  for (int mi = 0; mi < 4; ++mi)
    for (int linear = 0; linear < 2; ++linear)
      for (int norm = 0; norm < 2; ++norm) {
        cudaTextureObject_t t = make_tex(af2, kModes[mi], linear, norm);
        const std::vector<Q>& q = norm ? qn : qu;
        k_layered2d<<<(NQ + 31) / 32, 32>>>(t, norm ? dqn : dqu, dout, NQ);
        CK(cudaDeviceSynchronize());
        std::vector<float> got = host_copy(dout, NQ);
        snprintf(what, sizeof what, "tex2DLayered float %s %s %s", kModeNames[mi], linear ? "linear" : "point",
                 norm ? "normalized" : "unnormalized");
        for (int i = 0; i < NQ; ++i) {
          Image im{W, H, 1, f2.data() + clamp_layer(q[i].layer, L) * W * H};
          double want[4];
          model(im, 2, q[i].x, q[i].y, kModes[mi], linear, norm, want);
          expect(what, i, got[i], want[0]);
        }
        CK(cudaDestroyTextureObject(t));
      }
  {
    // uchar4 read as normalized floats, bilinear, wrap.
    std::vector<float> norm4(c2.size());
    for (size_t k = 0; k < c2.size(); ++k) norm4[k] = c2[k] / 255.0f;
    cudaTextureObject_t t = make_tex(ac2, cudaAddressModeWrap, true, true, cudaReadModeNormalizedFloat);
    k_layered2d_c4<<<(NQ + 31) / 32, 32>>>(t, dqn, dout4, NQ);
    CK(cudaDeviceSynchronize());
    std::vector<float4> got = host_copy(dout4, NQ);
    for (int i = 0; i < NQ; ++i) {
      Image im{W, H, 4, norm4.data() + clamp_layer(qn[i].layer, L) * W * H * 4};
      double want[4];
      model(im, 2, qn[i].x, qn[i].y, cudaAddressModeWrap, true, true, want);
      const float g[4] = {got[i].x, got[i].y, got[i].z, got[i].w};
      for (int c = 0; c < 4; ++c) expect("tex2DLayered uchar4 normalized-float linear wrap", i * 4 + c, g[c], want[c]);
    }
    CK(cudaDestroyTextureObject(t));
    // int texels, element type, point, clamp (unnormalized).
    t = make_tex(ai2, cudaAddressModeClamp, false, false);
    k_layered2d_int<<<(NQ + 31) / 32, 32>>>(t, dqu, douti, NQ);
    CK(cudaDeviceSynchronize());
    std::vector<int> goti = host_copy(douti, NQ);
    std::vector<float> fi(i2.begin(), i2.end());
    for (int i = 0; i < NQ; ++i) {
      Image im{W, H, 1, fi.data() + clamp_layer(qu[i].layer, L) * W * H};
      double want[4];
      model(im, 2, qu[i].x, qu[i].y, cudaAddressModeClamp, false, false, want);
      expect("tex2DLayered int point clamp", i, goti[i], want[0], 0.0);
    }
    CK(cudaDestroyTextureObject(t));
    // A linear fetch halfway between two texels of layer 1 blends those two only.
    t = make_tex(af2, cudaAddressModeClamp, true, false);
    k_layered2d<<<1, 32>>>(t, dqu, dout, 3);
    CK(cudaDeviceSynchronize());
    std::vector<float> got3 = host_copy(dout, 3);
    expect("layer 0 texel centre", 0, got3[0], f2[0]);
    expect("last layer texel centre", 1, got3[1], f2[W * H * L - 1]);
    expect("no blending across layers", 2, got3[2], 0.5 * (f2[W * H + W + 1] + f2[W * H + W + 2]));
    CK(cudaDestroyTextureObject(t));
  }

  // ---------------------------------------------------------------- 1D layered textures
  const int L1 = 4;
  std::vector<unsigned char> c1(W * L1 * 2);
  std::vector<float> f1(W * L1), c1n(c1.size());
  for (size_t k = 0; k < c1.size(); ++k) {
    c1[k] = (unsigned char)((k * 53 + 11) % 256);
    c1n[k] = c1[k] / 255.0f;
  }
  for (int k = 0; k < W * L1; ++k) f1[k] = 1000.0f * (k / W) + (k % W) * 1.5f;
  cudaChannelFormatDesc cd2 = cudaCreateChannelDesc<uchar2>();
  cudaArray_t ac1, af1;
  CK(cudaMalloc3DArray(&ac1, &cd2, make_cudaExtent(W, 0, L1), cudaArrayLayered));
  CK(cudaMalloc3DArray(&af1, &fd, make_cudaExtent(W, 0, L1), cudaArrayLayered));
  CK(fill_array(ac1, c1.data(), 2, W, 1, L1));
  CK(fill_array(af1, f1.data(), 4, W, 1, L1));
  {
    cudaTextureObject_t t = make_tex(ac1, cudaAddressModeBorder, true, true, cudaReadModeNormalizedFloat);
    k_layered1d_c2<<<(NQ + 31) / 32, 32>>>(t, dqn, dout2, NQ);
    CK(cudaDeviceSynchronize());
    std::vector<float2> got = host_copy(dout2, NQ);
    for (int i = 0; i < NQ; ++i) {
      Image im{W, 1, 2, c1n.data() + clamp_layer(qn[i].layer, L1) * W * 2};
      double want[4];
      model(im, 1, qn[i].x, 0.0f, cudaAddressModeBorder, true, true, want);
      expect("tex1DLayered uchar2 normalized-float linear border", 2 * i, got[i].x, want[0]);
      expect("tex1DLayered uchar2 normalized-float linear border", 2 * i + 1, got[i].y, want[1]);
    }
    CK(cudaDestroyTextureObject(t));
    t = make_tex(af1, cudaAddressModeMirror, false, true);
    k_layered1d<<<(NQ + 31) / 32, 32>>>(t, dqn, dout, NQ);
    CK(cudaDeviceSynchronize());
    std::vector<float> gotf = host_copy(dout, NQ);
    for (int i = 0; i < NQ; ++i) {
      Image im{W, 1, 1, f1.data() + clamp_layer(qn[i].layer, L1) * W};
      double want[4];
      model(im, 1, qn[i].x, 0.0f, cudaAddressModeMirror, false, true, want);
      expect("tex1DLayered float point mirror", i, gotf[i], want[0]);
    }
    CK(cudaDestroyTextureObject(t));
  }

  // ---------------------------------------------------------------- cubemaps
  const int N = 4;
  std::vector<float> cube(N * N * 6);
  std::vector<unsigned char> cube4(N * N * 6 * 4);
  for (int f = 0; f < 6; ++f)
    for (int y = 0; y < N; ++y)
      for (int x = 0; x < N; ++x) {
        int k = (f * N + y) * N + x;
        cube[k] = 100.0f * f + 10.0f * y + x;
        for (int c = 0; c < 4; ++c) cube4[k * 4 + c] = (unsigned char)(f * 40 + y * 8 + x * 2 + c);
      }
  auto cv = [&](int f, int y, int x) { return (double)cube[(f * N + y) * N + x]; };
  cudaArray_t acb, acb4;
  CK(cudaMalloc3DArray(&acb, &fd, make_cudaExtent(N, N, 6), cudaArrayCubemap));
  CK(cudaMalloc3DArray(&acb4, &cd4, make_cudaExtent(N, N, 6), cudaArrayCubemap));
  CK(fill_array(acb, cube.data(), 4, N, N, 6));
  CK(fill_array(acb4, cube4.data(), 4, N, N, 6));
  {
    // Every texel centre of every face, the direction scaled by 1/2, 1, 2 or 4.
    std::vector<Q> q;
    std::vector<double> want;
    for (int f = 0; f < 6; ++f)
      for (int y = 0; y < N; ++y)
        for (int x = 0; x < N; ++x) {
          float d[3];
          face_dir(f, 2.0 * (x + 0.5) / N - 1.0, 2.0 * (y + 0.5) / N - 1.0, d);
          const float sc = (float)(0.5 * (1 << ((x + y + f) % 4)));
          q.push_back({d[0] * sc, d[1] * sc, d[2] * sc, 0});
          want.push_back(cv(f, y, x));
        }
    const size_t centres = q.size();
    // Worked by hand from the table: direction -> face, texel (x, y) at face coordinates
    // ((sc/|m| + 1) / 2, (tc/|m| + 1) / 2) * N.
    const struct { float d[3]; int f, x, y; } hand[] = {
        {{5, 1, -2}, 0, 2, 1},       // +x: sc = -z = 2, tc = -y = -1, |m| = 5 -> (2.8, 1.6)
        {{-4, 3, 1}, 1, 2, 0},       // -x: sc = z = 1, tc = -y = -3 -> (2.5, 0.5)
        {{1, 3, -2}, 2, 2, 0},       // +y: sc = x = 1, tc = z = -2 -> (2.67, 0.67)
        {{0.3f, -2, 0.7f}, 3, 2, 1},  // -y: sc = x = 0.3, tc = -z = -0.7 -> (2.3, 1.3)
        {{-1, 0.5f, 3}, 4, 1, 1},    // +z: sc = x = -1, tc = -y = -0.5 -> (1.33, 1.67)
        {{2, -1, -6}, 5, 1, 2},      // -z: sc = -x = -2, tc = -y = 1 -> (1.33, 2.33)
    };
    for (const auto& h : hand) {
      q.push_back({h.d[0], h.d[1], h.d[2], 0});
      want.push_back(cv(h.f, h.y, h.x));
    }
    Q* dq = dev_copy(q);
    const int n = (int)q.size();
    for (int linear = 0; linear < 2; ++linear)
      for (int norm = 0; norm < 2; ++norm) {
        // Texel centres read the texel under either filter; normalizedCoords does not matter.
        cudaTextureObject_t t = make_tex(acb, cudaAddressModeWrap, linear, norm);
        k_cube<<<(n + 31) / 32, 32>>>(t, dq, dout, n);
        CK(cudaDeviceSynchronize());
        std::vector<float> got = host_copy(dout, n);
        for (int i = 0; i < n; ++i) {
          if (linear && (size_t)i >= centres) break;  // hand points are not texel centres
          snprintf(what, sizeof what, "texCubemap %s %s", linear ? "linear centre" : "point",
                   (size_t)i < centres ? "face texel" : "hand-worked direction");
          expect(what, i, got[i], want[i]);
        }
        CK(cudaDestroyTextureObject(t));
      }
    // uchar4 faces read as normalized floats.
    cudaTextureObject_t t = make_tex(acb4, cudaAddressModeClamp, false, true, cudaReadModeNormalizedFloat);
    k_cube_c4<<<(n + 31) / 32, 32>>>(t, dq, dout4, n);
    CK(cudaDeviceSynchronize());
    std::vector<float4> got4 = host_copy(dout4, (size_t)centres);
    for (size_t i = 0; i < centres; ++i) {
      const float g[4] = {got4[i].x, got4[i].y, got4[i].z, got4[i].w};
      for (int c = 0; c < 4; ++c) expect("texCubemap uchar4 normalized-float", (int)i, g[c], cube4[i * 4 + c] / 255.0f);
    }
    CK(cudaDestroyTextureObject(t));
    cudaFree(dq);
  }
  {
    // Points 1/4 texel from each edge of each face (face coordinates 1/16 and 15/16, the
    // other one at a texel centre or a quarter past it): linear filtering reaches one texel
    // past the edge, which the address mode resolves within the face (seamlessCubemap off).
    std::vector<Q> q;
    std::vector<int> face;
    std::vector<float> fs, ft;
    for (int f = 0; f < 6; ++f)
      for (int e = 0; e < 4; ++e)
        for (int k = 0; k < N; ++k) {
          const double edge = (e & 1) ? 1.0 - 0.5 / N : -1.0 + 0.5 / N;
          const double along = 2.0 * (k + 0.5 + 0.25 * (k & 1)) / N - 1.0;
          const double s = e < 2 ? edge : along, t = e < 2 ? along : edge;
          float d[3];
          face_dir(f, s, t, d);
          q.push_back({d[0], d[1], d[2], 0});
          face.push_back(f);
          fs.push_back((float)((s + 1) / 2));
          ft.push_back((float)((t + 1) / 2));
        }
    Q* dq = dev_copy(q);
    const int n = (int)q.size();
    for (int mi = 0; mi < 4; ++mi)
      for (int linear = 0; linear < 2; ++linear) {
        cudaTextureObject_t t = make_tex(acb, kModes[mi], linear, true);
        k_cube<<<(n + 31) / 32, 32>>>(t, dq, dout, n);
        CK(cudaDeviceSynchronize());
        std::vector<float> got = host_copy(dout, n);
        snprintf(what, sizeof what, "texCubemap near an edge %s %s", kModeNames[mi], linear ? "linear" : "point");
        for (int i = 0; i < n; ++i) {
          Image im{N, N, 1, cube.data() + face[i] * N * N};
          double want[4];
          model(im, 2, fs[i], ft[i], kModes[mi], linear, true, want);
          expect(what, i, got[i], want[0]);
        }
        CK(cudaDestroyTextureObject(t));
      }
    // seamlessCubemap with point filtering: the address modes give way to clamp.
    cudaTextureObject_t t = make_tex(acb, cudaAddressModeBorder, false, true, cudaReadModeElementType, 1);
    k_cube<<<(n + 31) / 32, 32>>>(t, dq, dout, n);
    CK(cudaDeviceSynchronize());
    std::vector<float> got = host_copy(dout, n);
    for (int i = 0; i < n; ++i) {
      Image im{N, N, 1, cube.data() + face[i] * N * N};
      double want[4];
      model(im, 2, fs[i], ft[i], cudaAddressModeClamp, false, true, want);
      expect("texCubemap seamless point", i, got[i], want[0]);
    }
    CK(cudaDestroyTextureObject(t));
    cudaFree(dq);
  }
  {
    // seamlessCubemap, linear: on face 0 (+x), a quarter texel from its right edge (s > 0,
    // towards -z) the tap past the edge is face 5's column 0, same row; a quarter texel from
    // its top edge (t < 0, towards +y) it is face 2's column N - 1, row N - 1 - x; at the
    // corner the fourth tap is the mean of the other three.
    const double near_hi = 1.0 - 0.5 / N, near_lo = -1.0 + 0.5 / N;
    std::vector<Q> q;
    std::vector<double> want;
    for (int y = 0; y < N; ++y) {
      float d[3];
      face_dir(0, near_hi, 2.0 * (y + 0.5) / N - 1.0, d);
      q.push_back({d[0], d[1], d[2], 0});
      want.push_back(0.75 * cv(0, y, N - 1) + 0.25 * cv(5, y, 0));
    }
    for (int x = 0; x < N; ++x) {
      float d[3];
      face_dir(0, 2.0 * (x + 0.5) / N - 1.0, near_lo, d);
      q.push_back({d[0], d[1], d[2], 0});
      want.push_back(0.75 * cv(0, 0, x) + 0.25 * cv(2, N - 1 - x, N - 1));
    }
    {
      float d[3];
      face_dir(0, near_hi, near_lo, d);
      q.push_back({d[0], d[1], d[2], 0});
      const double a = cv(0, 0, N - 1), b = cv(5, 0, 0), c = cv(2, 0, N - 1);
      want.push_back(0.5625 * a + 0.1875 * b + 0.1875 * c + 0.0625 * (a + b + c) / 3);
    }
    Q* dq = dev_copy(q);
    const int n = (int)q.size();
    cudaTextureObject_t t = make_tex(acb, cudaAddressModeBorder, true, true, cudaReadModeElementType, 1);
    k_cube<<<1, 32>>>(t, dq, dout, n);
    CK(cudaDeviceSynchronize());
    std::vector<float> got = host_copy(dout, n);
    for (int i = 0; i < n; ++i) expect("texCubemap seamless linear across an edge", i, got[i], want[i]);
    CK(cudaDestroyTextureObject(t));
    cudaFree(dq);
  }

  // ---------------------------------------------------------------- layered cubemaps
  const int NC = 2, CL = 3;
  std::vector<float> cl(NC * NC * 6 * CL);
  for (size_t k = 0; k < cl.size(); ++k) cl[k] = 0.5f * k - 3.0f;
  cudaArray_t acl;
  CK(cudaMalloc3DArray(&acl, &fd, make_cudaExtent(NC, NC, 6 * CL), cudaArrayCubemap | cudaArrayLayered));
  CK(fill_array(acl, cl.data(), 4, NC, NC, 6 * CL));
  {
    std::vector<Q> q;
    std::vector<double> want;
    for (int layer = 0; layer < CL + 2; ++layer)
      for (int f = 0; f < 6; ++f)
        for (int y = 0; y < NC; ++y)
          for (int x = 0; x < NC; ++x) {
            float d[3];
            face_dir(f, 2.0 * (x + 0.5) / NC - 1.0, 2.0 * (y + 0.5) / NC - 1.0, d);
            q.push_back({d[0] * 3, d[1] * 3, d[2] * 3, layer});
            want.push_back(cl[((clamp_layer(layer, CL) * 6 + f) * NC + y) * NC + x]);
          }
    Q* dq = dev_copy(q);
    const int n = (int)q.size();
    cudaTextureObject_t t = make_tex(acl, cudaAddressModeClamp, true, true);
    k_cube_layered<<<(n + 31) / 32, 32>>>(t, dq, dout, n);
    CK(cudaDeviceSynchronize());
    std::vector<float> got = host_copy(dout, n);
    for (int i = 0; i < n; ++i) expect("texCubemapLayered texel centre", i, got[i], want[i]);
    CK(cudaDestroyTextureObject(t));
    cudaFree(dq);
  }

  // ---------------------------------------------------------------- pointer / Lod / Grad forms
  {
    std::vector<Q> q(NQ);
    for (int i = 0; i < NQ; ++i) {
      float d[3];
      face_dir(i % 6, rnd(-63, 64) / 64.0, rnd(-63, 64) / 64.0, d);
      q[i] = {d[0], d[1], d[2], i % 4};
    }
    Q* dq = dev_copy(q);
    cudaTextureObject_t l2 = make_tex(af2, cudaAddressModeMirror, true, true);
    cudaTextureObject_t l1 = make_tex(ac1, cudaAddressModeWrap, true, true, cudaReadModeNormalizedFloat);
    cudaTextureObject_t cb = make_tex(acb, cudaAddressModeClamp, true, true);
    cudaTextureObject_t ct = make_tex(acl, cudaAddressModeClamp, true, true);
    k_forms<<<(NQ + 31) / 32, 32>>>(l2, l1, cb, ct, dq, dout, NQ);
    CK(cudaDeviceSynchronize());
    std::vector<float> got = host_copy(dout, NQ * 16);
    for (int i = 0; i < NQ; ++i)
      for (int k = 0; k < 16; ++k) {
        const int base = k & ~3;
        expect("pointer/Lod/Grad form equals the value form", i * 16 + k, got[i * 16 + k], got[i * 16 + base], 0.0);
      }
    // and the value forms against the model (2D layered mirror, cubemap texel for face i % 6).
    for (int i = 0; i < NQ; ++i) {
      Image im{W, H, 1, f2.data() + clamp_layer(q[i].layer, L) * W * H};
      double want[4];
      model(im, 2, q[i].x, q[i].y, cudaAddressModeMirror, true, true, want);
      expect("tex2DLayered mirror linear (forms)", i, got[i * 16], want[0]);
    }
    cudaDestroyTextureObject(l2);
    cudaDestroyTextureObject(l1);
    cudaDestroyTextureObject(cb);
    cudaDestroyTextureObject(ct);
    cudaFree(dq);
  }

  // ---------------------------------------------------------------- surfaces
  {
    cudaArray_t s2a, s1a, sca, scla;
    cudaChannelFormatDesc f2d = cudaCreateChannelDesc<float2>();
    cudaChannelFormatDesc sd = cudaCreateChannelDesc<short>();
    CK(cudaMalloc3DArray(&s2a, &fd, make_cudaExtent(W, H, L), cudaArrayLayered | cudaArraySurfaceLoadStore));
    CK(cudaMalloc3DArray(&s1a, &id, make_cudaExtent(W, 0, L), cudaArrayLayered | cudaArraySurfaceLoadStore));
    CK(cudaMalloc3DArray(&sca, &f2d, make_cudaExtent(N, N, 6), cudaArrayCubemap | cudaArraySurfaceLoadStore));
    CK(cudaMalloc3DArray(&scla, &sd, make_cudaExtent(NC, NC, 12),
                         cudaArrayCubemap | cudaArrayLayered | cudaArraySurfaceLoadStore));
    cudaSurfaceObject_t ss[4];
    cudaArray_t arrs[4] = {s2a, s1a, sca, scla};
    for (int k = 0; k < 4; ++k) {
      cudaResourceDesc r = {};
      r.resType = cudaResourceTypeArray;
      r.res.array.array = arrs[k];
      CK(cudaCreateSurfaceObject(&ss[k], &r));
    }
    const int n = W * H * L > N * N * 6 ? W * H * L : N * N * 6;
    k_surf_write<<<(n + 31) / 32, 32>>>(ss[0], ss[1], ss[2], ss[3], W, H, L, W, N, NC);
    float* o2;
    int* o1;
    float2* oc;
    short* ocl;
    float* edge;
    CK(cudaMalloc(&o2, W * H * L * sizeof(float)));
    CK(cudaMalloc(&o1, W * L * sizeof(int)));
    CK(cudaMalloc(&oc, N * N * 6 * sizeof(float2)));
    CK(cudaMalloc(&ocl, NC * NC * 12 * sizeof(short)));
    CK(cudaMalloc(&edge, 2 * sizeof(float)));
    k_surf_read<<<(n + 31) / 32, 32>>>(ss[0], ss[1], ss[2], ss[3], o2, o1, oc, ocl, edge, W, H, L, W, N, NC);
    CK(cudaDeviceSynchronize());
    std::vector<float> h2 = host_copy(o2, W * H * L), he = host_copy(edge, 2);
    std::vector<int> h1 = host_copy(o1, W * L);
    std::vector<float2> hc = host_copy(oc, N * N * 6);
    std::vector<short> hcl = host_copy(ocl, NC * NC * 12);
    for (int i = 0; i < W * H * L; ++i)
      expect("surf2DLayered write/read", i, h2[i], 1000.0 * (i / (W * H)) + 10.0 * (i / W % H) + i % W + 0.25, 0.0);
    for (int i = 0; i < W * L; ++i) expect("surf1DLayered write/read", i, h1[i], -(i % W) - 100 * (i / W), 0.0);
    for (int i = 0; i < N * N * 6; ++i) {
      expect("surfCubemap write/read .x", i, hc[i].x, 100.0 * (i / (N * N)) + 10 * (i / N % N) + i % N, 0.0);
      expect("surfCubemap write/read .y", i, hc[i].y, -1.0 * (i / (N * N)), 0.0);
    }
    for (int i = 0; i < NC * NC * 12; ++i)
      expect("surfCubemapLayered write/read", i, hcl[i], (i / (NC * NC)) * 16 + (i / NC % NC) * 4 + i % NC, 0.0);
    expect("surf2DLayeredread past the last layer, Zero mode", 0, he[0], 0.0, 0.0);
    expect("surf2DLayeredread past the last layer, Clamp mode", 1, he[1], 1000.0 * (L - 1) + 10 + 1 + 0.25, 0.0);
    // The surface-written layered array copied out with cudaMemcpy3D: layers 1..2, rows 1..2,
    // columns 2..5 (a sub-box; positions in elements).
    std::vector<float> box(4 * 2 * 2, -1.0f);
    cudaMemcpy3DParms p = {};
    p.srcArray = s2a;
    p.srcPos = make_cudaPos(2, 1, 1);
    p.dstPtr = make_cudaPitchedPtr(box.data(), 4 * sizeof(float), 4, 2);
    p.extent = make_cudaExtent(4, 2, 2);
    p.kind = cudaMemcpyDeviceToHost;
    CK(cudaMemcpy3D(&p));
    for (int i = 0; i < 16; ++i) {
      const int x = 2 + i % 4, y = 1 + i / 4 % 2, l = 1 + i / 8;
      expect("cudaMemcpy3D out of a layered array", i, box[i], 1000.0 * l + 10.0 * y + x + 0.25, 0.0);
    }
    // A texture over the surface-written cubemap reads what surfCubemapwrite stored.
    cudaTextureObject_t t = make_tex(sca, cudaAddressModeClamp, false, true);
    std::vector<Q> q;
    for (int f = 0; f < 6; ++f) {
      float d[3];
      face_dir(f, 2.0 * (1 + 0.5) / N - 1.0, 2.0 * (2 + 0.5) / N - 1.0, d);  // texel x = 1, y = 2
      q.push_back({d[0], d[1], d[2], 0});
    }
    Q* dq = dev_copy(q);
    float2* dq2;
    CK(cudaMalloc(&dq2, 6 * sizeof(float2)));
    k_cube_ptr2<<<1, 8>>>(t, dq, dq2, 6);
    CK(cudaDeviceSynchronize());
    std::vector<float2> hq = host_copy(dq2, 6);
    for (int f = 0; f < 6; ++f) {
      expect("texCubemap over a surface-written cubemap .x", f, hq[f].x, 100.0 * f + 10 * 2 + 1, 0.0);
      expect("texCubemap over a surface-written cubemap .y", f, hq[f].y, -1.0 * f, 0.0);
    }
    cudaDestroyTextureObject(t);
    for (int k = 0; k < 4; ++k) cudaDestroySurfaceObject(ss[k]);
    for (int k = 0; k < 4; ++k) cudaFreeArray(arrs[k]);
    cudaFree(dq);
    cudaFree(dq2);
    cudaFree(o2);
    cudaFree(o1);
    cudaFree(oc);
    cudaFree(ocl);
    cudaFree(edge);
  }

  // ---------------------------------------------------------------- host API
  {
    cudaChannelFormatDesc d;
    cudaExtent e;
    unsigned flags = 99;
    CK(cudaArrayGetInfo(&d, &e, &flags, ac1));
    expect("cudaArrayGetInfo 1D layered extent", 0, (double)(e.width * 100 + e.height * 10 + e.depth), W * 100 + L1);
    expect("cudaArrayGetInfo 1D layered flags", 0, flags, cudaArrayLayered, 0.0);
    expect("cudaArrayGetInfo 1D layered desc", 0, d.x * 10 + d.y, 88, 0.0);
    CK(cudaArrayGetInfo(&d, &e, &flags, acl));
    expect("cudaArrayGetInfo cubemap layered extent", 0, (double)(e.width * 100 + e.height * 10 + e.depth),
           NC * 100 + NC * 10 + 6 * CL);
    expect("cudaArrayGetInfo cubemap layered flags", 0, flags, cudaArrayCubemap | cudaArrayLayered, 0.0);
    cudaArray_t bad = nullptr;
    expect("cubemap width != height", 0,
           cudaMalloc3DArray(&bad, &fd, make_cudaExtent(4, 2, 6), cudaArrayCubemap), cudaErrorInvalidValue, 0.0);
    expect("cubemap depth != 6", 0, cudaMalloc3DArray(&bad, &fd, make_cudaExtent(4, 4, 5), cudaArrayCubemap),
           cudaErrorInvalidValue, 0.0);
    expect("layered cubemap depth not a multiple of 6", 0,
           cudaMalloc3DArray(&bad, &fd, make_cudaExtent(4, 4, 9), cudaArrayCubemap | cudaArrayLayered),
           cudaErrorInvalidValue, 0.0);
    expect("layered array without layers", 0, cudaMalloc3DArray(&bad, &fd, make_cudaExtent(4, 4, 0), cudaArrayLayered),
           cudaErrorInvalidValue, 0.0);
    expect("cudaMallocArray with cudaArrayLayered", 0, cudaMallocArray(&bad, &fd, 4, 4, cudaArrayLayered),
           cudaErrorInvalidValue, 0.0);
    cudaGetLastError();
    // cudaMemcpy3D into a sub-box of a layered array (layer 2, rows 2..3, columns 1..3), read
    // back through tex2DLayered at texel centres.
    std::vector<float> patch = {-1, -2, -3, -4, -5, -6};
    cudaMemcpy3DParms p = {};
    p.srcPtr = make_cudaPitchedPtr(patch.data(), 3 * sizeof(float), 3, 2);
    p.dstArray = af2;
    p.dstPos = make_cudaPos(1, 2, 2);
    p.extent = make_cudaExtent(3, 2, 1);
    p.kind = cudaMemcpyHostToDevice;
    CK(cudaMemcpy3D(&p));
    p.dstPos = make_cudaPos(6, 2, 2);  // columns 6..8: past the array's width
    expect("cudaMemcpy3D past a layer's width", 0, cudaMemcpy3D(&p), cudaErrorInvalidValue, 0.0);
    p.dstPos = make_cudaPos(0, 0, L);  // past the last layer
    expect("cudaMemcpy3D past the last layer", 0, cudaMemcpy3D(&p), cudaErrorInvalidValue, 0.0);
    cudaGetLastError();
    std::vector<Q> q;
    std::vector<double> want;
    for (int l = 0; l < L; ++l)
      for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x) {
          q.push_back({x + 0.5f, y + 0.5f, 0, l});
          const bool in = l == 2 && y >= 2 && x >= 1 && x <= 3;
          want.push_back(in ? patch[(y - 2) * 3 + x - 1] : f2[(l * H + y) * W + x]);
        }
    Q* dq = dev_copy(q);
    const int n = (int)q.size();
    cudaTextureObject_t t = make_tex(af2, cudaAddressModeClamp, false, false);
    k_layered2d<<<(n + 31) / 32, 32>>>(t, dq, dout, n);
    CK(cudaDeviceSynchronize());
    std::vector<float> got = host_copy(dout, n);
    for (int i = 0; i < n; ++i) expect("cudaMemcpy3D into a layered sub-box", i, got[i], want[i], 0.0);
    cudaDestroyTextureObject(t);
    cudaFree(dq);
  }

  for (cudaArray_t a : {af2, ac2, ai2, ac1, af1, acb, acb4, acl}) CK(cudaFreeArray(a));
  cudaFree(dqn);
  cudaFree(dqu);
  cudaFree(dout);
  cudaFree(dout4);
  cudaFree(douti);
  cudaFree(dout2);
  CK(cudaGetLastError());
  printf("%d values checked, %d mismatches\n", g_checked, g_bad);
  printf(g_bad == 0 && g_checked > 0 ? "PASS\n" : "FAIL\n");
  return g_bad == 0 ? 0 : 1;
}
