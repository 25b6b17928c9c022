"""The n-gram index of benchmark items and the contamination rule.

What is compared: the task-specific parts of both sides (`parts.py`): kernels and device
functions of CUDA code, Python modules, prompts without the file convention's sentences. The
harness a record and a benchmark item share because they follow one program convention is
never compared. A match names the item and the part (`kernel`, `code`, `module`, `prompt`); the
overlap ratio is per part.

Rule (defaults in `DecontamConfig`, measured on the project's real corpus, see
`benchmarks/bench_dedup.py`). A record is contaminated by a benchmark item when, over the item's
*distinctive* n-grams, either

* it shares one long run: at least `code_min_run` consecutive tokens (prompts:
  `prompt_min_run` words) made of the item's n-grams, the GPT-3 / Llama-2 style "one long
  overlap proves a copy" test, made safe for code by the distinctiveness filter below; or
* it contains at least `code_min_overlap` of the item's distinctive n-grams (and at least
  `code_min_shared` of them): the PaLM-style overlap ratio, measured on the benchmark side so
  that a short benchmark kernel pasted into a long training file is still caught.

Why these n: code uses 10-token n-grams after comment removal (Llama 2 used 10-token overlap;
a 10-token window of CUDA is about one statement, short enough to survive small edits, long
enough that two independent kernels rarely share it once idioms are removed). Prompts use 8-word
n-grams (PaLM's 8-gram, 70 % rule; GPT-3's 13 words missed CUDABench's short level-3 prompts).
The single-run tests are set from what fires on the real corpus (`benchmarks/bench_dedup.py`):
between the GitHub corpus and the built-in programs the longest shared distinctive code run is
18 tokens and the best overlap 6 %, so 40 tokens / 50 % leave a margin of two; the built-in task
descriptions, written from one template, share runs of up to 26 words between unrelated tasks
(GPT-3's 13 would flag 6 of 29), so prompts need 30 words or half of the item's n-grams.
Known gaps: a KernelBench folder of one or two items matches other KernelBench modules
through the scaffolding they share (measured: a one-item index of each level-1 task flags
other level-1 modules for 67 of the 100; the whole folder flags 3, all near-identical
variants such as the transposed matmuls). A record holding only a tiny benchmark kernel
(an elementwise one-liner, under 40 distinctive tokens) is not flagged.

Distinctive n-grams. Plain n-gram overlap fires on boilerplate: error-check macros, file I/O
helpers, `blockIdx.x * blockDim.x + threadIdx.x`, KernelBench's `get_init_inputs`. An n-gram is
dropped from the index when (a) it occurs in `boilerplate_df` or more distinct items of the
loaded benchmarks (the task template every item repeats: CUDABench's harness, KernelBench's
scaffolding), or (b) it is an n-gram of a generic idiom in `boilerplate.py`. Exact n-gram
matching cannot catch paraphrased or re-implemented items ("Rethinking Benchmark and
Contamination for Language Models with Rephrased Samples", Yang et al. 2023); this stage
targets verbatim and lightly edited copies (layout, comments, a few renamed lines), which is
what public GitHub code holds.

The index is built once (a dict from n-gram to item numbers); matching one text is one pass
over its tokens, O(length).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

from .boilerplate import CUDA_IDIOMS, PYTHON_IDIOMS
from .model import BenchmarkItem, Language, Match
from .parts import Part, code_parts, prompt_parts
from .tokens import code_tokens, ngrams, prompt_tokens

_SHOWN_CHARS = 160


@dataclass(frozen=True)
class DecontamConfig:
    code_n: int = 10
    """Tokens per code n-gram."""
    code_min_run: int = 40
    """A shared run of this many code tokens alone marks a record contaminated (the longest run
    between unrelated real programs measured was 18)."""
    code_min_overlap: float = 0.5
    """Fraction of an item's distinctive code n-grams that, found in a record, marks it."""
    code_min_shared: int = 3
    """The overlap rule needs at least this many shared n-grams (tiny items are noisy)."""
    prompt_n: int = 8
    prompt_min_run: int = 30
    """Words; 13 (GPT-3) fired on templated phrases of unrelated task descriptions (up to 26)."""
    prompt_min_overlap: float = 0.5
    prompt_min_shared: int = 2
    boilerplate_df: int = 3
    """An n-gram in this many distinct benchmark items or more is template text, not evidence."""

    def config(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class _Hit:
    shared: set[str]
    run: int = 0
    """Longest run, in n-grams."""
    shown: str = ""


class _GramIndex:
    """n-gram -> unit numbers for one kind (code or prompt), with per-unit distinctive counts.
    A unit is one part of one item (its kernels, its module, its prompts); document frequency
    counts distinct items, so an item's own parts never make each other look like template."""

    def __init__(self, units: list[tuple[int, set[str]]], stop: set[str], max_df: int):
        per_item: dict[int, set[str]] = {}
        for item_no, grams in units:
            per_item.setdefault(item_no, set()).update(grams)
        df = Counter(g for grams in per_item.values() for g in grams)
        self.sizes = [0] * len(units)
        self.dropped = sum(1 for g, c in df.items() if c >= max_df or g in stop)
        owners: dict[str, list[int]] = {}
        for u, (_, grams) in enumerate(units):
            for g in grams:
                if df[g] < max_df and g not in stop:
                    owners.setdefault(g, []).append(u)
                    self.sizes[u] += 1
        self.table: dict[str, tuple[int, ...]] = {g: tuple(v) for g, v in owners.items()}

    def score(self, streams: Iterable[list[str]], n: int) -> dict[int, _Hit]:
        hits: dict[int, _Hit] = {}
        for toks in streams:
            prev: dict[int, int] = {}
            for pos, g in enumerate(ngrams(toks, n)):
                owners = self.table.get(g)
                if not owners:
                    prev = {}
                    continue
                cur: dict[int, int] = {}
                for it in owners:
                    r = prev.get(it, 0) + 1
                    cur[it] = r
                    hit = hits.get(it)
                    if hit is None:
                        hit = hits[it] = _Hit(shared=set())
                    hit.shared.add(g)
                    if r > hit.run:
                        hit.run = r
                        hit.shown = " ".join(toks[pos - r + 1 : pos + n])[:_SHOWN_CHARS]
                prev = cur
        return hits


def _idiom_grams(n: int) -> set[str]:
    out: set[str] = set()
    for text in CUDA_IDIOMS:
        out.update(ngrams(code_tokens(text, "cuda"), n))
    for text in PYTHON_IDIOMS:
        out.update(ngrams(code_tokens(text, "python"), n))
    return out


class DecontamIndex:
    """Benchmark items indexed by the distinctive n-grams of their task-specific parts
    (`parts.py`): kernels, modules and prompts without the file convention."""

    def __init__(self, items: Sequence[BenchmarkItem], cfg: DecontamConfig | None = None):
        self.cfg = cfg or DecontamConfig()
        seen: dict[tuple[str, str], BenchmarkItem] = {}
        for it in items:
            # the same item given twice (one file passed twice) must not look like template text
            seen.setdefault((it.benchmark, it.item_id), it)
        self.items = list(seen.values())
        c = self.cfg
        self._code_units: list[tuple[int, Part]] = []
        code_grams: list[tuple[int, set[str]]] = []
        for i, it in enumerate(self.items):
            by_part: dict[Part, set[str]] = {}
            for text in it.code:
                for part, chunk in code_parts(text, it.language):
                    by_part.setdefault(part, set()).update(
                        ngrams(code_tokens(chunk, it.language), c.code_n))
            for part, grams in by_part.items():
                self._code_units.append((i, part))
                code_grams.append((i, grams))
        self._prompt_units: list[tuple[int, Part]] = [(i, "prompt") for i in range(len(self.items))]
        prompt_grams = [
            (i, {g for text in it.prompts for chunk in prompt_parts(text)
                 for g in ngrams(prompt_tokens(chunk), c.prompt_n)})
            for i, it in enumerate(self.items)
        ]
        self._code = _GramIndex(code_grams, _idiom_grams(c.code_n), c.boilerplate_df)
        self._prompt = _GramIndex(prompt_grams, set(), c.boilerplate_df)

    def __len__(self) -> int:
        return len(self.items)

    def stats(self) -> dict[str, Any]:
        """Sizes for the manifest and the build report."""
        by_bench = Counter(it.benchmark for it in self.items)
        code_items = {i for (i, _), s in zip(self._code_units, self._code.sizes, strict=True) if s}
        prompt_items = {i for (i, _), s in zip(self._prompt_units, self._prompt.sizes, strict=True)
                        if s}
        return {
            "items": dict(sorted(by_bench.items())),
            "code_ngrams": len(self._code.table),
            "code_ngrams_dropped_as_boilerplate": self._code.dropped,
            "prompt_ngrams": len(self._prompt.table),
            "prompt_ngrams_dropped_as_boilerplate": self._prompt.dropped,
            "items_compared_by_kernels": len({i for i, part in self._code_units
                                              if part == "kernel"}),
            "items_without_distinctive_code": sum(
                1 for i, it in enumerate(self.items) if it.code and i not in code_items
            ),
            "items_without_distinctive_prompt": sum(
                1 for i, it in enumerate(self.items) if it.prompts and i not in prompt_items
            ),
        }

    def config(self) -> dict[str, Any]:
        return {**self.cfg.config(), "benchmarks": self.stats()["items"]}

    def score_code(self, texts: Iterable[tuple[str, Language]]) -> list[Match]:
        """Every item part sharing at least one distinctive code n-gram with the task-specific
        parts of `texts`, best first (for measuring)."""
        streams = [code_tokens(chunk, lang) for t, lang in texts
                   for _, chunk in code_parts(t, lang)]
        hits = self._code.score(streams, self.cfg.code_n)
        return self._matches(self._code, self._code_units, hits, "code")

    def score_prompt(self, text: str) -> list[Match]:
        hits = self._prompt.score([prompt_tokens(chunk) for chunk in prompt_parts(text)],
                                  self.cfg.prompt_n)
        return self._matches(self._prompt, self._prompt_units, hits, "prompt")

    def match_code(self, text: str, language: Language = "cuda", *,
                   extra: Iterable[tuple[str, Language]] = ()) -> list[Match]:
        """Items that `text` (plus `extra` texts of the same record) is contaminated by."""
        c = self.cfg
        return [m for m in self.score_code([(text, language), *extra])
                if _contaminated(m, c.code_min_run, c.code_min_overlap, c.code_min_shared)]

    def match_prompt(self, text: str) -> list[Match]:
        c = self.cfg
        return [m for m in self.score_prompt(text)
                if _contaminated(m, c.prompt_min_run, c.prompt_min_overlap, c.prompt_min_shared)]

    def _matches(self, index: _GramIndex, units: list[tuple[int, Part]], hits: dict[int, _Hit],
                 kind: Literal["code", "prompt"]) -> list[Match]:
        n = self.cfg.code_n if kind == "code" else self.cfg.prompt_n
        out = []
        for u, hit in hits.items():
            i, part = units[u]
            it = self.items[i]
            out.append(Match(
                benchmark=it.benchmark, item_id=it.item_id, kind=kind, part=part,
                overlap=len(hit.shared) / index.sizes[u], ngram=hit.shown,
                run=hit.run + n - 1, shared=len(hit.shared),
            ))
        out.sort(key=lambda m: (-m.overlap, -m.run, m.benchmark, m.item_id, m.part))
        return out


def _contaminated(m: Match, min_run: int, min_overlap: float, min_shared: int) -> bool:
    return m.run >= min_run or (m.overlap >= min_overlap and m.shared >= min_shared)
