"""Exact and near deduplication over the whole set of surviving records.

Exact: equal normalised text (comments and whitespace ignored). Near: MinHash over token
shingles with LSH candidate search (datasketch), confirmed by the estimated Jaccard
similarity. Records are visited held-out (`test`) first, then by id, and each is compared
only with records already kept, so the outcome does not depend on input order, and a
training record that near-duplicates a held-out task is the one dropped (no leakage into
train).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sources.hf.sakana import FORM, runtime_key

from ..item import Item
from .normalise import normalise_text, text_hash

if TYPE_CHECKING:
    from datasketch import MinHash

# datasketch (and the SciPy it imports) is imported where it is used: ~0.6 s of start-up for
# every process that imports the stages (each Ray worker, every CLI), and only dedup needs it.

SCHEME = "affine32"
"""datasketch's hashing scheme, pinned so cached signatures stay comparable."""
_TOKEN_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+(?:\.\d*)?|\S")


@dataclass(frozen=True)
class DedupConfig:
    near_threshold: float = 0.85
    """Estimated Jaccard similarity of shingle sets at or above which two records are
    near duplicates; 1.0 or more disables near dedup."""
    num_perm: int = 128
    shingle: int = 5
    """Tokens per shingle."""
    seed: int = 1


def shingles(text: str, k: int) -> set[str]:
    toks = _TOKEN_RE.findall(normalise_text(text))
    if len(toks) <= k:
        return {" ".join(toks)}
    return {" ".join(toks[i : i + k]) for i in range(len(toks) - k + 1)}


def minhash(text: str, cfg: DedupConfig) -> MinHash:
    from datasketch import MinHash

    m = MinHash(num_perm=cfg.num_perm, seed=cfg.seed, scheme=SCHEME)
    m.update_batch([s.encode("utf-8", "surrogatepass") for s in sorted(shingles(text, cfg.shingle))])
    return m


def signature(item: Item, cfg: DedupConfig) -> MinHash:
    import numpy as np
    from datasketch import MinHash

    if item.minhash is not None and len(item.minhash) == cfg.num_perm:
        return MinHash(
            num_perm=cfg.num_perm, seed=cfg.seed, scheme=SCHEME,
            hashvalues=np.array(item.minhash, dtype=np.uint64),
        )
    return minhash(item.raw.text, cfg)


def dedup_order(item: Item) -> tuple[int, float, str]:
    # Of an archive's duplicate attempts (the AI CUDA Engineer's), the one recorded fastest is
    # kept; other records have no runtime and keep the id order.
    runtime = item.raw.meta.get("cuda_runtime")
    return (0 if item.raw.split == "test" else 1,
            runtime_key(runtime) if item.raw.meta.get("form") == FORM else 0.0, item.id)


def dedup(items: Iterable[Item], cfg: DedupConfig = DedupConfig()) -> list[Item]:
    """Mark duplicates as rejected (stage `dedup`); returns every item, in id order."""
    from datasketch import MinHashLSH

    items = list(items)
    alive = sorted((it for it in items if it.alive), key=dedup_order)
    by_hash: dict[str, str] = {}
    lsh = MinHashLSH(threshold=min(cfg.near_threshold, 1.0), num_perm=cfg.num_perm) \
        if cfg.near_threshold < 1.0 else None
    kept_sigs: dict[str, MinHash] = {}
    for it in alive:
        h = it.text_hash or text_hash(it.raw.text)
        if h in by_hash:
            it.reject("dedup", "duplicate_exact", f"same normalised text as {by_hash[h]}")
            continue
        by_hash[h] = it.id
        if lsh is None:
            continue
        sig = signature(it, cfg)
        best: tuple[float, str] | None = None
        for other in sorted(lsh.query(sig)):
            j = sig.jaccard(kept_sigs[other])
            if j >= cfg.near_threshold and (best is None or j > best[0]):
                best = (j, other)
        if best is not None:
            it.reject("dedup", "duplicate_near", f"~{best[0]:.2f} Jaccard with {best[1]}")
            continue
        lsh.insert(it.id, sig)
        kept_sigs[it.id] = sig
    return sorted(items, key=lambda it: it.id)
