"""Licence detection and the licence policy, shared by every source and by gather.

`detect` finds what licence a file is under (licence files, `SPDX-License-Identifier:` lines,
licence texts); `policy` decides whether the build may use it. Sources only record the licence
in `Provenance.license`; `builder.stages.gather` applies the policy to every record before any
stage that costs (extract, the LLM, validation) sees it.
"""

from .detect import (
    UNKNOWN,
    Found,
    LicenseMap,
    detect_license,
    identify_text,
    is_license_file,
    license_of_file_text,
    license_of_source,
    spdx_tags,
)
from .policy import (
    DEFAULT_ALLOWED,
    LicensePolicy,
    LicenseRefusal,
    is_unknown,
    license_refusal,
    normalise,
    parse_allowed,
)

__all__ = [
    "DEFAULT_ALLOWED", "UNKNOWN", "Found", "LicenseMap", "LicensePolicy", "LicenseRefusal",
    "detect_license", "identify_text", "is_license_file", "is_unknown", "license_of_file_text",
    "license_of_source", "license_refusal", "normalise", "parse_allowed", "spdx_tags",
]
