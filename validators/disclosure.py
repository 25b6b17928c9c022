"""What a verdict may tell a caller who is not trusted with the fresh case.

The fresh case (`engine.with_fresh_case`) is the one whose inputs are drawn at validation time:
it stops a program that replays answers prepared for the published cases only while nobody
who writes programs learns its inputs or its expected outputs. A full `ValidationResult` tells
both: its seed (from which anyone can draw the inputs), the expected value at the first
mismatch, the program's own output (which can print its inputs) and numbers derived from them.
`redact_fresh` keeps what a caller needs to fix a program (the status and which check or
output went wrong) and withholds the rest, for results that cross to an untrusted caller: the
service's answers and the builder's repair prompts. The engine, its Python API and
`validators check` keep everything, for local reproduction.
"""

from __future__ import annotations

import re

from schemas import OutputCheck, ValidationResult

WITHHELD = "#"
"""What a number of the fresh case's reason reads as."""

_NUMBER = re.compile(
    r"(?<![A-Za-z0-9_.])[-+]?(?:0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
    r"|inf|nan)(?![A-Za-z0-9_])")
"""A numeric literal that is not part of a name (`out2`, `float32` and `N1024` stay whole);
`inf` and `nan` as numpy prints them (the categories `NaN` and `Inf` stay)."""


def withhold_numbers(text: str) -> str:
    """`text` with every number in it replaced by `WITHHELD`."""
    return _NUMBER.sub(WITHHELD, text)


def redact_fresh(result: ValidationResult) -> ValidationResult:
    """A copy of `result` that withholds the fresh case's seed, its output values and every
    number its diagnosis holds, and its program's stdout, stderr and exit status; the published
    cases keep their whole diagnosis (their seeds are public anyway)."""
    out = result.model_copy(deep=True)
    out.fresh_seed = None
    for case in out.cases:
        if not case.fresh:
            continue
        said = case.reason
        case.seed = None
        case.stdout_tail = case.stderr_tail = ""
        case.exit_code = None
        case.reason = _masked(said, case.case)
        case.outputs = [OutputCheck(name=o.name, ok=o.ok, elements=o.elements,
                                    reason=_masked(o.reason, case.case)) for o in case.outputs]
        if said and said in out.reason:
            out.reason = out.reason.replace(said, case.reason)
        out.notes = [_masked(n, case.case) if n.startswith(f"case {case.case}:") else n
                     for n in out.notes]
    return out


def _masked(text: str, case_name: str) -> str:
    # The case's own name is public (it may hold digits) and stays readable.
    return case_name.join(withhold_numbers(part) for part in text.split(case_name))
