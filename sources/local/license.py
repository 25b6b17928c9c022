"""The licence of a folder's files: the shared detector (`sources.licenses`), re-exported."""

from __future__ import annotations

from sources.licenses import detect_license, license_of_file_text

spdx_of_text = license_of_file_text

__all__ = ["detect_license", "spdx_of_text"]
