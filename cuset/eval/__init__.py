"""`python -m cuset eval`: sample programs from a model for a benchmark, validate them, and report
Pass@k for compilation and for function (the unbiased estimator of Chen et al. 2021).

Modules, one job each: `passk` (the estimator), `extract` (the program in a completion),
`benchmarks` (what the tasks are; `kernelbench` for KernelBench problems and their prompt),
`samplers` (where completions come from; `completions` for a file of them), `verdict` (one
sample validated, in a worker process), `runner` (the loop, resume, output files), `report`
(summary.json and summary.md), `command` (the CLI).
"""

from .benchmarks import EvalTask, load_benchmark
from .extract import extract_program
from .passk import mean_pass_at_k, pass_at_k

__all__ = ["EvalTask", "extract_program", "load_benchmark", "mean_pass_at_k", "pass_at_k"]
