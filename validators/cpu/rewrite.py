"""Source rewrite that lets g++ compile a CUDA program against the cudashim headers.

Only what a header cannot express is rewritten, guided by the tree-sitter-cuda syntax tree:

- kernel launches `k<<<grid, block, shmem, stream>>>(args)` become
  `::cudashim::launch("k", grid, block, shmem, stream, [&](auto&&... a) { k(a...); }, args)`
  (a `NULL`/`0` argument becomes `::cudashim::null_arg<...>{}`, which converts to a pointer);
  preprocessor lines inside a launch stay lines of its replacement (a configuration holding
  some goes whole to `::cudashim::launch_config(...)`), and a launch the syntax tree does not
  have (its error recovery took it for something else) is read again alone
  (`_isolated_launch_edits`);
- `extern __shared__ T s[];` becomes a pointer to the block's dynamic shared memory;
- `static __shared__` loses its `static` (the header's `__shared__` already says it), and an
  `alignas(...)`/`[[...]]` after `__shared__` moves to the front of its declaration (g++ takes a
  standard attribute nowhere else after the header's `static __attribute__((aligned(16)))`);
  `__shared__` declarations in a `#define` body get the same, read by their tokens
  (`_macro_shared_edits`); `__align__(n)` is blanks to the parser (`_masked_align`);
- a kernel cast to an untyped pointer (`(void*)k`, `(const void*)&k<T>`,
  `reinterpret_cast<void*>(k)`) becomes `::cudashim::kernel_ptr(&k, "k")`, the same address with
  a launcher noted for it, so `cudaLaunchKernel`/`cudaLaunchCooperativeKernel` given that pointer
  call the kernel with its own parameter types.

Every replacement keeps the line count of the text it replaces, so compiler diagnostics point at
the user's lines (a file-scope `extern __shared__` needs a `#define`, followed by `#line`).
"""

from __future__ import annotations

import copy
import os
import re
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache

import tree_sitter_cuda
from tree_sitter import Language, Node, Parser, Tree

from validators.analysis.launch_spans import TRAILING_KERNEL as _TRAILING_KERNEL_BYTES
from validators.analysis.launch_spans import grammar_spellings
from validators.analysis.launch_spans import launch_spans as _launch_spans
from validators.analysis.launch_spans import masked_launch_directives as _masked_launch_directives
from validators.analysis.memo import Memo
from validators.cpu.device_semantics import gpu_device_source
from validators.cpu.lockstep import lockstep_copies
from validators.cpu.syntax import text as _text
from validators.cpu.syntax import walk as _walk
from validators.cpu.warp_exchange import in_step

_SPECIFIER_WORDS = re.compile(r"\b(?:extern|__shared__|static|thread_local)\b")
# Alignment and attribute specifiers of a declaration, their parentheses matched by `_attribute_spans`.
_ATTRIBUTE_HEAD = re.compile(rb"\b(?:__align__|alignas|__attribute__|__declspec)\s*\(|\[\[")


def _attribute_spans(text: bytes, start: int = 0, end: int | None = None) -> list[tuple[int, int, bytes]]:
    """(start, end, word) of each `__align__(...)`, `alignas(...)`, `__attribute__((...))` and
    `[[...]]` of `text[start:end]` (parentheses and brackets matched; one left open is skipped)."""
    end = len(text) if end is None else end
    spans = []
    pos = start
    while (m := _ATTRIBUTE_HEAD.search(text, pos, end)) is not None:
        opener = m.group()[-1:]
        closer = b")" if opener == b"(" else b"]"
        depth, i = 0, m.end() - 1
        while i < end:
            c = text[i : i + 1]
            if c == opener:
                depth += 1
            elif c == closer:
                depth -= 1
                if depth == 0:
                    break
            elif c in (b";", b"{", b"}"):
                i = end
                break
            i += 1
        if i >= end:
            pos = m.end()
            continue
        stop = i + 1
        if opener == b"[":  # `]]`
            stop = i + 2 if text[i + 1 : i + 2] == b"]" else stop
        spans.append((m.start(), stop, m.group().split(b"(")[0].strip()))
        pos = stop
    return spans


def _strip_specifiers(text: str) -> str:
    """The type of a shared declaration's specifiers: `extern`, `__shared__`, `static` and every
    alignment or attribute specifier left out."""
    raw = text.encode("utf-8", "surrogatepass")
    for a, b, _ in reversed(_attribute_spans(raw)):
        raw = raw[:a] + b" " + raw[b:]
    return " ".join(_SPECIFIER_WORDS.sub(" ", raw.decode("utf-8", "surrogatepass")).split())


def _blank(text: bytes) -> bytes:
    """`text` made spaces, its newlines (and a macro's line continuations) kept."""
    return re.sub(rb"\\\r?\n|[^\r\n]", lambda m: m.group() if len(m.group()) > 1 else b" ", text)


@lru_cache(maxsize=1)
def _parser() -> Parser:
    return Parser(Language(tree_sitter_cuda.language()))


def _parse(src: bytes) -> Tree:
    """The tree of `src`, a NUL byte read as the space g++ reads it as (to tree-sitter it is an
    error token that breaks the statement around it), and preprocessor lines inside a launch
    (`k<<<g, b\n#ifdef X\n, s\n#endif\n>>>(...)`) read as blank lines (to tree-sitter they
    break the launch apart: `_masked_launch_directives`); offsets are the same either way."""
    if b"\0" in src:
        src = src.replace(b"\0", b" ")
    return _parser().parse(_masked_launch_directives(_masked_align(grammar_spellings(src))))


_ALIGN_DIRECTIVE = re.compile(rb"[ \t]*#[ \t]*(?:define|undef|ifdef|ifndef)[ \t]*\Z")


def _masked_align(src: bytes) -> bytes:
    """`src` with each `__align__(n)` made blanks: the grammar does not know it, and its error
    recovery takes `T __align__(8) buf[64]` for a declaration of `__align__` (a macro of the
    shim's header: `__attribute__((aligned(n)))`, whose place in a declaration it takes)."""
    if b"__align__" not in src:
        return src
    masked = None
    for start, end, word in _attribute_spans(src):
        if word != b"__align__":
            continue
        line = src.rfind(b"\n", 0, start) + 1
        if _ALIGN_DIRECTIVE.match(src, line, start):  # `#define __align__(n) ...`
            continue
        if masked is None:
            masked = bytearray(src)
        masked[start:end] = _blank(src[start:end])
    return bytes(masked) if masked is not None else src


_DIRECTIVE_LINE = re.compile(rb"^[ \t]*#", re.M)
_DIRECTIVE_LINE_TEXT = re.compile(r"^[ \t]*#(?:\\\r?\n|[^\n])*", re.M)
# Everything that makes a CUDA thread wait for others (see include/*.h).
SYNC_NAMES = frozenset(
    """__syncthreads __syncthreads_count __syncthreads_and __syncthreads_or __syncwarp
    __shfl_sync __shfl_up_sync __shfl_down_sync __shfl_xor_sync __ballot_sync __any_sync
    __all_sync __uni_sync __activemask __match_any_sync __match_all_sync __reduce_add_sync
    __reduce_min_sync __reduce_max_sync __reduce_and_sync __reduce_or_sync __reduce_xor_sync
    this_thread_block tiled_partition coalesced_threads thread_block thread_block_tile
    coalesced_group cooperative_groups sync __lane_id this_grid grid_group
    binary_partition labeled_partition block_tile_memory
    TempStorage BlockReduce BlockScan BlockAdjacentDifference WarpReduce WarpScan BlockRadixSort
    load_matrix_sync store_matrix_sync mma_sync bmma_sync memcpy_async wait_prior
    barrier latch counting_semaphore binary_semaphore arrive arrive_and_wait arrive_and_drop
    wait wait_parity try_wait try_wait_parity count_down acquire try_acquire release
    make_pipeline pipeline_shared_state producer_acquire producer_commit consumer_wait
    consumer_release pipeline_consumer_wait_prior pipeline_producer_commit warp_step""".split()
)
# CUB's collectives (include/cub/) wait at barriers; a kernel using one names its TempStorage
# (or the class, for the default constructor) even through a typedef. The WMMA *_sync calls
# (include/mma.h) wait at a full-warp __syncwarp; cooperative_groups::wait/wait_prior sync the group.
# libcu++'s barriers, latches and semaphores (include/cudashim/libcuxx_sync.h) wait for other
# threads of the block: their types and methods count, also through a type alias
# (`using Bar = cuda::barrier<...>`, `_alias_words`), since a waiting thread must be a fiber.
# libcu++'s pipelines (include/cudashim/libcuxx_pipeline.h) wait on those barriers: a kernel
# using one makes it (make_pipeline) or waits on it (consumer_wait, ...), so those names count.
_WORD = re.compile(r"[A-Za-z_]\w*")


@dataclass
class Launch:
    kernel: str
    line: int
    config: list[str]
    may_sync: bool = True


@dataclass
class RewriteResult:
    text: str
    launches: list[Launch] = field(default_factory=list)
    dynamic_shared: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    lockstep: list[str] = field(default_factory=list)  # kernels given a lockstep copy
    lockstep_skipped: dict[str, str] = field(default_factory=dict)  # barrier-free, no copy: why
    # (file, first line, last line) of each kernel given a lockstep copy: the copy's `#line`s give
    # its errors those lines, whatever g++ names (`copy_errors`)
    lockstep_lines: list[tuple[str, int, int]] = field(default_factory=list)


@dataclass
class _Edit:
    start: int
    end: int
    text: bytes


def _pad_lines(original: bytes, replacement: str, newline: str = "\n") -> bytes:
    """Append newlines so the replacement spans as many lines as the original."""
    missing = original.count(b"\n") - replacement.count("\n")
    if missing < 0:
        raise ValueError("replacement has more lines than the original")
    return (replacement + newline * missing).encode()


_VOID_POINTER = re.compile(r"(?:const\s+)?void\s*\*\s*(?:const\s*)?")
_REINTERPRET_VOID = re.compile(r"reinterpret_cast\s*<\s*(?:const\s+)?void\s*\*\s*(?:const\s*)?>")


class _Facts:
    """What one walk down a tree tells about its nodes: where its `__global__` and `__shared__`
    tokens are (so whether a node holds one is a lookup, not a walk of its subtree), its function
    definitions and declarations, and which declarations lie inside a function or lambda and
    which are statements of a block (not a walk up: `Node.parent` is itself a walk down from the
    root in tree-sitter, and declarations nested thousands of blocks deep made that cubic)."""

    __slots__ = ("_starts", "_in_function", "_in_block", "definitions", "file_declarations")

    def __init__(self, root: Node) -> None:
        self._starts: dict[str, list[int]] = {"__global__": [], "__shared__": []}
        self._in_function: set[int] = set()
        self._in_block: set[int] = set()
        self.definitions: list[Node] = []
        """Every `function_definition` and `declaration`."""
        self.file_declarations: list[Node] = []
        """The declarations outside any function or lambda."""
        outside, inside = [root], []  # still to see: outside any function, inside one
        while outside:
            node = outside.pop()
            kind = node.type
            if kind == "declaration":
                self.definitions.append(node)
                self.file_declarations.append(node)
            elif kind in _FUNCTION_SCOPES:
                if kind == "function_definition":
                    self.definitions.append(node)
                inside.extend(node.children)
                continue
            elif kind in self._starts:
                self._starts[kind].append(node.start_byte)
            elif kind == "compound_statement":
                self._blocks(node)
            outside.extend(node.children)
        while inside:
            node = inside.pop()
            kind = node.type
            if kind == "declaration":
                self.definitions.append(node)
                self._in_function.add(node.id)
            elif kind == "function_definition":
                self.definitions.append(node)
            elif kind in self._starts:
                self._starts[kind].append(node.start_byte)
            elif kind == "compound_statement":
                self._blocks(node)
            inside.extend(node.children)
        for starts in self._starts.values():
            starts.sort()

    def has_token(self, node: Node, token: str) -> bool:
        """Whether a `token` (`__global__` or `__shared__`) is in `node`'s subtree: tokens have a
        width and sibling nodes never overlap, so one starting in its range is one of its own."""
        starts = self._starts[token]
        i = bisect_left(starts, node.start_byte)
        return i < len(starts) and starts[i] < node.end_byte

    def _blocks(self, block: Node) -> None:
        self._in_block.update(c.id for c in block.children if c.type == "declaration")

    def inside_function(self, declaration: Node) -> bool:
        """Whether a function definition or lambda encloses `declaration`."""
        return declaration.id in self._in_function

    def in_block(self, declaration: Node) -> bool:
        """Whether `declaration` is a statement of a `{ ... }` block (a compound statement)."""
        return declaration.id in self._in_block


_FUNCTION_SCOPES = ("function_definition", "lambda_expression")


def kernel_names(tree_root: Node, src: bytes, facts: _Facts | None = None) -> set[str]:
    """Names of the program's `__global__` functions (definitions and declarations)."""
    facts = facts or _Facts(tree_root)
    names = set()
    for node in facts.definitions:
        if facts.has_token(node, "__global__"):
            name, plain = _function_name(node, src)
            if plain:
                names.add(name)
    return names


def _kernel_operand(src: bytes, node: Node | None, kernels: set[str]) -> str | None:
    """The kernel a cast's operand names (`k`, `&k`, `(k)`, `k<T>`, `ns::k`), as text, or None."""
    while node is not None and node.type in ("parenthesized_expression", "pointer_expression"):
        if node.type == "pointer_expression" and _text(src, node.child_by_field_name("operator")) != "&":
            return None
        node = node.child_by_field_name("argument") or next(
            (c for c in node.named_children), None)
    if node is None or node.type not in ("identifier", "template_function", "qualified_identifier"):
        return None
    text = _text(src, node)
    return text if _kernel_base_name(text) in kernels else None


def _kernel_cast_edit(src: bytes, node: Node, kernels: set[str]) -> _Edit | None:
    """`(void*)k` and its spellings -> `::cudashim::kernel_ptr(&k, "k")` (same line count)."""
    if node.type == "cast_expression":
        if not _VOID_POINTER.fullmatch(_text(src, node.child_by_field_name("type")).strip()):
            return None
        kernel = _kernel_operand(src, node.child_by_field_name("value"), kernels)
    elif node.type == "call_expression":
        func, args = node.child_by_field_name("function"), node.child_by_field_name("arguments")
        if func is None or args is None or not _REINTERPRET_VOID.fullmatch(_text(src, func).strip()):
            return None
        operands = args.named_children
        kernel = _kernel_operand(src, operands[0], kernels) if len(operands) == 1 else None
    else:
        return None
    if kernel is None:
        return None
    label = _kernel_base_name(kernel)
    text = f'::cudashim::kernel_ptr(&{kernel}, "{label}")'
    return _Edit(node.start_byte, node.end_byte, _pad_lines(src[node.start_byte:node.end_byte], text))


def _function_name(node: Node, src: bytes) -> tuple[str, bool]:
    """(name, plain) of a function definition; plain is False for operators and the like."""
    decl = node.child_by_field_name("declarator")
    while decl is not None and decl.type not in ("function_declarator",):
        decl = decl.child_by_field_name("declarator")
    if decl is None:
        return "", False
    name_node = decl.child_by_field_name("declarator")
    if name_node is None:
        return "", False
    if name_node.type in ("identifier", "field_identifier"):
        return _text(src, name_node), True
    if name_node.type == "qualified_identifier":
        last = _text(src, name_node).split("::")[-1]
        return last, bool(_WORD.fullmatch(last))
    return _text(src, name_node), False


def _definition_words(tree_root: Node, src: bytes) -> dict[str, set[str]]:
    """The words of each function's body and macro's value, by name (an operator or other
    unnamed function as `<unnamed:BYTE>`)."""
    bodies: dict[str, set[str]] = {}
    for node in _walk(tree_root):
        if node.type == "function_definition":
            name, plain = _function_name(node, src)
            body = node.child_by_field_name("body")
            words = set(_WORD.findall(_text(src, body))) if body is not None else set()
            if not plain:
                name = f"<unnamed:{node.start_byte}>"
            bodies.setdefault(name, set()).update(words)
        elif node.type in ("preproc_def", "preproc_function_def"):
            n, v = node.child_by_field_name("name"), node.child_by_field_name("value")
            if n is not None:
                words = set(_WORD.findall(_text(src, v))) if v is not None else set()
                bodies.setdefault(_text(src, n), set()).update(words)
    return bodies


def _alias_words(tree_root: Node, src: bytes) -> dict[str, set[str]]:
    """The words of each type alias's type (`using A = T;`, `typedef T A, *P;`), by alias name."""
    out: dict[str, set[str]] = {}
    for node in _walk(tree_root):
        if node.type == "alias_declaration":
            name, value = node.child_by_field_name("name"), node.child_by_field_name("type")
            if name is not None and value is not None:
                out.setdefault(_text(src, name), set()).update(_WORD.findall(_text(src, value)))
        elif node.type == "type_definition":
            value = node.child_by_field_name("type")
            words = set(_WORD.findall(_text(src, value))) if value is not None else set()
            for decl in node.children_by_field_name("declarator"):
                names = [n for n in _walk(decl) if n.type == "type_identifier"]
                if names:
                    out.setdefault(_text(src, names[-1]), set()).update(words)
    return out


def _closure(bodies: dict[str, set[str]], seeds: set[str] | frozenset[str]) -> set[str]:
    """`seeds` and every name whose words reach one of them (to a fixpoint)."""
    reached = set(seeds)
    changed = True
    while changed:
        changed = False
        for name, words in bodies.items():
            if name not in reached and words & reached:
                reached.add(name)
                changed = True
    return reached


def barrier_free_kernels(tree_root: Node, src: bytes,
                         waits_elsewhere: set[str] | frozenset[str] = frozenset(),
                         spinners: set[str] | frozenset[str] = frozenset()) -> set[str]:
    """Names of functions that can never wait at a barrier: no sync name in their body, in a
    function they call or in a macro they use (by name, to a fixpoint). Conservative: when a
    function that syncs cannot be named (an operator), nothing is barrier-free.
    `waits_elsewhere`: functions of the program's other files that may wait (`waiting_elsewhere`).
    `spinners`: functions with a loop that may wait for another thread of the block (`_spinning`):
    their threads must be fibers that can hand over, so they are not barrier-free either."""
    bodies = _definition_words(tree_root, src)
    aliases = _alias_words(tree_root, src)
    syncing = _closure({**aliases, **bodies}, SYNC_NAMES | waits_elsewhere | spinners)
    if any(n.startswith("<unnamed:") for n in syncing):
        return set()
    return {n for n in bodies if n not in syncing and not n.startswith("<unnamed:")}


def waiting_elsewhere(files: dict[str, str]) -> dict[str, frozenset[str]]:
    """For each file of a program of several files, the functions and macros defined in its
    other files that may wait for another thread: at a barrier or warp operation, or spinning
    (`lockstep.SPIN_WORDS`), through calls across every file. One file's rewrite sees only its
    own text: a kernel calling a `__device__` function another file defines (`-rdc`, or a
    header's) must not be judged barrier-free, nor copied into warp lockstep, for want of it."""
    from validators.cpu.lockstep import SPIN_WORDS

    per_file: dict[str, dict[str, set[str]]] = {}
    spinners: set[str] = set()
    for rel, text in files.items():
        src = text.encode("utf-8", "surrogatepass")
        root = _parse(src).root_node
        per_file[rel] = {**_alias_words(root, src), **_definition_words(root, src)}
        spinners |= _spinning(root, src, frozenset()).spinners
    merged: dict[str, set[str]] = {}
    for bodies in per_file.values():
        for name, words in bodies.items():
            merged.setdefault(name, set()).update(words)
    waiting = _closure(merged, SYNC_NAMES | SPIN_WORDS | spinners)
    return {rel: frozenset(n for other, bodies in per_file.items() if other != rel
                           for n in bodies if n in waiting)
            for rel in files}


def _kernel_base_name(kernel: str) -> str:
    name = kernel.split("<", 1)[0].strip()
    return name.split("::")[-1].strip()


# Null pointer constants as nvcc sees them in a launch; the shim's null_arg keeps them so.
_NULL_LITERALS = {"NULL": "long", "0": "int"}


def _launch_arguments(src: bytes, args: Node) -> str:
    """The text between the launch's parentheses, with `NULL`/`0` arguments wrapped."""
    start, end = args.start_byte + 1, args.end_byte - 1
    out = bytearray(src[start:end])
    for arg in reversed([c for c in args.named_children if c.type != "comment"]):
        literal = _NULL_LITERALS.get(_text(src, arg).strip())
        if literal is not None:
            wrapped = f"::cudashim::null_arg<{literal}>{{}}".encode()
            out[arg.start_byte - start : arg.end_byte - start] = wrapped
    return out.decode("utf-8", "replace")


_CALLEE_TYPES = frozenset(
    {"identifier", "qualified_identifier", "template_function", "field_expression",
     "parenthesized_expression", "subscript_expression", "pointer_expression"}
)


def _callee(func: Node) -> Node:
    """The kernel expression of a launch. After a construct the grammar does not know (e.g.
    `__align__(16)` in a declaration), error recovery can glue earlier statements onto the
    callee (`100.0f + i;\n k<<<...>>>(...)` parsed as a call of a binary expression): keep its
    rightmost name, so the edit covers the launch and nothing before it."""
    while func.type not in _CALLEE_TYPES and func.children:
        func = func.children[-1]
    return func


_FLAT_TOKENS = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|//[^\n]*|/\*.*?\*/|\\\n|\s+|.',
                          re.S)


_TRAILING_KERNEL = re.compile(
    r"(?:::)?[A-Za-z_]\w*(?:\s*::\s*[A-Za-z_]\w*)*(?:\s*<(?:[^<>;{}]|<[^<>;{}]*>)*>)?\s*$")


def _flat(text: str) -> str:
    """`text` on one line: comments dropped, line continuations and newlines made spaces. A
    launch's kernel expression appears twice in its replacement, which may not add lines (a
    template kernel's arguments spread over lines, in a macro body or not)."""
    out = []
    for tok in _FLAT_TOKENS.findall(text):
        if tok.startswith(("//", "/*")) or tok.isspace() or tok == "\\\n":
            out.append(" ")
        else:
            out.append(tok)
    return re.sub(r"\s+", " ", "".join(out)).strip()


def _launch_edit(
    src: bytes,
    call: Node,
    syntax: Node,
    newline: str = "\n",
    barrier_free: set[str] | frozenset[str] = frozenset(),
    lockstep: dict[str, int] | None = None,
) -> tuple[_Edit, Launch] | None:
    func = call.child_by_field_name("function")
    args = call.child_by_field_name("arguments")
    if func is None or args is None:
        return None
    func = _callee(func)
    config = [_text(src, c) for c in syntax.named_children if c.type != "comment"]
    # Preprocessor lines inside `<<< >>>` (`_parse` read them as blank lines): the configuration
    # goes whole, directives on their own lines, to `launch_config`, which takes 2 to 4 values as
    # `<<< >>>` does, once the preprocessor has chosen them.
    whole = None
    if _DIRECTIVE_LINE.search(src, syntax.start_byte, syntax.end_byte):
        marks = syntax.children
        if len(marks) < 2 or marks[0].type != "<<<" or marks[-1].type != ">>>":
            return None
        whole = src[marks[0].end_byte : marks[-1].start_byte].decode("utf-8", "replace")
        config = [_flat(_DIRECTIVE_LINE_TEXT.sub("", whole))]
    elif len(config) < 2 or len(config) > 4:
        return None
    while len(config) < 4:
        config.append("0")
    callee = _text(src, func)
    start = func.start_byte
    if any(c in callee for c in ";{}"):
        # Error recovery glued statements onto the callee (a `<` of a loop condition read as a
        # template's): the kernel is the name (and template arguments) just before `<<<`.
        m = _TRAILING_KERNEL.search(callee)
        if m is None:
            return None
        start = func.end_byte - len(callee[m.start():].encode())
        callee = m.group(0)
    kernel = _flat(callee)
    inner = _launch_arguments(src, args)
    name = " ".join(kernel.split()).replace("\\", "\\\\").replace('"', '\\"')
    rest = f", {inner}" if inner.strip() else inner
    may_sync = _kernel_base_name(kernel) not in barrier_free
    # Kernels that can never wait at a barrier run every thread as a plain call (no fibers).
    fn = "::cudashim::launch" if may_sync else "::cudashim::launch<false>"
    # A kernel with a lockstep copy defined above this launch (see lockstep.py) runs that copy.
    copy_end = (lockstep or {}).get(kernel.strip())
    lanes = ""
    if copy_end is not None and copy_end <= call.start_byte and not may_sync:
        fn = "::cudashim::launch_lockstep"
        ls = f"__cudashim_ls_{kernel.strip()}"
        lanes = (
            ", [](const ::std::atomic<bool>* cudashim_ab, int cudashim_d, auto&&... cudashim_a) { "
            f"{ls}<>(cudashim_d, cudashim_ab, cudashim_a...); }}"
        )
    configured = f"{config[0]}, {config[1]}, {config[2]}, {config[3]}"
    if whole is not None:
        # ::cudashim::launch_configured, launch_configured<false>, launch_configured_lockstep
        fn = fn.replace("::launch", "::launch_configured", 1)
        configured = f"::cudashim::launch_config({whole})"
    repl = (
        f'{fn}("{name}", {configured}, '
        # The trailing return type lets the shim ask whether the kernel takes these arguments.
        f"[&](auto&&... cudashim_a) -> decltype({kernel}(cudashim_a...)) "
        f"{{ {kernel}(cudashim_a...); }}{lanes}{rest})"
    )
    original = src[start : call.end_byte]
    edit = _Edit(start, call.end_byte, _pad_lines(original, repl, newline))
    return edit, Launch(
        kernel=name, line=call.start_point[0] + 1, config=config[:4], may_sync=may_sync
    )


def _isolated_launch_edits(
    src: bytes, edits: list[_Edit], barrier_free: set[str] | frozenset[str], lockstep: dict[str, int]
) -> list[tuple[int, _Edit, Launch]]:
    """(its `<<<`, edit, launch) for each launch of `src` (`_launch_spans`) that no edit of
    `edits` covers, its kernel expression and `<<< >>>( )` parsed alone as a statement. The
    tree can miss a launch its error recovery took for something else: after a statement macro
    used without a semicolon (`CUERR` for `{ ... }`), `CUERR\n k <<< 1, 4 >>>\n (d);` reads as
    a declaration of a function `k<...>` of type `CUERR`. A launch whose kernel is not named
    (`(*f)<<<...`, `a[i].k<<<...`) is left to the tree."""
    spans = _launch_spans(src)
    if not spans:
        return []
    ordered = sorted((e.start, e.end) for e in edits if e.end > e.start)
    starts = [a for a, _ in ordered]
    reach: list[int] = []  # the furthest end of the edits so far
    for _, end in ordered:
        reach.append(max(end, reach[-1]) if reach else end)
    lines: list[int] | None = None
    out = []
    for span in spans:
        i = bisect_left(starts, span.open + 1)
        if i and reach[i - 1] > span.open:
            continue  # rewritten (or inside a launch rewritten whole)
        m = _TRAILING_KERNEL_BYTES.search(src, max(0, span.open - 400), span.open)
        if m is None:
            continue
        before = src[max(0, m.start() - 8) : m.start()].rstrip()
        if before.endswith((b".", b"->", b")", b"]")):
            continue
        start = m.start()
        wrapped = _MACRO_PREFIX + src[start : span.end] + b";}"
        shift = start - len(_MACRO_PREFIX)
        call = next((n for n in _walk(_parse(wrapped).root_node) if n.type == "call_expression"
                     and any(c.type == "kernel_call_syntax" for c in n.children)), None)
        if call is None or call.start_byte != len(_MACRO_PREFIX) or call.end_byte != span.end - shift:
            continue
        syntax = next(c for c in call.children if c.type == "kernel_call_syntax")
        try:
            made = _launch_edit(wrapped, call, syntax, barrier_free=barrier_free,
                                lockstep={k: v - shift for k, v in lockstep.items()})
        except ValueError:
            made = None
        if made is None:
            continue
        edit, launch = made
        if lines is None:
            lines = [m.start() for m in re.finditer(rb"\n", src)]
        launch.line = bisect_left(lines, start) + 1
        out.append((span.open, _Edit(edit.start + shift, edit.end + shift, edit.text), launch))
    return out


def _extern_shared_edit(
    src: bytes, decl: Node, filename: str, inside_function: bool
) -> tuple[_Edit, str] | None:
    arrays = [n for n in _walk(decl) if n.type == "array_declarator"]
    if not arrays:
        return None
    outer = arrays[0]
    ident = next((n for n in _walk(outer) if n.type == "identifier"), None)
    if ident is None:
        return None
    name = _text(src, ident)
    type_text = _strip_specifiers(src[decl.start_byte : outer.start_byte].decode("utf-8", "replace"))
    if not type_text:
        return None
    suffix = src[ident.end_byte : outer.end_byte].decode("utf-8", "replace")
    original = src[decl.start_byte : decl.end_byte]
    if inside_function:
        repl = _dyn_smem_pointer(type_text, name, suffix) + ";"
        return _Edit(decl.start_byte, decl.end_byte, _pad_lines(original, repl)), name
    value = _dyn_smem_pointer(type_text, name, suffix, value_only=True)
    # File scope: every use must see the current block's buffer, so the name becomes a macro.
    end_line = decl.end_point[0] + 1
    repl = f'\n#define {name} ({value})\n#line {end_line} "{filename}"\n'
    return _Edit(decl.start_byte, decl.end_byte, repl.encode()), name


def _dyn_smem_pointer(type_text: str, name: str, suffix: str, value_only: bool = False) -> str:
    """`T * name = <the block's dynamic shared memory>` for `extern __shared__ T name<suffix>`
    (`[]` or `[][32]`: the first dimension becomes a pointer), or the value alone."""
    suffix = "".join(suffix.split())
    rest = suffix[2:] if suffix.startswith("[]") else ""
    if rest:
        ptr_decl, cast_type = f"(*{name}){rest}", f"{type_text}(*){rest}"
    else:
        ptr_decl, cast_type = f"* {name}", f"{type_text}*"
    value = f"reinterpret_cast<{cast_type}>(::cudashim::dyn_smem())"
    return value if value_only else f"{type_text} {ptr_decl} = {value}"


_SHARED_WORD = re.compile(rb"\b__shared__\b")
_EXTERN_WORD = re.compile(rb"\bextern\b")
_STATIC_WORD = re.compile(rb"\bstatic\b")
_MACRO_DECLARATOR = re.compile(rb"((?:[A-Za-z_]\w*\s*##\s*)*[A-Za-z_]\w*)\s*((?:\[[^\[\]]*\]\s*)*)\Z")


def _macro_shared_edits(body: bytes, used_in_functions: Callable[[], bool] | None = None
                        ) -> tuple[list[_Edit], list[str], list[tuple[int, str]]]:
    """The `__shared__` declarations of a `#define` body, which the tree does not see, read by
    their tokens and rewritten as a declaration of the source is (`_extern_shared_edit`,
    `_static_shared_edits`): an `extern` one inside braces (a function's body the macro
    defines), or one whose macro is used only inside functions, becomes a pointer to the
    block's dynamic shared memory; `static` goes and `alignas`/`[[...]]` move to the front.
    (edits in `body`'s offsets, the dynamic shared names, (offset, warning) of each declaration
    left as it was)."""
    code = _code_only_bytes(body)
    code = re.sub(rb"\\\r?\n", lambda m: b" " * len(m.group()), code)
    edits: list[_Edit] = []
    names: list[str] = []
    warnings: list[tuple[int, str]] = []
    done_to = -1
    for m in _SHARED_WORD.finditer(code):
        if m.start() < done_to:
            continue
        start = max(code.rfind(c, 0, m.start()) for c in (b";", b"{", b"}")) + 1
        ends = [i for i in (code.find(c, m.end()) for c in (b";", b"{", b"}")) if i >= 0]
        end = min(ends) if ends else len(code)
        done_to = end
        while start < m.start() and code[start : start + 1].isspace():
            start += 1
        while end > m.end() and code[end - 1 : end].isspace():
            end -= 1
        if _EXTERN_WORD.search(code, start, end):
            d = _MACRO_DECLARATOR.search(code, m.end(), end)
            type_text = _strip_specifiers(code[start : d.start()].decode("utf-8", "replace")) if d else ""
            if d is None or not d.group(2) or not type_text:
                warnings.append((start, f"cannot read the declaration {_flat(body[start:end].decode('utf-8', 'replace'))[:80]!r}"))
                continue
            depth = code.count(b"{", 0, start) - code.count(b"}", 0, start)
            if depth <= 0 and not (used_in_functions and used_in_functions()):
                warnings.append((start, "an `extern __shared__` declaration in a macro used outside functions "
                                        "is left as it is"))
                continue
            name = " ".join(d.group(1).decode("utf-8", "replace").split())
            repl = _dyn_smem_pointer(type_text, name, d.group(2).decode("utf-8", "replace"))
            edits.append(_Edit(start, end, _pad_lines(body[start:end], repl, " \\\n")))
            names.append(name)
            continue
        spans = [(a, b) for a, b, word in _attribute_spans(code, start, end) if word in (b"alignas", b"[[")]
        lead = start
        while spans and spans[0][0] == lead:  # already in front
            lead = spans.pop(0)[1]
            while lead < end and code[lead : lead + 1].isspace():
                lead += 1
        statics = [(w.start(), w.end()) for w in _STATIC_WORD.finditer(code, start, end)]
        for a, b in sorted(spans + statics):
            edits.append(_Edit(a, b, _blank(body[a:b])))
        if spans:
            moved = " ".join(_flat(body[a:b].decode("utf-8", "replace")) for a, b in spans)
            edits.append(_Edit(start, start, moved.encode() + b" "))
    return edits, names, warnings


def _shadowing_function_edits(root: Node, src: bytes, name: str, after: int, filename: str) -> list[_Edit]:
    """A file-scope `extern __shared__` array is a macro (every use must see the current block's
    buffer); a function that declares the same name (a parameter, a local array) would get the
    macro's expansion in its declarations. Such a function sees the name undefined, and the
    macro comes back after it, with every line number kept (`#line`)."""
    edits = []
    word = re.compile(rb"\b" + re.escape(name.encode()) + rb"\b")
    for fn in _walk(root):
        if fn.type != "function_definition" or fn.start_byte < after:
            continue
        if not word.search(src[fn.start_byte : fn.end_byte]):
            continue
        declares = any(
            n.type == "identifier" and _text(src, n) == name
            and n.parent is not None and n.parent.type in _DECLARATOR_TYPES
            for n in _walk(fn)
        )
        if not declares:
            continue
        start_line, end_line = fn.start_point[0] + 1, fn.end_point[0] + 1
        edits.append(_Edit(fn.start_byte, fn.start_byte, (
            f'\n#pragma push_macro("{name}")\n#undef {name}\n#line {start_line} "{filename}"\n').encode()))
        edits.append(_Edit(fn.end_byte, fn.end_byte, (
            f'\n#pragma pop_macro("{name}")\n#line {end_line} "{filename}"\n').encode()))
    return edits


_DECLARATOR_TYPES = frozenset({
    "array_declarator", "pointer_declarator", "reference_declarator", "init_declarator",
    "parameter_declaration", "optional_parameter_declaration", "declaration",
})


def _is_standard_attribute(node: Node) -> bool:
    return node.type == "attribute_declaration" or (
        node.type == "type_qualifier" and any(c.type == "alignas_qualifier" for c in node.children))


def _static_shared_edits(src: bytes, decl: Node, in_block: bool) -> list[_Edit]:
    """`static` dropped (the header's `__shared__` says it); `alignas(...)` and `[[...]]` moved
    to the front of the declaration, the one place g++ takes a standard attribute once the
    header's `static __attribute__((aligned(16)))` stands before it ("standard attributes in
    middle of decl-specifiers")."""
    edits = []
    children = list(decl.children)
    lead = next((i for i, c in enumerate(children) if not _is_standard_attribute(c)), len(children))
    moved = [c for c in children[lead:] if _is_standard_attribute(c)]
    for i, c in enumerate(children):
        dropped = (c.type == "storage_class_specifier" and _text(src, c) == "static") or c in moved
        text = _blank(src[c.start_byte : c.end_byte]) if dropped else src[c.start_byte : c.end_byte]
        if i == 0 and moved:
            text = b" ".join(_flat(_text(src, m)).encode() for m in moved) + b" " + text
        elif not dropped:
            continue
        edits.append(_Edit(c.start_byte, c.end_byte, text))
    # Inside a function body, tell the runtime where each variable lives, on the same line, so
    # the checking runs can fill it with a poison byte once per block (`shared_decl`).
    if in_block:
        names = [n for n in (_declared_name(src, d) for d in decl.children_by_field_name("declarator")) if n]
        calls = "".join(f' ::cudashim::shared_decl((void*)&{n}, sizeof({n}), "{n}", __LINE__);'
                        for n in names)
        if calls:
            edits.append(_Edit(decl.end_byte, decl.end_byte, calls.encode()))
    return edits


def _declared_name(src: bytes, node: Node | None) -> str:
    while node is not None and node.type != "identifier":
        node = node.child_by_field_name("declarator")
    return _text(src, node) if node is not None else ''


_MACRO_PREFIX = b"void cudashim_macro_body(){"
_DEFINE_HEAD = re.compile(rb"[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)(?:\(([^)]*)\))?(?:[ \t]|\\\r?\n)*")


def _macro_parts(src: bytes, node: Node) -> tuple[str, list[str], int, int, int] | None:
    """(name, parameters, start and end of the body, its line) of a `#define`, read from its text:
    the grammar's reading of a macro with a comment in its body can end the body at the comment,
    or take a word after it for the name."""
    m = _DEFINE_HEAD.match(src, node.start_byte, node.end_byte)
    stop = len(src[: node.end_byte].rstrip(b"\r\n"))
    if m is None:
        value, name = node.child_by_field_name("value"), node.child_by_field_name("name")
        if value is None:
            return None
        return (_text(src, name) if name else "", _macro_params(node, src), value.start_byte,
                value.end_byte, value.start_point[0] + 1)
    if stop <= m.end():
        return None
    params = [p.strip() for p in m.group(2).decode("utf-8", "replace").split(",")] if m.group(2) is not None else []
    line = node.start_point[0] + 1 + src.count(b"\n", node.start_byte, m.end())
    return m.group(1).decode("utf-8", "replace"), [p for p in params if p], m.end(), stop, line


def _macro_body_edit(src: bytes, start: int, stop: int, line: int, result: RewriteResult,
                     spin: _Spinning | None = None, name: str = "", params: list[str] | None = None,
                     used_in_functions: Callable[[], bool] | None = None) -> _Edit | None:
    """Launches inside a `#define` body: parse the body as a statement and rewrite it there; and
    a spin point in each of its loops that waits, by its own words or, where this file passes
    the macro an argument that reads volatile or atomic memory, by a parameter's
    (`#define SPIN_UNTIL(c) while (!(c))`, used as `SPIN_UNTIL(atomicAdd(f, 0))`)."""
    body = src[start:stop]  # from `line` (`_macro_parts`)
    waiting: set[str] = set()
    if spin is not None:
        waiting = spin.reads | (set(params or ()) if name in spin.argument_waits else set())
    shared = b"__shared__" in body
    if b"<<<" not in body and not shared and not (
            waiting and _LOOP_WORDS & set(_WORD.findall(body.decode("utf-8", "replace")))):
        return None
    wrapped = _MACRO_PREFIX + body + b"\n;}"  # the newline ends a `//` comment last in the body
    tree = _parse(wrapped)
    edits = []
    if shared:
        # `__shared__` declarations (`#define SMEM(T, n) ... { extern __shared__ T n[]; ... }`).
        shared_edits, names, warnings = _macro_shared_edits(body, used_in_functions)
        shift = len(_MACRO_PREFIX)
        edits.extend(_Edit(e.start + shift, e.end + shift, e.text) for e in shared_edits)
        result.dynamic_shared.extend(names)
        for at, warning in warnings:
            at_line = line + body.count(b"\n", 0, at)
            result.warnings.append(f"line {at_line}: {warning}")
    for node in _walk(tree.root_node):
        if node.type in _LOOP_TYPES and waiting and spin is not None and spin.loops.waits(wrapped, node, waiting):
            spin_edit = _spin_point_edit(wrapped, node)
            if spin_edit is not None:
                edits.append(spin_edit)
            continue
        if node.type != "call_expression":
            continue
        syntax = next((c for c in node.children if c.type == "kernel_call_syntax"), None)
        if syntax is None:
            continue
        made = _launch_edit(wrapped, node, syntax, newline=" \\\n")
        if made is not None:
            edits.append(made[0])
            launch = made[1]
            launch.line = line + wrapped[: node.start_byte].count(b"\n")
            result.launches.append(launch)
    if not edits:
        return None
    out = bytearray(wrapped)
    for e in sorted(edits, key=lambda e: (e.start, e.end), reverse=True):
        out[e.start : e.end] = e.text
    text = bytes(out[len(_MACRO_PREFIX) : -3])
    return _Edit(start, stop, text)


_COPY_LINE = re.compile(r'^#line (\d+) "', re.M)
_ERROR_AT = re.compile(r"^(?P<file>[^\s:][^:\n]*):(?P<line>\d+):(?:\d+:)? (?:fatal )?error:", re.M)


def copy_errors(diagnostics: str, lines: list[tuple[str, int, int]]) -> bool:
    """Whether an error of g++'s `diagnostics` lies on the lines of a kernel given a lockstep
    copy (`RewriteResult.lockstep_lines`): it may be the copy's. g++ names the copy only where it
    says which function it is in; a kernel in a header (`In file included from ...`) gets no
    such line. The kernel's own error is on those lines too: a build redone without the copies
    then reports it again."""
    if not lines:
        return False
    for m in _ERROR_AT.finditer(diagnostics):
        path, number = os.path.normpath(m.group("file")), int(m.group("line"))
        for name, first, last in lines:
            name = os.path.normpath(name)
            if first <= number <= last and (path == name or path.endswith(os.sep + name)):
                return True
    return False


def _lockstep_edits(
    root: Node, src: bytes, barrier_free: set[str], filename: str, result: RewriteResult, facts: _Facts
) -> tuple[list[_Edit], dict[str, int]]:
    """Each lockstep copy goes right after its kernel; a `#line` after it gives the user's lines
    back their numbers."""
    shared_words = {
        _text(src, n)
        for d in facts.file_declarations
        if facts.has_token(d, "__shared__")
        for n in _walk(d)
        if n.type == "identifier"
    }
    copies = lockstep_copies(root, src, barrier_free, filename, excluded_words=shared_words)
    edits, ends = [], {}
    for name, (end, code, why) in sorted(copies.items()):
        if not code:
            result.lockstep_skipped[name] = why
            continue
        line = src[:end].count(b"\n") + 1
        text = f'\n{code}\n#line {line} "{filename}"\n'
        edits.append(_Edit(end, end, text.encode()))
        ends[name] = end
        result.lockstep.append(name)
        numbers = [int(n) for n in _COPY_LINE.findall(code)]
        if numbers:
            result.lockstep_lines.append((filename, min(numbers), max(numbers)))
    return edits, ends


# What a loop that waits for another thread reads: atomics (`while (atomicAdd(f, 0) == 0)`),
# uncached loads, and what lockstep.SPIN_WORDS names (volatile, atomicCAS/Exch, fences,
# __nanosleep, atomic_ref).
_POLL_WORDS = frozenset(
    f"{op}{scope}" for op in ("atomicAdd", "atomicSub", "atomicOr", "atomicAnd", "atomicXor", "atomicMax",
                              "atomicMin", "atomicInc", "atomicDec", "atomicCAS", "atomicExch")
    for scope in ("", "_block", "_system")
) | {"__ldcv", "__ldcg", "__ldlu"}
# A fence or a sleep in a loop's body: the loop polls memory the fence makes it read again
# (`while (flag[i] == 0) __threadfence();`), whatever its condition names.
_PAUSE_WORDS = frozenset({"__threadfence", "__threadfence_block", "__threadfence_system", "__nanosleep",
                          "atomic_thread_fence"})
_NUMBER = re.compile(r"(?<![\w.])\.?\d[\w.]*")
_LOOP_WORDS = frozenset({"for", "while", "do"})
_SPIN_POINT = b"::cudashim::spin_point(), "
_DEVICE_WORDS = frozenset({"__global__", "__device__"})
_LOOP_TYPES = ("for_statement", "while_statement", "do_statement")
_GUARDS = ("if_statement", "while_statement", "for_statement", "do_statement", "switch_statement",
           "conditional_expression")


def _declared_identifier(node: Node) -> Node | None:
    """The name a declarator declares (`*p`, `a[4]`, `x = 0` -> p, a, x)."""
    while node is not None and node.type not in ("identifier", "field_identifier"):
        node = node.child_by_field_name("declarator")
    return node


def _waiting_names(root: Node, src: bytes) -> set[str]:
    """Variables, parameters and fields declared volatile or atomic (`volatile int* flag`,
    `cuda::atomic<int> f`): a loop that reads one of them by name may be polling it."""
    names = set()
    for node in _walk(root):
        if node.type not in ("declaration", "parameter_declaration", "field_declaration"):
            continue
        head = node.child_by_field_name("type")
        words = set(_WORD.findall(_text(src, node)[: (head.end_byte - node.start_byte) if head else None]))
        if not ("volatile" in words or any("atomic" in w for w in words)):
            continue
        for decl in node.children_by_field_name("declarator"):
            ident = _declared_identifier(decl)
            if ident is not None:
                names.add(_text(src, ident))
    return names


def _words(src: bytes, node: Node | None) -> set[str]:
    # numbers dropped first: the suffix of `2.0f` is no name `f`
    return set(_WORD.findall(_NUMBER.sub(" ", _text(src, node)))) if node is not None else set()


_BREAKABLE = (*_LOOP_TYPES, "switch_statement", "for_range_loop")


class _Guards:
    """The guard conditions of the nodes of one loop's body, as a tree of links: link `i` adds
    `words[i]` (one guard's condition) to what link `parent[i]` (-1: none) already says, so the
    words guarding a node are those of its link and every link above it. Each guard's condition
    is tokenised once, and a chain of links shared by many nodes (an `else if` chain's) is stored
    once, not once per node."""

    __slots__ = ("parent", "words")

    def __init__(self) -> None:
        self.parent: list[int] = []
        self.words: list[set[str]] = []

    def link(self, parent: int, words: set[str]) -> int:
        if not words:
            return parent
        self.parent.append(parent)
        self.words.append(words)
        return len(self.words) - 1


def _exit_words(
    src: bytes, loop: Node, words: Callable[[bytes, Node | None], set[str]] = _words
) -> set[str]:
    """The names a loop's leaving depends on: its condition, the conditions guarding each jump
    out of it (`if (atomicCAS(l, 0, 1) == 0) break;`), and, to a fixpoint, what the loop assigns
    to those names and the conditions guarding those assignments (`do { old = atomicCAS(...); }
    while (old != 0)`, `if (atomicCAS(...) == 0) { ...; done = true; }`). A loop whose leaving
    depends only on its own counters (a histogram's `for (i...) atomicAdd(...)`) never waits.

    Near-linear in the body's size: one walk down from the loop carries each node's guards (a
    `_Guards` link) and whether a `break` there leaves this loop, instead of walking up from every
    jump and assignment (`Node.parent` is itself a walk down from the root in tree-sitter: a
    1,500-link `else if` chain took minutes); the fixpoint follows each name once. `words`
    tokenises a node (`_words`; `_Loops` passes one that counts what it reads)."""
    deps = words(src, loop.child_by_field_name("condition"))
    body = loop.child_by_field_name("body")
    if body is None:
        return deps
    guards = _Guards()
    exits: list[int] = []  # the guard link of each jump out of the loop
    sources: list[tuple[set[str], set[str], int]] = []  # (names assigned, words they then depend on, link)
    stack: list[tuple[Node, int, bool]] = [(body, -1, False)]  # (node, its guard link, inside a breakable)
    while stack:
        node, link, nested = stack.pop()
        kind = node.type
        if kind in ("return_statement", "goto_statement", "break_statement"):
            if kind != "break_statement" or not nested:
                exits.append(link)
        elif kind in ("assignment_expression", "update_expression"):
            target = node.child_by_field_name("left") or node.child_by_field_name("argument")
            value = node.child_by_field_name("right")
            sources.append((words(src, target), words(src, value), link))
        elif kind == "init_declarator":
            ident = _declared_identifier(node)
            if ident is not None:
                sources.append(({_text(src, ident)}, words(src, node.child_by_field_name("value")), link))
        children = node.children
        if not children:
            continue
        inner = nested or kind in _BREAKABLE
        cond = node.child_by_field_name("condition") if kind in _GUARDS else None
        if cond is None:
            stack.extend((c, link, inner) for c in children)
            continue
        guarded = guards.link(link, words(src, cond))
        stack.extend((c, link if c == cond else guarded, inner) for c in children)
    # The fixpoint: a name the leaving depends on brings in what each assignment to it depends
    # on, and the guards of that assignment.
    by_name: dict[str, list[int]] = {}
    for i, (assigned, _, _) in enumerate(sources):
        for name in assigned:
            by_name.setdefault(name, []).append(i)
    included = [False] * len(guards.words)
    fired = [False] * len(sources)
    todo = list(deps)

    def add(found: set[str]) -> None:
        new = found - deps
        deps.update(new)
        todo.extend(new)

    def include(link: int) -> None:
        while link >= 0 and not included[link]:
            included[link] = True
            add(guards.words[link])
            link = guards.parent[link]

    for link in exits:
        include(link)
    while todo:
        for i in by_name.get(todo.pop(), ()):
            if not fired[i]:
                fired[i] = True
                add(sources[i][1])
                include(sources[i][2])
    return deps


LOOP_NODES = 100_000
"""Nodes of loop bodies `_Loops` may walk for one file, beyond two per byte of the file: real
programs walk a fraction of it (each loop's body once, so a node once per loop around it; the
most, SGEMM's autotuned kernel, about 0.7 per byte); loops nested hundreds deep would walk their
bodies again for every level."""
LOOP_TEXT = 1_000_000
"""Bytes of source `_Loops` may tokenise for one file, beyond eight per byte of the file: an
assignment nested in another (`a = b = ... = c`) is read again for every level."""


class _Spent(Exception):
    """`_Loops` has used up its budget."""


class _Loops:
    """`_exit_words` and whether a loop waits, for one file's rewrite: each loop's answer is
    worked out once (the spinners and the spin points ask about the same loops), within a budget
    (`LOOP_NODES`, `LOOP_TEXT`) that bounds the work on any text to a few passes over it. A loop
    met once the budget is spent counts as waiting (no exit words known): its threads become
    fibers with a spin point, which is slower but never wrong, where a loop wrongly judged not to
    wait could hang its block."""

    def __init__(self, size: int) -> None:
        self.nodes = LOOP_NODES + 2 * size
        self.text = LOOP_TEXT + 8 * size
        self._known: dict[tuple[bytes, int, int, str], tuple[set[str], bool] | None] = {}

    def _words(self, src: bytes, node: Node | None) -> set[str]:
        if node is not None:
            if node.end_byte - node.start_byte > self.text:
                raise _Spent
            self.text -= node.end_byte - node.start_byte
        return _words(src, node)

    def _judge(self, src: bytes, loop: Node) -> tuple[set[str], bool] | None:
        """(exit words, whether the body pauses), or None once the budget is spent."""
        key = (src, loop.start_byte, loop.end_byte, loop.type)
        if key in self._known:
            return self._known[key]
        body = loop.child_by_field_name("body")
        cost = body.descendant_count if body is not None else 1
        judged = None
        if cost <= self.nodes:
            self.nodes -= cost
            try:
                judged = (_exit_words(src, loop, self._words), bool(self._words(src, body) & _PAUSE_WORDS))
            except _Spent:
                pass
        self._known[key] = judged
        return judged

    def exit_words(self, src: bytes, loop: Node) -> set[str] | None:
        judged = self._judge(src, loop)
        return judged[0] if judged is not None else None

    def waits(self, src: bytes, loop: Node, waiting: set[str]) -> bool:
        """Whether `loop` may wait for another thread: its leaving depends on a volatile or atomic
        read (`waiting`: directly or through a function that makes one), or it pauses with a
        fence or sleep. True once the budget is spent."""
        judged = self._judge(src, loop)
        return judged is None or bool(judged[0] & waiting or judged[1])


def _spin_point_edit(src: bytes, loop: Node) -> _Edit | None:
    """`cudashim::spin_point()` first in the loop's condition, on the loop's own line."""
    cond = loop.child_by_field_name("condition")
    if loop.type == "for_statement":
        if cond is not None:
            return _Edit(cond.start_byte, cond.start_byte, _SPIN_POINT)
        semis = [c for c in loop.children if c.type == ";"]  # for (;;): the empty condition
        return _Edit(semis[-1].start_byte, semis[-1].start_byte, _SPIN_POINT + b"true") if semis else None
    if cond is not None and cond.named_child_count == 1 and cond.named_children[0].type != "declaration":
        return _Edit(cond.start_byte + 1, cond.start_byte + 1, _SPIN_POINT)  # just inside '('
    return None


def _macro_params(node: Node, src: bytes) -> list[str]:
    params = node.child_by_field_name("parameters")
    return [_text(src, c) for c in params.named_children] if params is not None else []




def _parse_macro(src: bytes, value: Node) -> tuple[bytes, Node]:
    """A `#define` body parsed as the statements of a function (wrapped in `_MACRO_PREFIX`)."""
    wrapped = _MACRO_PREFIX + src[value.start_byte : value.end_byte] + b";}"
    return wrapped, _parse(wrapped).root_node


@dataclass
class _Spinning:
    """`reads`: names whose use in a loop's exit condition makes it a wait (volatile and atomic
    variables, atomics, and functions or macros that use them). `spinners`: functions and macros
    with a waiting loop, and everything that calls or uses them. `by_argument`: macros whose
    loop waits when one of their arguments does (`SPIN_UNTIL(cond)`), by argument position;
    `argument_waits`: those of them this file uses with such an argument. `loops`: the answers
    about this file's loops (`_Loops`)."""
    reads: set[str]
    spinners: set[str]
    by_argument: dict[str, set[int]]
    argument_waits: set[str]
    loops: _Loops


def _spinning(root: Node, src: bytes, waits_elsewhere: set[str] | frozenset[str]) -> _Spinning:
    from validators.cpu.lockstep import SPIN_WORDS

    bodies = _definition_words(root, src)
    reads = _closure(bodies, SPIN_WORDS | _POLL_WORDS | waits_elsewhere) | _waiting_names(root, src)
    loops = _Loops(len(src))
    spinners = set(waits_elsewhere)
    by_argument: dict[str, set[int]] = {}
    calls: list[tuple[str, Node]] = []
    for node in _walk(root):
        if node.type == "function_definition":
            body = node.child_by_field_name("body")
            if body is None:
                continue
            name = _function_name(node, src)[0] or f"<unnamed:{node.start_byte}>"
            if any(n.type in _LOOP_TYPES and loops.waits(src, n, reads) for n in _walk(body)):
                spinners.add(name)
            calls.extend((name, n) for n in _walk(body) if n.type == "call_expression")
        elif node.type in ("preproc_def", "preproc_function_def"):
            name, value = node.child_by_field_name("name"), node.child_by_field_name("value")
            if name is None or value is None:
                continue
            params = set(_macro_params(node, src))
            wrapped, tree = _parse_macro(src, value)
            for loop in _walk(tree):
                if loop.type not in _LOOP_TYPES:
                    continue
                if loops.waits(wrapped, loop, reads):
                    spinners.add(_text(src, name))
                elif deps := (loops.exit_words(wrapped, loop) or set()) & params:
                    by_argument.setdefault(_text(src, name), set()).update(
                        i for i, p in enumerate(_macro_params(node, src)) if p in deps)
    # A use of an argument-waiting macro whose argument reads volatile or atomic memory.
    argument_waits: set[str] = set()
    for function, call in calls:
        callee = call.child_by_field_name("function")
        positions = by_argument.get(_text(src, callee)) if callee is not None else None
        args = call.child_by_field_name("arguments")
        if positions and args is not None:
            named = [a for a in args.named_children if a.type != "comment"]
            if any(i < len(named) and _words(src, named[i]) & reads for i in positions):
                spinners.add(function)
                argument_waits.add(_text(src, callee))
    return _Spinning(reads=reads, spinners=_closure(bodies, spinners), by_argument=by_argument,
                     argument_waits=argument_waits, loops=loops)


def _spin_point_edits(root: Node, src: bytes, spin: _Spinning) -> list[_Edit]:
    """A call to `cudashim::spin_point()` in the condition of every loop of device code whose
    leaving waits on volatile or atomic memory (`_Loops.waits`): such a loop may wait for another
    thread of its block or, in a cooperative launch, another block, which must get to run (the
    runtime's `_Spin_point_slow`). Inserted on the loop's own line, so line numbers stay. Loops in `#define`
    bodies get theirs in `_macro_body_edit`."""
    edits: list[_Edit] = []
    for fn in _walk(root):
        body = fn.child_by_field_name("body") if fn.type == "function_definition" else None
        if body is None or not _DEVICE_WORDS & set(_WORD.findall(_text(src, fn)[: body.start_byte - fn.start_byte])):
            continue
        for loop in _walk(body):
            if loop.type in _LOOP_TYPES and spin.loops.waits(src, loop, spin.reads):
                edit = _spin_point_edit(src, loop)
                if edit is not None:
                    edits.append(edit)
    return edits


MEMO_CHARS = 8_000_000
"""Source characters of the rewrites remembered (`rewrite`)."""
_MEMO: Memo[RewriteResult] = Memo(MEMO_CHARS)


def rewrite(source: str, filename: str = "main.cu", lockstep: bool = True,
            waits_elsewhere: set[str] | frozenset[str] = frozenset(),
            bit_fields: frozenset[str] = frozenset()) -> RewriteResult:
    """Rewrite launches and dynamic shared memory declarations; keep every line where it was.

    `lockstep`: add warp-lockstep copies of the kernels that allow one (lockstep.py).
    `waits_elsewhere`: names other files of the program define that may wait for another
    thread (`waiting_elsewhere`).
    `bit_fields`: names other files of the program declare bit-fields by (device_semantics.py).

    A pure function of its arguments, and a thorough check builds the same source once per
    variant (plain, ASan, race: three rewrites, ~0.07 CPU-s each, of one text): the results of
    the texts seen last are remembered within a budget of source characters, and each caller
    gets its own copy (callers add warnings to theirs)."""
    key = (source, filename, lockstep, frozenset(waits_elsewhere), bit_fields)
    kept = _MEMO.get(key, len(source), lambda: _rewrite(source, filename, lockstep, waits_elsewhere, bit_fields))
    return copy.deepcopy(kept)


def _rewrite(source: str, filename: str, lockstep: bool,
             waits_elsewhere: set[str] | frozenset[str], bit_fields: frozenset[str] = frozenset()) -> RewriteResult:
    src = source.encode("utf-8", "surrogatepass")
    tree = _parse(src)
    wrapped = gpu_device_source(src, tree.root_node, bit_fields)
    if wrapped is not src:  # the lockstep copies and every edit below see the wrapped code
        src, source = wrapped, wrapped.decode("utf-8", "surrogatepass")
        tree = _parse(src)
    stepped = in_step(src, tree.root_node)
    if stepped is not src:  # exchanges through volatile memory wait for the warp (warp_step)
        src, source = stepped, stepped.decode("utf-8", "surrogatepass")
        tree = _parse(src)
    edits: list[_Edit] = []
    result = RewriteResult(text=source)
    spin = _spinning(tree.root_node, src, waits_elsewhere)
    barrier_free = barrier_free_kernels(tree.root_node, src, waits_elsewhere, spin.spinners)
    facts = _Facts(tree.root_node)
    kernels = kernel_names(tree.root_node, src, facts)
    copy_ends: dict[str, int] = {}
    if lockstep:
        copy_edits, copy_ends = _lockstep_edits(tree.root_node, src, barrier_free, filename, result, facts)
        edits.extend(copy_edits)
        from validators.cpu.lockstep import WAITS_REASON

        # Barrier-free but for a loop that waits for another thread: no copy, and the reason.
        if waiting_only := kernels & spin.spinners - barrier_free:
            for name in waiting_only & barrier_free_kernels(tree.root_node, src, waits_elsewhere):
                result.lockstep_skipped.setdefault(name, WAITS_REASON)
    edits.extend(_spin_point_edits(tree.root_node, src, spin))
    file_scope_shared: list[tuple[str, int]] = []
    unread: dict[int, str] = {}  # launches the tree has but could not be rewritten, by `<<<`
    for node in _walk(tree.root_node):
        cast = _kernel_cast_edit(src, node, kernels) if kernels else None
        if cast is not None:
            edits.append(cast)
            continue
        if node.type == "call_expression":
            syntax = next((c for c in node.children if c.type == "kernel_call_syntax"), None)
            if syntax is not None:
                try:
                    made = _launch_edit(src, node, syntax, barrier_free=barrier_free, lockstep=copy_ends)
                except ValueError:  # a launch the parse could not delimit: g++ will say where
                    made = None
                if made is None:
                    unread[syntax.start_byte] = (
                        f"line {node.start_point[0] + 1}: cannot read the launch {_text(src, node)[:80]!r}"
                    )
                    continue
                edits.append(made[0])
                result.launches.append(made[1])
        elif node.type == "declaration" and facts.has_token(node, "__shared__"):
            is_extern = any(
                c.type == "storage_class_specifier" and _text(src, c) == "extern"
                for c in node.children
            )
            if is_extern:
                made_shared = _extern_shared_edit(src, node, filename, facts.inside_function(node))
                if made_shared is None:
                    result.warnings.append(
                        f"line {node.start_point[0] + 1}: cannot read the declaration {_text(src, node)[:80]!r}"
                    )
                    continue
                edits.append(made_shared[0])
                result.dynamic_shared.append(made_shared[1])
                if not facts.inside_function(node):
                    file_scope_shared.append((made_shared[1], node.end_byte))
            else:
                edits.extend(_static_shared_edits(src, node, facts.in_block(node)))
        elif node.type in ("preproc_def", "preproc_function_def"):
            parts = _macro_parts(src, node)
            if parts is not None:
                macro, params, start, stop, line = parts
                made_macro = _macro_body_edit(
                    src, start, stop, line, result, spin, macro, params,
                    lambda macro=macro: _used_in_functions(src, macro, facts))
                if made_macro is not None:
                    edits.append(made_macro)
    for name, after in file_scope_shared:
        edits.extend(_shadowing_function_edits(tree.root_node, src, name, after, filename))
    # Launches the tree does not have (or could not read): each read again alone.
    for opened, launch_edit, launch in _isolated_launch_edits(src, edits, barrier_free, copy_ends):
        edits.append(launch_edit)
        result.launches.append(launch)
        unread.pop(opened, None)
    result.launches.sort(key=lambda x: x.line)
    result.warnings.extend(unread.values())
    # Outermost edits win (a launch nested in another launch's arguments is left as it is).
    edits.sort(key=lambda e: (e.start, -e.end))
    kept: list[_Edit] = []
    for e in edits:
        if kept and e.start < kept[-1].end:
            result.warnings.append("nested launch left unrewritten")
            continue
        kept.append(e)
    out = bytearray(src)
    for e in reversed(kept):
        out[e.start : e.end] = e.text
    result.text = out.decode("utf-8", "surrogatepass")
    for number, code in enumerate(_code_only(result.text).splitlines(), 1):
        if "<<<" in code and ">>>" in code:
            result.warnings.append(
                f"line {number}: a '<<<' launch was not rewritten (inside a macro?)"
            )
    return result


_COMMENT_OR_LITERAL = re.compile(
    r'//(?:\\\r?\n|[^\n])*|/\*.*?(?:\*/|\Z)'
    r'|(?<![\w])(?:u8|[uUL])?R"(?P<delim>[^()\\\s"]{0,16})\((?:.*?\)(?P=delim)"|.*)'
    r'|"(?:\\.|[^"\\\n])*"|(?<![\w\'])\'(?:\\.|[^\'\\\n])*\'',
    re.S,
)


def _code_only(text: str) -> str:
    """`text` with its comments and string and character literals made spaces (newlines kept)."""
    return _COMMENT_OR_LITERAL.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), text)


_COMMENT_OR_LITERAL_BYTES = re.compile(_COMMENT_OR_LITERAL.pattern.encode(), re.S)


def _code_only_bytes(src: bytes) -> bytes:
    """`_code_only` of bytes, each byte of a comment or literal a space (offsets kept)."""
    return _COMMENT_OR_LITERAL_BYTES.sub(lambda m: re.sub(rb"[^\n]", b" ", m.group()), src)


_PREPROCESSOR_LINE = re.compile(rb"^[ \t]*#(?:\\\r?\n|[^\n])*", re.M)


def _used_in_functions(src: bytes, macro: str, facts: _Facts) -> bool:
    """Whether `macro` is used, and only inside the body of a function (not on a preprocessor line)."""
    if not macro:
        return False
    code = _PREPROCESSOR_LINE.sub(lambda m: b" " * len(m.group()), _code_only_bytes(src))
    uses = [m.start() for m in re.finditer(rb"\b" + re.escape(macro.encode()) + rb"\b", code)]
    bodies = [(b.start_byte, b.end_byte) for n in facts.definitions if n.type == "function_definition"
              and (b := n.child_by_field_name("body")) is not None]
    return bool(uses) and all(any(a < u < z for a, z in bodies) for u in uses)


# nvcc defines these in both of its passes over a program (`__CUDA_ARCH__` in the device pass,
# where kernel bodies are compiled). A library-mode build (Thrust, libcu++) must leave them
# undefined for the library's headers, which pick their host system by them; the program's own
# text then names the shim's stand-ins instead, so `#if __CUDA_ARCH__ >= 700` kernel bodies are
# still compiled (cuda_runtime.h defines the stand-ins).
_NVCC_IDENTITY = re.compile(r"\b(__CUDA_ARCH__|__CUDACC__|__NVCC__)\b")


def program_identity_macros(text: str) -> str:
    """`text` with nvcc's identity macros, where they are code (not comments or literals),
    renamed to the shim's stand-ins that a library-mode build defines for the program alone."""
    code = _code_only(text)
    if not _NVCC_IDENTITY.search(code):
        return text
    out, last = [], 0
    for m in _NVCC_IDENTITY.finditer(code):
        out.append(text[last:m.start()])
        out.append(f"__CUDASHIM_PROGRAM{m.group(1)[1:]}")
        last = m.end()
    out.append(text[last:])
    return "".join(out)
