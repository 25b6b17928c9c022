"""Launches found by their tokens alone: every `<<< >>>( )` of a source, with the preprocessor
lines inside it. The grammar breaks a launch apart at a directive inside it
(`k<<<g, b\n#ifdef S\n, 0, s\n#endif\n>>>(d)`), and its error recovery can take a launch after a
statement macro used without a semicolon (`CUERR\n k<<<1, 4>>>\n(d);`) for a declaration; the
analysis and the cpu backend's rewrite both read launches this way too."""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass

# Preprocessor lines (with their continuations), comments, string (raw ones too) and character
# literals (skipped whole: no `<<<` or parenthesis in them counts), and the tokens that delimit
# a launch.
SCAN = re.compile(
    rb"(?P<dir>^[ \t]*\#(?:\\\r?\n|[^\n])*)"
    rb"|//(?:\\\r?\n|[^\n])*"
    rb"|/\*.*?(?:\*/|\Z)"
    rb'|(?<![\w])(?:u8|[uUL])?R"(?P<delim>[^()\\\s"]{0,16})\((?:.*?\)(?P=delim)"|.*)'
    rb'|"(?:\\.|[^"\\\n])*"'
    rb"|(?<![\w'])'(?:\\.|[^'\\\n])*'"
    rb"|(?P<tok><<<|>>>|[();])",
    re.M | re.S,
)
# The kernel expression just before a `<<<`: a name, qualified (`ns::k`) or a member (`p->k`,
# `a.b.k`), with template arguments.
TRAILING_KERNEL = re.compile(
    rb"(?:::)?[A-Za-z_]\w*(?:\s*(?:::|\.|->)\s*[A-Za-z_]\w*)*(?:\s*<(?:[^<>;{}]|<[^<>;{}]*>)*>)?\s*$")


@dataclass
class LaunchSpan:
    """Where a `<<< >>>( )` launch is in a source: its `<<<`, the end of its `>>>`, the end of
    its argument list, and the preprocessor lines in between (start, end)."""
    open: int
    close: int
    end: int
    directives: list[tuple[int, int]]


def launch_spans(src: bytes) -> list[LaunchSpan]:
    """Every `<<<` ... `>>>` ( ... ) of `src` outside comments, literals and preprocessor lines
    (a `#define` body's launches are read with the body), in one pass: a `<<<` pairs with the
    next `>>>` at its parenthesis depth, unless a `;` or a closing parenthesis comes first."""
    if b"<<<" not in src:
        return []
    tokens: list[tuple[bytes, int, int]] = []
    for m in SCAN.finditer(src):
        if m.group("dir") is not None:
            tokens.append((b"#", m.start(), m.end()))
        elif m.group("tok") is not None:
            tokens.append((m.group("tok"), m.start(), m.end()))
    spans: list[LaunchSpan] = []
    stack: list[tuple[bytes, int]] = []  # open `(` and `<<<`, by token index
    waiting: dict[int, tuple[int, int]] = {}  # token index of an argument list's `(`: its launch
    directives: list[int] = []  # token indices of preprocessor lines
    for i, (tok, _start, end) in enumerate(tokens):
        if tok == b"#":
            directives.append(i)
        elif tok == b"<<<" or tok == b"(":
            stack.append((tok, i))
        elif tok == b">>>":
            if stack and stack[-1][0] == b"<<<":
                opened = stack.pop()[1]
                nxt = i + 1
                while nxt < len(tokens) and tokens[nxt][0] == b"#":
                    nxt += 1
                if nxt < len(tokens) and tokens[nxt][0] == b"(":
                    waiting[nxt] = (opened, i)
        elif tok == b")":
            while stack and stack[-1][0] == b"<<<":
                stack.pop()
            if stack:
                opened = stack.pop()[1]
                if opened in waiting:
                    lt, gt = waiting.pop(opened)
                    spans.append(LaunchSpan(tokens[lt][1], tokens[gt][2], end, []))
        else:  # `;`
            while stack and stack[-1][0] == b"<<<":
                stack.pop()
    if directives:
        starts = [tokens[i][1] for i in directives]
        for span in spans:
            j = bisect_left(starts, span.open)
            while j < len(starts) and starts[j] < span.end:
                span.directives.append((starts[j], tokens[directives[j]][2]))
                j += 1
    spans.sort(key=lambda s: s.open)
    return spans


_CONDITIONAL = re.compile(rb"[ \t]*#[ \t]*(if|ifdef|ifndef|elif|elifdef|elifndef|else|endif)\b")


def _blank_into(out: bytearray, src: bytes, start: int, end: int) -> None:
    out[start:end] = bytes(b if b in b"\r\n" else 32 for b in src[start:end])


_RESTRICT = re.compile(rb"(?<![A-Za-z0-9_])__restrict(?![A-Za-z0-9_])")


def grammar_spellings(src: bytes) -> bytes:
    """`src` as the grammar reads it (same length, so offsets hold): GCC's `__restrict` spelled
    `restrict`. After `const` the grammar takes `__restrict` for the declared name
    (`volatile T* const __restrict p` declared `__restrict`, and `p` was unknown: ECL-MIS)."""
    if b"__restrict" not in src:
        return src
    return _RESTRICT.sub(b"restrict  ", src)


def masked_launch_directives(src: bytes, first_branch: bool = False) -> bytes:
    """`src` with each preprocessor line inside a launch made blanks (its newlines kept, so
    offsets stay). `first_branch`: the text of a conditional's `#elif`/`#else` branches inside
    a launch is blanked too, so the launch reads as one consistent call (the analysis reads the
    first branch; a build keeps every line and lets the preprocessor choose)."""
    if b"<<<" not in src or b"#" not in src:
        return src
    masked = None
    for span in launch_spans(src):
        if not span.directives:
            continue
        if masked is None:
            masked = bytearray(src)
        depth, skipping_at = 0, None  # the depth whose later branch is being skipped
        for i, (start, end) in enumerate(span.directives):
            _blank_into(masked, src, start, end)
            if not first_branch:
                continue
            m = _CONDITIONAL.match(src, start, end)
            kind = m.group(1) if m else b""
            if kind.startswith(b"if"):
                depth += 1
            elif kind in (b"elif", b"elifdef", b"elifndef", b"else"):
                if skipping_at is None:
                    skipping_at = depth
            elif kind == b"endif":
                if skipping_at == depth:
                    skipping_at = None
                depth -= 1
            if skipping_at is not None:
                stop = span.directives[i + 1][0] if i + 1 < len(span.directives) else span.end
                _blank_into(masked, src, end, stop)
    return bytes(masked) if masked is not None else src
