"""The n-gram index of benchmark items and the contamination rule.

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
Known gap: a record holding only a tiny benchmark kernel (an elementwise one-liner, under 40
distinctive tokens) without the benchmark's host code is not flagged.

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
    """n-gram -> item numbers for one kind (code or prompt), with per-item distinctive counts."""

    def __init__(self, per_item: list[set[str]], stop: set[str], max_df: int):
        df = Counter(g for grams in per_item for g in grams)
        self.table: dict[str, tuple[int, ...]] = {}
        self.sizes = [0] * len(per_item)
        self.dropped = sum(1 for g, c in df.items() if c >= max_df or g in stop)
        owners: dict[str, list[int]] = {}
        for i, grams in enumerate(per_item):
            for g in grams:
                if df[g] < max_df and g not in stop:
                    owners.setdefault(g, []).append(i)
                    self.sizes[i] += 1
        self.table = {g: tuple(v) for g, v in owners.items()}

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
    """Benchmark items indexed by distinctive code and prompt n-grams."""

    def __init__(self, items: Sequence[BenchmarkItem], cfg: DecontamConfig | None = None):
        self.cfg = cfg or DecontamConfig()
        seen: dict[tuple[str, str], BenchmarkItem] = {}
        for it in items:
            # the same item given twice (one file passed twice) must not look like template text
            seen.setdefault((it.benchmark, it.item_id), it)
        self.items = list(seen.values())
        c = self.cfg
        code_sets = [
            {g for text in it.code for g in ngrams(code_tokens(text, it.language), c.code_n)}
            for it in self.items
        ]
        prompt_sets = [
            {g for text in it.prompts for g in ngrams(prompt_tokens(text), c.prompt_n)}
            for it in self.items
        ]
        self._code = _GramIndex(code_sets, _idiom_grams(c.code_n), c.boilerplate_df)
        self._prompt = _GramIndex(prompt_sets, set(), c.boilerplate_df)

    def __len__(self) -> int:
        return len(self.items)

    def stats(self) -> dict[str, Any]:
        """Sizes for the manifest and the build report."""
        by_bench = Counter(it.benchmark for it in self.items)
        return {
            "items": dict(sorted(by_bench.items())),
            "code_ngrams": len(self._code.table),
            "code_ngrams_dropped_as_boilerplate": self._code.dropped,
            "prompt_ngrams": len(self._prompt.table),
            "prompt_ngrams_dropped_as_boilerplate": self._prompt.dropped,
            "items_without_distinctive_code": sum(
                1 for it, s in zip(self.items, self._code.sizes, strict=True) if it.code and s == 0
            ),
            "items_without_distinctive_prompt": sum(
                1 for it, s in zip(self.items, self._prompt.sizes, strict=True)
                if it.prompts and s == 0
            ),
        }

    def config(self) -> dict[str, Any]:
        return {**self.cfg.config(), "benchmarks": self.stats()["items"]}

    def score_code(self, texts: Iterable[tuple[str, Language]]) -> list[Match]:
        """Every item sharing at least one distinctive code n-gram, best first (for measuring)."""
        streams = [code_tokens(t, lang) for t, lang in texts if t]
        return self._matches(self._code, self._code.score(streams, self.cfg.code_n), "code")

    def score_prompt(self, text: str) -> list[Match]:
        hits = self._prompt.score([prompt_tokens(text)], self.cfg.prompt_n)
        return self._matches(self._prompt, hits, "prompt")

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

    def _matches(self, index: _GramIndex, hits: dict[int, _Hit],
                 kind: Literal["code", "prompt"]) -> list[Match]:
        n = self.cfg.code_n if kind == "code" else self.cfg.prompt_n
        out = []
        for i, hit in hits.items():
            it = self.items[i]
            out.append(Match(
                benchmark=it.benchmark, item_id=it.item_id, kind=kind,
                overlap=len(hit.shared) / index.sizes[i], ngram=hit.shown,
                run=hit.run + n - 1, shared=len(hit.shared),
            ))
        out.sort(key=lambda m: (-m.overlap, -m.run, m.benchmark, m.item_id))
        return out


def _contaminated(m: Match, min_run: int, min_overlap: float, min_shared: int) -> bool:
    return m.run >= min_run or (m.overlap >= min_overlap and m.shared >= min_shared)
