"""Decoding, the tree-sitter-cuda parser, byte->character offsets and small node helpers."""

from __future__ import annotations

import re
import threading
import time
from bisect import bisect_right
from dataclasses import dataclass, field
from itertools import islice

import tree_sitter_cuda
from tree_sitter import Language, Node, Parser, Query, QueryCursor, Tree

from .launch_spans import grammar_spellings, masked_launch_directives

LANGUAGE = Language(tree_sitter_cuda.language())

# tree_sitter.Parser is not thread-safe; the builder may analyse from a thread pool.
_local = threading.local()

MAX_INPUT_BYTES = 32 * 1024 * 1024
"""Inputs larger than this are not parsed (an error says so): no real kernel file is that big."""

_BINARY_PROBE = 8192
_NON_ASCII = re.compile(r"[^\x00-\x7f]")

MAX_NESTING = 256
"""Inputs whose brackets (`(`, `[`, `{` together, outside comments and literals) nest deeper
than this are not parsed (an error says so). tree-sitter's query over a run of unclosed `(` or
`{` costs the square of its length (1 MB of `(`: minutes); real sources stay far below (the
project's CUDA and `shared/data`'s: 10 at most; the 8,000 C/C++ headers of a Debian
`/usr/include`: 16), and clang refuses more than 256 itself (`-fbracket-depth`)."""


def parser() -> Parser:
    p = getattr(_local, "parser", None)
    if p is None:
        p = _local.parser = Parser(LANGUAGE)
    return p


_queries: dict[str, Query] = {}


def query(source: str) -> Query:
    """A compiled query, cached by its text (compiling is slow, matching is fast)."""
    q = _queries.get(source)
    if q is None:
        q = _queries[source] = Query(LANGUAGE, source)
    return q


# Attribute-like CUDA macros the grammar does not know and that wreck the surrounding parse
# (`__shared__ __align__(16) float s[];` swallows the next statement). Their bytes are replaced
# by spaces in what the parser sees (same length, so offsets hold; `.text` is untouched).
# `__cluster_dims__` is handled on the tree instead (functions.py) so the flag can see it.
MASKED_ATTRIBUTES = (b"__align__",)
_IDENT_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


def mask_attributes(data: bytes) -> bytes:
    """`data` with each `__align__(...)` blanked (newlines kept), or `data` itself if none."""
    if not any(word in data for word in MASKED_ATTRIBUTES):
        return data
    out = bytearray(data)
    for word in MASKED_ATTRIBUTES:
        i = data.find(word)
        while i >= 0:
            j = i + len(word)
            if i > 0 and data[i - 1] in _IDENT_BYTES or j < len(data) and data[j] in _IDENT_BYTES:
                i = data.find(word, j)
                continue
            k = j
            while k < len(data) and data[k] in b" \t":
                k += 1
            if k < len(data) and data[k] == ord("("):
                depth, end = 0, k
                while end < len(data) and end - k < 200:
                    c = data[end]
                    depth += (c == ord("(")) - (c == ord(")"))
                    end += 1
                    if depth == 0:
                        break
                if depth == 0:
                    j = end
            for x in range(i, j):
                if out[x] not in b"\r\n":
                    out[x] = 0x20
            i = data.find(word, j)
    return bytes(out)


class AnalysisTimeout(Exception):
    """Parsing or querying ran past the time limit (pathological input)."""


BUDGETED_ABOVE = 256 * 1024
"""Inputs larger than this parse through a read callback so a time limit can stop them; smaller
ones parse directly (about 10% faster, and bounded anyway)."""


def _expired(deadline: float | None) -> bool:
    return deadline is not None and time.thread_time() > deadline


def parse_bytes(data: bytes, deadline: float | None = None) -> Tree:
    """Parse, raising `AnalysisTimeout` once this thread's CPU clock passes `deadline`."""
    p = parser()
    if deadline is None or len(data) <= BUDGETED_ABOVE:
        return p.parse(data)
    view = memoryview(data)

    def read(offset: int, _point: object) -> bytes:
        return bytes(view[offset : offset + 4096])

    try:
        tree = p.parse(read, progress_callback=lambda *_: time.thread_time() > deadline)
    except ValueError:  # "Parsing failed": the progress callback cancelled it
        p.reset()
        raise AnalysisTimeout from None
    # A callback-built tree fetches node text through the callback (slow for query predicates
    # and `.text`); re-parsing the bytes with it as the old tree is incremental and almost free.
    return p.parse(data, old_tree=tree)


def captures(q: Query, node: Node) -> dict[str, list[Node]]:
    """Every capture of `q` under `node`, by capture name, each list in source order."""
    # No progress callback here: py-tree-sitter 0.26 crashed (SIGSEGV) with callbacks passed to
    # `QueryCursor.captures`; the query costs about a third of the parse, which is bounded.
    cursor = QueryCursor(q)
    cursor.set_byte_range(node.start_byte, node.end_byte)
    found = cursor.captures(node)
    # The cursor's own order is not source order and not even stable: for one tree of a host
    # function with four launches it gave five different orders over 200 parses (it follows the
    # memory layout of the tree). Everything built from captures in visiting order (a span
    # label joining the kernels whose launches share a configuration statement) would then
    # differ from one process to the next; source order makes the analysis a function of the
    # text. Ties (same extent) are different node types, or zero-width nodes of a broken parse.
    return {
        name: sorted(nodes, key=lambda n: (n.start_byte, -n.end_byte, n.type))
        for name, nodes in found.items()
    }


@dataclass
class Decoded:
    text: str
    data: bytes
    """UTF-8 bytes handed to the parser; same length as `text.encode()` so offsets map exactly."""
    encoding: str
    notes: list[str] = field(default_factory=list)
    refuse: str | None = None
    """Why the input must not be parsed at all (binary, too large), else None."""


def decode(source: str | bytes | bytearray | memoryview) -> Decoded:
    """Turn the input into text; bytes that are not UTF-8 fall back to Latin-1.

    Latin-1 rather than `errors="replace"`: it never fails, keeps one character per byte (so
    nothing is lost and the text can be written back byte-exactly), and is what legacy
    non-UTF-8 source comments usually are.
    """
    notes: list[str] = []
    if not isinstance(source, (str, bytes, bytearray, memoryview)):
        raise TypeError(f"expected str or bytes, got {type(source).__name__}")
    if isinstance(source, str):
        text, encoding = source, "str"
        # surrogatepass: a str made with surrogateescape must not make us raise.
        data = text.encode("utf-8", "surrogatepass")
    else:
        raw = bytes(source)
        try:
            text, encoding = raw.decode("utf-8"), "utf-8"
            data = raw
        except UnicodeDecodeError as exc:
            text, encoding = raw.decode("latin-1"), "latin-1"
            data = text.encode("utf-8")
            notes.append(
                f"input is not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start}); "
                "decoded as Latin-1"
            )
    refuse = None
    if len(data) > MAX_INPUT_BYTES:
        refuse = f"input is {len(data)} bytes, over the {MAX_INPUT_BYTES}-byte limit: not parsed"
    elif looks_binary(text[:_BINARY_PROBE]):
        refuse = "input looks binary (many control characters in its first 8 KiB): not parsed"
    if text.startswith("\ufeff"):
        # The parser would choke on the BOM; blank its three bytes so offsets stay the same.
        data = b"   " + data[3:]
        notes.append("input starts with a byte-order mark (kept in .text, ignored by the parser)")
    nuls = data.count(b"\0")
    if nuls:
        # g++ reads a NUL as white space (with a warning): a program may hold one and build. To
        # tree-sitter it is an error token that wrecks the statement around it (and a NUL in the
        # first 8 KiB used to refuse the whole input as binary). One byte each way: offsets hold.
        data = data.replace(b"\0", b" ")
        notes.append(f"input has {nuls} NUL byte(s) (kept in .text, read as spaces by the parser)")
    if refuse is None:
        refuse = nesting_reason(data)
    return Decoded(text=text, data=data, encoding=encoding, notes=notes, refuse=refuse)


# Where comments and literals may start; a literal ends on its own line (tree-sitter's do too).
_SKIPPABLE = re.compile(rb"//|/\*|[\"']")
_LITERALS = {
    ord(q): re.compile(rb"%s(?:[^%s\\\n]|\\.)*+%s" % (q, q, q)) for q in (b'"', b"'")
}
_BLANK = bytes(b if b == 0x0A else 0x20 for b in range(256))
_BRACKETS = bytes.maketrans(b"[{]}", b"(())")
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"()[]{}")
_BRACKET = re.compile(rb"[()\[\]{}]")


def nesting_reason(data: bytes, limit: int | None = None) -> str | None:
    """Why `data` must not be parsed for its brackets nesting deeper than `limit` (default
    `MAX_NESTING`), else None. Linear: one pass for comments and literals, one over the brackets.

    Brackets in comments and in string and character literals closed on their line do not count;
    everything else does (an unclosed `/*` or `'` is no comment or literal to tree-sitter either,
    and `1'0((((` is a number then brackets). Depth never drops below zero (a stray closer does
    not pay for later openers). What this counts that the parser does not (a raw string literal
    over several lines, a `//` comment continued by a backslash, the openers of both branches of
    an `#if`) would need hundreds of unclosed openers to matter: nothing real comes near."""
    limit = MAX_NESTING if limit is None else limit
    if data.count(b"(") + data.count(b"[") + data.count(b"{") <= limit:
        return None
    code = bytearray(data)
    dead = {ord('"'): -1, ord("'"): -1}  # a quote of this kind before here starts no literal
    comments_close = True  # whether a `*/` may still come
    m = _SKIPPABLE.search(data)
    while m is not None:
        start = end = m.start()
        c = data[start]
        if c in dead:
            literal = None if start < dead[c] else _LITERALS[c].match(data, start)
            if literal is not None:
                end = literal.end()
            elif start >= dead[c]:
                # Unclosed on its line: neither can any later quote of this kind be there (each
                # was an escaped one to the scan that failed).
                eol = data.find(b"\n", start)
                dead[c] = len(data) if eol < 0 else eol
        elif data[start + 1] == ord("/"):
            eol = data.find(b"\n", start)
            end = len(data) if eol < 0 else eol
        elif comments_close:
            close = data.find(b"*/", start + 2)
            if close < 0:
                comments_close = False
            else:
                end = close + 2
        if end > start:
            code[start:end] = data[start:end].translate(_BLANK)
        m = _SKIPPABLE.search(data, max(end, start + 1))
    brackets = bytes(code).translate(_BRACKETS, _NOT_BRACKETS)
    depth = 0
    opener = ord("(")
    for i, b in enumerate(brackets):
        if b == opener:
            depth += 1
            if depth > limit:
                at = next(islice(_BRACKET.finditer(code), i, None)).start()
                line = code.count(b"\n", 0, at) + 1
                return f"input nests brackets deeper than {limit} levels (line {line}): not parsed"
        elif depth:
            depth -= 1
    return None


# C0 control bytes other than the whitespace ones (\t \n \v \f \r) and ESC (colour codes in
# comments): source text has essentially none of them, random bytes about 9% of them.
_CONTROL_BYTES = bytes(c for c in range(32) if chr(c) not in "\t\n\v\f\r\x1b")


def looks_binary(sample: str) -> bool:
    # A NUL alone does not make a source binary (g++ reads it as a space); many control
    # characters, NUL among them, do. Control characters are one byte in UTF-8 and never inside
    # a multi-byte sequence.
    data = sample.encode("utf-8", "surrogatepass")
    controls = len(data) - len(data.translate(None, _CONTROL_BYTES))
    return controls > max(4, len(sample) // 100)


class OffsetMap:
    """Converts UTF-8 byte offsets (what tree-sitter reports) to `str` character offsets."""

    __slots__ = ("_byte_after", "_extra")

    def __init__(self, text: str) -> None:
        self._byte_after: list[int] = []
        self._extra: list[int] = []
        if text.isascii():
            return
        extra = 0
        for m in _NON_ASCII.finditer(text):
            cp = ord(m.group())
            width = 2 if cp < 0x800 else 3 if cp < 0x10000 else 4
            extra += width - 1
            # Byte offset just past this character, and the bytes-minus-chars surplus from there on.
            self._byte_after.append(m.start() + extra + 1)
            self._extra.append(extra)

    def char(self, byte_offset: int) -> int:
        if not self._byte_after:
            return byte_offset
        i = bisect_right(self._byte_after, byte_offset)
        return byte_offset - (self._extra[i - 1] if i else 0)


class Source:
    """One parsed text: the tree plus what is needed to report character offsets and texts.

    `shift` places a sub-parse (a macro body parsed on its own) back into the outer text:
    character offset in the outer text = `shift` + character offset in the parsed text, and
    `line_shift` does the same for line numbers.
    """

    def __init__(
        self,
        text: str,
        data: bytes,
        shift: int = 0,
        line_shift: int = 0,
        macro: str | None = None,
        deadline: float | None = None,
    ) -> None:
        self.text = text
        self.data = data
        self.shift = shift
        self.line_shift = line_shift
        self.macro = macro
        self.offsets = OffsetMap(text)
        self.deadline = deadline
        # A launch's inner preprocessor lines (and the text of its later branches) read as
        # blanks, so the grammar sees one launch; offsets are the same either way.
        self.parsed = masked_launch_directives(mask_attributes(grammar_spellings(data)), first_branch=True)
        self.tree: Tree = parse_bytes(self.parsed, deadline)

    def start(self, node: Node) -> int:
        return self.shift + self.offsets.char(node.start_byte)

    def end(self, node: Node) -> int:
        return self.shift + self.offsets.char(node.end_byte)

    def node_text(self, node: Node) -> str:
        o = self.offsets
        return self.text[o.char(node.start_byte) : o.char(node.end_byte)]

    def line(self, node: Node) -> int:
        return node.start_point.row + 1 + self.line_shift


def squash(text: str) -> str:
    """Collapse runs of whitespace (multi-line argument texts read better on one line)."""
    return " ".join(text.split())


def parse_errors(src: Source, limit: int = 20) -> list[str]:
    """Syntax errors as `line L: ...` messages, outermost ERROR nodes only, at most `limit`."""
    root = src.tree.root_node
    if not root.has_error:
        return []
    found: list[str] = []
    total = 0
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_missing:
            total += 1
            if len(found) < limit:
                found.append(f"line {node.start_point.row + 1}: missing `{node.type}`")
            continue
        if node.is_error:
            total += 1
            if len(found) < limit:
                snippet = squash(src.node_text(node))
                if len(snippet) > 40:
                    snippet = snippet[:37] + "..."
                found.append(f"line {node.start_point.row + 1}: syntax error at `{snippet}`")
            continue
        if node.has_error:
            stack.extend(reversed(node.children))
    if total > len(found):
        found.append(f"... and {total - len(found)} more syntax errors")
    return found
