"""Static analysis of CUDA source with tree-sitter-cuda.

`analyze(source)` returns an `Analysis`: kernels and device functions, launch sites, `dim3`
declarations, character spans (`schemas.Span`) and feature flags with their evidence.
"""

from .analyzer import analyze
from .features import FEATURES
from .model import Analysis, Dim3Decl, FeatureHit, Function, Launch, Param, TextRange

__all__ = [
    "analyze",
    "Analysis",
    "Dim3Decl",
    "FEATURES",
    "FeatureHit",
    "Function",
    "Launch",
    "Param",
    "TextRange",
]
