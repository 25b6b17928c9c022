"""Structured logs: one JSON object per line on stderr (ours and uvicorn's)."""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import Any

LOGGER = "validators.service"
# uvicorn adds `color_message` (the message with ANSI colours) to its records: noise in JSON.
_STANDARD = set(vars(logging.makeLogRecord({}))) | {"color_message"}


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
                  + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        # Fields passed with `extra=` become keys of their own, queryable by a log pipeline.
        for key, value in vars(record).items():
            if key not in _STANDARD and key not in out and not key.startswith("_"):
                out[key] = value
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return json.dumps(out, default=str)


def uvicorn_log_config(level: str = "info") -> dict[str, Any]:
    """A `logging.config` dict routing our and uvicorn's loggers through JsonFormatter; the
    access log is ours (with latency and request id), so uvicorn's is silenced."""
    handler = {"class": "logging.StreamHandler", "formatter": "json", "stream": "ext://sys.stderr"}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"json": {"()": JsonFormatter}},
        "handlers": {"stderr": handler},
        "loggers": {
            "uvicorn": {"handlers": ["stderr"], "level": level.upper(), "propagate": False},
            "uvicorn.error": {"level": level.upper()},
            "uvicorn.access": {"handlers": [], "level": "WARNING", "propagate": False},
            LOGGER: {"handlers": ["stderr"], "level": level.upper(), "propagate": False},
        },
    }


def setup_logging(level: str = "info") -> None:
    """For use without uvicorn's config (Ray Serve, tests that build the app directly)."""
    log = logging.getLogger(LOGGER)
    if not log.handlers:
        h = logging.StreamHandler(sys.stderr)
        h.setFormatter(JsonFormatter())
        log.addHandler(h)
        log.setLevel(level.upper())
        log.propagate = False


def get_logger() -> logging.Logger:
    return logging.getLogger(LOGGER)
