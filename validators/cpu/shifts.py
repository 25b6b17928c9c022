"""Device shifts with a GPU's meaning.

PTX's `shl`/`shr` clamp the shift amount to the register width: on a GPU `x << 32` and `x >> 32`
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
`operator<<=` takes a reference, which cannot bind to a bit-field."""

from __future__ import annotations

import re

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
    """The names `text` may declare bit-fields by (see `gpu_shift_source`)."""
    return frozenset(_BIT_FIELD.findall(text)) if ":" in text else frozenset()
_DEVICE = re.compile(rb"\b(?:__global__|__device__)\b")
_OPEN = b"::cudashim::shift_amount("
_CLOSE = b")"


def _is_device_function(src: bytes, node: Node) -> Node | None:
    """The body of `node` if it is a function definition or lambda of device code."""
    if node.type not in ("function_definition", "lambda_expression"):
        return None
    body = node.child_by_field_name("body")
    if body is None:
        return None
    return body if _DEVICE.search(src, node.start_byte, body.start_byte) else None


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


def _shift_amounts(body: Node, src: bytes, bit_fields: frozenset[str]) -> list[Node]:
    """The amounts of `body`'s shifts that are not literals, outside preprocessor conditions and
    host-only branches (`std::cout << std::endl` there is no shift, and a template name cannot
    be passed to `shift_amount`)."""
    found: list[Node] = []
    stack = [body]
    while stack:
        node = stack.pop()
        if node.type in ("preproc_if", "preproc_elif", "preproc_ifdef", "preproc_elifdef"):
            skipped = {node.child_by_field_name("condition")}
            host = _host_branch(src, node)
            if host is node:  # the body is host code; an #else/#elif may not be
                alternative = node.child_by_field_name("alternative")
                stack.extend([alternative] if alternative is not None else [])
                continue
            skipped.add(host)
            stack.extend(c for c in node.children if c not in skipped)
            continue
        if node.type in ("binary_expression", "assignment_expression"):
            operator = node.child_by_field_name("operator")
            right = node.child_by_field_name("right")
            if (operator is not None and right is not None and _text(src, operator) in _OPERATORS
                    and right.type not in _NOT_AMOUNTS
                    and not _MANIPULATOR.search(_text(src, right))
                    and not (_text(src, operator) in _COMPOUND and _bit_field(src, node, bit_fields))):
                found.append(right)
        stack.extend(node.children)
    return found


def _bit_field(src: bytes, assignment: Node, bit_fields: frozenset[str]) -> bool:
    left = assignment.child_by_field_name("left")
    while left is not None and left.type == "parenthesized_expression":
        left = left.named_children[0] if left.named_children else None
    if left is None or left.type != "field_expression":
        return False
    field = left.child_by_field_name("field")
    return field is not None and _text(src, field) in bit_fields


def gpu_shift_source(src: bytes, root: Node, bit_fields: frozenset[str] = frozenset()) -> bytes:
    """`src` with the run-time amount of each device shift wrapped (see the module's doc); `src`
    itself when it has none. `bit_fields`: names of bit-fields other files of the program
    declare (this file's own are added)."""
    if b"<<=" in src or b">>=" in src:
        bit_fields = bit_fields | bit_field_names(src.decode("utf-8", "replace"))
    inserts: list[tuple[int, bytes]] = []
    stack = [root]
    while stack:
        node = stack.pop()
        body = _is_device_function(src, node)
        if body is None:
            stack.extend(node.children)
            continue
        # Device code nested in device code (a lambda in a kernel) is in the same walk.
        for amount in _shift_amounts(body, src, bit_fields):
            inserts.append((amount.start_byte, _OPEN))
            inserts.append((amount.end_byte, _CLOSE))
    if not inserts:
        return src
    # Nested amounts (`a << (b << c)`) close inside out: at one offset, closes before opens.
    inserts.sort(key=lambda p: (p[0], p[1] == _OPEN))
    out, last = [], 0
    for at, text in inserts:
        out.append(src[last:at])
        out.append(text)
        last = at
    out.append(src[last:])
    return b"".join(out)
