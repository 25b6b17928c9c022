"""Decontaminate: drop records whose code or prompt overlaps a benchmark given with
`--decontaminate PATH` (driver-side, like `dedup`).

`decontaminate_code` runs on the gathered records (after dedup): the kernels and device
functions of the record's text and companion files, and its PyTorch module (a KernelBench task
given as a record is contaminated), are matched against the index. `decontaminate_prompts` runs
after specify wrote the prompts and matches `item.prompt` without its file-convention
sentences. The index reduces both sides to these task-specific parts (`builder.decontam.parts`);
the rejection detail names the benchmark item and the part that matched. Records already rejected pass through untouched. The rule and its
thresholds are in `builder.decontam.index`; the index is built once, before the build starts,
with `builder.decontam.build_index(paths)`, which raises `DecontamError` for a bad path.
"""

from __future__ import annotations

from ..decontam import DecontamIndex, Match
from ..decontam.model import Language
from ..item import Item

STAGE = "decontaminate"


def _detail(matches: list[Match]) -> str:
    best = matches[0]
    more = f" (and {len(matches) - 1} more items)" if len(matches) > 1 else ""
    return best.describe() + more


def record_code(item: Item) -> list[tuple[str, Language]]:
    """The texts of a record that are matched as code, with their language."""
    texts: list[tuple[str, Language]] = [(item.raw.text, "cuda")]
    if item.raw.module:
        texts.append((item.raw.module, "python"))
    texts.extend((body, "cuda") for _, body in sorted(item.raw.files.items()))
    return texts


def decontaminate_code(items: list[Item], index: DecontamIndex) -> list[Item]:
    """Reject (`contaminated_code`) every live record whose code overlaps a benchmark item."""
    for it in items:
        if not it.alive:
            continue
        first, *rest = record_code(it)
        matches = index.match_code(first[0], first[1], extra=rest)
        if matches:
            it.reject(STAGE, "contaminated_code", _detail(matches))
    return items


def decontaminate_prompts(items: list[Item], index: DecontamIndex) -> list[Item]:
    """Reject (`contaminated_prompt`) every live record whose prompt overlaps a benchmark prompt."""
    for it in items:
        if not it.alive or not it.prompt:
            continue
        matches = index.match_prompt(it.prompt)
        if matches:
            it.reject(STAGE, "contaminated_prompt", _detail(matches))
    return items
