"""Static analysis, compilation, sandboxed execution and comparison of CUDA programs."""
