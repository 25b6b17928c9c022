// cuFFT on the CPU shim (include/cufft.h, cudashim/cufft_host.h, cufftXt.h): every transform
// type, ranks 1 to 3, batched cufftPlanMany with strides and embeds, power-of-two, mixed-radix
// and prime sizes (Bluestein), in place and out of place, each checked against a direct DFT
// computed here in double (every output, or a sample of bins for long transforms), round trips
// scaled by 1/n in a kernel, callbacks, and the error codes of bad handles, sizes and types.
// Prints "<case> ok" per case and "ALL OK" at the end; exits 1 on the first failure.
#include <cuda_runtime.h>
#include <cufft.h>
#include <cufftXt.h>

#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <vector>

typedef std::complex<double> cd;

static int failures = 0;

#define CHECK_CUFFT(call)                                                          \
  do {                                                                             \
    cufftResult r_ = (call);                                                       \
    if (r_ != CUFFT_SUCCESS) {                                                     \
      printf("%s:%d: %s returned %d\n", __FILE__, __LINE__, #call, (int)r_);       \
      exit(1);                                                                     \
    }                                                                              \
  } while (0)

#define EXPECT(name, cond)                                 \
  do {                                                     \
    if (!(cond)) {                                         \
      printf("%s FAIL (%s, line %d)\n", name, #cond, __LINE__); \
      failures++;                                          \
    }                                                      \
  } while (0)

static unsigned long long rng_state = 12345;
static double urand() {  // in [-1, 1)
  rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(rng_state >> 11) / (double)(1ULL << 52) - 1.0;
}

// sum_j x[j stride] exp(sign 2 pi i j k / n), the angle reduced exactly.
static cd dft_bin(const cd* x, long long n, long long k, long long stride, int sign) {
  cd acc = 0;
  for (long long j = 0; j < n; ++j) {
    const long long jk = (j * k) % n;
    const double a = sign * 2.0 * M_PI * (double)jk / (double)n;
    acc += x[j * stride] * cd(cos(a), sin(a));
  }
  return acc;
}

// The direct multidimensional DFT of a contiguous row-major array (dims d[0..2]), one
// dimension after the other.
static std::vector<cd> dft(std::vector<cd> x, const long long d[3], int sign) {
  std::vector<cd> line;
  for (int a = 0; a < 3; ++a) {
    long long len = d[a], inner = 1, outer = 1;
    if (len == 1) continue;
    for (int b = a + 1; b < 3; ++b) inner *= d[b];
    for (int b = 0; b < a; ++b) outer *= d[b];
    line.resize(len);
    for (long long o = 0; o < outer; ++o)
      for (long long i = 0; i < inner; ++i) {
        cd* base = x.data() + o * len * inner + i;
        for (long long k = 0; k < len; ++k) line[k] = dft_bin(base, len, k, inner, sign);
        for (long long k = 0; k < len; ++k) base[k * inner] = line[k];
      }
  }
  return x;
}

static double rel_err(const std::vector<cd>& got, const std::vector<cd>& want) {
  double scale = 1.0, err = 0.0;
  for (size_t i = 0; i < want.size(); ++i) scale = fmax(scale, std::abs(want[i]));
  for (size_t i = 0; i < want.size(); ++i) err = fmax(err, std::abs(got[i] - want[i]));
  return err / scale;
}

static void report(const char* name, double err, double tol) {
  if (err <= tol && !std::isnan(err)) {
    printf("%s ok\n", name);
  } else {
    printf("%s FAIL err=%g tol=%g\n", name, err, tol);
    failures++;
  }
}

// Device arrays of either precision, with host copies as complex<double> / double.
template <class T> struct V2;
template <> struct V2<float> { typedef float2 type; };
template <> struct V2<double> { typedef double2 type; };

template <class T>
static void* upload_c(const std::vector<cd>& h, size_t extra = 0) {
  typedef typename V2<T>::type C;
  std::vector<C> tmp(h.size() + extra);
  for (size_t i = 0; i < h.size(); ++i) { tmp[i].x = (T)h[i].real(); tmp[i].y = (T)h[i].imag(); }
  void* d;
  cudaMalloc(&d, tmp.size() * sizeof(C));
  cudaMemcpy(d, tmp.data(), tmp.size() * sizeof(C), cudaMemcpyHostToDevice);
  return d;
}
template <class T>
static std::vector<cd> download_c(const void* d, size_t n) {
  typedef typename V2<T>::type C;
  std::vector<C> tmp(n);
  cudaMemcpy(tmp.data(), d, n * sizeof(C), cudaMemcpyDeviceToHost);
  std::vector<cd> h(n);
  for (size_t i = 0; i < n; ++i) h[i] = cd(tmp[i].x, tmp[i].y);
  return h;
}
template <class T>
static std::vector<double> download_r(const void* d, size_t n) {
  std::vector<T> tmp(n);
  cudaMemcpy(tmp.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost);
  return std::vector<double>(tmp.begin(), tmp.end());
}

// Rounds the values to the storage precision, so that the reference sees the same input.
template <class T>
static std::vector<cd> random_c(size_t n) {
  std::vector<cd> v(n);
  for (auto& x : v) x = cd((T)urand(), (T)urand());
  return v;
}
template <class T>
static std::vector<double> random_r(size_t n) {
  std::vector<double> v(n);
  for (auto& x : v) x = (T)urand();
  return v;
}

template <class T>
__global__ void scale_c(typename V2<T>::type* p, long long n, T s) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) { p[i].x *= s; p[i].y *= s; }
}
template <class T>
__global__ void scale_r(T* p, long long n, T s) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) p[i] *= s;
}

template <class T> static cufftType c2c_type();
template <> cufftType c2c_type<float>() { return CUFFT_C2C; }
template <> cufftType c2c_type<double>() { return CUFFT_Z2Z; }
template <class T> static cufftType r2c_type();
template <> cufftType r2c_type<float>() { return CUFFT_R2C; }
template <> cufftType r2c_type<double>() { return CUFFT_D2Z; }
template <class T> static cufftType c2r_type();
template <> cufftType c2r_type<float>() { return CUFFT_C2R; }
template <> cufftType c2r_type<double>() { return CUFFT_Z2D; }

static cufftResult exec_c2c(cufftHandle p, void* i, void* o, int dir, bool dbl) {
  return dbl ? cufftExecZ2Z(p, (cufftDoubleComplex*)i, (cufftDoubleComplex*)o, dir)
             : cufftExecC2C(p, (cufftComplex*)i, (cufftComplex*)o, dir);
}
static cufftResult exec_r2c(cufftHandle p, void* i, void* o, bool dbl) {
  return dbl ? cufftExecD2Z(p, (cufftDoubleReal*)i, (cufftDoubleComplex*)o)
             : cufftExecR2C(p, (cufftReal*)i, (cufftComplex*)o);
}
static cufftResult exec_c2r(cufftHandle p, void* i, void* o, bool dbl) {
  return dbl ? cufftExecZ2D(p, (cufftDoubleComplex*)i, (cufftDoubleReal*)o)
             : cufftExecC2R(p, (cufftComplex*)i, (cufftReal*)o);
}

template <class T> static double tol() { return sizeof(T) == 4 ? 2e-5 : 1e-11; }

// C2C / Z2Z of dims d (rank r), batch 1: forward against the direct DFT (all bins, or
// `sample` of them in 1-D), then the inverse scaled by 1/n back to the input.
template <class T>
static void c2c_case(const char* name, int rank, const long long d[3], bool in_place, int sample = 0) {
  const bool dbl = sizeof(T) == 8;
  long long n = d[0] * d[1] * d[2];
  std::vector<cd> x = random_c<T>(n);
  void* din = upload_c<T>(x);
  void* dout = din;
  if (!in_place) cudaMalloc(&dout, n * sizeof(typename V2<T>::type));
  cufftHandle plan;
  int dims[3] = {0, 0, 0};
  for (int i = 0; i < rank; ++i) dims[i] = (int)d[3 - rank + i];
  if (rank == 1) CHECK_CUFFT(cufftPlan1d(&plan, dims[0], c2c_type<T>(), 1));
  if (rank == 2) CHECK_CUFFT(cufftPlan2d(&plan, dims[0], dims[1], c2c_type<T>()));
  if (rank == 3) CHECK_CUFFT(cufftPlan3d(&plan, dims[0], dims[1], dims[2], c2c_type<T>()));
  CHECK_CUFFT(exec_c2c(plan, din, dout, CUFFT_FORWARD, dbl));
  std::vector<cd> got = download_c<T>(dout, n);
  double err;
  if (sample > 0) {
    std::vector<cd> want, have;
    for (int s = 0; s < sample; ++s) {
      long long k = s < 4 ? (s == 0 ? 0 : s == 1 ? 1 : s == 2 ? n / 2 : n - 1) : (long long)((urand() + 1) / 2 * n) % n;
      want.push_back(dft_bin(x.data(), n, k, 1, -1));
      have.push_back(got[k]);
    }
    err = rel_err(have, want);
  } else {
    err = rel_err(got, dft(x, d, -1));
  }
  // The inverse, into the input buffer (out of place) or in place, then scaled by a kernel.
  CHECK_CUFFT(exec_c2c(plan, dout, din, CUFFT_INVERSE, dbl));
  scale_c<T><<<(unsigned)((n + 255) / 256), 256>>>((typename V2<T>::type*)din, n, (T)(1.0 / n));
  cudaDeviceSynchronize();
  double back = rel_err(download_c<T>(din, n), x);
  report(name, fmax(err, back), tol<T>() * (sample ? 4 : 1));
  CHECK_CUFFT(cufftDestroy(plan));
  cudaFree(din);
  if (!in_place) cudaFree(dout);
}

// R2C / D2Z then C2R / Z2D of dims d (rank r), batch `batch`, basic layout: in place (real rows
// padded to 2 (n/2 + 1)) or out of place.
template <class T>
static void real_case(const char* name, int rank, const long long d[3], bool in_place, int batch = 1) {
  const bool dbl = sizeof(T) == 8;
  const long long nl = d[2], half = nl / 2 + 1, rows = d[0] * d[1], n = rows * nl;
  const long long real_row = in_place ? 2 * half : nl;
  std::vector<double> x = random_r<T>(n * batch);
  // The real input in its layout.
  std::vector<T> hin(rows * real_row * batch, (T)0);
  for (long long b = 0; b < batch; ++b)
    for (long long r = 0; r < rows; ++r)
      for (long long k = 0; k < nl; ++k) hin[(b * rows + r) * real_row + k] = (T)x[(b * rows + r) * nl + k];
  T* dreal;
  cudaMalloc(&dreal, hin.size() * sizeof(T));
  cudaMemcpy(dreal, hin.data(), hin.size() * sizeof(T), cudaMemcpyHostToDevice);
  void* dcomplex = dreal;
  if (!in_place) cudaMalloc(&dcomplex, rows * half * batch * sizeof(typename V2<T>::type));
  cufftHandle fwd, inv;
  int dims[3] = {0, 0, 0};
  for (int i = 0; i < rank; ++i) dims[i] = (int)d[3 - rank + i];
  if (batch > 1 || rank == 1) {
    CHECK_CUFFT(cufftPlanMany(&fwd, rank, dims, NULL, 7, 3, NULL, 5, 2, r2c_type<T>(), batch));  // strides ignored
    CHECK_CUFFT(cufftPlanMany(&inv, rank, dims, NULL, 1, 1, NULL, 1, 1, c2r_type<T>(), batch));
  } else if (rank == 2) {
    CHECK_CUFFT(cufftPlan2d(&fwd, dims[0], dims[1], r2c_type<T>()));
    CHECK_CUFFT(cufftPlan2d(&inv, dims[0], dims[1], c2r_type<T>()));
  } else {
    CHECK_CUFFT(cufftPlan3d(&fwd, dims[0], dims[1], dims[2], r2c_type<T>()));
    CHECK_CUFFT(cufftPlan3d(&inv, dims[0], dims[1], dims[2], c2r_type<T>()));
  }
  CHECK_CUFFT(exec_r2c(fwd, dreal, dcomplex, dbl));
  std::vector<cd> got = download_c<T>(dcomplex, rows * half * batch);
  double err = 0;
  for (long long b = 0; b < batch; ++b) {
    std::vector<cd> xc(x.begin() + b * n, x.begin() + (b + 1) * n), want, have;
    if (rank == 1 && n > 4096) {  // a long transform: a sample of bins
      for (int s = 0; s < 48; ++s) {
        long long k = s == 0 ? 0 : s == 1 ? half - 1 : (long long)((urand() + 1) / 2 * half) % half;
        want.push_back(dft_bin(xc.data(), n, k, 1, -1));
        have.push_back(got[b * half + k]);
      }
      err = fmax(err, rel_err(have, want));
      continue;
    }
    std::vector<cd> full = dft(xc, d, -1);
    for (long long r = 0; r < rows; ++r)
      for (long long k = 0; k < half; ++k) {
        want.push_back(full[r * nl + k]);
        have.push_back(got[(b * rows + r) * half + k]);
      }
    err = fmax(err, rel_err(have, want));
  }
  CHECK_CUFFT(exec_c2r(inv, dcomplex, dreal, dbl));
  scale_r<T><<<(unsigned)((hin.size() + 255) / 256), 256>>>(dreal, (long long)hin.size(), (T)(1.0 / n));
  cudaDeviceSynchronize();
  std::vector<double> back = download_r<T>(dreal, hin.size());
  double berr = 0;
  for (long long b = 0; b < batch; ++b)
    for (long long r = 0; r < rows; ++r)
      for (long long k = 0; k < nl; ++k)
        berr = fmax(berr, fabs(back[(b * rows + r) * real_row + k] - x[(b * rows + r) * nl + k]));
  report(name, fmax(err, berr), tol<T>());
  CHECK_CUFFT(cufftDestroy(fwd));
  CHECK_CUFFT(cufftDestroy(inv));
  cudaFree(dreal);
  if (!in_place) cudaFree(dcomplex);
}

// Batched C2C with the advanced layout: element (b, i0, i1) of a side at
// b dist + stride (i0 embed[1] + i1). Positions outside the output layout keep a sentinel.
static void many_c2c_2d() {
  const int n[2] = {6, 10}, batch = 2;
  int inembed[2] = {7, 12}, onembed[2] = {6, 11};
  const int istride = 1, idist = 7 * 12, ostride = 2, odist = 6 * 11 * 2 + 5;
  const long long isize = (long long)idist * batch, osize = (long long)odist * batch;
  std::vector<cd> hin(isize);
  for (auto& v : hin) v = cd((float)urand(), (float)urand());
  void* din = upload_c<float>(hin);
  std::vector<cd> sentinel(osize, cd(1234.5, -6789.25));
  void* dout = upload_c<float>(sentinel);
  cufftHandle plan;
  CHECK_CUFFT(cufftPlanMany(&plan, 2, (int*)n, inembed, istride, idist, onembed, ostride, odist, CUFFT_C2C, batch));
  CHECK_CUFFT(cufftExecC2C(plan, (cufftComplex*)din, (cufftComplex*)dout, CUFFT_FORWARD));
  std::vector<cd> got = download_c<float>(dout, osize);
  const long long d[3] = {1, n[0], n[1]};
  double err = 0;
  std::vector<bool> written(osize, false);
  for (int b = 0; b < batch; ++b) {
    std::vector<cd> x(n[0] * n[1]), have(n[0] * n[1]);
    for (int i0 = 0; i0 < n[0]; ++i0)
      for (int i1 = 0; i1 < n[1]; ++i1) {
        x[i0 * n[1] + i1] = hin[b * idist + istride * (i0 * inembed[1] + i1)];
        long long o = (long long)b * odist + ostride * (i0 * onembed[1] + i1);
        have[i0 * n[1] + i1] = got[o];
        written[o] = true;
      }
    err = fmax(err, rel_err(have, dft(x, d, -1)));
  }
  bool untouched = true;
  for (long long i = 0; i < osize; ++i)
    if (!written[i] && got[i] != cd(1234.5, -6789.25)) untouched = false;
  EXPECT("many_c2c_2d_untouched", untouched);
  report("many_c2c_2d", err, tol<float>());
  CHECK_CUFFT(cufftDestroy(plan));
  cudaFree(din);
  cudaFree(dout);
}

// Interleaved batches (istride = batch, idist = 1) of a 1-D Z2Z, in place, via
// cufftCreate + cufftMakePlanMany64 with cufftGetSizeMany64 / cufftEstimateMany.
static void many_z2z_interleaved() {
  const long long n = 45, batch = 3;
  long long nn[1] = {n}, embed[1] = {n};
  std::vector<cd> hin = random_c<double>(n * batch);
  void* d = upload_c<double>(hin);
  cufftHandle plan;
  size_t ws = 0, est = 0;
  CHECK_CUFFT(cufftCreate(&plan));
  CHECK_CUFFT(cufftGetSizeMany64(plan, 1, nn, embed, batch, 1, embed, batch, 1, CUFFT_Z2Z, batch, &ws));
  int nn32[1] = {(int)n}, embed32[1] = {(int)n};
  CHECK_CUFFT(cufftEstimateMany(1, nn32, embed32, (int)batch, 1, embed32, (int)batch, 1, CUFFT_Z2Z, (int)batch, &est));
  CHECK_CUFFT(cufftMakePlanMany64(plan, 1, nn, embed, batch, 1, embed, batch, 1, CUFFT_Z2Z, batch, &ws));
  CHECK_CUFFT(cufftExecZ2Z(plan, (cufftDoubleComplex*)d, (cufftDoubleComplex*)d, CUFFT_INVERSE));
  std::vector<cd> got = download_c<double>(d, n * batch);
  double err = 0;
  for (long long b = 0; b < batch; ++b) {
    std::vector<cd> x(n), have(n);
    for (long long i = 0; i < n; ++i) x[i] = hin[i * batch + b], have[i] = got[i * batch + b];
    const long long dd[3] = {1, 1, n};
    err = fmax(err, rel_err(have, dft(x, dd, +1)));
  }
  size_t after = 0;
  CHECK_CUFFT(cufftGetSize(plan, &after));
  EXPECT("many_z2z_sizes", after == ws);
  report("many_z2z_interleaved", err, tol<double>());
  CHECK_CUFFT(cufftDestroy(plan));
  cudaFree(d);
}

// R2C of 2-D (5 x 8) arrays in an advanced layout (padded input rows, strided output), batch 3;
// then C2R from that layout back into another padded real layout.
static void many_r2c_2d() {
  int n[2] = {5, 8};
  const int batch = 3, half = 8 / 2 + 1;
  int inembed[2] = {5, 10}, onembed[2] = {6, 7};
  const int istride = 1, idist = 50, ostride = 3, odist = 6 * 7 * 3;
  std::vector<double> hreal(idist * batch, 0.0);
  for (auto& v : hreal) v = (float)urand();
  std::vector<float> tmp(hreal.begin(), hreal.end());
  float* dreal;
  cudaMalloc(&dreal, tmp.size() * sizeof(float));
  cudaMemcpy(dreal, tmp.data(), tmp.size() * sizeof(float), cudaMemcpyHostToDevice);
  float2* dc;
  cudaMalloc(&dc, (size_t)odist * batch * sizeof(float2));
  cufftHandle fwd, inv;
  CHECK_CUFFT(cufftPlanMany(&fwd, 2, n, inembed, istride, idist, onembed, ostride, odist, CUFFT_R2C, batch));
  CHECK_CUFFT(cufftPlanMany(&inv, 2, n, onembed, ostride, odist, inembed, istride, idist, CUFFT_C2R, batch));
  CHECK_CUFFT(cufftExecR2C(fwd, dreal, dc));
  std::vector<cd> got = download_c<float>(dc, (size_t)odist * batch);
  const long long d[3] = {1, n[0], n[1]};
  double err = 0;
  for (int b = 0; b < batch; ++b) {
    std::vector<cd> x(40), want, have;
    for (int i0 = 0; i0 < 5; ++i0)
      for (int i1 = 0; i1 < 8; ++i1) x[i0 * 8 + i1] = hreal[b * idist + i0 * 10 + i1];
    std::vector<cd> full = dft(x, d, -1);
    for (int i0 = 0; i0 < 5; ++i0)
      for (int k = 0; k < half; ++k) {
        want.push_back(full[i0 * 8 + k]);
        have.push_back(got[b * odist + ostride * (i0 * onembed[1] + k)]);
      }
    err = fmax(err, rel_err(have, want));
  }
  cudaMemset(dreal, 0, tmp.size() * sizeof(float));
  CHECK_CUFFT(cufftExecC2R(inv, dc, dreal));
  std::vector<double> back = download_r<float>(dreal, tmp.size());
  double berr = 0;
  for (int b = 0; b < batch; ++b)
    for (int i0 = 0; i0 < 5; ++i0)
      for (int i1 = 0; i1 < 8; ++i1) {
        const long long o = b * idist + i0 * 10 + i1;
        berr = fmax(berr, fabs(back[o] / 40.0 - hreal[o]));
      }
  report("many_r2c_2d", fmax(err, berr), tol<float>());
  CHECK_CUFFT(cufftDestroy(fwd));
  CHECK_CUFFT(cufftDestroy(inv));
  cudaFree(dreal);
  cudaFree(dc);
}

// A plan made on a created handle with auto-allocation off: its own work area, a stream.
static void work_area_and_stream() {
  const int n = 96;
  std::vector<cd> x = random_c<float>(n);
  void* d = upload_c<float>(x);
  cufftHandle plan;
  size_t ws = 0;
  cudaStream_t s;
  cudaStreamCreate(&s);
  CHECK_CUFFT(cufftCreate(&plan));
  CHECK_CUFFT(cufftSetAutoAllocation(plan, 0));
  CHECK_CUFFT(cufftMakePlan1d(plan, n, CUFFT_C2C, 1, &ws));
  EXPECT("work_area_missing", cufftExecC2C(plan, (cufftComplex*)d, (cufftComplex*)d, CUFFT_FORWARD) ==
                                  (ws ? CUFFT_NO_WORKSPACE : CUFFT_SUCCESS));
  void* work = NULL;
  cudaMalloc(&work, ws ? ws : 1);
  CHECK_CUFFT(cufftSetWorkArea(plan, work));
  CHECK_CUFFT(cufftSetStream(plan, s));
  CHECK_CUFFT(cufftExecC2C(plan, (cufftComplex*)d, (cufftComplex*)d, CUFFT_FORWARD));
  cudaStreamSynchronize(s);
  const long long dd[3] = {1, 1, n};
  report("work_area_and_stream", rel_err(download_c<float>(d, n), dft(x, dd, -1)), tol<float>());
  CHECK_CUFFT(cufftDestroy(plan));
  cudaStreamDestroy(s);
  cudaFree(work);
  cudaFree(d);
}

// Callbacks (cufftXt.h): a load callback that multiplies by a device array and a store
// callback that scales, on a plan made with cufftXtMakePlanMany.
struct CbParams {
  const float2* filter;
  float scale;
};
__device__ cufftComplex load_mul(void* in, size_t offset, void* info, void*) {
  const CbParams* p = (const CbParams*)info;
  float2 a = ((float2*)in)[offset], f = p->filter[offset];
  return make_float2(a.x * f.x - a.y * f.y, a.x * f.y + a.y * f.x);
}
__device__ void store_scale(void* out, size_t offset, cufftComplex v, void* info, void*) {
  const CbParams* p = (const CbParams*)info;
  ((float2*)out)[offset] = make_float2(v.x * p->scale, v.y * p->scale);
}
__device__ cufftCallbackLoadC d_load = load_mul;
__device__ cufftCallbackStoreC d_store = store_scale;

static void callbacks() {
  const long long n = 60;
  std::vector<cd> x = random_c<float>(n), f = random_c<float>(n);
  void* dx = upload_c<float>(x);
  void* df = upload_c<float>(f);
  void* dy;
  cudaMalloc(&dy, n * sizeof(float2));
  CbParams hp = {(const float2*)df, 0.5f};
  CbParams* dp;
  cudaMalloc(&dp, sizeof hp);
  cudaMemcpy(dp, &hp, sizeof hp, cudaMemcpyHostToDevice);
  cufftCallbackLoadC hl;
  cufftCallbackStoreC hs;
  cudaMemcpyFromSymbol(&hl, d_load, sizeof hl);
  cudaMemcpyFromSymbol(&hs, d_store, sizeof hs);
  cufftHandle plan;
  size_t ws;
  long long nn[1] = {n};
  CHECK_CUFFT(cufftCreate(&plan));
  CHECK_CUFFT(cufftXtMakePlanMany(plan, 1, nn, NULL, 1, 1, CUDA_C_32F, NULL, 1, 1, CUDA_C_32F, 1, &ws, CUDA_C_32F));
  CHECK_CUFFT(cufftXtSetCallback(plan, (void**)&hl, CUFFT_CB_LD_COMPLEX, (void**)&dp));
  CHECK_CUFFT(cufftXtSetCallback(plan, (void**)&hs, CUFFT_CB_ST_COMPLEX, (void**)&dp));
  EXPECT("callback_type", cufftXtSetCallback(plan, (void**)&hl, CUFFT_CB_LD_REAL, (void**)&dp) == CUFFT_INVALID_VALUE);
  CHECK_CUFFT(cufftXtExec(plan, dx, dy, CUFFT_FORWARD));
  std::vector<cd> prod(n);
  for (long long i = 0; i < n; ++i) prod[i] = x[i] * f[i];
  const long long dd[3] = {1, 1, n};
  std::vector<cd> want = dft(prod, dd, -1);
  for (auto& v : want) v *= 0.5;
  double err = rel_err(download_c<float>(dy, n), want);
  // Cleared callbacks: the plain transform.
  CHECK_CUFFT(cufftXtClearCallback(plan, CUFFT_CB_LD_COMPLEX));
  CHECK_CUFFT(cufftXtClearCallback(plan, CUFFT_CB_ST_COMPLEX));
  CHECK_CUFFT(cufftXtExec(plan, dx, dy, CUFFT_FORWARD));
  err = fmax(err, rel_err(download_c<float>(dy, n), dft(x, dd, -1)));
  report("callbacks", err, tol<float>());
  CHECK_CUFFT(cufftDestroy(plan));
  cudaFree(dx);
  cudaFree(df);
  cudaFree(dy);
  cudaFree(dp);
}

static void errors() {
  cufftHandle p = 0, q = 0;
  void* d;
  cudaMalloc(&d, 64 * sizeof(float2));
  EXPECT("bad_handle_exec", cufftExecC2C(12345, (cufftComplex*)d, (cufftComplex*)d, CUFFT_FORWARD) == CUFFT_INVALID_PLAN);
  EXPECT("bad_handle_destroy", cufftDestroy(12345) == CUFFT_INVALID_PLAN);
  EXPECT("bad_handle_stream", cufftSetStream(12345, 0) == CUFFT_INVALID_PLAN);
  EXPECT("bad_handle_make", cufftMakePlan1d(12345, 8, CUFFT_C2C, 1, NULL) == CUFFT_INVALID_PLAN);
  EXPECT("null_plan", cufftPlan1d(NULL, 8, CUFFT_C2C, 1) == CUFFT_INVALID_PLAN);
  EXPECT("size_zero", cufftPlan1d(&p, 0, CUFFT_C2C, 1) == CUFFT_INVALID_SIZE);
  EXPECT("size_negative", cufftPlan2d(&p, 8, -4, CUFFT_R2C) == CUFFT_INVALID_SIZE);
  EXPECT("batch_zero", cufftPlan1d(&p, 8, CUFFT_C2C, 0) == CUFFT_INVALID_SIZE);
  EXPECT("bad_type", cufftPlan1d(&p, 8, (cufftType)0x77, 1) == CUFFT_INVALID_TYPE);
  int n4[4] = {2, 2, 2, 2};
  EXPECT("rank_four", cufftPlanMany(&p, 4, n4, NULL, 1, 0, NULL, 1, 0, CUFFT_C2C, 1) == CUFFT_INVALID_SIZE);
  int n2[2] = {4, 8}, small[2] = {4, 6};
  EXPECT("embed_too_small", cufftPlanMany(&p, 2, n2, small, 1, 24, NULL, 1, 0, CUFFT_C2C, 1) == CUFFT_INVALID_VALUE);
  EXPECT("estimate_bad_size", cufftEstimate1d(-3, CUFFT_C2C, 1, NULL) == CUFFT_INVALID_SIZE);
  CHECK_CUFFT(cufftPlan1d(&p, 8, CUFFT_C2C, 1));
  EXPECT("bad_direction", cufftExecC2C(p, (cufftComplex*)d, (cufftComplex*)d, 0) == CUFFT_INVALID_VALUE);
  EXPECT("null_data", cufftExecC2C(p, NULL, (cufftComplex*)d, CUFFT_FORWARD) == CUFFT_INVALID_VALUE);
  EXPECT("wrong_exec_type", cufftExecR2C(p, (cufftReal*)d, (cufftComplex*)d) == CUFFT_INVALID_VALUE);
  EXPECT("wrong_precision", cufftExecZ2Z(p, (cufftDoubleComplex*)d, (cufftDoubleComplex*)d, CUFFT_FORWARD) == CUFFT_INVALID_VALUE);
  CHECK_CUFFT(cufftCreate(&q));
  EXPECT("unmade_exec", cufftExecC2C(q, (cufftComplex*)d, (cufftComplex*)d, CUFFT_FORWARD) == CUFFT_INVALID_PLAN);
  EXPECT("make_bad_size", cufftMakePlan1d(q, 0, CUFFT_C2C, 1, NULL) == CUFFT_INVALID_SIZE);
  EXPECT("make_bad_type", cufftMakePlan2d(q, 4, 4, (cufftType)0, NULL) == CUFFT_INVALID_TYPE);
  CHECK_CUFFT(cufftDestroy(q));
  CHECK_CUFFT(cufftDestroy(p));
  EXPECT("destroyed_exec", cufftExecC2C(p, (cufftComplex*)d, (cufftComplex*)d, CUFFT_FORWARD) == CUFFT_INVALID_PLAN);
  EXPECT("destroy_twice", cufftDestroy(p) == CUFFT_INVALID_PLAN);
  int v = 0, major = 0;
  CHECK_CUFFT(cufftGetVersion(&v));
  CHECK_CUFFT(cufftGetProperty(MAJOR_VERSION, &major));
  EXPECT("version", v == CUFFT_VERSION && major == CUFFT_VER_MAJOR && v >= 11000);
  EXPECT("layouts", sizeof(cufftComplex) == 8 && sizeof(cufftDoubleComplex) == 16 && CUFFT_FORWARD == -1 &&
                        CUFFT_INVERSE == 1 && CUFFT_R2C == 0x2a && CUFFT_Z2Z == 0x69);
  cudaFree(d);
  printf("errors %s\n", failures ? "FAIL" : "ok");
}

int main(int argc, char** argv) {
  const bool big = !(argc > 1 && argv[1][0] == 's');  // "small": without the long transforms
  const long long d17[3] = {1, 1, 17}, d1[3] = {1, 1, 1}, d64[3] = {1, 1, 64}, d1000[3] = {1, 1, 1000},
                  d1009[3] = {1, 1, 1009}, d12288[3] = {1, 1, 4096 * 3}, d2d[3] = {1, 30, 17},
                  d3d[3] = {6, 5, 7}, d3dp[3] = {4, 8, 2};
  c2c_case<float>("c2c_1d_1", 1, d1, false);
  c2c_case<float>("c2c_1d_17", 1, d17, false);
  c2c_case<float>("c2c_1d_64_inplace", 1, d64, true);
  c2c_case<float>("c2c_1d_1000", 1, d1000, false);
  c2c_case<float>("c2c_1d_1009_prime", 1, d1009, true);
  c2c_case<double>("z2z_1d_1000_inplace", 1, d1000, true);
  c2c_case<double>("z2z_1d_1009_prime", 1, d1009, false);
  c2c_case<float>("c2c_1d_12288", 1, d12288, false, 48);
  c2c_case<float>("c2c_2d_30x17", 2, d2d, false);
  c2c_case<double>("z2z_2d_30x17_inplace", 2, d2d, true);
  c2c_case<float>("c2c_3d_6x5x7_inplace", 3, d3d, true);
  c2c_case<double>("z2z_3d_4x8x2", 3, d3dp, false);
  const long long r17[3] = {1, 1, 17}, r1000[3] = {1, 1, 1000}, r12288[3] = {1, 1, 4096 * 3},
                  r2d[3] = {1, 12, 10}, r2do[3] = {1, 7, 9}, r3d[3] = {4, 6, 5}, r131[3] = {1, 1, 131};
  real_case<float>("r2c_1d_17", 1, r17, false);
  real_case<float>("r2c_1d_1000_inplace", 1, r1000, true);
  real_case<double>("d2z_1d_131_prime_batch4", 1, r131, false, 4);
  real_case<double>("d2z_1d_1000_inplace_batch3", 1, r1000, true, 3);
  real_case<float>("r2c_2d_12x10", 2, r2d, false);
  real_case<double>("d2z_2d_7x9_inplace", 2, r2do, true);
  real_case<float>("r2c_3d_4x6x5_inplace", 3, r3d, true);
  real_case<double>("d2z_3d_4x6x5", 3, r3d, false);
  real_case<float>("r2c_1d_12288", 1, r12288, false);
  many_c2c_2d();
  many_z2z_interleaved();
  many_r2c_2d();
  work_area_and_stream();
  callbacks();
  errors();
  if (big) {
    // Long transforms: a power of two, and 2 x (2^19 - 1) (a Mersenne prime: Bluestein).
    const long long p20[3] = {1, 1, 1 << 20}, m19[3] = {1, 1, 2 * 524287};
    c2c_case<float>("c2c_1d_2^20", 1, p20, true, 24);
    c2c_case<double>("z2z_1d_2x524287", 1, m19, false, 24);
  }
  if (failures) {
    printf("FAILURES %d\n", failures);
    return 1;
  }
  printf("ALL OK\n");
  return 0;
}
