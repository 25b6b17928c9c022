"""The licence of a folder, from the distinctive phrases of its root licence file."""

from __future__ import annotations

import re
from pathlib import Path

LICENSE_FILES = (
    "LICENSE", "LICENSE.txt", "LICENSE.md", "LICENCE", "LICENCE.txt", "LICENCE.md",
    "COPYING", "COPYING.txt", "COPYING.md",
)

# Checked in order; each SPDX id needs all of its phrases (lower case, whitespace collapsed).
_PHRASES: list[tuple[str, tuple[str, ...]]] = [
    ("Apache-2.0", ("apache license", "version 2.0")),
    ("MIT", ("permission is hereby granted, free of charge, to any person obtaining a copy",)),
    ("BSD-3-Clause", (
        "redistribution and use in source and binary forms",
        "may be used to endorse or promote products derived from this software",
    )),
    ("BSD-2-Clause", ("redistribution and use in source and binary forms",)),
    ("ISC", ("permission to use, copy, modify, and", "with or without fee is hereby granted")),
    ("Unlicense", ("this is free and unencumbered software released into the public domain",)),
]


def spdx_of_text(text: str) -> str:
    """The SPDX id whose phrases `text` contains, or `unknown`."""
    norm = re.sub(r"\s+", " ", text).lower()
    for spdx, phrases in _PHRASES:
        if all(p in norm for p in phrases):
            return spdx
    return "unknown"


def detect_license(root: Path) -> str:
    """The SPDX id of the first licence file at `root` that matches, or `unknown`."""
    for name in LICENSE_FILES:
        path = Path(root) / name
        if path.is_file() and not path.is_symlink():
            spdx = spdx_of_text(path.read_bytes()[:256 * 1024].decode("utf-8", "replace"))
            if spdx != "unknown":
                return spdx
    return "unknown"
