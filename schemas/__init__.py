"""Contracts between stages: pydantic models, versioned, no I/O."""

from .base import SCHEMA_VERSION, Contract, SchemaError
from .manifest import BuildManifest, ShardInfo, StageStats
from .program import Program
from .record import (
    CaseSummary,
    ChatMessage,
    DatasetRecord,
    Provenance,
    RawRecord,
    SynthesisInfo,
    ValidationSummary,
)
from .rows import record_to_row, row_spans, row_to_record
from .span import CUDA_MASK_KINDS, SPAN_KINDS, Span, SpanKind
from .task import CASES_PER_TASK, Reference, Task
from .tensor import (
    FLOAT_DTYPES,
    TOLERANCE_BOUNDS,
    DType,
    InputCase,
    TensorSpec,
    Tolerance,
    ValueDistribution,
)
from .validation import (
    CaseResult,
    CompileInfo,
    ErrorOrigin,
    KernelResources,
    OutputCheck,
    Status,
    ValidationResult,
    worst_status,
)

__all__ = [
    "SCHEMA_VERSION", "Contract", "SchemaError", "BuildManifest", "ShardInfo", "StageStats",
    "Program", "CaseSummary", "ChatMessage", "DatasetRecord", "Provenance", "RawRecord", "SynthesisInfo",
    "ValidationSummary", "CUDA_MASK_KINDS", "SPAN_KINDS", "Span", "SpanKind", "CASES_PER_TASK",
    "Reference", "Task", "FLOAT_DTYPES", "TOLERANCE_BOUNDS", "DType", "InputCase", "TensorSpec", "Tolerance",
    "ValueDistribution", "CaseResult", "CompileInfo", "KernelResources", "OutputCheck", "Status",
    "ErrorOrigin",
    "ValidationResult", "worst_status", "record_to_row", "row_to_record", "row_spans",
]
