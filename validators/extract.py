"""The program in a model's completion: a fenced code block.

`extract_program(text)` takes the first fenced block, whatever its info string (```cuda, ```cpp,
```c++, a bare ```), as CUDABench takes it. `extract_program(text, language="python")` (or
`extract_python(text)`, for KernelBench answers) takes the first block whose info string names
that language (```python, ```py, ```python3 for Python), else the first block with no info
string; a completion whose only blocks are in other languages has no program of that language
(an answer with its kernel shown first in a ```cpp block and its `ModelNew` in a ```python block
is scored on the ```python block).

- No fitting block: `None`. Callers record the sample as `no_code_block`; the raw text is never
  compiled or run instead (prose around code would make the verdict depend on how lenient a
  compiler is with garbage, and the benchmarks' harnesses do not).
- An opening fence with no closing fence (a completion cut by max tokens): the block runs to the
  end of the text, so a program that was complete except for the fence still counts.
- Fences are recognised at the start of a line (up to three spaces of indent); the closing fence
  is a line of at least as many backticks as the opening one and nothing else. Blocks are read
  in order, so a fence inside a block never opens another one.
- Lines may end in LF, CRLF or a lone CR (CommonMark's line endings); the program comes back
  with LF endings, so a closing fence followed by CRLF ends the block like any other.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_OPEN = re.compile(r"^ {0,3}(`{3,})([^`\n]*)$", re.MULTILINE)
_LINE_END = re.compile(r"\r\n?")

LANGUAGE_NAMES: dict[str, frozenset[str]] = {
    "python": frozenset({"python", "py", "python3", "py3"}),
    "cuda": frozenset({"cuda", "cu"}),
    "cpp": frozenset({"cpp", "c++", "cxx", "cc"}),
}
"""The info-string words that name a language (its first word, case-insensitive)."""


def fenced_blocks(completion: str) -> Iterator[tuple[str, str]]:
    """Each fenced block in order, as (language word of its info string, lower-cased, or "";
    body without the fences, LF line endings)."""
    # `$` in MULTILINE matches only before "\n": a "\r" left in place would keep a CRLF closing
    # fence (and everything after it) in the program, and a CR-only text would have no lines.
    text = _LINE_END.sub("\n", completion)
    pos = 0
    while (m := _OPEN.search(text, pos)) is not None:
        ticks = len(m.group(1))
        words = m.group(2).split()
        body_start = m.end() + 1 if m.end() < len(text) else m.end()
        close = re.compile(rf"^ {{0,3}}`{{{ticks},}}[ \t]*$", re.MULTILINE)
        c = close.search(text, body_start)
        yield (words[0].lower() if words else ""), text[body_start:c.start() if c else len(text)]
        if c is None:
            return
        pos = c.end()


def extract_program(completion: str, language: str | None = None) -> str | None:
    """The text inside the first fenced block (without the fences), or None if there is none.
    With `language`, the first block in that language, else the first one without a language."""
    untagged: str | None = None
    names = LANGUAGE_NAMES.get(language.lower(), frozenset({language.lower()})) if language else None
    for lang, body in fenced_blocks(completion):
        if names is None or lang in names:
            return body
        if not lang and untagged is None:
            untagged = body
    return untagged


def extract_python(completion: str) -> str | None:
    """The Python answer of a completion (a KernelBench `ModelNew` module), or None."""
    return extract_program(completion, language="python")
