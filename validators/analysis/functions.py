"""Function definitions: names, execution-space qualifiers, parameters, callees."""

from __future__ import annotations

from bisect import bisect_right

from tree_sitter import Node

from .model import Function, Param, TextRange
from .parse import Source, squash

EXEC_QUALIFIERS = ("__global__", "__device__", "__host__")

# Attribute-like macros the grammar does not know: `__global__ void __cluster_dims__(2,1,1) k()`
# parses as a bogus declaration `__global__ void __cluster_dims__(2,1,1)` followed by a
# qualifier-less definition of `k`. The definition inherits the declaration's qualifiers.
_SPLITTING_ATTRIBUTES = frozenset({"__cluster_dims__", "__maxnreg__"})

_DECLARATOR_WRAPPERS = frozenset(
    {
        "pointer_declarator",
        "reference_declarator",
        "array_declarator",
        "parenthesized_declarator",
        "attributed_declarator",
        "init_declarator",
        "function_declarator",
    }
)


def declarator_name(node: Node | None) -> Node | None:
    """The identifier a (possibly nested) declarator declares: `*const a[3]` -> `a`."""
    while node is not None:
        if node.type in _DECLARATOR_WRAPPERS:
            inner = node.child_by_field_name("declarator")
            if inner is None:
                # reference_declarator / parenthesized_declarator hold it as an unnamed child
                named = [c for c in node.named_children if c.type != "comment"]
                inner = named[-1] if named else None
                if inner is None or inner.type in ("number_literal", "type_qualifier"):
                    return None
            node = inner
            continue
        if node.type in ("identifier", "field_identifier", "type_identifier"):
            return node
        if node.type in ("qualified_identifier", "template_function"):
            return node
        if node.type in ("operator_name", "destructor_name"):
            return node
        return None
    return None


def last_name(node: Node | None) -> Node | None:
    """The final plain name of a callee or declarator: `a::b<T>` -> `b`, `x.f` -> `f`."""
    while node is not None:
        t = node.type
        if t in (
            "identifier",
            "field_identifier",
            "type_identifier",
            "operator_name",
            "destructor_name",
        ):
            return node
        if t == "qualified_identifier" or t == "template_function" or t == "template_method":
            node = node.child_by_field_name("name")
        elif t == "field_expression":
            node = node.child_by_field_name("field")
        elif t == "parenthesized_expression":
            node = node.named_child(0) if node.named_child_count else None
        else:
            return None
    return None


def qualifiers_of(fn: Node, macros: dict[bytes, list[str]] | None = None) -> list[str]:
    """Execution-space qualifiers of a definition, also when written through a macro of this
    file (`#define HD __host__ __device__` ... `HD float f()`), which the grammar parses as
    the return type."""
    quals = [c.type for c in fn.children if c.type in EXEC_QUALIFIERS]
    if macros:
        for c in fn.children:
            if c.type in ("type_identifier", "identifier"):
                quals.extend(macros.get(c.text, ()))
    if quals:
        return quals
    prev = fn.prev_named_sibling
    if prev is not None and prev.type == "declaration":
        name = declarator_name(prev.child_by_field_name("declarator"))
        if name is not None and name.text.decode("latin-1") in _SPLITTING_ATTRIBUTES:
            return [c.type for c in prev.children if c.type in EXEC_QUALIFIERS]
    return quals


# Tokens a qualifier macro may expand to (at least one execution-space qualifier among them).
_QUALIFIER_TOKENS = frozenset(
    {*EXEC_QUALIFIERS, "__forceinline__", "__noinline__", "__inline__", "inline", "static"}
)


def qualifier_macro(body: str) -> list[str] | None:
    """The execution-space qualifiers an object-like macro body stands for, if it is only
    qualifiers (`__host__ __device__ __forceinline__`), else None."""
    tokens = body.split()
    if not tokens or any(t not in _QUALIFIER_TOKENS for t in tokens):
        return None
    quals = [t for t in tokens if t in EXEC_QUALIFIERS]
    return quals or None


def split_attribute_start(fn: Node) -> Node | None:
    """The bogus declaration holding this definition's qualifiers (see `_SPLITTING_ATTRIBUTES`)."""
    if any(c.type in EXEC_QUALIFIERS for c in fn.children):
        return None
    prev = fn.prev_named_sibling
    if prev is not None and prev.type == "declaration":
        name = declarator_name(prev.child_by_field_name("declarator"))
        if name is not None and name.text.decode("latin-1") in _SPLITTING_ATTRIBUTES:
            return prev
    return None


def _params(src: Source, fdecl: Node) -> list[Param]:
    plist = fdecl.child_by_field_name("parameters")
    out: list[Param] = []
    if plist is None:
        return out
    for p in plist.named_children:
        if p.type == "comment":
            continue
        text = src.node_text(p)
        if p.type == "variadic_parameter_declaration" or text.strip() == "...":
            out.append(Param(name="", type=squash(text)))
            continue
        name_node = declarator_name(p.child_by_field_name("declarator"))
        if name_node is None or name_node.type not in ("identifier", "field_identifier"):
            out.append(Param(name="", type=squash(text)))
            continue
        a = src.offsets.char(name_node.start_byte) - src.offsets.char(p.start_byte)
        b = src.offsets.char(name_node.end_byte) - src.offsets.char(p.start_byte)
        value = p.child_by_field_name("default_value")
        type_text = text[:a] + text[b:]
        if value is not None:  # `int n = 4`: the default is not part of the type
            v0 = src.offsets.char(value.start_byte) - src.offsets.char(p.start_byte)
            type_text = text[:a] + text[b:v0].rstrip().rstrip("=")
        out.append(Param(name=src.node_text(name_node), type=squash(type_text)))
    if any(c.type == "..." for c in plist.children):  # C-style `f(int, ...)`: an anonymous token
        out.append(Param(name="", type="..."))
    return out


def function_declarator(fn: Node) -> Node | None:
    node = fn.child_by_field_name("declarator")
    while node is not None and node.type != "function_declarator":
        node = node.child_by_field_name("declarator")
    return node


def build_function(src: Source, fn: Node, quals: list[str]) -> Function | None:
    """A `Function` for a definition node, or None when it has no recognisable name/body."""
    fdecl = function_declarator(fn)
    body = fn.child_by_field_name("body")
    if fdecl is None or body is None:
        return None
    name_node = fdecl.child_by_field_name("declarator")
    plain = last_name(name_node)
    if name_node is None or plain is None:
        return None
    outer = fn
    template_params: list[str] = []
    parent = fn.parent
    if parent is not None and parent.type == "template_declaration":
        outer = parent
        tpl = parent.child_by_field_name("parameters")
        if tpl is not None:
            template_params = [
                squash(src.node_text(c)) for c in tpl.named_children if c.type != "comment"
            ]
    start_node = split_attribute_start(fn) or outer
    rtype = fn.child_by_field_name("type")
    if (
        rtype is not None
        and rtype.type == "type_identifier"
        and not any(c.type in EXEC_QUALIFIERS for c in fn.children)
    ):
        # `HD float f()`: the grammar took the qualifier macro for the type and the real
        # type for an ERROR token right after it.
        nxt = rtype.next_sibling
        if nxt is not None and nxt.type == "ERROR":
            rtype = nxt
    return Function(
        name=src.node_text(plain),
        qualified_name=squash(src.node_text(name_node)),
        qualifiers=quals,
        return_type=squash(src.node_text(rtype)) if rtype is not None else "",
        params=_params(src, fdecl),
        template_params=template_params,
        line=src.line(start_node),
        span=TextRange(start=src.start(start_node), end=src.end(fn)),
        body=TextRange(start=src.start(body), end=src.end(body)),
    )


def enclosing_function(node: Node) -> tuple[Node | None, bool]:
    """The innermost function definition around `node`, and whether a lambda is in between."""
    in_lambda = False
    p = node.parent
    while p is not None:
        if p.type == "function_definition":
            return p, in_lambda
        if p.type == "lambda_expression":
            in_lambda = True
        p = p.parent
    return None, in_lambda


class FunctionIndex:
    """Finds the innermost function definition containing a byte offset, by bisection over
    the definitions' start offsets (cheaper than walking `.parent` from every node)."""

    __slots__ = ("_starts", "_nodes")

    def __init__(self, functions: list[Node]) -> None:
        nodes = sorted(functions, key=lambda n: n.start_byte)
        self._starts = [n.start_byte for n in nodes]
        self._nodes = nodes

    def find(self, offset: int) -> Node | None:
        i = bisect_right(self._starts, offset) - 1
        # Definitions nest only through local classes; the innermost container is the latest
        # starting one that still contains the offset.
        while i >= 0:
            n = self._nodes[i]
            if offset < n.end_byte:
                return n
            i -= 1
        return None
