"""KernelBench tasks (PyTorch module files) as raw records; see `reader.py`."""

from .reader import records

__all__ = ["records"]
