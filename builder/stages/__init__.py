"""Pipeline stages: plain classes/functions over `builder.item.Item`, testable without Ray."""

from .annotate import Annotate
from .base import Stage, apply_stage
from .dedup import DedupConfig, dedup
from .extract import Extract
from .filter import Filter, FilterConfig
from .gather import Gathered, gather
from .normalise import normalise_text, text_hash
from .specify import FromTask, Specification, Specifier, Specify, SpecifyError
from .validate import Validate

__all__ = [
    "Annotate", "Stage", "apply_stage", "DedupConfig", "dedup", "Extract", "normalise_text",
    "text_hash", "Filter", "FilterConfig", "Gathered", "gather", "FromTask", "Specification",
    "Specifier", "SpecifyError", "Specify", "Validate",
]
