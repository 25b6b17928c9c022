// Stand-in for HeCBench spd2s-cuda/utils.h (see ../README.md): only what spnnz-cuda uses.
#pragma once
#include <cstdint>
#include <cstdlib>
#include <cstring>

// A rows x cols row-major matrix with exactly `nnz` non-zeros (values in [1, 2]) at distinct
// random positions; the rest are zero.
inline void init_matrix(float* matrix, int64_t rows, int64_t cols, int64_t nnz) {
  const int64_t total = rows * cols;
  if (nnz > total) nnz = total;
  std::memset(matrix, 0, static_cast<size_t>(total) * sizeof(float));
  std::srand(19937);
  int64_t placed = 0;
  while (placed < nnz) {
    const int64_t r = ((static_cast<int64_t>(std::rand()) << 31) ^ std::rand()) % total;
    if (matrix[r] == 0.0f) {
      matrix[r] = 1.0f + static_cast<float>(std::rand()) / RAND_MAX;
      ++placed;
    }
  }
}
