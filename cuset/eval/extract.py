"""The program in a completion: the first fenced code block, whatever its info string
(```cuda, ```cpp, ```c++, a bare ```), as CUDABench takes it.

- No fenced block at all: `None`. The runner records the sample as a compile failure with reason
  `no_code_block`; the raw text is never compiled instead (prose around code would make the
  verdict depend on how lenient a compiler is with garbage, and the paper's harness does not).
- An opening fence with no closing fence (a completion cut by max tokens): the block runs to the
  end of the text, so a program that was complete except for the fence still counts.
- Fences are recognised at the start of a line (up to three spaces of indent); the closing fence
  is a line of at least as many backticks as the opening one and nothing else.
- Lines may end in LF, CRLF or a lone CR (CommonMark's line endings); the program comes back
  with LF endings, so a closing fence followed by CRLF ends the block like any other.
"""

from __future__ import annotations

import re

_OPEN = re.compile(r"^ {0,3}(`{3,})[^`\n]*$", re.MULTILINE)
_LINE_END = re.compile(r"\r\n?")


def extract_program(completion: str) -> str | None:
    """The text inside the first fenced block (without the fences), or None if there is none."""
    # `$` in MULTILINE matches only before "\n": a "\r" left in place would keep a CRLF closing
    # fence (and everything after it) in the program, and a CR-only text would have no lines.
    completion = _LINE_END.sub("\n", completion)
    m = _OPEN.search(completion)
    if m is None:
        return None
    ticks = len(m.group(1))
    body_start = m.end() + 1 if m.end() < len(completion) else m.end()
    close = re.compile(rf"^ {{0,3}}`{{{ticks},}}[ \t]*$", re.MULTILINE)
    c = close.search(completion, body_start)
    body = completion[body_start:c.start() if c else len(completion)]
    return body
