"""`#define` bodies: cut out of the directive text and re-parsed on their own.

tree-sitter keeps a macro body as one opaque `preproc_arg` token, and a comment inside a body
even breaks the directive's parse (`#define T (a /* c */ * b)` yields an ERROR node and a
bogus `name`). So the body is taken from the directive's own text with a tiny lexer (name,
optional parameter list) and parsed separately, wrapped in a dummy function.
"""

from __future__ import annotations

WRAP_PREFIX = "void __ckd_macro__(){"
WRAP_SUFFIX = "\n;}"


def split_define(directive: str) -> tuple[str, int] | None:
    """`(name, offset of the body)` for the text of one `#define` directive, else None."""
    i = directive.find("define")
    if i < 0 or directive[:i].strip() != "#":
        return None
    i += len("define")
    n = len(directive)
    while i < n and directive[i] in " \t\\\r\n":
        i += 1
    start = i
    while i < n and (directive[i].isalnum() or directive[i] == "_"):
        i += 1
    name = directive[start:i]
    if not name:
        return None
    if i < n and directive[i] == "(":  # function-like: no space before the parameter list
        close = directive.find(")", i)
        if close < 0:
            return None
        i = close + 1
    while i < n and directive[i] in " \t":
        i += 1
    return name, i


def wrap_body(body: str) -> str:
    """The body inside a dummy function; line continuations become spaces (same length)."""
    return WRAP_PREFIX + body.replace("\\\r\n", "  \n").replace("\\\n", " \n") + WRAP_SUFFIX


def worth_parsing(body: str) -> bool:
    """Skip empty bodies and plain constants/names (`#define N 1024`, `#define T float`)."""
    stripped = body.strip()
    if not stripped:
        return False
    return not (stripped.isidentifier() or stripped.replace(".", "").replace("_", "").isalnum())
