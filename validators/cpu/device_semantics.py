"""Device arithmetic with a GPU's meaning where C++ leaves it undefined and x86 differs: shifts by
the width or more, and float-to-integer casts of NaN or out-of-range values.

Shifts. PTX's `shl`/`shr` clamp the shift amount to the register width: on a GPU `x << 32` and `x >> 32`
of a 32-bit `x` are 0 (a signed `x >> 32` fills with the sign), and a negative amount, read as
an unsigned one, clamps too. C++ calls such a shift undefined; nvcc emits the PTX instruction for
a run-time amount, and programs rely on it (Rodinia's huffman packs `dw << (32 - bit)` with
`bit == 0`). x86 masks the amount to 5 or 6 bits, so g++'s build of the same kernel gives `x`
back, and a GPU-correct program computes a different answer here.

Every shift of device code (bodies of `__global__` and `__device__` functions, `__device__`
lambdas) whose amount is not a literal gets that amount wrapped in `::cudashim::shift_amount(...)`;
the shim's header (cuda_runtime.h) makes a shift of an integer by such an amount clamp as PTX
does. Only insertions, on the shift's own line, so line numbers stay. An amount that is not an
integer (an overloaded `<<` of a class) passes through unchanged. Not reached: shifts in `#define`
bodies (text the tree does not parse) and a compound shift (`s.f <<= n`) of a member named as a
bit-field is in the program (`bit_field_names`), which keeps x86's meaning: the clamping
`operator<<=` takes a reference, which cannot bind to a bit-field.

Casts. PTX's `cvt.rzi` from a float to a 32- or 64-bit integer saturates to the destination's
range (NaN: 0 from a float to 32 bits, the top bit alone otherwise); x86's `cvttss2si` gives the
"integer indefinite" (INT_MIN) for both,
and g++ converts a float to `unsigned` through a 64-bit signed conversion, so `(unsigned)-1.0f` is
0xFFFFFFFF where a GPU gives 0. An explicit cast of device code to such a type (`(int)x`,
`static_cast<unsigned>(x)`, `int(x)`, named by a standard spelling: `int`, `unsigned long long`,
`size_t`, `int64_t`, ...) gets its operand wrapped in `::cudashim::gpu_cvt<T>(...)`, which
converts a floating-point value as PTX does and passes anything else through for the cast.
Implicit conversions to such a type are wrapped too where the tree says the target's type: the
initialiser of a variable declared with it (`int i = x * s;`), the value returned by a device
function that returns it, the value assigned (`=`) to a name, or an element of an array or
pointer, that the file declares with that one type alone (`count = f;`, `q[i] = f;`, `s.n = f;`:
a name declared with two types anywhere in the file, which shadowing could make either, is left
alone), an integer's compound assignment of such a value (`i += f` becomes
`::cudashim::gpu_add_assign(i, f)`, which converts `i + f` back and evaluates `i` once; `-=`, `*=`,
and `/=` through `gpu_div_assign`), and an argument to such a parameter of a function the file
declares one way (no overload). Only values that may hold a float are wrapped (one that names
something the file declares with a floating type, a float literal or a call), so a kernel's index
arithmetic compiles as it was. Not reached: calls of overloaded functions,
methods and functions of other files, and 8- and 16-bit targets, which nvcc converts through a
wider register."""

from __future__ import annotations

import re
from collections.abc import Iterator

from tree_sitter import Node

from validators.cpu.syntax import text as _text

_OPERATORS = frozenset({"<<", ">>", "<<=", ">>="})
_COMPOUND = frozenset({"<<=", ">>="})
_NOT_AMOUNTS = frozenset({"number_literal", "char_literal", "string_literal", "concatenated_string",
                          "raw_string_literal"})
# A stream manipulator is a stream's right operand, never an amount (and `std::endl`, a
# template, cannot be an argument): in `__host__ __device__` code outside a `__CUDA_ARCH__` test.
_MANIPULATOR = re.compile(r"(?:^|::)\s*(?:endl|ends|flush|ws|hex|dec|oct|fixed|scientific|hexfloat"
                          r"|defaultfloat|(?:no)?(?:boolalpha|showbase|showpoint|showpos|skipws|uppercase"
                          r"|unitbuf)|left|right|internal)\s*$")
# `name : width` followed by `;` or `,`: a bit-field's declarator. A label or a `case` matched
# too only leaves a member of that name's compound shifts as they were.
_BIT_FIELD = re.compile(r"\b([A-Za-z_]\w*)\s*:\s*(?:\d+|[A-Za-z_]\w*)\s*[;,]")


def bit_field_names(text: str) -> frozenset[str]:
    """The names `text` may declare bit-fields by (see `gpu_device_source`)."""
    return frozenset(_BIT_FIELD.findall(text)) if ":" in text else frozenset()
_DEVICE = re.compile(rb"\b(?:__global__|__device__)\b")
# Each opens with a space: tree-sitter reads `a[::f(x)]` as an error (`[:`), g++ does not.
_DIVISIONS = {"/": b" ::cudashim::gpu_div(", "%": b" ::cudashim::gpu_rem(",
              "/=": b" ::cudashim::gpu_div_assign(", "%=": b" ::cudashim::gpu_rem_assign("}
PURE_WRAPPERS = frozenset({"::cudashim::shift_amount", "::cudashim::gpu_div", "::cudashim::gpu_rem"})
"""The calls this module wraps code in that take their arguments by value (or forward them),
besides `::cudashim::gpu_cvt<T>`; `ASSIGNING_WRAPPERS` assign their first argument only."""
# An integer's compound assignment of a value that may be floating (`i += f`): its result converts.
_ARITHMETIC_ASSIGNMENTS = {"+=": b" ::cudashim::gpu_add_assign(", "-=": b" ::cudashim::gpu_sub_assign(",
                           "*=": b" ::cudashim::gpu_mul_assign("}
ASSIGNING_WRAPPERS = frozenset({"::cudashim::gpu_div_assign", "::cudashim::gpu_rem_assign",
                                *(w.strip()[:-1].decode() for w in _ARITHMETIC_ASSIGNMENTS.values())})


def pure_wrapper(callee: str) -> bool:
    """Whether `callee` (a call's function, as written) is a wrapper of `PURE_WRAPPERS` or a cast's."""
    return callee in PURE_WRAPPERS or callee.startswith("::cudashim::gpu_cvt<")
"""The calls this module wraps code in: pure, they take their argument by value (or forward it)."""
_OPEN = b" ::cudashim::shift_amount("
_CLOSE = b")"


def _is_device_function(src: bytes, node: Node) -> Node | None:
    """The body of `node` if it is a function definition or lambda of device code."""
    if node.type not in ("function_definition", "lambda_expression"):
        return None
    body = node.child_by_field_name("body")
    if body is None:
        return None
    return body if _DEVICE.search(src, node.start_byte, body.start_byte) else None


def device_functions(src: bytes, root: Node) -> Iterator[tuple[Node, Node]]:
    """(definition, body) of each function or lambda of device code under `root` that no other
    device code encloses (device code nested in device code is its enclosing body's)."""
    stack = [root]
    while stack:
        node = stack.pop()
        body = _is_device_function(src, node)
        if body is None:
            stack.extend(node.children)
        else:
            yield node, body


def _host_branch(src: bytes, node: Node) -> Node | None:
    """Which part of a `#if`/`#ifdef` in device code is host code only: the body of
    `#ifndef __CUDA_ARCH__` or `#if !defined(__CUDA_ARCH__)` (the node itself stands for it),
    the `#else` of `#ifdef __CUDA_ARCH__` or `#if defined(__CUDA_ARCH__)`; None for others."""
    if node.type == "preproc_ifdef":
        name = node.child_by_field_name("name")
        if name is None or _text(src, name) != "__CUDA_ARCH__":
            return None
        negated = _text(src, node.children[0]) == "#ifndef"
    elif node.type == "preproc_if":
        condition = node.child_by_field_name("condition")
        words = re.sub(r"\s|defined|[()]", "", _text(src, condition)) if condition is not None else ""
        if words not in ("__CUDA_ARCH__", "!__CUDA_ARCH__"):
            return None
        negated = words.startswith("!")
    else:
        return None
    return node if negated else node.child_by_field_name("alternative")


_Edit = tuple[int, int, bytes, int]
"""(start, end, text, rank): an insertion when start == end; at one offset, closes (rank 0) go
before opens (1), and an operator's replacement (2) after both."""


def _wrap(node: Node, opening: bytes) -> list[_Edit]:
    return [(node.start_byte, node.start_byte, opening, 1), (node.end_byte, node.end_byte, _CLOSE, 0)]


def _division(src: bytes, node: Node, operator: Node, bit_fields: frozenset[str]) -> list[_Edit]:
    """`a / b` made `::cudashim::gpu_div(a, b)` (and `%`, `/=`, `%=` alike) when `b` is no literal."""
    right = node.child_by_field_name("right")
    if right is None or right.type in _NOT_AMOUNTS or right.type == "sizeof_expression":
        return []
    op = _text(src, operator)
    if op in ("/=", "%=") and _bit_field(src, node, bit_fields):
        return []
    call = _DIVISIONS[op]
    return [(node.start_byte, node.start_byte, call, 1),
            (operator.start_byte, operator.end_byte, b",", 2),
            (node.end_byte, node.end_byte, _CLOSE, 0)]


def _arithmetic_assignment(src: bytes, node: Node, operator: Node, types: _FileTypes,
                           bit_fields: frozenset[str]) -> list[_Edit]:
    """`i += f` made `::cudashim::gpu_add_assign(i, f)` (and `-=`, `*=`) when the file declares
    `i` with one integer type and `f` may be floating; a bit-field cannot be bound to the wrapper's
    reference."""
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    if (left is None or types._target(src, left) is None or not types.may_be_floating(src, right)
            or _bit_field(src, node, bit_fields)):
        return []
    return [(node.start_byte, node.start_byte, _ARITHMETIC_ASSIGNMENTS[_text(src, operator)], 1),
            (operator.start_byte, operator.end_byte, b",", 2),
            (node.end_byte, node.end_byte, _CLOSE, 0)]


def _wrapped(body: Node, src: bytes, bit_fields: frozenset[str], types: _FileTypes | None = None,
             returns: str | None = None) -> list[_Edit]:
    """What of `body` to wrap: the amounts of shifts that are not literals, the operands of
    integer casts, the values implicitly converted to such a type (`types`; `returns`: the
    function's integer return type, if it has one) and the integer divisions by no literal,
    outside preprocessor conditions and host-only branches (`std::cout << std::endl` there is
    no shift, and a template name cannot be passed to `shift_amount`)."""
    found: list[_Edit] = []
    stack = [(body, returns)]
    while stack:
        node, returns = stack.pop()
        if node.type in ("preproc_if", "preproc_elif", "preproc_ifdef", "preproc_elifdef"):
            skipped = {node.child_by_field_name("condition")}
            host = _host_branch(src, node)
            if host is node:  # the body is host code; an #else/#elif may not be
                alternative = node.child_by_field_name("alternative")
                stack.extend([(alternative, returns)] if alternative is not None else [])
                continue
            skipped.add(host)
            stack.extend((c, returns) for c in node.children if c not in skipped)
            continue
        aliases = types.aliases if types is not None else _LIBC_ALIASES
        operand = _cast_operand(src, node, aliases)
        if operand is not None:
            found += _wrap(operand, _CAST.format(type=_cast_type(src, node, aliases)).encode())
        if types is not None:
            for value, target in types.converted(src, node, returns):
                found += _wrap(value, _CAST.format(type=target).encode())
        if node.type in ("binary_expression", "assignment_expression"):
            operator = node.child_by_field_name("operator")
            right = node.child_by_field_name("right")
            op = _text(src, operator) if operator is not None else ""
            if (op in _OPERATORS and right is not None and right.type not in _NOT_AMOUNTS
                    and not _MANIPULATOR.search(_text(src, right))
                    and not (op in _COMPOUND and _bit_field(src, node, bit_fields))):
                found += _wrap(right, _OPEN)
            elif op in _DIVISIONS:
                found += _division(src, node, operator, bit_fields)
            elif op in _ARITHMETIC_ASSIGNMENTS and types is not None and right is not None:
                found += _arithmetic_assignment(src, node, operator, types, bit_fields)
        # A lambda's `return` is its own, and its type is not written where the tree says it.
        inner = None if node.type == "lambda_expression" else returns
        stack.extend((c, inner) for c in node.children)
    return found


def _bit_field(src: bytes, assignment: Node, bit_fields: frozenset[str]) -> bool:
    left = assignment.child_by_field_name("left")
    while left is not None and left.type == "parenthesized_expression":
        left = left.named_children[0] if left.named_children else None
    if left is None or left.type != "field_expression":
        return False
    field = left.child_by_field_name("field")
    return field is not None and _text(src, field) in bit_fields


# The integer types whose casts from a float saturate on a GPU (32 and 64 bits), as a program
# spells them; its own typedefs of them are resolved per file (`_FileTypes.aliases`).
_CAST_TYPES = frozenset(
    " ".join(t.split()) for t in """int|signed|signed int|unsigned|unsigned int|long|long int|
    signed long|unsigned long|unsigned long int|long long|long long int|signed long long|
    unsigned long long|unsigned long long int|size_t|ssize_t|ptrdiff_t|int32_t|uint32_t|int64_t|
    uint64_t|intptr_t|uintptr_t|intmax_t|uintmax_t|std::size_t|std::ptrdiff_t|std::int32_t|
    std::uint32_t|std::int64_t|std::uint64_t|int_fast32_t|uint_fast32_t|int_fast64_t|
    uint_fast64_t|int_least32_t|uint_least32_t|int_least64_t|uint_least64_t""".replace("\n", " ").split("|")
)
# glibc's own names for them (<sys/types.h>, which <stdlib.h> brings): HeCBench's quicksort pads
# its keys with `uint u = x;`.
_LIBC_ALIASES = {"uint": "unsigned int", "ulong": "unsigned long", "u_int": "unsigned int",
                 "u_long": "unsigned long", "u_int32_t": "uint32_t", "u_int64_t": "uint64_t",
                 "__uint32_t": "uint32_t", "__int32_t": "int32_t", "__uint64_t": "uint64_t",
                 "__int64_t": "int64_t"}
_CAST = " ::cudashim::gpu_cvt<{type}>("
_NAMED_CAST = re.compile(r"^(?:static_cast|::std::static_cast)\s*<\s*(?P<type>[\w:\s]+?)\s*>$")
_LITERALS = frozenset({"number_literal", "char_literal", "true", "false", "null", "nullptr", "sizeof_expression"})


def _cast_type(src: bytes, node: Node, aliases: dict[str, str] = _LIBC_ALIASES) -> str:
    """The type a cast names, an alias of `aliases` resolved."""
    if node.type == "cast_expression":
        spelled = " ".join(_text(src, node.child_by_field_name("type")).split())
    else:
        function = node.child_by_field_name("function")
        if function.type in ("primitive_type", "identifier"):
            spelled = _text(src, function)
        else:
            named = _NAMED_CAST.match(_text(src, function))
            spelled = " ".join(named["type"].split()) if named else ""
    return aliases.get(spelled, spelled)


def _cast_operand(src: bytes, node: Node, aliases: dict[str, str] = _LIBC_ALIASES) -> Node | None:
    """The operand of `node` when it is an explicit cast to one of `_CAST_TYPES` (or an alias of
    one, `uint(x)` too) that is worth wrapping (not a literal)."""
    if node.type == "cast_expression":
        operand = node.child_by_field_name("value")
    elif node.type == "call_expression":
        function = node.child_by_field_name("function")
        if function is None or function.type not in ("primitive_type", "template_function", "identifier") or (
                function.type == "identifier" and _text(src, function) not in aliases):
            return None
        arguments = node.child_by_field_name("arguments")
        named = arguments.named_children if arguments is not None else []
        if len(named) != 1 or any(c.type == "comment" for c in named):
            return None
        operand = named[0]
    else:
        return None
    if operand is None or operand.type in _LITERALS or _cast_type(src, node, aliases) not in _CAST_TYPES:
        return None
    return operand


def gpu_device_source(src: bytes, root: Node, bit_fields: frozenset[str] = frozenset()) -> bytes:
    """`src` with the run-time amount of each device shift and the operand of each integer cast
    of device code wrapped (see the module's doc); `src` itself when it has none. `bit_fields`: names of bit-fields other files of the program
    declare (this file's own are added)."""
    if any(op in src for op in (b"<<=", b">>=", b"/=", b"%=", b"+=", b"-=", b"*=")):
        bit_fields = bit_fields | bit_field_names(src.decode("utf-8", "replace"))
    edits: list[_Edit] = []
    types: _FileTypes | None = None
    for definition, body in device_functions(src, root):
        types = types or _FileTypes(src, root)
        # Device code nested in device code (a lambda in a kernel) is in the same walk.
        edits += _wrapped(body, src, bit_fields, types, _integer_return(src, definition, types.aliases))
    if not edits:
        return src
    # Nested ones (`a << (b << c)`, `(int)(x << n)`, `a / b / c`) close inside out: at one
    # offset, closes before opens; opens at one offset (`a / b / c` opens both divisions at `a`)
    # in the order of the walk, outermost first.
    order = {id(e): i for i, e in enumerate(edits)}
    edits.sort(key=lambda e: (e[0], e[3], order[id(e)]))
    out, last = [], 0
    for start, end, text, _rank in edits:
        out.append(src[last:start])
        out.append(text)
        last = end
    out.append(src[last:])
    return b"".join(out)


# A declaration's type that holds floats (or vectors of them): the values that name something
# declared with one may need a GPU's conversion.
_FLOATING = re.compile(r"\b(?:float|double)[1-4]?\b")
_POINTERS = frozenset({"pointer_declarator", "array_declarator", "reference_declarator",
                       "abstract_pointer_declarator", "abstract_array_declarator"})
_DECLARING = frozenset({"declaration", "parameter_declaration", "field_declaration",
                        "optional_parameter_declaration"})
# An initialiser with one of these forms is no expression to wrap (`b(3)`, `{...}`).
_NOT_VALUES = frozenset({"argument_list", "initializer_list", *_LITERALS})
_BUILTIN_VECTORS = frozenset({"threadIdx", "blockIdx", "blockDim", "gridDim"})


def _normal_type(src: bytes, node: Node) -> str:
    type_node = node.child_by_field_name("type")
    return " ".join(_text(src, type_node).split()) if type_node is not None else ""


def _declared(declarator: Node | None) -> tuple[str | None, int]:
    """The name a declarator declares and how many pointer/array levels are between it and the
    declaration's type (`int *p[3]`: p, 2); (None, 0) for a function's or an unnamed one."""
    depth = 0
    while declarator is not None:
        if declarator.type in ("identifier", "field_identifier"):
            return declarator.text.decode("utf-8", "replace"), depth
        if declarator.type == "init_declarator":
            declarator = declarator.child_by_field_name("declarator")
            continue
        if declarator.type in _POINTERS:
            depth += declarator.type != "reference_declarator"
            declarator = declarator.child_by_field_name("declarator") or next(
                (c for c in declarator.named_children if c.type not in ("type_qualifier", "ms_pointer_modifier")),
                None)
            continue
        return None, 0
    return None, 0


class _FileTypes:
    """What the file's declarations say, by name alone: which names hold floats, and which hold
    one integer type of `_CAST_TYPES` everywhere they are declared (so an assignment to that name,
    or to an element of it, converts to that type whichever declaration is in scope). Variables
    and members are apart (`p.x` of a float2 names no variable `x`)."""

    def __init__(self, src: bytes, root: Node) -> None:
        self.floating: set[tuple[bool, str]] = set()  # (is a member, name)
        declared: dict[tuple[bool, str], set[tuple[str, int]]] = {}
        nodes, aliases = [], []
        # Types that may be floating: `auto`, a template's type parameters (`T` may be float),
        # and the file's aliases of floating types (`typedef float real;`, in chains).
        self.floating_types = {"auto"}
        stack = [root]
        while stack:
            node = stack.pop()
            stack.extend(node.children)
            if node.type == "type_parameter_declaration":
                self.floating_types.update(_text(src, c) for c in node.named_children
                                           if c.type == "type_identifier")
            elif node.type == "type_definition":
                aliases += [(_normal_type(src, node), _text(src, c)) for c in node.named_children
                            if c.type == "type_identifier" and c != node.child_by_field_name("type")]
            elif node.type == "alias_declaration" and node.child_by_field_name("name") is not None:
                aliases.append((_normal_type(src, node), _text(src, node.child_by_field_name("name"))))
            elif node.type == "function_definition" or node.type in _DECLARING:
                nodes.append(node)
        while True:
            more = {name for type_text, name in aliases
                    if name not in self.floating_types and self.is_floating_type(type_text)}
            if not more:
                break
            self.floating_types |= more
        # The file's aliases of integer types of `_CAST_TYPES` (chains too), each resolved to the
        # type's own spelling; a name aliased to anything else anywhere in the file is none.
        self.aliases = dict(_LIBC_ALIASES)
        named: dict[str, set[str]] = {}
        for type_text, name in aliases:
            named.setdefault(name, set()).add(type_text)
        for _ in range(len(named) + 1):
            resolved = {name: {self.aliases.get(t, t) for t in targets} for name, targets in named.items()}
            known = {name: next(iter(targets)) for name, targets in resolved.items()
                     if len(targets) == 1 and next(iter(targets)) in _CAST_TYPES}
            if all(self.aliases.get(name) == target for name, target in known.items()):
                break
            self.aliases.update(known)
        for name in set(named) - set(known):
            self.aliases.pop(name, None)
        signatures: dict[str, set[tuple[tuple[str, int, bool], ...] | None]] = {}
        for node in nodes:
            function = _function_declarator(node)
            if function is not None:
                name_node = function.child_by_field_name("declarator")
                name = _text(src, name_node) if name_node is not None else ""
                signatures.setdefault(name, set()).add(_parameters(src, function))
            if node.type == "function_definition":
                name, _ = _declared(_function_name(node))
                if name and self.is_floating_type(_normal_type(src, node)):
                    self.floating.add((False, name))
                continue
            type_text = self.canonical(_normal_type(src, node))
            floating = self.is_floating_type(type_text)
            member = node.type == "field_declaration"
            for i in range(node.child_count):
                if node.field_name_for_child(i) != "declarator":
                    continue
                name, depth = _declared(node.children[i])
                if name is None:
                    continue
                declared.setdefault((member, name), set()).add((type_text, depth))
                if floating:
                    self.floating.add((member, name))
        self.integer = {key: next(iter(kinds)) for key, kinds in declared.items()
                        if len(kinds) == 1 and next(iter(kinds))[0] in _CAST_TYPES}
        # A function's parameters, by its name alone: only where every declaration of the name
        # agrees (an overload, a method of the same name, could be the one called).
        self.parameters = {name: next(iter(shapes)) for name, shapes in signatures.items()
                           if name and len(shapes) == 1 and next(iter(shapes)) is not None}

    def canonical(self, type_text: str) -> str:
        return self.aliases.get(type_text, type_text)

    def is_floating_type(self, type_text: str) -> bool:
        return bool(_FLOATING.search(type_text)) or any(
            word in self.floating_types for word in re.findall(r"[A-Za-z_]\w*", type_text))

    def may_be_floating(self, src: bytes, value: Node) -> bool:
        """Whether `value` may hold a float: it names something declared with a floating type,
        holds a float literal, a call or a cast to a floating type (a cast to another type, or
        `sizeof`, gives no float whatever it holds; a call may return one)."""
        stack = [value]
        while stack:
            node = stack.pop()
            if node.type == "sizeof_expression":
                continue
            if node.type == "cast_expression":
                type_node = node.child_by_field_name("type")
                if type_node is not None and not self.is_floating_type(_text(src, type_node)):
                    continue
                return True
            if node.type == "identifier":
                if (False, _text(src, node)) in self.floating:
                    return True
            elif node.type == "field_expression":
                base, field = node.child_by_field_name("argument"), node.child_by_field_name("field")
                if base is not None and _text(src, base) in _BUILTIN_VECTORS:
                    continue
                if field is not None and (True, _text(src, field)) in self.floating:
                    return True
            elif node.type == "number_literal":
                literal = _text(src, node).lower()
                if not literal.startswith("0x") and any(c in literal for c in ".ef"):
                    return True
            elif node.type == "call_expression":
                function = node.child_by_field_name("function")
                cast = function is not None and (function.type == "primitive_type" or (
                    function.type == "template_function" and _NAMED_CAST.match(_text(src, function)))
                    or (function.type == "identifier" and _text(src, function) in self.aliases))
                if not cast or self.is_floating_type(_cast_type(src, node, self.aliases)):
                    return True
                continue
            stack.extend(node.children)
        return False

    def _target(self, src: bytes, left: Node) -> str | None:
        depth = 0
        while True:
            if left.type == "parenthesized_expression" and left.named_children:
                left = left.named_children[0]
            elif left.type == "subscript_expression" and left.child_by_field_name("argument") is not None:
                depth += 1
                left = left.child_by_field_name("argument")
            else:
                break
        member = left.type == "field_expression"
        if member:
            left = left.child_by_field_name("field")
        if left is None or left.type not in ("identifier", "field_identifier"):
            return None
        kind = self.integer.get((member, _text(src, left)))
        return kind[0] if kind is not None and kind[1] == depth else None

    def converted(self, src: bytes, node: Node, returns: str | None) -> list[tuple[Node, str]]:
        """(value, integer type) pairs `node` converts implicitly: a declaration's initialisers,
        an assignment's right side, a `return` of a function returning `returns`, a call's
        arguments to integer parameters of a function the file declares one way."""
        found: list[tuple[Node, str]] = []
        if node.type == "declaration":
            target = self.canonical(_normal_type(src, node))
            if target not in _CAST_TYPES:
                return []
            for i in range(node.child_count):
                child = node.children[i]
                if node.field_name_for_child(i) != "declarator" or child.type != "init_declarator":
                    continue
                declarator = child.child_by_field_name("declarator")
                value = child.child_by_field_name("value")
                if declarator is not None and declarator.type == "identifier" and value is not None:
                    found.append((value, target))
        elif node.type == "assignment_expression":
            operator = node.child_by_field_name("operator")
            left, value = node.child_by_field_name("left"), node.child_by_field_name("right")
            if operator is not None and _text(src, operator) == "=" and left is not None and value is not None:
                target = self._target(src, left)
                found += [(value, target)] if target else []
        elif node.type == "return_statement" and returns and node.named_children:
            found.append((node.named_children[0], returns))
        elif node.type == "call_expression":
            function, arguments = node.child_by_field_name("function"), node.child_by_field_name("arguments")
            shape = self.parameters.get(_text(src, function)) if function is not None and (
                function.type == "identifier") else None
            if shape is not None and arguments is not None:
                values = [c for c in arguments.named_children if c.type != "comment"]
                found += [(value, self.canonical(target))
                          for value, (target, depth, reference) in zip(values, shape, strict=False)
                          if self.canonical(target) in _CAST_TYPES and depth == 0 and not reference]
        return [(value, target) for value, target in found
                if value.type not in _NOT_VALUES and _cast_operand(src, value, self.aliases) is None
                and self.may_be_floating(src, value)]


def _function_declarator(node: Node) -> Node | None:
    """The function declarator of a function's definition or prototype (`int f(float);`)."""
    if node.type == "function_definition":
        declarator = node.child_by_field_name("declarator")
    elif node.type == "declaration":
        declarators = [node.children[i] for i in range(node.child_count)
                       if node.field_name_for_child(i) == "declarator"]
        declarator = declarators[0] if len(declarators) == 1 else None
    else:
        return None
    while declarator is not None and declarator.type in _POINTERS:
        declarator = declarator.child_by_field_name("declarator")
    return declarator if declarator is not None and declarator.type == "function_declarator" else None


def _parameters(src: bytes, function: Node) -> tuple[tuple[str, int, bool], ...] | None:
    """(type, pointer levels, is a reference) per named parameter (a C variadic `...` takes
    what it is given, unconverted); None for a parameter pack or a form not read here."""
    parameters = function.child_by_field_name("parameters")
    if parameters is None:
        return None
    shape = []
    for param in parameters.named_children:
        if param.type == "comment":
            continue
        if param.type not in ("parameter_declaration", "optional_parameter_declaration"):
            return None  # `...`, a parameter pack
        depth, reference = 0, False
        declarator = param.child_by_field_name("declarator")
        while declarator is not None and declarator.type in _POINTERS:
            reference |= declarator.type == "reference_declarator"
            depth += declarator.type != "reference_declarator"
            declarator = declarator.child_by_field_name("declarator") or next(
                (c for c in declarator.named_children if c.type in _POINTERS | {"identifier"}), None)
        shape.append((_normal_type(src, param), depth, reference))
    return tuple(shape)


def _function_name(definition: Node) -> Node | None:
    declarator = definition.child_by_field_name("declarator")
    while declarator is not None and declarator.type in _POINTERS | {"function_declarator"}:
        if declarator.type == "function_declarator":
            return declarator.child_by_field_name("declarator")
        declarator = declarator.child_by_field_name("declarator")
    return None


def _integer_return(src: bytes, definition: Node, aliases: dict[str, str]) -> str | None:
    """The integer type of `_CAST_TYPES` a function definition returns by value, if it does."""
    if definition.type != "function_definition":
        return None
    declarator = definition.child_by_field_name("declarator")
    if declarator is None or declarator.type != "function_declarator":
        return None  # a pointer or reference is returned
    target = _normal_type(src, definition)
    target = aliases.get(target, target)
    return target if target in _CAST_TYPES else None
