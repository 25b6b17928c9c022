// Stand-in for HeCBench scan2-cuda/scan.h (see ../README.md): only what scan3-cuda uses.
#pragma once
#include <cmath>
#include <cstdlib>
#include <iostream>

inline bool isPowerOf2(unsigned int v) { return v != 0 && (v & (v - 1)) == 0; }

inline unsigned int roundToPowerOf2(unsigned int v) {
  unsigned int p = 1;
  while (p < v) p <<= 1;
  return p;
}

// width x height values uniform in [rangeMin, rangeMax], from a fixed seed.
template <class T>
int fillRandom(T* data, int width, int height, T rangeMin, T rangeMax, unsigned int seed = 123) {
  if (data == nullptr) return 1;
  std::srand(seed);
  const double range = static_cast<double>(rangeMax - rangeMin);
  for (long i = 0; i < static_cast<long>(width) * height; ++i)
    data[i] = static_cast<T>(rangeMin + range * (std::rand() / static_cast<double>(RAND_MAX)));
  return 0;
}

// Relative L2 error of `data` against `refData` below `epsilon`.
template <class T>
bool compare(const T* refData, const T* data, int length, T epsilon = static_cast<T>(1e-6)) {
  double err = 0.0, ref = 0.0;
  for (int i = 0; i < length; ++i) {
    const double d = static_cast<double>(refData[i]) - static_cast<double>(data[i]);
    err += d * d;
    ref += static_cast<double>(refData[i]) * refData[i];
  }
  if (ref == 0.0) return false;
  return std::sqrt(err) / std::sqrt(ref) < static_cast<double>(epsilon);
}
