"""How much of the original author's kernel survives in an LLM-written program.

The dataset's point is real kernels: the LLM writes the harness (task, cases, reference,
`main()`), never the kernel. This module measures the share of the original kernel's
characters found, in order, in the program's kernel of the same name (difflib's matching
blocks over whitespace-collapsed text, so re-indentation is not a rewrite but any changed
token is). 1.0 means kept verbatim.
"""

from __future__ import annotations

import difflib
import re

_WS = re.compile(r"\s+")


def _squash(text: str) -> str:
    return _WS.sub(" ", text).strip()


def kernel_texts(source: str, focus: str | None = None) -> dict[str, str]:
    """`__global__` function name -> its definition text (template header included); only
    `focus` when given. The first definition wins for overloaded names."""
    from validators.analysis import analyze

    a = analyze(source)
    out: dict[str, str] = {}
    for k in a.kernels:
        if focus is not None and k.name != focus:
            continue
        out.setdefault(k.name, a.text[k.span.start : k.span.end])
    return out


def kept_share(original: str, candidate: str) -> float:
    """Share of `original`'s (whitespace-collapsed) characters that appear, in order, in
    `candidate`."""
    a, b = _squash(original), _squash(candidate)
    if not a:
        return 1.0
    sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return sum(block.size for block in sm.get_matching_blocks()) / len(a)


def kernel_kept(original_source: str, program: str, focus: str | None = None) -> float:
    """Share of the original kernel text kept in `program`, weighted by kernel length over the
    kernels measured (`focus` alone, or every kernel of the original). A kernel missing from
    the program counts as nothing kept. 1.0 when the original has no kernel to keep (a task
    given only by a PyTorch module)."""
    originals = kernel_texts(original_source, focus)
    if not originals:
        return 1.0
    produced = kernel_texts(program)
    total = kept = 0.0
    for name, text in originals.items():
        n = len(_squash(text))
        total += n
        if name in produced:
            kept += n * kept_share(text, produced[name])
    return kept / total if total else 1.0
