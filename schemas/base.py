"""Shared base for every contract: versioned, strict, lossless JSON round trips."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

SCHEMA_VERSION = 1

IDENT_RE = r"^[A-Za-z_][A-Za-z0-9_]*$"
"""Names that become file names (`data/<name>.bin`) and C identifiers."""

M = TypeVar("M", bound="Contract")


class SchemaError(ValueError):
    """Bad data for a contract; the message names the model, the field and the reason."""


class Contract(BaseModel):
    """Base of every schema object.

    `extra="forbid"` so a misspelt field is an error rather than silently dropped, and
    `ser_json_inf_nan="constants"` so NaN/Inf survive a JSON round trip (error figures can be
    infinite).
    """

    model_config = ConfigDict(
        extra="forbid",
        validate_assignment=True,
        ser_json_inf_nan="constants",
        populate_by_name=True,
    )

    schema_version: int = SCHEMA_VERSION

    @field_validator("schema_version")
    @classmethod
    def _known_version(cls, v: int) -> int:
        if v < 1 or v > SCHEMA_VERSION:
            raise ValueError(
                f"schema_version {v} is not supported (this code reads versions 1..{SCHEMA_VERSION})"
            )
        return v

    @classmethod
    def parse(cls: type[M], data: str | bytes | dict[str, Any], *, origin: str = "") -> M:
        """Validate JSON text or a dict, raising `SchemaError` with readable field paths."""
        try:
            if isinstance(data, dict):
                return cls.model_validate(data)
            return cls.model_validate_json(data)
        except ValidationError as exc:
            raise SchemaError(format_validation_error(cls.__name__, exc, origin)) from None

    def to_json(self, **kw: Any) -> str:
        return self.model_dump_json(**kw)


def format_validation_error(model: str, exc: ValidationError, origin: str = "") -> str:
    where = f" in {origin}" if origin else ""
    lines = [f"invalid {model}{where}:"]
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"]) or "<root>"
        lines.append(f"  {loc}: {err['msg']}")
    return "\n".join(lines)
