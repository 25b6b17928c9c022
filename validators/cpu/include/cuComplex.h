// cudashim: cuComplex.h on the host. As in CUDA, the complex types are the vector types float2
// and double2 (x = real, y = imaginary), so they can be reinterpreted and copied as such.
#pragma once
// The include guard CUDA's own header defines: programs test it to know the header is in.
#define CU_COMPLEX_H_
#include <cmath>
#include <cuda_runtime.h>

typedef float2 cuFloatComplex;
typedef double2 cuDoubleComplex;
typedef cuFloatComplex cuComplex;

inline float cuCrealf(cuFloatComplex x) { return x.x; }
inline float cuCimagf(cuFloatComplex x) { return x.y; }
inline cuFloatComplex make_cuFloatComplex(float r, float i) { return make_float2(r, i); }
inline cuFloatComplex cuConjf(cuFloatComplex x) { return make_float2(x.x, -x.y); }
inline cuFloatComplex cuCaddf(cuFloatComplex a, cuFloatComplex b) {
  return make_float2(a.x + b.x, a.y + b.y);
}
inline cuFloatComplex cuCsubf(cuFloatComplex a, cuFloatComplex b) {
  return make_float2(a.x - b.x, a.y - b.y);
}
inline cuFloatComplex cuCmulf(cuFloatComplex a, cuFloatComplex b) {
  return make_float2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}
// Division scales by the larger component of the divisor first, as CUDA's does, so that
// |b|^2 does not overflow or underflow for large or tiny divisors.
inline cuFloatComplex cuCdivf(cuFloatComplex a, cuFloatComplex b) {
  const float s = std::fabs(b.x) + std::fabs(b.y);
  const float oos = 1.0f / s;
  const float ars = a.x * oos, ais = a.y * oos, brs = b.x * oos, bis = b.y * oos;
  const float oos2 = 1.0f / (brs * brs + bis * bis);
  return make_float2((ars * brs + ais * bis) * oos2, (ais * brs - ars * bis) * oos2);
}
// |x| without overflow in the squares (CUDA's algorithm is also scaled).
inline float cuCabsf(cuFloatComplex x) { return std::hypot(x.x, x.y); }

inline double cuCreal(cuDoubleComplex x) { return x.x; }
inline double cuCimag(cuDoubleComplex x) { return x.y; }
inline cuDoubleComplex make_cuDoubleComplex(double r, double i) { return make_double2(r, i); }
inline cuDoubleComplex cuConj(cuDoubleComplex x) { return make_double2(x.x, -x.y); }
inline cuDoubleComplex cuCadd(cuDoubleComplex a, cuDoubleComplex b) {
  return make_double2(a.x + b.x, a.y + b.y);
}
inline cuDoubleComplex cuCsub(cuDoubleComplex a, cuDoubleComplex b) {
  return make_double2(a.x - b.x, a.y - b.y);
}
inline cuDoubleComplex cuCmul(cuDoubleComplex a, cuDoubleComplex b) {
  return make_double2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}
inline cuDoubleComplex cuCdiv(cuDoubleComplex a, cuDoubleComplex b) {
  const double s = std::fabs(b.x) + std::fabs(b.y);
  const double oos = 1.0 / s;
  const double ars = a.x * oos, ais = a.y * oos, brs = b.x * oos, bis = b.y * oos;
  const double oos2 = 1.0 / (brs * brs + bis * bis);
  return make_double2((ars * brs + ais * bis) * oos2, (ais * brs - ars * bis) * oos2);
}
inline double cuCabs(cuDoubleComplex x) { return std::hypot(x.x, x.y); }

inline cuComplex make_cuComplex(float r, float i) { return make_float2(r, i); }
inline cuDoubleComplex cuComplexFloatToDouble(cuFloatComplex c) {
  return make_double2((double)c.x, (double)c.y);
}
inline cuFloatComplex cuComplexDoubleToFloat(cuDoubleComplex c) {
  return make_float2((float)c.x, (float)c.y);
}
// a * b + d
inline cuComplex cuCfmaf(cuComplex a, cuComplex b, cuComplex d) {
  return make_float2(std::fma(-a.y, b.y, std::fma(a.x, b.x, d.x)),
                     std::fma(a.y, b.x, std::fma(a.x, b.y, d.y)));
}
inline cuDoubleComplex cuCfma(cuDoubleComplex a, cuDoubleComplex b, cuDoubleComplex d) {
  return make_double2(std::fma(-a.y, b.y, std::fma(a.x, b.x, d.x)),
                      std::fma(a.y, b.x, std::fma(a.x, b.y, d.y)));
}
