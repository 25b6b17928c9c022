"""Verify KernelBench-format answers: a PyTorch `ModelNew` (CUDA through
`torch.utils.cpp_extension.load_inline`/`load`) against a problem's `Model`. See README.md."""

from .files import KernelBenchInputError
from .verify import verify

__all__ = ["KernelBenchInputError", "verify"]
