"""Origins of CUDA kernels: one module per source, each yields RawRecords with provenance."""
