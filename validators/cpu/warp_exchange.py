"""Implicit warp-synchronous code: lanes exchanging values through `volatile` memory in step.

The classic warp reduction (the CUDA reduction sample's `warpReduce`, countless kernels since)
has the 32 lanes of a converged warp read each other's shared-memory slots with no barrier:

    __device__ void warpReduce(volatile float* s, int t) { s[t] += s[t + 32]; s[t] += s[t + 16]; ... }

On a GPU each statement runs for every lane before the next: all lanes read, then all write.
The emulator runs a thread alone until it waits, so thread 0 would finish the whole reduction
before thread 16 had added anything, a result no GPU gives. CUDA calls the pattern undefined
since Volta (independent thread scheduling; `__syncwarp()` is the fix), yet converged warps
still run it in step, and programs rely on it.

So in device code, each statement that stores into an element of a `volatile` array or pointer a
value read from the same one (`s[t] += s[t + 16]`, `s[t] = max(s[t], s[t + 1])`,
`s[t] = sum = sum + s[t + 16]`) is split where a warp splits it: the value is computed, the lanes
that reach the statement together meet, the store is made, and they meet again
(`::cudashim::warp_step()`, which groups lanes as `__activemask()` does and notes the portability
once per kernel). They meet before the value is computed too: a converged warp has run every
statement before this one for all its lanes, so a lane reads what its neighbour stored just
before (the CUDA SDK's warp scan zeroes a padding slot and then reads its neighbour's). The statement keeps its line. A store of a value that reads no such element (a
flag, a turn, a lock word) is left alone: those are hand-offs, which the spin-wait support runs.
A `volatile` name counts where a parameter or declaration of the same device function, or one at
file scope, declares it with the element type qualified (`volatile float* s`, `volatile int s[64]`,
`__shared__ volatile T s[N]`); a pointer that is itself volatile (`float* volatile p`) does not.
A store through a cast to a pointer to volatile (`((volatile float*)s)[t] += ((volatile float*)s)[t + 16]`)
counts as one through a volatile name. Exchanges in `#define` bodies are split in the macro's
text (`_macro_edits`), where only casts and names declared volatile at file scope can tell.
"""

from __future__ import annotations

from tree_sitter import Node

from validators.cpu.device_semantics import device_functions
from validators.cpu.syntax import text as _text

STEP = "::cudashim::warp_step()"
_TEMP = "__ckd_exchange"
_UNSAFE_LEFT = ("++", "--", "(", "=")  # a left side evaluated twice must have no effects


def _declared_name(declarator: Node | None, src: bytes) -> str | None:
    """The name a declarator declares, or None for a function declarator or a pointer that is
    itself volatile (its pointee is not)."""
    while declarator is not None:
        if declarator.type in ("identifier", "field_identifier"):
            return _text(src, declarator)
        if declarator.type == "pointer_declarator":
            if any(c.type == "type_qualifier" and _text(src, c) == "volatile" for c in declarator.children):
                return None
        elif declarator.type not in ("array_declarator", "init_declarator", "reference_declarator",
                                     "parenthesized_declarator"):
            return None
        declarator = declarator.child_by_field_name("declarator") or next(
            (c for c in declarator.named_children if c.type != "type_qualifier"), None)
    return None


def _volatile_names(node: Node, src: bytes, *, nested: bool) -> set[str]:
    """Names `node`'s declarations (and parameter declarations) qualify `volatile`; `nested`:
    look inside statements too (a function's body), else at `node`'s own children only."""
    names: set[str] = set()
    stack = list(node.children)
    while stack:
        n = stack.pop()
        if n.type in ("declaration", "parameter_declaration", "field_declaration"):
            if any(c.type == "type_qualifier" and _text(src, c) == "volatile" for c in n.children):
                for d in n.children_by_field_name("declarator"):
                    name = _declared_name(d, src)
                    if name:
                        names.add(name)
            continue
        if nested:
            stack.extend(n.children)
    return names


def _parameters(function: Node) -> Node | None:
    declarator = function.child_by_field_name("declarator")
    while declarator is not None and declarator.type != "function_declarator":
        declarator = declarator.child_by_field_name("declarator")
    return declarator.child_by_field_name("parameters") if declarator is not None else None


def _unparenthesized(node: Node | None) -> Node | None:
    while node is not None and node.type == "parenthesized_expression" and node.named_child_count == 1:
        node = node.named_children[0]
    return node


def _volatile_cast_of(node: Node | None, src: bytes) -> str | None:
    """`s` of `((volatile T*)s)`: a name cast to a pointer to volatile, if `node` is one."""
    node = _unparenthesized(node)
    if node is None or node.type != "cast_expression":
        return None
    kind = node.child_by_field_name("type")
    value = _unparenthesized(node.child_by_field_name("value"))
    if kind is None or value is None or value.type != "identifier":
        return None
    spelled = _text(src, kind)
    # The pointee is volatile (`volatile T*`, `T volatile*`), not the pointer (`T* volatile`).
    if "*" not in spelled or "volatile" not in spelled.split("*", 1)[0]:
        return None
    return _text(src, value)


def _indexed(node: Node, src: bytes) -> str | None:
    """The name a subscript indexes: `s` of `s[i]` and of `((volatile T*)s)[i]`."""
    argument = node.child_by_field_name("argument")
    if argument is None:
        return None
    if argument.type == "identifier":
        return _text(src, argument)
    return _volatile_cast_of(argument, src)


def _element_of(node: Node | None, src: bytes, names: set[str]) -> str | None:
    """The name whose volatile element `node` is (`s[i]` with `s` volatile, or any name indexed
    through a cast to a pointer to volatile), if any."""
    if node is None or node.type != "subscript_expression":
        return None
    argument = node.child_by_field_name("argument")
    if argument is not None and argument.type == "identifier":
        name = _text(src, argument)
        return name if name in names else None
    return _volatile_cast_of(argument, src)


def _reads(node: Node, src: bytes, name: str) -> bool:
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "subscript_expression" and _indexed(n, src) == name:
            return True
        stack.extend(n.children)
    return False


def _split(statement: Node, src: bytes, names: set[str]) -> tuple[int, int, bytes] | None:
    """The edit that splits `statement` at the warp's steps, if it is an exchange."""
    expression = statement.named_children[0] if statement.named_children else None
    if expression is None or expression.type != "assignment_expression":
        return None
    left = expression.child_by_field_name("left")
    right = expression.child_by_field_name("right")
    operator = expression.child_by_field_name("operator")
    name = _element_of(left, src, names)
    if name is None or right is None or operator is None or not _reads(right, src, name):
        return None
    left_text = _text(src, left)
    argument = left.child_by_field_name("argument")
    # The cast's own parentheses are no call: only the rest of the left side is looked at.
    checked = left_text if argument is None or argument.type == "identifier" else \
        src[argument.end_byte:left.end_byte].decode("utf-8", "surrogatepass")
    # Lines stay where they were: every line break of the statement is inside its right side.
    if any(mark in checked for mark in _UNSAFE_LEFT) or \
            _text(src, statement).count("\n") != _text(src, right).count("\n"):
        return None
    op = _text(src, operator)
    value = f"({_text(src, right)})" if op == "=" else f"{left_text} {op[:-1]} ({_text(src, right)})"
    # Three meetings: before the read, so that every store the lanes made before the statement
    # is there to read (the SDK scan zeroes a padding slot, then a lane reads its neighbour's);
    # before the store, so that every lane has read; after it, so that every lane has stored.
    text = (f"{{ {STEP}; auto {_TEMP} = {value}; {STEP}; {left_text} = {_TEMP}; {STEP}; }}")
    return statement.start_byte, statement.end_byte, text.encode("utf-8", "surrogatepass")


def _macro_edits(src: bytes, root: Node, names: set[str]) -> list[tuple[int, int, bytes]]:
    """The exchanges of `#define` bodies (`#define WARP_ADD(s, t, o) ((volatile int*)(s))[t] +=
    ((volatile int*)(s))[(t) + (o)]`), split as in a function. A body that is one exchange
    becomes `do { ... } while (0)`, so that its uses (`WARP_ADD(s, t, 4);`) stay statements. Its
    parameters have no types: only names declared volatile at file scope and casts to volatile
    count."""
    from validators.cpu.rewrite import _MACRO_PREFIX, _macro_parts, _parse

    edits: list[tuple[int, int, bytes]] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type not in ("preproc_def", "preproc_function_def"):
            stack.extend(node.children)
            continue
        parts = _macro_parts(src, node)
        if parts is None:
            continue
        start, stop = parts[2], parts[3]
        body = src[start:stop]
        if b"volatile" not in body and not names:
            continue
        # No newline before the `;` that ends the body's last expression: the split keeps lines
        # only when every line break of a statement is inside its right side.
        wrapped = _MACRO_PREFIX + body + b";}"
        end_of_body = len(_MACRO_PREFIX) + len(body)
        shift = start - len(_MACRO_PREFIX)
        walk = [_parse(wrapped).root_node]
        while walk:
            n = walk.pop()
            edit = _split(n, wrapped, names) if n.type == "expression_statement" else None
            if edit is None:
                walk.extend(n.children)
                continue
            first, last, text = edit
            if last > end_of_body:  # the body's own last expression, ended by our `;`
                if not _only_statements(root, src, parts[0]):
                    continue  # a use as a value (`x = M(...)`) would not compile as a statement
                last = n.named_children[0].end_byte
                text = b"do " + text + b" while (0)"
            edits.append((first + shift, last + shift, text))
    return edits


def _only_statements(root: Node, src: bytes, macro: str) -> bool:
    """Every use of `macro` in the file is a statement of its own (`M(...);`, `M;`)."""
    stack = [root]
    while stack:
        n = stack.pop()
        if n.type == "identifier" and _text(src, n) == macro:
            use = n.parent
            if use is not None and use.type in ("preproc_def", "preproc_function_def"):
                continue  # its definition
            if use is not None and use.type == "call_expression" and use.child_by_field_name("function") == n:
                use = use.parent  # M(...): the call is the use
            if use is None or use.type != "expression_statement":
                return False
        stack.extend(n.children)
    return True


def in_step(src: bytes, root: Node) -> bytes:
    """`src` with each exchange through volatile memory in device code split at the warp's steps
    (see the module's doc); `src` itself when it has none."""
    if b"volatile" not in src:
        return src
    file_scope = _volatile_names(root, src, nested=False)
    edits: list[tuple[int, int, bytes]] = []
    for node, body in device_functions(src, root):
        names = set(file_scope) | _volatile_names(body, src, nested=True)
        parameters = _parameters(node) if node.type == "function_definition" else \
            node.child_by_field_name("declarator")
        if parameters is not None:
            names |= _volatile_names(parameters, src, nested=True)
        if not names and b"volatile" not in src[body.start_byte:body.end_byte]:
            continue
        walk = [body]
        while walk:
            n = walk.pop()
            if n.type == "expression_statement":
                edit = _split(n, src, names)
                if edit is not None:
                    edits.append(edit)
                    continue
            walk.extend(n.children)  # a lambda's body too: device code nested in device code
    edits += _macro_edits(src, root, file_scope)
    if not edits:
        return src
    out, last = [], 0
    for start, end, text in sorted(edits):
        out += [src[last:start], text]
        last = end
    out.append(src[last:])
    return b"".join(out)
