"""Warp-lockstep copies of barrier-free kernels, so loops run across threads as a GPU runs them.

The emulator runs the threads of a block one after another, each through its whole body. When
every thread loops over the same rows (a column walk, an untiled matrix product, a chain of
FMAs), that order walks memory with a large stride and leaves the CPU's vector lanes idle. On a
GPU the 32 lanes of a warp take each iteration together.

For a kernel that can never wait at a barrier, this module writes a second C++ function that
runs a block the way a warp does: 32 threads (*lanes*) at a time, one statement for all lanes
before the next (the MCUDA/COX "thread loop" transformation, restricted to what can be proved
safe here):

- a local variable becomes an array with one element per lane (scalar expansion), unless it is
  *uniform*: never assigned again and computed from parameters, constants and block indices, in
  which case one copy serves every lane;
- a `for` loop whose bounds and step are uniform stays a loop, with the lanes inside it (the loop
  interchange that makes a column walk contiguous and a chain of FMAs a vector operation);
- a loop whose trip count differs between threads (grid-stride, `while`) runs under a mask of the
  lanes still looping; `break` and `continue` clear a lane's bit in the loop's mask or in this
  iteration's;
- `if (cond) return;` clears the lane's bit in an *alive* mask; an `if` on a thread-dependent
  condition around such a loop runs both branches under per-lane masks;
- every other statement runs once per live lane, in order, unchanged (a `switch`, a call, a
  `do` loop); a `return`, `break` or `continue` that leaves it clears the lane's bit;
- a statement that only computes a local from locals, constants and pure math runs for all 32
  lanes without a mask, so the compiler vectorises it.

Threads of a block that never synchronise may run in any interleaving on a GPU, so any per-lane
statement order is a legal execution: for a correct program the outputs are the same bits.
A kernel that uses anything outside this subset (shared memory, `goto`, lambdas, `auto`
locals, a parameter it assigns, a macro that names one of its locals, `assert`, whose message
would quote the copy's text, anything that may wait for another thread, ...) simply gets no copy and
runs as before. Each generated line carries a `#line` of the statement it comes from, so
`__LINE__`, sanitizer reports and debuggers point at the user's source. A build that fails in
a copy (its name starts with COPY_PREFIX) is redone without copies (`toolchain.compile_program`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tree_sitter import Node

from validators.cpu.device_semantics import ASSIGNING_WRAPPERS, pure_wrapper
from validators.cpu.syntax import text as _text
from validators.cpu.syntax import walk as _walk

LANES = "__W"  # lanes run together: a constant of each body (below), so arrays are `x[__W]`
WARP = 32
# A block whose thread count is a multiple of this runs 4 warps at a time: threads of one block
# that walk the same rows or columns (a block of 32x32 threads each summing its column) then
# read each cache line once per 4 warps, not once per warp, in a walk whose stride keeps
# nothing cached between warps. Smaller blocks run a warp at a time, and so does a kernel with
# a loop whose lanes may part ways (`continue`, `break`, `return`, a per-lane trip count): a
# warp whose lanes all left an iteration skips the rest of it, which a chunk of 4 warps, one
# of them still in it, cannot (CUDABench's transposed convolution: 2x slower in 4-warp chunks).
WIDE = 128
# The three speed-ups of issue 27 (a full warp's loop without per-lane tests, math shared by a
# warp whose inputs are equal, 4 warps per chunk); all on. `benchmarks/bench_row_stats.py`
# turns them off in its own process to print the figures before and after side by side.
SPEEDUPS = {"full_mask": True, "shared_math": True, "wide_blocks": True}
COPY_PREFIX = "__cudashim_ls_"  # a copy's name: the kernel's, after this
FULL = "true"  # the mask of code that runs only when every lane is live and on its branch

# Math that reads nothing but its arguments, cannot trap, and leaves no trace: a statement made
# of these may run for lanes that are not live (its result is dropped), so it vectorises.
PURE_FUNCTIONS = frozenset(
    """fmaf fma fmaxf fminf fmax fmin fabsf fabs sqrtf sqrt rsqrtf rsqrt cbrtf cbrt expf exp
    exp2f exp2 expm1f expm1 __expf logf log __logf log2f log2 __log2f log10f log10 log1pf log1p
    sinf sin cosf cos tanf tan __sinf __cosf __tanf tanhf tanh sinhf sinh coshf cosh asinf asin
    acosf acos atanf atan atan2f atan2 powf pow __powf floorf floor ceilf ceil truncf trunc
    roundf round rintf rint nearbyintf nearbyint copysignf copysign hypotf hypot erff erf erfcf
    erfc min max abs labs llabs fdividef __fdividef __saturatef __frcp_rn __fsqrt_rn __fmaf_rn
    __fmul_rn __fadd_rn __fsub_rn __dmul_rn __dadd_rn __fma_rn __float2int_rn __float2int_rz
    __int2float_rn __uint2float_rn __float2uint_rn __double2float_rn __float2half __half2float
    __popc __popcll __clz __clzll __ffs __ffsll __brev __umulhi __mulhi __mul24 __umul24 signbit
    isnan isinf isfinite make_float2 make_float3 make_float4 make_int2 make_int3 make_int4
    make_uint2 make_uint3 make_uint4 make_double2 make_double3 make_double4""".split()
)
# Pure math that is a library call, not an instruction or two: worth computing once for a warp
# whose lanes hold equal inputs (checking them costs about one compare per lane and input).
COSTLY_FUNCTIONS = frozenset(
    """expf exp exp2f exp2 expm1f expm1 __expf logf log __logf log2f log2 __log2f log10f log10
    log1pf log1p sinf sin cosf cos tanf tan __sinf __cosf __tanf tanhf tanh sinhf sinh coshf cosh
    asinf asin acosf acos atanf atan atan2f atan2 powf pow __powf cbrtf cbrt hypotf hypot erff erf
    erfcf erfc""".split()
)
# What a thread uses to wait for another thread of its block (a lock, a flag it polls). Lanes
# that run a statement in turn would wait forever for a lane whose release comes in a later
# statement (as on GPUs before independent thread scheduling), so such a kernel keeps the
# thread loop, which runs each thread to its end.
SPIN_WORDS = frozenset(
    """atomicCAS atomicCAS_system atomicCAS_block atomicExch atomicExch_system atomicExch_block
    volatile __threadfence __threadfence_block __threadfence_system __nanosleep atomic_ref
    atomic_thread_fence""".split()
)
WAITS_REASON = "may wait for another thread (locks, fences, polling)"
_BY_VALUE = frozenset({"printf", "assert", "malloc", "free", "memcpy", "memset"})
_BLOCK_NAMES = {"blockIdx": "__bI", "blockDim": "__bD", "gridDim": "__gD"}
_SCALAR_TYPES = ("primitive_type", "sized_type_specifier", "type_identifier", "qualified_identifier")
_LOOPS = ("for_statement", "while_statement", "do_statement", "for_range_loop")
_REJECTED_NODES = frozenset(
    {"goto_statement", "labeled_statement", "lambda_expression", "gnu_asm_expression",
     "asm_statement", "try_statement", "throw_statement", "co_return_statement",
     "co_await_expression", "co_yield_statement", "for_range_loop",
     "structured_binding_declarator", "kernel_call_syntax"}
)
_REJECTED_WORDS = frozenset({"__shared__", "static", "thread_local", "asm", "__asm__", "alloca", "goto",
                             "assert", "decltype", "typeof", "__typeof__", "setjmp", "longjmp"})
_CONTROL_WORDS = frozenset({"return", "break", "continue", "goto", "__syncthreads"})
# Names every kernel may use that read nothing thread-specific.
_BUILTIN_NAMES = frozenset({"blockIdx", "blockDim", "gridDim", "threadIdx", "warpSize", "nullptr",
                            "NULL", "true", "false", "this"})
_WORD = re.compile(r"[A-Za-z_]\w*")
# A macro body that is more than an expression: it declares, assigns or ends a statement.
_STATEMENT_LIKE = re.compile(r"[;{}]|(?<![=!<>+\-*/%&|^])=(?!=)|\+\+|--|[+\-*/%&|^]=|<<=|>>=")
_NONZERO_INT = re.compile(r"(0[xX][0-9a-fA-F]*[1-9a-fA-F][0-9a-fA-F]*|[1-9][0-9]*|0[0-7]*[1-7][0-7]*)[uUlL]*")


class Unsupported(Exception):
    """The kernel uses something the lockstep copy does not handle: it keeps the plain path."""


@dataclass
class FileFacts:
    """What the whole translation unit says about names a kernel may use."""

    uniform: set[str] = field(default_factory=set)  # constants: macros, enumerators, const globals
    macro_words: dict[str, set[str]] = field(default_factory=dict)  # macro -> words of its body
    definitions: dict[str, int] = field(default_factory=dict)  # function name -> definitions
    ref_params: set[str] = field(default_factory=set)  # functions with a non-const reference parameter
    spinning: set[str] = field(default_factory=set)  # functions that may wait for another thread
    known: set[str] = field(default_factory=set)  # every name declared at file scope here
    statement_macros: set[str] = field(default_factory=set)  # macros that declare, assign or branch


def _is_const_literal_text(text: str, uniform: set[str]) -> bool:
    # numbers first, so the suffixes of `0.5f` and `1024u` are not taken for names
    words = set(_WORD.findall(re.sub(r"(?<![\w.])\.?\d[\w.]*", " ", text)))
    return all(w in uniform or w in ("sizeof", "int", "unsigned", "float", "double", "long", "size_t")
               or re.fullmatch(r"[0-9]\w*", w) for w in words) and not re.search(r"[\[\]{};=]|->", text)


def file_facts(root: Node, src: bytes) -> FileFacts:
    facts = FileFacts()
    macros: list[tuple[str, str]] = []
    bodies: dict[str, set[str]] = {}
    # The file's own top level, by node id: `Node.parent` walks down from the root every time
    # (quadratic on a deeply nested file).
    top = {c.id for c in root.children} if root.type == "translation_unit" else set()
    for node in _walk(root):
        t = node.type
        if t == "preproc_def":
            name, value = node.child_by_field_name("name"), node.child_by_field_name("value")
            if name is not None:
                v = _text(src, value) if value is not None else ""
                facts.macro_words[_text(src, name)] = set(_WORD.findall(v))
                macros.append((_text(src, name), v))
                if _STATEMENT_LIKE.search(v):
                    facts.statement_macros.add(_text(src, name))
        elif t == "preproc_function_def":
            name, value = node.child_by_field_name("name"), node.child_by_field_name("value")
            if name is not None:
                v = _text(src, value) if value is not None else ""
                facts.macro_words[_text(src, name)] = set(_WORD.findall(v))
                if _STATEMENT_LIKE.search(v):
                    facts.statement_macros.add(_text(src, name))
        elif t == "enumerator":
            name = node.child_by_field_name("name")
            if name is not None:
                facts.uniform.add(_text(src, name))
        elif t == "function_definition":
            decl = node.child_by_field_name("declarator")
            while decl is not None and decl.type != "function_declarator":
                decl = decl.child_by_field_name("declarator")
            if decl is not None:
                ident = decl.child_by_field_name("declarator")
                if ident is not None:
                    name = _text(src, ident).split("::")[-1]
                    facts.definitions[name] = facts.definitions.get(name, 0) + 1
                    body = node.child_by_field_name("body")
                    if body is not None:
                        bodies.setdefault(name, set()).update(_WORD.findall(_text(src, body)))
                    params = decl.child_by_field_name("parameters")
                    for p in params.named_children if params is not None else []:
                        if any(m.type == "reference_declarator" for m in _walk(p)) and not \
                                re.match(r"\s*const\b", _text(src, p)):
                            facts.ref_params.add(name)
        elif t == "declaration" and node.id in top:
            # A file-scope constant (`const int N = 64;`, `__constant__ float k;` is written by
            # the host only): the same value in every thread while a kernel runs.
            words = _text(src, node).split("=", 1)[0]
            if re.search(r"\b(const|constexpr|__constant__)\b", words):
                for d in node.children_by_field_name("declarator"):
                    target = d.child_by_field_name("declarator") if d.type == "init_declarator" else d
                    if target is not None and target.type == "identifier":
                        facts.uniform.add(_text(src, target))
    facts.known = set(facts.macro_words) | set(facts.definitions) | set(facts.uniform)
    for node in root.children:
        if node.type in ("declaration", "type_definition", "struct_specifier", "class_specifier",
                         "alias_declaration", "enum_specifier", "union_specifier"):
            facts.known.update(_text(src, m) for m in _walk(node)
                               if m.type in ("identifier", "type_identifier", "field_identifier"))
    for name, words in facts.macro_words.items():
        bodies.setdefault(name, set()).update(words)
    facts.spinning = set(SPIN_WORDS)
    changed = True
    while changed:
        changed = False
        for name, words in bodies.items():
            if name not in facts.spinning and words & facts.spinning:
                facts.spinning.add(name)
                changed = True
    # Object-like macros that are constant expressions (to a fixpoint: one may name another).
    changed = True
    while changed:
        changed = False
        for name, value in macros:
            if name not in facts.uniform and value.strip() and _is_const_literal_text(value, facts.uniform):
                facts.uniform.add(name)
                changed = True
    return facts


def _kernel_name(node: Node, src: bytes) -> str | None:
    decl = node.child_by_field_name("declarator")
    if decl is None or decl.type != "function_declarator":
        return None
    ident = decl.child_by_field_name("declarator")
    if ident is None or ident.type != "identifier":
        return None
    return _text(src, ident)


def _declared_names(decl: Node, src: bytes) -> list[str]:
    """The names a declaration introduces (not those its initialisers or array sizes use)."""
    names = []
    for d in decl.children_by_field_name("declarator"):
        while d is not None and d.type != "identifier":
            d = d.child_by_field_name("declarator")
        if d is not None:
            names.append(_text(src, d))
    return names


def _escaping(node: Node) -> bool:
    """A break or continue inside node that targets a loop or switch outside it."""

    def visit(n: Node, in_loop: bool, in_switch: bool) -> bool:
        if n.type == "break_statement" and not (in_loop or in_switch):
            return True
        if n.type == "continue_statement" and not in_loop:
            return True
        if n.type in _LOOPS:
            return any(visit(c, True, in_switch) for c in n.children)
        if n.type == "switch_statement":
            return any(visit(c, in_loop, True) for c in n.children)
        return any(visit(c, in_loop, in_switch) for c in n.children)

    return visit(node, False, False)


class _Kernel:
    """Writes the lockstep copy of one kernel; raises Unsupported when it cannot."""

    def __init__(self, node: Node, src: bytes, facts: FileFacts, name: str, filename: str) -> None:
        self.node, self.src, self.facts, self.name = node, src, facts, name
        self.filename = filename.replace("\\", "\\\\").replace('"', '\\"')
        self.line = node.start_point[0] + 1
        self.body = node.child_by_field_name("body")
        self.lines: list[str] = []
        self.depth = 1
        self.scopes: list[dict[str, str]] = []
        # loops run across lanes, innermost last: (mask of this iteration, mask of the loop)
        self.loops: list[tuple[str, str]] = []
        self.counter = 0
        self.has_loop = False
        self.assigned: set[str] = set()
        self.params: list[str] = []
        # inside the copy of a loop body kept for a partial mask: a loop in it is never full
        self.partial = 0
        self.uses_same = False
        # a loop whose lanes may part ways (break, continue, return, a per-lane trip count)
        self.diverges = False

    # ------------------------------------------------------------ facts about the kernel
    def check(self) -> None:
        if self.body is None:
            raise Unsupported("no body")
        for n in _walk(self.body):
            if n.type in _REJECTED_NODES:
                raise Unsupported(n.type)
            if n.is_error or n.is_missing:
                # text the grammar could not place: the copy would be built from a guess
                raise Unsupported("a syntax tree with errors")
            if n.child_count == 0 and _text(self.src, n) in _REJECTED_WORDS:
                raise Unsupported(_text(self.src, n))
            if n.type == "assignment_expression":
                self._note_assigned(n.child_by_field_name("left"))
            elif n.type == "update_expression":
                self._note_assigned(n.child_by_field_name("argument"))
            elif n.type == "pointer_expression" and n.children and _text(self.src, n.children[0]) == "&":
                self._note_assigned(n.child_by_field_name("argument"))
            elif n.type == "call_expression" and not self._by_value(n.child_by_field_name("function")):
                # a reference parameter of the callee could assign the argument; the rewrite's
                # `a /= b` (`gpu_div_assign(a, b)`) assigns `a` alone
                args = n.child_by_field_name("arguments")
                named = args.named_children if args is not None else []
                fn = n.child_by_field_name("function")
                if fn is not None and _text(self.src, fn) in ASSIGNING_WRAPPERS:
                    named = named[:1]
                for a in named:
                    self._note_assigned(a)
        decl = self.node.child_by_field_name("declarator")
        plist = decl.child_by_field_name("parameters") if decl is not None else None
        if plist is None:
            raise Unsupported("no parameter list")
        for p in plist.named_children:
            if p.type == "comment":
                continue
            if p.type != "parameter_declaration":
                raise Unsupported("variadic or unusual parameter")
            ident = [n for n in _walk(p) if n.type == "identifier"]
            d = p.child_by_field_name("declarator")
            if d is None:
                continue
            while d is not None and d.type not in ("identifier",):
                if d.type in ("reference_declarator", "array_declarator", "function_declarator"):
                    raise Unsupported("parameter declarator")
                d = d.child_by_field_name("declarator") if d.type != "reference_declarator" else None
            if d is None:
                if ident:
                    raise Unsupported("parameter declarator")
                continue
            self.params.append(_text(self.src, d))
        if set(self.params) & self.assigned:
            raise Unsupported("assigns a parameter")
        # A macro whose body names a local or parameter would bypass the renaming.
        declared = {name for n in _walk(self.body) if n.type == "declaration"
                    for name in _declared_names(n, self.src)}
        words = {_text(self.src, n) for n in _walk(self.body) if n.type == "identifier"}
        for w in words:
            body_words = self.facts.macro_words.get(w)
            if body_words and body_words & (declared | set(self.params) | {"threadIdx"} | _CONTROL_WORDS):
                raise Unsupported(f"macro {w} names a local or leaves the statement")
            if w in self.facts.statement_macros:
                raise Unsupported(f"macro {w} is a statement")

    def _by_value(self, fn: Node | None) -> bool:
        """A callee known to take every argument by value: pure math, the CUDA built-ins
        (`__*`, `atomic*`), printf and friends, or a function of this file without a reference
        parameter."""
        if self._pure_callee(fn):
            return True
        if fn is None or fn.type != "identifier":
            return False
        name = _text(self.src, fn)
        if name in _BY_VALUE or name.startswith(("__", "atomic")):
            return True
        return name in self.facts.definitions and name not in self.facts.ref_params

    def _note_assigned(self, n: Node | None) -> None:
        while n is not None and n.type in ("parenthesized_expression",):
            n = n.named_children[0] if n.named_children else None
        if n is None:
            return
        if n.type == "identifier":
            self.assigned.add(_text(self.src, n))
        elif n.type == "field_expression":
            # `v.x = ...` assigns v; `p->x = ...` writes memory, not p
            op = n.children[1] if len(n.children) > 1 else None
            if op is not None and _text(self.src, op) == ".":
                self._note_assigned(n.child_by_field_name("argument"))

    # ------------------------------------------------------------ names
    def kind(self, name: str) -> str | None:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        if name in self.params or name in self.facts.uniform:
            return "U"
        return None

    def declare(self, name: str, kind: str) -> None:
        if self.kind(name) is not None or name in _BLOCK_NAMES or name == "threadIdx":
            raise Unsupported(f"{name} shadows a name")
        self.scopes[-1][name] = kind

    # ------------------------------------------------------------ expressions
    def uniform(self, n: Node) -> bool:
        """Same value in every thread, and safe to compute for a block whose threads all left."""
        return self._value_only(n, ("U",), thread=False)

    def pure(self, n: Node) -> bool:
        """Reads only locals, parameters (not through them), constants and the thread index, and
        calls only pure math: may run for a lane that is not live."""
        return self._value_only(n, ("U", "E"), thread=True)

    def _value_only(self, n: Node, kinds: tuple[str, ...], thread: bool, loads: bool = False) -> bool:
        """n reads no memory, calls nothing but pure math, cannot trap, and names only names of
        these kinds (and the thread index when `thread`); with `loads`, it may also read memory
        (`p[i]`, `*p`, `p->x`) but still writes nothing and takes no address."""
        t = n.type
        if t in ("number_literal", "true", "false", "char_literal", "null", "nullptr", "comment",
                 "sizeof_expression"):
            return True
        if t == "identifier":
            name = _text(self.src, n)
            return self.kind(name) in kinds or name == "warpSize"
        if t == "field_expression":
            arg, fld = n.child_by_field_name("argument"), n.child_by_field_name("field")
            op = _text(self.src, n.children[1]) if len(n.children) > 1 else ""
            if arg is None or fld is None or op not in (".", "->") or (op == "->" and not loads):
                return False  # `p->x` reads memory
            builtins = (*_BLOCK_NAMES, "threadIdx") if thread else tuple(_BLOCK_NAMES)
            if arg.type == "identifier" and _text(self.src, arg) in (*_BLOCK_NAMES, "threadIdx"):
                return _text(self.src, arg) in builtins and _text(self.src, fld) in ("x", "y", "z")
            return self._value_only(arg, kinds, thread, loads)
        if t == "binary_expression":
            op = _text(self.src, n.child_by_field_name("operator"))
            if op in ("/", "%") and not self._safe_divisor(n.child_by_field_name("right")):
                return False
            return all(self._value_only(n.child_by_field_name(f), kinds, thread, loads) for f in ("left", "right"))
        if loads and t in ("subscript_expression", "subscript_argument_list"):
            return all(self._value_only(c, kinds, thread, loads) for c in n.named_children)
        if loads and t == "pointer_expression" and _text(self.src, n.children[0]) == "*":
            arg = n.child_by_field_name("argument")
            return arg is not None and self._value_only(arg, kinds, thread, loads)
        if t in ("unary_expression", "parenthesized_expression", "conditional_expression"):
            return all(self._value_only(c, kinds, thread, loads) for c in n.named_children)
        if t == "cast_expression":
            v = n.child_by_field_name("value")
            return v is not None and self._value_only(v, kinds, thread, loads)
        if t == "call_expression":
            args = n.child_by_field_name("arguments")
            return (self._pure_callee(n.child_by_field_name("function")) and args is not None
                    and all(self._value_only(a, kinds, thread, loads) for a in args.named_children))
        return False

    def _safe_divisor(self, n: Node | None) -> bool:
        """An integer division that cannot trap whichever lanes compute it."""
        if n is None:
            return False
        while n.type == "parenthesized_expression" and n.named_children:
            n = n.named_children[0]
        if n.type == "number_literal":
            text = _text(self.src, n)
            return bool(_NONZERO_INT.fullmatch(text)) or ("." in text and text.strip("0.fF") != "")
        if n.type == "field_expression":
            arg = n.child_by_field_name("argument")
            return arg is not None and _text(self.src, arg) in ("blockDim", "gridDim")
        return False

    def expr(self, n: Node) -> str:
        """n's text with each expanded local indexed by lane and the built-in indices replaced."""
        edits: list[tuple[int, int, str]] = []
        stack = [(n, False, False)]  # node, inside a loop of n, inside a switch of n
        while stack:
            m, in_loop, in_switch = stack.pop()
            if m.type in ("break_statement", "continue_statement") and not in_loop and \
                    not (m.type == "break_statement" and in_switch):
                # leaves the statement: it targets the innermost loop run across lanes
                edits.append((m.start_byte, m.end_byte, "{ " + self._leave(m.type, "__l") + "goto __LANE_NEXT; }"))
                continue
            if m.type == "field_expression":
                arg, fld = m.child_by_field_name("argument"), m.child_by_field_name("field")
                if arg is not None and fld is not None and arg.type == "identifier" \
                        and _text(self.src, arg) == "threadIdx":
                    f = _text(self.src, fld)
                    repl = {"x": "__tx[__l]", "y": "__ty[__l]", "z": "__tz[__l]"}.get(f)
                    if repl is None:
                        raise Unsupported("threadIdx field")
                    edits.append((m.start_byte, m.end_byte, repl))
                    continue
            if m.type == "identifier":
                name = _text(self.src, m)
                if name == "threadIdx":
                    edits.append((m.start_byte, m.end_byte, "::uint3{__tx[__l], __ty[__l], __tz[__l]}"))
                elif name in _BLOCK_NAMES and self.kind(name) is None:
                    edits.append((m.start_byte, m.end_byte, _BLOCK_NAMES[name]))
                elif self.kind(name) == "E":
                    edits.append((m.start_byte, m.end_byte, f"{name}[__l]"))
                continue
            if m.type == "comment":
                edits.append((m.start_byte, m.end_byte, " "))  # a `//` would swallow the joined line
                continue
            if m.type == "preproc_call":
                if not self._is_pragma(m):
                    raise Unsupported("preprocessor directive in a kernel")
                edits.append((m.start_byte, m.end_byte, " "))
                continue
            if m.type.startswith("preproc_"):
                raise Unsupported("preprocessor directive in a kernel")
            if m.type == "return_statement":
                if m.named_children:
                    raise Unsupported("return with a value")
                edits.append((m.start_byte, m.end_byte, "{ __a[__l] = false; goto __LANE_NEXT; }"))
                continue
            if m.type in ("declaration", "parameter_declaration"):
                # a local of the statement itself (inside a per-lane loop): it must not shadow
                for name in _declared_names(m, self.src):
                    if self.kind(name) is not None or name in _BLOCK_NAMES or name == "threadIdx":
                        raise Unsupported(f"a local {name} shadows a name")
            loop = in_loop or m.type in _LOOPS
            switch = in_switch or m.type == "switch_statement"
            stack.extend((c, loop, switch) for c in m.children)
        out = self.src[n.start_byte : n.end_byte]
        for start, end, repl in sorted(edits, reverse=True):
            out = out[: start - n.start_byte] + repl.encode() + out[end - n.start_byte :]
        text = out.decode("utf-8", "replace")
        # keep the generated function's lines few and its #line mapping simple
        return " ".join(text.replace("\\\n", " ").split("\n")) if "\n" in text else text

    # ------------------------------------------------------------ statements
    def emit(self, line: str) -> None:
        self.lines.append(f'#line {self.line} "{self.filename}"')
        self.lines.append("  " * self.depth + line)

    def lane_loop(self, stmt_text: str, mask: str, pure: bool, calls: bool, returns: bool,
                  group: bool = False) -> None:
        label = ""
        if returns:
            self.counter += 1
            label = f"__ls_next_{self.counter}"
            stmt_text = stmt_text.replace("__LANE_NEXT", label)
        tls = "threadIdx = ::uint3{__tx[__l], __ty[__l], __tz[__l]}; " if calls else ""
        if (pure and mask == "__a[__l]") or mask == FULL:
            body = f"{tls}{stmt_text}"
        else:
            body = f"if (!({mask})) continue; {tls}{stmt_text}"
        if label:
            body += f" {label}:;"
        lanes = f"int __l = __g; __l < __g + {WARP}" if group else f"int __l = 0; __l < {LANES}"
        self.emit(f"for ({lanes}; ++__l) {{ {body} }}")

    def _calls(self, n: Node) -> bool:
        """Whether n may read `threadIdx` where the copy cannot rename it: it calls a function
        (not pure math), or names something this file does not declare (a macro of an included
        header such as `#define TID (blockIdx.x * blockDim.x + threadIdx.x)`). Then the lane's
        index is stored in `threadIdx` first."""
        stack = [n]
        while stack:
            m = stack.pop()
            if m.type == "call_expression":
                if not self._pure_callee(m.child_by_field_name("function")):
                    return True
                args = m.child_by_field_name("arguments")
                stack.extend(args.children if args is not None else [])
                continue
            if m.type in ("new_expression", "delete_expression"):
                return True
            if m.type == "identifier":
                name = _text(self.src, m)
                if self.kind(name) is None and name not in self.facts.known and name not in _BUILTIN_NAMES:
                    return True
            if m.type in ("template_argument_list", "type_descriptor"):
                continue
            stack.extend(m.children)
        return False

    def _pure_callee(self, fn: Node | None) -> bool:
        """`fmaf`, `::fmaf`, `std::max<float>`, `static_cast<float>`: math with no side effects;
        and the wrappers the rewrite puts around shift amounts and cast operands."""
        if fn is None:
            return False
        if fn.type == "qualified_identifier" and pure_wrapper(_text(self.src, fn)):
            return True
        if fn.type == "qualified_identifier":
            scope = fn.child_by_field_name("scope")
            if scope is not None and _text(self.src, scope) != "std":
                return False
            return self._pure_callee(fn.child_by_field_name("name"))
        if fn.type == "template_function":
            name = fn.child_by_field_name("name")
            return name is not None and (_text(self.src, name) in PURE_FUNCTIONS or
                                         _text(self.src, name) == "static_cast")
        return fn.type == "identifier" and _text(self.src, fn) in PURE_FUNCTIONS

    def _is_pragma(self, n: Node) -> bool:
        d = n.child_by_field_name("directive")
        return d is not None and _text(self.src, d).strip() == "#pragma"

    def _has_return(self, n: Node) -> bool:
        """Whether the statement needs a label to jump to (a return, or a break/continue that
        leaves it)."""
        return any(m.type == "return_statement" for m in _walk(n)) or _escaping(n)

    def _leave(self, kind: str, lane: str) -> str:
        """Statements that take lane `lane` out of the innermost loop run across lanes for the
        rest of this iteration (continue) or for good (break)."""
        if not self.loops:
            raise Unsupported("break/continue outside a loop")
        cont, brk = self.loops[-1]
        out = f"{cont}[{lane}] = false; "
        if kind == "break_statement":
            out += f"{brk}[{lane}] = false; "
        return out

    def lane_statement(self, n: Node, mask: str) -> None:
        if _escaping(n) and not self.loops:
            raise Unsupported("break/continue leaves a loop over lanes")
        pure = False
        if n.type == "expression_statement" and n.named_children:
            e = n.named_children[0]
            if e.type == "assignment_expression":
                left, right = e.child_by_field_name("left"), e.child_by_field_name("right")
                pure = self._local_target(left) and self.pure(right)
                op = e.child_by_field_name("operator")
                if self._local_target(left) and op is not None and \
                        self.shared_once(left, _text(self.src, op), right, mask):
                    return
            elif e.type == "update_expression":
                pure = self._local_target(e.child_by_field_name("argument"))
        self.lane_loop(self.expr(n), mask, pure, self._calls(n), self._has_return(n))

    def _costly_call(self, n: Node) -> bool:
        if n.type != "call_expression":
            return False
        fn = n.child_by_field_name("function")
        while fn is not None and fn.type in ("qualified_identifier", "template_function"):
            fn = fn.child_by_field_name("name")
        return fn is not None and _text(self.src, fn) in COSTLY_FUNCTIONS

    def shared_once(self, left: Node, op: str, right: Node, mask: str) -> bool:
        """Emit `left op right` for a `right` that calls costly math (`expf`, `logf`, ...) and writes
        nothing, so that when every lane of a warp holds the same bytes in each local `right`
        reads, `right` is computed once and its value given to every lane of the warp; otherwise
        per lane as usual. Threads that each
        recompute a statistic of their row (softmax: the row's maximum and sum of exponentials,
        which all 32 lanes of a row share) then pay for one call per warp, not 32; an
        expression of equal inputs that writes nothing has equal results, so every lane gets
        the bits it would have computed. False (nothing emitted) when `right` calls nothing worth sharing."""
        if not SPEEDUPS["shared_math"] or self._calls(right) or \
                not any(self._costly_call(m) for m in _walk(right)):
            return False
        # Memory is read only where every lane is live (a dead lane's address may be out of
        # bounds); the statement writes only its local, so lanes reading one address in turn
        # read the same value.
        if not self.pure(right) and not (mask == FULL and self._value_only(right, ("U", "E"), True, loads=True)):
            return False
        rhs = self.expr(right)
        inputs = sorted(set(re.findall(r"\b([A-Za-z_]\w*)\[__l\]", rhs)))
        once = rhs.replace("[__l]", "[__g]")
        if not inputs or re.search(r"\b__l\b", once):
            return False
        lhs = self.expr(left)
        self.counter += 1
        same, value = f"__s{self.counter}", f"__v{self.counter}"
        equal = " && ".join(f"__same({x}[__l], {x}[__g])" for x in inputs)
        self.uses_same = True
        # one warp at a time: a chunk of 4 warps may span 4 rows
        self.emit(f"for (int __g = 0; __g < {LANES}; __g += {WARP}) {{")
        self.emit(f"bool {same} = true; for (int __l = __g + 1; __l < __g + {WARP}; ++__l) {same} &= ({equal});")
        self.emit(f"if ({same}) {{ const auto {value} = ({once});")
        self.lane_loop(f"{lhs} {op} {value};", mask, True, False, False, group=True)
        self.emit("} else")
        self.lane_loop(f"{lhs} {op} {rhs};", mask, True, False, False, group=True)
        self.emit("}")
        return True

    def _local_target(self, n: Node | None) -> bool:
        if n is None:
            return False
        if n.type == "identifier":
            return self.kind(_text(self.src, n)) == "E"
        if n.type == "field_expression":
            op = _text(self.src, n.children[1]) if len(n.children) > 1 else ""
            return op == "." and self._local_target(n.child_by_field_name("argument"))
        return False

    def statement(self, n: Node, mask: str) -> None:
        self.line = n.start_point[0] + 1
        t = n.type
        if t == "comment" or (t == "expression_statement" and not n.named_children):
            return
        if t == "preproc_call" and self._is_pragma(n):
            return  # `#pragma unroll` and the like tune nvcc's code, not what it computes
        if t == "compound_statement":
            self.emit("{")
            self.depth += 1
            self.scopes.append({})
            for c in n.named_children:
                self.statement(c, mask)
            self.scopes.pop()
            self.depth -= 1
            self.emit("}")
        elif t == "declaration":
            self.declaration(n, mask)
        elif t == "expression_statement":
            self.lane_statement(n, mask)
        elif t == "return_statement":
            if n.named_children:
                raise Unsupported("return with a value")
            self.emit(f"for (int __l = 0; __l < {LANES}; ++__l) if ({mask}) __a[__l] = false;")
        elif t in ("break_statement", "continue_statement"):
            self.emit(f"for (int __l = 0; __l < {LANES}; ++__l) if ({mask}) {{ {self._leave(t, '__l')}}}")
        elif t == "if_statement":
            self.if_statement(n, mask)
        elif t == "for_statement" and self.uniform_for(n):
            self.for_statement(n, mask)
        elif t in ("for_statement", "while_statement") and self.divergent_loop_ok(n):
            self.divergent_loop(n, mask)
        elif t in ("for_statement", "while_statement", "do_statement", "switch_statement"):
            self.lane_statement(n, mask)
        else:
            raise Unsupported(t)

    def declaration(self, n: Node, mask: str) -> None:
        for c in n.children:
            if c.type in ("storage_class_specifier", "attribute_specifier", "ms_declspec_modifier"):
                raise Unsupported("storage class")
        type_node = n.child_by_field_name("type")
        if type_node is None or type_node.type not in _SCALAR_TYPES:
            raise Unsupported("declaration type")
        if type_node.type in ("type_identifier", "qualified_identifier") and \
                _text(self.src, type_node) in ("auto", "decltype"):
            raise Unsupported("auto")
        quals = [_text(self.src, c) for c in n.children if c.type == "type_qualifier"]
        if "volatile" in quals:
            raise Unsupported("volatile local")
        for d in n.children_by_field_name("declarator"):
            value = None
            target = d
            if d.type == "init_declarator":
                target, value = d.child_by_field_name("declarator"), d.child_by_field_name("value")
            stars = ""
            while target is not None and target.type == "pointer_declarator":
                # top-level const of a pointer is dropped with the rest (arrays are assigned)
                inner = [_text(self.src, c) for c in target.children if c.type == "type_qualifier"]
                stars += "*" + "".join(f" {q}" for q in inner if q != "const") + " "
                target = target.child_by_field_name("declarator")
            if target is None or target.type != "identifier":
                raise Unsupported("declarator")
            # The array is assigned lane by lane, so a `const` that applies to the variable goes
            # (`const int i`); one that applies to what a pointer points to stays (`const float* p`).
            base_quals = [q for q in quals if q != "constexpr" and (stars or q != "const")]
            base = " ".join([*base_quals, _text(self.src, type_node)])
            if value is not None and value.type in ("initializer_list", "argument_list"):
                if stars:
                    raise Unsupported("initializer list")
            name = _text(self.src, target)
            uniform = (value is not None and value.type not in ("initializer_list", "argument_list")
                       and name not in self.assigned and self.uniform(value))
            if uniform:
                # Computed once for every lane: the original declaration, indices renamed.
                self.emit(f"{' '.join([*quals, _text(self.src, type_node)])} {stars}{name} = {self.expr(value)};")
                self.declare(name, "U")
                continue
            ptr_type = f"{base} {stars}".strip()
            self.emit(f"{ptr_type} {name}[{LANES}];")
            if value is None:
                self.declare(name, "E")
                continue
            if value.type == "initializer_list":
                init_text = f"{base}{self.expr(value)}"
                pure = all(self.pure(c) for c in value.named_children)
            elif value.type == "argument_list":
                init_text = f"{base}{self.expr(value)}"
                pure = all(self.pure(c) for c in value.named_children)
            else:
                pure = self.pure(value)
                init_text = ""
            self.declare(name, "E")
            if not init_text:
                if self.shared_once(target, "=", value, mask):
                    continue
                init_text = self.expr(value)
            self.lane_loop(f"{name}[__l] = {init_text};", mask, pure, self._calls(value), False)

    def if_statement(self, n: Node, mask: str) -> None:
        cond_clause = n.child_by_field_name("condition")
        cons, alt = n.child_by_field_name("consequence"), n.child_by_field_name("alternative")
        if cond_clause is None or cons is None:
            raise Unsupported("if")
        conds = [c for c in cond_clause.named_children if c.type != "comment"]
        if len(conds) != 1 or cond_clause.child_by_field_name("initializer") is not None:
            raise Unsupported("if with an initializer")
        cond = conds[0]
        if cond.type == "declaration":
            raise Unsupported("if with a declaration")
        if any(c.type == "constexpr" or _text(self.src, c) == "constexpr" for c in n.children):
            raise Unsupported("if constexpr")
        else_stmt = None
        if alt is not None:
            else_stmt = next((c for c in alt.named_children if c.type != "comment"), None)
        if _escaping(n) and not self.loops:
            raise Unsupported("break/continue outside a loop")
        if self.uniform(cond):
            self.emit(f"if ({self.expr(cond)})")
            self.statement_block(cons, mask)
            if else_stmt is not None:
                self.emit("else")
                self.statement_block(else_stmt, mask)
            return
        leave = self._leaving(cons) if else_stmt is None else None
        if leave is not None:
            # `if (cond) return;`, `if (cond) continue;`, `if (cond) break;`: clear mask bits
            action = "__a[__l] = false; " if leave == "return_statement" else self._leave(leave, "__l")
            tls = "threadIdx = ::uint3{__tx[__l], __ty[__l], __tz[__l]}; " if self._calls(cond) else ""
            self.emit(f"for (int __l = 0; __l < {LANES}; ++__l) {{ if (!({mask})) continue; "
                      f"{tls}if ({self.expr(cond)}) {{ {action}}} }}")
            return
        if not any(m.type == "for_statement" for m in _walk(n)):
            self.lane_statement(n, mask)
            return
        # A thread-dependent branch around a loop worth running across lanes: both branches run
        # under per-lane masks, taken once before either runs.
        self.counter += 1
        then_mask, else_mask = f"__m{self.counter}", f"__e{self.counter}"
        self.emit(f"bool {then_mask}[{LANES}], {else_mask}[{LANES}];")
        calls = self._calls(cond)
        tls = "threadIdx = ::uint3{__tx[__l], __ty[__l], __tz[__l]}; " if calls else ""
        self.emit(f"for (int __l = 0; __l < {LANES}; ++__l) {{ {then_mask}[__l] = false; {else_mask}[__l] = false; "
                  f"if (!({mask})) continue; {tls}{then_mask}[__l] = ({self.expr(cond)}); "
                  f"{else_mask}[__l] = !{then_mask}[__l]; }}")
        # The enclosing mask stays part of the branch's: a `break` or `continue` in the branch
        # clears a loop mask it names.
        self.statement_block(cons, f"({mask} && {then_mask}[__l])")
        if else_stmt is not None:
            self.statement_block(else_stmt, f"({mask} && {else_mask}[__l])")

    def statement_block(self, n: Node, mask: str) -> None:
        if n.type == "compound_statement":
            self.statement(n, mask)
            return
        self.emit("{")
        self.depth += 1
        self.scopes.append({})
        self.statement(n, mask)
        self.scopes.pop()
        self.depth -= 1
        self.emit("}")

    def _leaving(self, n: Node) -> str | None:
        """The kind of a statement that is only a `return;`, `break;` or `continue;`."""
        if n.type == "return_statement":
            return None if n.named_children else n.type
        if n.type in ("break_statement", "continue_statement"):
            return n.type if self.loops else None
        if n.type == "compound_statement":
            inner = [c for c in n.named_children if c.type != "comment"]
            return self._leaving(inner[0]) if len(inner) == 1 else None
        return None

    def uniform_for(self, n: Node) -> bool:
        init = n.child_by_field_name("initializer")
        cond = n.child_by_field_name("condition")
        update = n.child_by_field_name("update")
        body = n.child_by_field_name("body")
        if init is None or cond is None or update is None or body is None:
            return False
        if init.type != "declaration":
            return False
        decls = init.children_by_field_name("declarator")
        if len(decls) != 1 or decls[0].type != "init_declarator":
            return False
        var = decls[0].child_by_field_name("declarator")
        value = decls[0].child_by_field_name("value")
        if var is None or var.type != "identifier" or value is None or not self.uniform(value):
            return False
        type_node = init.child_by_field_name("type")
        if type_node is None or type_node.type not in ("primitive_type", "sized_type_specifier"):
            return False
        name = _text(self.src, var)
        if self.kind(name) is not None:
            return False
        self.scopes.append({name: "U"})
        try:
            ok = self.uniform(cond) and self._uniform_update(update, name)
        finally:
            self.scopes.pop()
        if not ok:
            return False
        # the loop variable is written only by the update
        for m in _walk(body):
            if m.type in ("assignment_expression", "update_expression"):
                target = m.child_by_field_name("left") or m.child_by_field_name("argument")
                if target is not None and target.type == "identifier" and _text(self.src, target) == name:
                    return False
            if m.type == "pointer_expression" and _text(self.src, m).replace(" ", "").startswith("&" + name):
                return False
        return True

    def _uniform_update(self, u: Node, var: str) -> bool:
        if u.type == "update_expression":
            arg = u.child_by_field_name("argument")
            return arg is not None and arg.type == "identifier" and _text(self.src, arg) == var
        if u.type == "assignment_expression":
            left, right = u.child_by_field_name("left"), u.child_by_field_name("right")
            return (left is not None and left.type == "identifier" and _text(self.src, left) == var
                    and right is not None and self.uniform(right))
        return False

    def for_statement(self, n: Node, mask: str) -> None:
        self.has_loop = True
        init = n.child_by_field_name("initializer")
        cond = n.child_by_field_name("condition")
        update = n.child_by_field_name("update")
        body = n.child_by_field_name("body")
        decl = init.children_by_field_name("declarator")[0]
        var = _text(self.src, decl.child_by_field_name("declarator"))
        type_text = " ".join(_text(self.src, c) for c in init.children
                             if c.type in ("type_qualifier", "primitive_type", "sized_type_specifier")
                             and _text(self.src, c) != "const")
        self.counter += 1
        live = f"__y{self.counter}"
        # Skip the loop when no lane takes it (a tail chunk past the end of the data).
        self.emit(f"bool {live} = false; for (int __l = 0; __l < {LANES}; ++__l) {live} |= bool({mask});")
        leaves = _escaping(body)
        if leaves:
            # lanes that left with `break` stay out; `continue` skips one iteration
            self.emit(f"bool __b{self.counter}[{LANES}]; "
                      f"for (int __l = 0; __l < {LANES}; ++__l) __b{self.counter}[__l] = bool({mask});")
        if leaves or any(m.type == "return_statement" for m in _walk(body)):
            self.diverges = True
        head = (f"for ({type_text} {var} = {self.expr(decl.child_by_field_name('value'))}; "
                f"{self.expr(cond)}; {self.expr(update)})")
        if SPEEDUPS["full_mask"] and not leaves and mask != FULL and not self.partial and \
                not any(m.type == "return_statement" for m in _walk(body)):
            # Nothing in the body can take a lane out of `mask`, so when every lane is in it
            # (all 32 threads alive and on this branch: the usual case) the body runs with no
            # per-lane test, which the compiler vectorises; the tests stay for a partial warp.
            full = f"__f{self.counter}"
            self.emit(f"bool {full} = true; for (int __l = 0; __l < {LANES}; ++__l) {full} &= bool({mask});")
            self.emit(f"if ({full})")
            self.scopes.append({var: "U"})
            self.emit(head)
            self.statement_block(body, FULL)
            self.scopes.pop()
            self.emit(f"else if ({live})")
            self.partial += 1
            self.scopes.append({var: "U"})
            self.emit(head)
            self.statement_block(body, mask)
            self.scopes.pop()
            self.partial -= 1
            return
        self.emit(f"if ({live})")
        self.scopes.append({var: "U"})
        self.emit(head)
        if leaves:
            self.loop_body(body, f"__b{self.counter}", f"__c{self.counter}")
        else:
            self.statement_block(body, mask)
        self.scopes.pop()

    def loop_body(self, body: Node, looping: str, this_iteration: str) -> None:
        """The body of a loop with a `break` or `continue` for some lanes: it runs under a mask
        of this iteration's lanes, taken from the loop's own mask at the top."""
        self.emit("{")
        self.depth += 1
        self.scopes.append({})
        self.emit(f"bool {this_iteration}[{LANES}]; bool {this_iteration}_any = false; "
                  f"for (int __l = 0; __l < {LANES}; ++__l) {{ {this_iteration}[__l] = {looping}[__l] && __a[__l]; "
                  f"{this_iteration}_any |= {this_iteration}[__l]; }}")
        self.emit(f"if (!{this_iteration}_any) break;")
        self.loops.append((this_iteration, looping))
        inner = f"(__a[__l] && {this_iteration}[__l])"
        for c in body.named_children if body.type == "compound_statement" else [body]:
            self.statement(c, inner)
        self.loops.pop()
        self.scopes.pop()
        self.depth -= 1
        self.emit("}")

    def divergent_loop_ok(self, n: Node) -> bool:
        """A loop whose trip count differs between threads (a grid-stride loop, a `while`) can
        run with the lanes together under a mask of the lanes still looping, when nothing in
        its body leaves it but the condition and `return`."""
        body = n.child_by_field_name("body")
        if body is None:
            return False
        if n.type == "while_statement":
            cond = n.child_by_field_name("condition")
            inner = [c for c in cond.named_children if c.type != "comment"] if cond is not None else []
            return len(inner) == 1 and inner[0].type != "declaration" and \
                cond.child_by_field_name("initializer") is None
        init = n.child_by_field_name("initializer")
        return init is None or init.type in ("declaration", "assignment_expression", "comma_expression")

    def divergent_loop(self, n: Node, mask: str) -> None:
        self.has_loop = True
        self.diverges = True
        body = n.child_by_field_name("body")
        cond = n.child_by_field_name("condition")
        update = init = None
        if n.type == "while_statement":
            cond = next(c for c in cond.named_children if c.type != "comment")
        else:
            init, update = n.child_by_field_name("initializer"), n.child_by_field_name("update")
        self.counter += 1
        looping, live, this_iteration = f"__w{self.counter}", f"__y{self.counter}", f"__c{self.counter}"
        self.emit("{")
        self.depth += 1
        self.scopes.append({})
        if init is not None and init.type == "declaration":
            self.declaration(init, mask)
        elif init is not None:
            self.lane_loop(self.expr(init) + ";", mask, False, self._calls(init), False)
        self.emit(f"bool {looping}[{LANES}]; for (int __l = 0; __l < {LANES}; ++__l) {looping}[__l] = bool({mask});")
        self.emit("for (;;) {")
        self.depth += 1
        test = self.expr(cond) if cond is not None else "true"
        tls = "threadIdx = ::uint3{__tx[__l], __ty[__l], __tz[__l]}; " if cond is not None and self._calls(cond) else ""
        self.emit(f"bool {live} = false; for (int __l = 0; __l < {LANES}; ++__l) {{ if (!{looping}[__l]) continue; "
                  f"{tls}{looping}[__l] = __a[__l] && ({test}); {live} |= {looping}[__l]; }}")
        self.emit(f"if (!{live}) break;")
        inner_mask = f"(__a[__l] && {looping}[__l])"
        if _escaping(body):
            self.loop_body(body, looping, this_iteration)
        else:
            self.statement_block(body, inner_mask)
        if update is not None:
            self.line = update.start_point[0] + 1
            self.lane_loop(self.expr(update) + ";", inner_mask, False, self._calls(update), False)
        self.depth -= 1
        self.emit("}")
        self.scopes.pop()
        self.depth -= 1
        self.emit("}")

    # ------------------------------------------------------------ the function
    def _one_line(self, n: Node) -> str:
        """n's text on one line, its comments dropped (a `//` comment would swallow the rest of
        the joined line) and line continuations joined; a preprocessor line in it cannot be
        joined."""
        out = self.src[n.start_byte : n.end_byte]
        for m in reversed([m for m in _walk(n) if m.type == "comment" or m.type.startswith("preproc_")]):
            if m.type != "comment":
                raise Unsupported("preprocessor directive in a kernel")
            out = out[: m.start_byte - n.start_byte] + b" " + out[m.end_byte - n.start_byte :]
        return " ".join(out.decode("utf-8", "replace").replace("\\\n", " ").split())

    def generate(self) -> str:
        self.check()
        decl = self.node.child_by_field_name("declarator")
        params = self._one_line(decl.child_by_field_name("parameters"))
        inner = params[1:-1].strip()
        if inner == "void":
            inner = ""
        self.scopes.append({})
        self.depth = 3
        for c in self.body.named_children:
            self.statement(c, "__a[__l]")
        if not self.has_loop:
            raise Unsupported("no loop to run across lanes")
        sep = ", " if inner else ""
        head = [
            f'#line {self.node.start_point[0] + 1} "{self.filename}"',
            # A template only so that a copy no launch uses is never compiled; the direction is
            # a run-time argument (it only orders the lanes), so one instantiation serves both.
            "template <int = 0>",
            f"static void {COPY_PREFIX}{self.name}(int __D, const ::std::atomic<bool>* __abort{sep}{inner}) {{",
            "  const ::uint3 __bI = blockIdx; const ::dim3 __bD = blockDim, __gD = gridDim;",
            "  (void)__bI; (void)__gD;",
            "  const unsigned __nt = __bD.x * __bD.y * __bD.z;",
        ]
        if self.uses_same:
            # Bit equality (0.0 and -0.0 differ, a NaN equals itself) as one integer compare for
            # 4- and 8-byte values: memcmp is a call in the ASan build, whose interceptor would
            # cost more than the math it saves.
            head.append(
                "  const auto __same = [](const auto& __x, const auto& __y) -> bool {"
                " if constexpr (sizeof(__x) == 4) { unsigned __p, __q; __builtin_memcpy(&__p, &__x, 4);"
                " __builtin_memcpy(&__q, &__y, 4); return __p == __q; }"
                " else if constexpr (sizeof(__x) == 8) { unsigned long long __p, __q; __builtin_memcpy(&__p, &__x, 8);"
                " __builtin_memcpy(&__q, &__y, 8); return __p == __q; }"
                " else return __builtin_memcmp(&__x, &__y, sizeof(__x)) == 0; };")

        def body(width: int, labels: str) -> list[str]:
            # Lanes are consecutive linear thread indices (x fastest), as a warp's are; in
            # reverse, the block's last thread comes first.
            return [
                f"  {{ constexpr int {LANES} = {width};",
                f"  for (unsigned __c = 0; __c < __nt; __c += (unsigned){LANES}) {{",
                "    if (__abort->load(::std::memory_order_relaxed)) return;",
                f"    unsigned __tx[{LANES}], __ty[{LANES}], __tz[{LANES}];",
                f"    bool __a[{LANES}];",
                f"    for (int __l = 0; __l < {LANES}; ++__l) {{",
                "      const unsigned __f = __c + (unsigned)__l, __t = __D > 0 ? __f : __nt - 1u - __f;",
                "      __a[__l] = __f < __nt;",
                "      __tx[__l] = __t % __bD.x; __ty[__l] = __t / __bD.x % __bD.y; __tz[__l] = __t / __bD.x / __bD.y;",
                "    }",
                "    {",
                # labels have function scope: each width's body gets its own
                *(line.replace("__ls_next_", labels) for line in self.lines),
                f'#line {self.node.end_point[0] + 1} "{self.filename}"',
                "    }",
                "  } }",
            ]

        wide = [f"  if (__nt % {WIDE}u == 0)", *body(WIDE, "__ls_wide_"), "  else"] \
            if SPEEDUPS["wide_blocks"] and not self.diverges else []
        return "\n".join([*head, *wide, *body(WARP, "__ls_next_"), "}"])


def lockstep_copies(root: Node, src: bytes, barrier_free: set[str], filename: str = "main.cu",
                    excluded_words: set[str] | frozenset[str] = frozenset()) -> dict[str, tuple[int, str, str]]:
    """{kernel name: (end byte of its definition, generated function, or '' , why not)} for
    every barrier-free `__global__` kernel at file scope; the text is empty when the kernel gets no
    copy, and the reason says why."""
    facts = file_facts(root, src)
    out: dict[str, tuple[int, str, str]] = {}
    for node in root.children:
        if node.type != "function_definition":
            continue
        if not any(c.type == "__global__" or _text(src, c) == "__global__" for c in node.children):
            continue
        name = _kernel_name(node, src)
        if name is None or name not in barrier_free:
            continue
        body = node.child_by_field_name("body")
        if facts.definitions.get(name, 0) != 1:
            out[name] = (node.end_byte, "", "defined more than once")
            continue
        words = set(_WORD.findall(_text(src, body))) if body is not None else set()
        if excluded_words & words:
            out[name] = (node.end_byte, "", "uses dynamic shared memory")
            continue
        if words & facts.spinning:
            out[name] = (node.end_byte, "", WAITS_REASON)
            continue
        try:
            code = _Kernel(node, src, facts, name, filename).generate()
        except Unsupported as e:
            out[name] = (node.end_byte, "", str(e))
            continue
        except (ValueError, AttributeError, TypeError, IndexError, KeyError, RecursionError) as e:
            # the copy is an optimisation: a kernel this module fails on runs as it always did
            out[name] = (node.end_byte, "", f"not copied ({type(e).__name__}: {e})")
            continue
        out[name] = (node.end_byte, code, "")
    return out
