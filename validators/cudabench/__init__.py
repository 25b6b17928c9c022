"""The CUDABench JSONL format: load its tasks, and judge a program on one of its scales with
the benchmark's own `gen.py` and `compare.py` run in the sandbox (see `harness`)."""

from .harness import check, split_generated
from .loader import (
    CudaBenchError,
    CudaBenchScale,
    CudaBenchTask,
    LoadReport,
    load_jsonl,
    load_report,
)
from .scripts import ScriptError, generated_data

__all__ = ["CudaBenchError", "CudaBenchScale", "CudaBenchTask", "LoadReport", "ScriptError",
           "check", "generated_data", "load_jsonl", "load_report", "split_generated"]
