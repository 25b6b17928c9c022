"""Generic idioms that unrelated CUDA programs and PyTorch modules share.

Their n-grams are never evidence of contamination, even when a benchmark set is too small for
the document-frequency filter of `index.py` to recognise them as template text. Each entry is
written in the most common spellings; they complement that filter, they do not replace it.
"""

from __future__ import annotations

CUDA_IDIOMS: tuple[str, ...] = (
    # error checking
    """#define CUDA_CHECK(call) do { cudaError_t err = call; if (err != cudaSuccess) {
    fprintf(stderr, "CUDA error %s at %s:%d\\n", cudaGetErrorString(err), __FILE__, __LINE__);
    exit(EXIT_FAILURE); } } while (0)""",
    """#define CHECK_CUDA(call) do { cudaError_t err = (call); if (err != cudaSuccess) {
    fprintf(stderr, "CUDA error: %s (%s:%d)\\n", cudaGetErrorString(err), __FILE__, __LINE__);
    exit(1); } } while (0)""",
    """#define gpuErrchk(ans) { gpuAssert((ans), __FILE__, __LINE__); }
    inline void gpuAssert(cudaError_t code, const char *file, int line, bool abort=true) {
    if (code != cudaSuccess) { fprintf(stderr,"GPUassert: %s %s %d\\n", cudaGetErrorString(code),
    file, line); if (abort) exit(code); } }""",
    """cudaError_t err = cudaGetLastError(); if (err != cudaSuccess) { fprintf(stderr,
    "Failed to launch kernel (error code %s)!\\n", cudaGetErrorString(err)); exit(EXIT_FAILURE); }""",
    "CUDA_CHECK(cudaGetLastError()); CUDA_CHECK(cudaDeviceSynchronize());",
    "checkCudaErrors(cudaGetLastError()); checkCudaErrors(cudaDeviceSynchronize());",
    # indexing
    "int idx = blockIdx.x * blockDim.x + threadIdx.x; if (idx < n) {",
    "int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) {",
    "int tid = blockIdx.x * blockDim.x + threadIdx.x; if (tid < n) {",
    "int idx = blockIdx.x * blockDim.x + threadIdx.x; if (idx < N) {",
    "int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < N) {",
    "int x = blockIdx.x * blockDim.x + threadIdx.x; int y = blockIdx.y * blockDim.y + threadIdx.y;",
    "int col = blockIdx.x * blockDim.x + threadIdx.x; int row = blockIdx.y * blockDim.y + threadIdx.y;",
    "int row = blockIdx.y * blockDim.y + threadIdx.y; int col = blockIdx.x * blockDim.x + threadIdx.x;",
    "for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {",
    "for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {",
    "int threads = 256; int blocks = (n + threads - 1) / threads;",
    "int blockSize = 256; int numBlocks = (n + blockSize - 1) / blockSize;",
    "dim3 block(16, 16); dim3 grid((width + block.x - 1) / block.x, (height + block.y - 1) / block.y);",
    # memory management and timing
    "float *d_a, *d_b, *d_c; cudaMalloc(&d_a, size); cudaMalloc(&d_b, size); cudaMalloc(&d_c, size);",
    "cudaMemcpy(d_a, h_a, size, cudaMemcpyHostToDevice); cudaMemcpy(d_b, h_b, size, cudaMemcpyHostToDevice);",
    "cudaMemcpy(h_c, d_c, size, cudaMemcpyDeviceToHost); cudaFree(d_a); cudaFree(d_b); cudaFree(d_c);",
    "cudaEvent_t start, stop; cudaEventCreate(&start); cudaEventCreate(&stop); cudaEventRecord(start);",
    "cudaEventRecord(stop); cudaEventSynchronize(stop); float ms = 0; cudaEventElapsedTime(&ms, start, stop);",
    "cudaEventDestroy(start); cudaEventDestroy(stop);",
    # file I/O helpers of self-checking programs
    """void read_binary(const std::string& filename, void* data, size_t size) {
    std::ifstream in(filename, std::ios::binary); if (!in) { std::cerr << "Cannot open: " << filename
    << std::endl; exit(1); } in.read(reinterpret_cast<char*>(data), size); in.close(); }""",
    """void write_binary(const std::string& filename, const void* data, size_t size) {
    std::ofstream out(filename, std::ios::binary); if (!out) { std::cerr << "Cannot write: " << filename
    << std::endl; exit(1); } out.write(reinterpret_cast<const char*>(data), size); out.close(); }""",
    """FILE *f = fopen(path, "rb"); if (!f) { fprintf(stderr, "cannot open %s\\n", path); exit(1); }
    size_t got = fread(data, sizeof(float), n, f); fclose(f);""",
    """FILE *f = fopen(path, "wb"); if (!f) { fprintf(stderr, "cannot open %s\\n", path); exit(1); }
    fwrite(data, sizeof(float), n, f); fclose(f);""",
    "int main(int argc, char** argv) { if (argc < 2) { fprintf(stderr, \"usage: %s N\\n\", argv[0]); return 1; }",
    "#include <cuda_runtime.h>\n#include <cstdio>\n#include <cstdlib>\n#include <vector>\n#include <cmath>",
    "#include <cuda_runtime.h>\n#include <iostream>\n#include <fstream>\n#include <vector>\n#include <string>",
)

PYTHON_IDIOMS: tuple[str, ...] = (
    "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F",
    "class Model(nn.Module):\n    def __init__(self):\n        super(Model, self).__init__()",
    "def forward(self, x: torch.Tensor) -> torch.Tensor:",
    "def get_inputs():\n    x = torch.randn(batch_size, dim)\n    return [x]",
    "def get_inputs():\n    x = torch.rand(batch_size, dim)\n    return [x]",
    "def get_init_inputs():\n    return []",
    "import torch\nimport triton\nimport triton.language as tl",
    "pid = tl.program_id(axis=0)\n    block_start = pid * BLOCK_SIZE\n"
    "    offsets = block_start + tl.arange(0, BLOCK_SIZE)\n    mask = offsets < n_elements",
    "grid = lambda meta: (triton.cdiv(n_elements, meta['BLOCK_SIZE']),)",
)
