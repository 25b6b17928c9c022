"""The task-specific parts of code and prompts: what decontamination compares.

A benchmark item and a record written to the same program convention share a harness (`main()`
reading and writing `data/<name>.bin`, `const size_t bytes = ...; malloc`, error-check macros)
and the convention's fixed sentences in their descriptions. That text is the convention's, not
the task's: it carries no evidence of a copy, and a benchmark of one or two items is too small
for the document-frequency filter of `index.py` to recognise it as template text. So both sides
are reduced to what is specific to a task before any n-gram is taken:

* CUDA code -> its `__global__` kernels and `__device__` functions (the definitions found by
  `validators.analysis`, each its own stream so that no n-gram spans two functions). Code in
  which the analysis finds none (a header of declarations, a fragment) is compared whole.
* Python code (KernelBench and TritonBench modules, a record's PyTorch module) -> the module
  text; its scaffolding is covered by the idiom list of `boilerplate.py`.
* Prompts -> every sentence except those that state the file convention: a sentence naming a
  `data/<...>.bin` path, an `#ifndef` default or a `-D` override. The rule is a property of
  the sentence, so an LLM's paraphrase of the convention is dropped as well as the fixed
  wording of `builder.modules.FILE_CONVENTION`.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Literal

from .model import Language

Part = Literal["kernel", "code", "module", "prompt"]
"""What a match was found in: `kernel` (kernels and device functions), `code` (CUDA code in
which the analysis found no function), `module` (Python code), `prompt` (a task description)."""

# Sentence ends: ". ", "! ", "? " or a blank line. A period inside `data/<name>.bin` or `3.5`
# is not followed by whitespace, so it does not end a sentence.
_SENTENCE_END_RE = re.compile(r"(?<=[.!?])\s+|\n\s*\n")
_CONVENTION_RE = re.compile(
    r"data/\S*\.bin"                  # the file convention's paths
    r"|#\s*(?:ifndef|define)\b"        # sizes as macros with defaults
    r"|(?<![\w-])-D(?:\s|\b|$)"        # ... that -D overrides (not the `-D` of `3-D`)
)


@lru_cache(maxsize=1024)
def _cuda_functions(text: str) -> tuple[str, ...]:
    from validators.analysis import analyze

    analysis = analyze(text)
    spans = sorted({(f.span.start, f.span.end)
                    for f in (*analysis.kernels, *analysis.device_functions)})
    out: list[str] = []
    last_end = -1
    for start, end in spans:
        if start < last_end:
            # a definition inside another (a device lambda's class, a macro body) is already in
            # the enclosing span's text
            continue
        out.append(analysis.text[start:end])
        last_end = end
    return tuple(out)


def code_parts(text: str, language: Language) -> list[tuple[Part, str]]:
    """The task-specific parts of one code text, each with its kind (see the module docstring).
    The analysis of a text is cached: records of one file's kernels share their text."""
    if not text.strip():
        return []
    if language == "python":
        return [("module", text)]
    funcs = _cuda_functions(text)
    if not funcs:
        return [("code", text)]
    return [("kernel", f) for f in funcs]


def prompt_parts(text: str) -> list[str]:
    """The sentences of a prompt that are not the file convention's, as runs of consecutive
    kept sentences (an n-gram must not bridge a dropped sentence)."""
    runs: list[str] = []
    cur: list[str] = []
    for sentence in _SENTENCE_END_RE.split(text):
        if _CONVENTION_RE.search(sentence):
            if cur:
                runs.append(" ".join(cur))
            cur = []
        elif sentence.strip():
            cur.append(sentence)
    if cur:
        runs.append(" ".join(cur))
    return runs
