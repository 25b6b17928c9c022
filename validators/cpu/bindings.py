"""One host unit for every load_inline extension whose bindings have the same shape.

load_inline's generated main.cpp (the C++ sources, then `m.def(...)` for each bound function) is
the costliest unit of an extension: pybind11 and torch's Python casters, ~7-12 CPU-s, for a
handful of declarations. Two answers that declare `torch::Tensor relu_cuda(torch::Tensor x);`
and `torch::Tensor gelu_cuda(torch::Tensor x);` differ in that unit only by a name. Here the
names are taken out of its text: each bound function is declared under a placeholder name
(`cudashim_bound_000`, ...), the names and docstrings pybind11 registers are read from a table a
tiny unit of each extension defines, and the link aliases each placeholder symbol to the
function the extension's CUDA units define. The object is then shared (build cache) by every
extension whose declarations have the same shape.

Only where the result is the same program as torch's text: the C++ sources are declarations of
the bound functions and nothing that could read a renamed identifier (each name occurs once, in
a declaration, not a definition); names are identifiers and docstrings would mean the same raw
inside torch's string literal; the compiled object leaves each placeholder undefined and the
CUDA units define each aliased symbol. Anything else is built from torch's own text.

`split_module` does the same for a CUDA source that binds its own functions in a final
`PYBIND11_MODULE` block (the AI CUDA Engineer's form): the kernels without pybind11, the block as
a shared binding unit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

PLACEHOLDER = "cudashim_bound_{:03d}"
_PLACEHOLDER_RE = re.compile(r"cudashim_bound_\d{3}")
NAMES = "cudashim_bound_names"
DOCS = "cudashim_bound_docs"
_IDENT = re.compile(r"[A-Za-z_]\w*\Z")
# A docstring that torch's `"{doc}"` would not reproduce byte for byte (or not compile).
_DOC_UNSAFE = re.compile(r'["\\\n\r]|\?\?')
# Words after which a name followed by `(` is an expression, not a declaration.
_NOT_A_TYPE = {"return", "else", "case", "do", "throw", "co_return", "co_yield", "co_await", "goto",
               "new", "delete", "sizeof", "alignof", "decltype", "typeid", "not", "and", "or"}


@dataclass(frozen=True)
class SharedBindings:
    """The host unit's text with placeholder names, and the extension's own names and docs."""

    text: str
    names: tuple[str, ...]
    docs: tuple[str | None, ...]

    def placeholder(self, k: int) -> str:
        return PLACEHOLDER.format(k)


def shared_bindings(cpp_sources: list[str], functions: dict[str, str] | None,
                    error_handling: bool) -> SharedBindings | None:
    """The placeholder form of load_inline's main.cpp, or None where it might not be the same
    program as torch's text (then that text is compiled as it is)."""
    if not functions or len(functions) > 999:
        return None
    text = "\n".join(cpp_sources)
    if "TORCH_EXTENSION_NAME" in text or _PLACEHOLDER_RE.search(text) or "cudashim_bound_" in text:
        return None
    names = tuple(functions)
    docs = tuple(functions.values())
    if not all(_IDENT.match(n) for n in names) or any(_DOC_UNSAFE.search(d) for d in docs):
        return None
    renamed = text
    for k, name in enumerate(names):
        hits = list(re.finditer(rf"(?<![\w$]){re.escape(name)}(?![\w$])", text))
        if len(hits) != 1 or not _is_declaration(text, hits[0].start(), hits[0].end()):
            return None
        renamed = re.sub(rf"(?<![\w$]){re.escape(name)}(?![\w$])", PLACEHOLDER.format(k), renamed)
    lines = ["#include <torch/extension.h>", _unnamed_parameters(renamed),
             f'extern "C" const char* const {NAMES}[];', f'extern "C" const char* const {DOCS}[];',
             "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {"]
    for k in range(len(names)):
        fn = PLACEHOLDER.format(k)
        target = f"torch::wrap_pybind_function({fn})" if error_handling else fn
        lines.append(f"m.def({NAMES}[{k}], {target}, {DOCS}[{k}]);")
    lines.append("}")
    return SharedBindings(text="\n".join(lines), names=names, docs=docs)


_WRAPPING_DECLARATORS = {"pointer_declarator", "reference_declarator", "array_declarator",
                         "parenthesized_declarator", "function_declarator", "attributed_declarator"}


def _unnamed_parameters(text: str) -> str:
    """`text` with the parameters of the placeholder declarations named `p0, p1, ...`: a name in
    a declaration without a body means nothing, and answers name them as they like
    (`(torch::Tensor x, double eps)`, `(torch::Tensor input, double slope)`). Unchanged where
    the parser finds an error. A name something else reads (a trailing `decltype(x)`) makes the
    unit fail to compile, and torch's text is compiled instead."""
    from ..analysis.parse import parser

    data = text.encode("utf-8", "surrogatepass")
    tree = parser().parse(data)
    if tree.root_node.has_error:
        return text
    edits: list[tuple[int, int, bytes]] = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        if node.type != "function_declarator":
            continue
        name = node.child_by_field_name("declarator")
        params = node.child_by_field_name("parameters")
        if name is None or params is None or not _PLACEHOLDER_RE.fullmatch(name.text.decode(errors="replace")):
            continue
        k = 0
        for param in params.named_children:
            decl = param.child_by_field_name("declarator")
            while decl is not None and decl.type in _WRAPPING_DECLARATORS:
                inner = decl.child_by_field_name("declarator")
                if inner is None and decl.type in ("parenthesized_declarator", "reference_declarator"):
                    # no field name on these in the grammar: the wrapped declarator is the last child
                    inner = decl.named_children[-1] if decl.named_children else None
                decl = inner
            if decl is not None and decl.type == "identifier":
                edits.append((decl.start_byte, decl.end_byte, f"p{k}".encode()))
            k += 1
    for start, end, new in sorted(edits, reverse=True):
        data = data[:start] + new + data[end:]
    return data.decode("utf-8", "surrogatepass")


def _is_declaration(text: str, start: int, end: int) -> bool:
    """Whether the name at text[start:end] is declared there as a function, without a body: not
    qualified or a member (`::x`, `.x`, `->x`), its parameter list closed and followed by `;`
    before any `{` or `=`."""
    before = text[:start].rstrip()
    if before.endswith(("::", ".", "->")) or not re.search(r"[\w>*&]\Z", before):
        return False
    last = re.search(r"\w+\Z", before)
    if last and last.group() in _NOT_A_TYPE:
        return False
    rest = text[end:].lstrip()
    if not rest.startswith("("):
        return False
    depth = 0
    for i, ch in enumerate(rest):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                tail = rest[i + 1:]
                stop = re.search(r"[;{=]", tail)
                return bool(stop) and stop.group() == ";"
        elif ch in "{};":
            return False
    return False


def names_table_source(shared: SharedBindings) -> str:
    """The extension's own unit: the names and docstrings the shared host unit registers."""
    def literal(s: str | None) -> str:
        if s is None:
            return "nullptr"
        return '"' + "".join(c if 0x20 <= ord(c) < 0x7F else
                             "".join(f"\\{b:03o}" for b in c.encode("utf-8", "surrogatepass"))
                             for c in s) + '"'

    return (f'extern "C" const char* const {NAMES}[] = {{{", ".join(map(literal, shared.names))}}};\n'
            f'extern "C" const char* const {DOCS}[] = {{{", ".join(map(literal, shared.docs))}}};\n')


def nm_symbols(output: str) -> tuple[set[str], set[str]]:
    """(undefined, defined) global symbols of `nm -P -g` output."""
    undefined: set[str] = set()
    defined: set[str] = set()
    for line in output.splitlines():
        parts = line.split()
        if len(parts) >= 2 and len(parts[1]) == 1:
            (undefined if parts[1] in "Uw" else defined).add(parts[0])
    return undefined, defined


def aliases(shared: SharedBindings, host_undefined: set[str], host_defined: set[str],
            cuda_defined: set[str]) -> list[str] | None:
    """`--defsym` pairs binding each placeholder symbol the host unit calls to the extension's
    own function, or None when the shared unit cannot stand for torch's text (a placeholder it
    defines, a function no CUDA unit defines)."""
    if any(_PLACEHOLDER_RE.search(s) for s in host_defined):
        return None
    pairs: list[str] = []
    found = set()
    for sym in sorted(host_undefined):
        if not _PLACEHOLDER_RE.search(sym):
            continue
        orig = sym
        for k, name in enumerate(shared.names):
            ph = shared.placeholder(k)
            if sym == ph:
                orig = name
            orig = orig.replace(f"{len(ph)}{ph}", f"{len(name)}{name}")
            if ph in sym:
                found.add(k)
        if _PLACEHOLDER_RE.search(orig) or orig not in cuda_defined:
            return None
        pairs.append(f"{sym}={orig}")
    if found != set(range(len(shared.names))):
        return None
    return pairs


# --- a CUDA source that binds itself (the AI CUDA Engineer's form) ---------------------------

_MODULE_RE = re.compile(r"PYBIND11_MODULE\s*\(\s*TORCH_EXTENSION_NAME\s*,\s*(\w+)\s*\)\s*\{")
_COMMENT_RE = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
# Identifiers a split declaration may hold: torch's and the language's types, nothing the source
# itself defines (a struct, a typedef), which the binding unit would not see.
_DECL_WORDS = {"torch", "at", "c10", "std", "Tensor", "Scalar", "IntArrayRef", "optional", "vector",
               "int", "long", "short", "unsigned", "signed", "char", "float", "double", "bool", "void",
               "const", "int64_t", "int32_t", "uint64_t", "uint32_t", "size_t", "string", "nullptr",
               "true", "false", "TensorList", "ScalarType"}


@dataclass(frozen=True)
class SplitModule:
    """A CUDA source without its PYBIND11_MODULE block, and the block as a shared binding unit."""

    kernels: str
    bindings: SharedBindings


def split_module(source: str) -> SplitModule | None:
    """`source` (a CUDA unit that defines its functions and binds them in a final
    `PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("name", &fn, "doc"); ... }`) as its
    kernels, compiled without pybind11, and a binding unit of the placeholder form, or None
    where that might not be the same program (anything but plain `m.def`s of functions the
    source defines once, at file scope, with torch's and the language's types)."""
    found = list(_MODULE_RE.finditer(source))
    if len(found) != 1:
        return None
    head = found[0]
    var = head.group(1)
    depth, end = 1, None
    for i in range(head.end(), len(source)):
        if source[i] == "{":
            depth += 1
        elif source[i] == "}":
            depth -= 1
            if depth == 0:
                end = i + 1
                break
    if end is None:
        return None
    body = _COMMENT_RE.sub(" ", source[head.end():end - 1])
    stmt = re.compile(rf'\s*{re.escape(var)}\s*\.\s*def\s*\(\s*"([A-Za-z_]\w*)"\s*,\s*&?\s*([A-Za-z_]\w*)\s*'
                      r'(?:,\s*"([^"\\\n]*)"\s*)?\)\s*;')
    defs: list[tuple[str, str, str | None]] = []
    pos = 0
    while pos < len(body):
        m = stmt.match(body, pos)
        if m is None:
            if body[pos:].strip():
                return None
            break
        defs.append((m.group(1), m.group(2), m.group(3)))
        pos = m.end()
    fns = [fn for _, fn, _ in defs]
    if not defs or len(set(fns)) != len(fns) or any(doc and _DOC_UNSAFE.search(doc) for _, _, doc in defs):
        return None
    kernels = source[:head.start()] + re.sub(r"[^\n]", " ", source[head.start():end]) + source[end:]
    declarations = []
    for fn in fns:
        decl = _file_scope_declaration(kernels, fn)
        if decl is None:
            return None
        declarations.append(decl)
    shared = shared_bindings(declarations, {fn: fn for fn in fns}, False)
    if shared is None:
        return None
    words = set(re.findall(r"[A-Za-z_]\w*", shared.text.split("\n", 1)[1].split('extern "C"')[0]))
    if not words <= _DECL_WORDS | {PLACEHOLDER.format(k) for k in range(len(fns))} | {
            f"p{k}" for k in range(64)}:
        return None
    # A def without a docstring gets none (a null pointer is pybind11's "no docstring").
    return SplitModule(kernels=kernels, bindings=SharedBindings(
        text=shared.text, names=tuple(name for name, _, _ in defs), docs=tuple(doc for _, _, doc in defs)))


def _file_scope_declaration(source: str, name: str) -> str | None:
    """The declaration of the host function `name` that `source` defines once at file scope
    (its text up to the body, then `;`), or None."""
    from ..analysis.parse import parser

    data = source.encode("utf-8", "surrogatepass")
    tree = parser().parse(data)
    hits = []
    for node in tree.root_node.named_children:
        if node.type != "function_definition":
            continue
        decl = node.child_by_field_name("declarator")
        while decl is not None and decl.type in ("pointer_declarator", "reference_declarator"):
            decl = decl.named_children[-1] if decl.named_children else None
        if decl is None or decl.type != "function_declarator":
            continue
        ident = decl.child_by_field_name("declarator")
        if ident is not None and ident.type == "identifier" and ident.text.decode(errors="replace") == name:
            hits.append(node)
    if len(hits) != 1:
        return None
    node = hits[0]
    body = node.child_by_field_name("body")
    if body is None:
        return None
    text = data[node.start_byte:body.start_byte].decode("utf-8", "surrogatepass").strip()
    if re.search(r"\b(static|inline|__global__|__device__|__host__|template|extern|constexpr)\b", text):
        return None
    return text + ";"
