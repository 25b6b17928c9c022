"""`analyze()`: one tree-sitter query pass over the tree, then Python over the captured nodes."""

from __future__ import annotations

import functools
import time
from bisect import bisect_right

from tree_sitter import Node, Query

from . import features as feat
from .functions import (
    FunctionIndex,
    build_function,
    enclosing_function,
    function_declarator,
    last_name,
    qualifier_macro,
    qualifiers_of,
)
from .launch_spans import TRAILING_KERNEL, launch_spans
from .launches import (
    API_LAUNCHERS,
    Definitions,
    FileScope,
    build_api_launch,
    build_dim3s,
    build_launch,
    config_statements,
)
from .macros import WRAP_PREFIX, split_define, worth_parsing, wrap_body
from .memo import Memo
from .model import Analysis, ApiLaunch, Dim3Decl, FeatureHit, Function, Launch, TextRange
from .parse import (
    AnalysisTimeout,
    Decoded,
    Source,
    captures,
    decode,
    parse_errors,
    query,
)
from .spans import merge

THREAD_INDEX_NAMES = ("threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize")
SYNC_CALLS = frozenset(
    {
        "__syncthreads",
        "__syncthreads_count",
        "__syncthreads_and",
        "__syncthreads_or",
        "__syncwarp",
        "__threadfence",
        "__threadfence_block",
        "__threadfence_system",
        "__barrier_sync",
    }
)
# Cooperative-groups style: `block.sync()`, `cg::this_grid().sync()`, `cg::sync(tile)`,
# `bar.arrive_and_wait()` (cuda::barrier).
SYNC_METHODS = frozenset({"sync", "arrive_and_wait"})
WARP_CALLS = frozenset({"__any_sync", "__all_sync", "__uni_sync", "__activemask", "__any", "__all"})
WARP_PREFIXES = ("__shfl", "__ballot", "__reduce_", "__match_")
# Methods of cooperative-groups tiles that are warp primitives (`tile.shfl_down(v, 1)`).
WARP_METHOD_PREFIXES = ("shfl", "ballot", "match_any", "match_all")
# Cooperative-groups tile collectives, only when qualified with the usual namespace names
# (`reduce` alone is too common: `thrust::reduce`).
CG_NAMESPACES = frozenset({"cg", "cooperative_groups"})
CG_WARP_COLLECTIVES = frozenset({"reduce", "inclusive_scan", "exclusive_scan"})
# Cooperative-groups methods that are a thread's index in its group (`block.thread_rank()`).
CG_INDEX_METHODS = frozenset(
    {"thread_rank", "thread_index", "group_index", "meta_group_rank", "block_rank", "block_index"}
)

MAX_HITS_PER_FEATURE = 5
MAX_MACRO_BODY = 20_000
"""Longer `#define` bodies are not re-parsed (no real launch macro is that long)."""


@functools.cache
def _main_query() -> Query:
    return query(_query_text())


def _query_text() -> str:
    names = feat.name_prefilter()
    tidx = " ".join(f'"{n}"' for n in THREAD_INDEX_NAMES)
    return f"""
(function_definition) @function
(call_expression) @call
(kernel_call_syntax) @launch
((identifier) @tidx (#any-of? @tidx {tidx}))
(declaration (type_qualifier "__shared__")) @shared
(gnu_asm_expression) @asm
(preproc_include path: (_) @include)
(preproc_def) @define
(preproc_function_def) @define
(declaration type: (type_identifier) @_dim3 (#eq? @_dim3 "dim3")) @dim3
((identifier) @name (#match? @name "{names}"))
((field_identifier) @name (#match? @name "{names}"))
((type_identifier) @type_name (#match? @type_name "{names}"))
(namespace_identifier) @namespace
(using_declaration) @using
"""


class _Collector:
    """State shared by the main tree and the re-parsed macro bodies."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.kernels: list[Function] = []
        self.device_functions: list[Function] = []
        self.launches: list[Launch] = []
        self.api_launches: list[ApiLaunch] = []
        self.dim3s: list[Dim3Decl] = []
        self.raw_spans: list[tuple[int, int, str, str]] = []
        self.hits: list[FeatureHit] = []
        self._hit_count: dict[str, int] = {}
        # Call graph over device code: function name -> names it calls.
        self.calls: dict[str, set[str]] = {}
        self._fn_info: dict[int, tuple[str, list[str]]] = {}
        self._defs: dict[int, Definitions] = {}
        self._index = FunctionIndex([])
        self._files: FileScope | None = None
        # `#define HD __host__ __device__`: macro name -> the qualifiers it stands for
        self.qualifier_macros: dict[bytes, list[str]] = {}

    # ---- helpers -------------------------------------------------------------------------
    def hit(self, src: Source, node: Node, feature: str, reason: str) -> None:
        n = self._hit_count.get(feature, 0)
        self._hit_count[feature] = n + 1
        if n < MAX_HITS_PER_FEATURE:
            self.hits.append(
                FeatureHit(
                    feature=feature,
                    reason=reason,
                    line=src.line(node),
                    span=TextRange(start=src.start(node), end=src.end(node)),
                )
            )

    def span(self, src: Source, node: Node, kind: str, label: str) -> None:
        self.raw_spans.append((src.start(node), src.end(node), kind, label))

    def fn_info(self, src: Source, fn: Node | None) -> tuple[str | None, list[str]]:
        """(name, execution qualifiers) of a definition node; None for the macro wrapper."""
        if fn is None or src.macro is not None:
            return None, []
        info = self._fn_info.get(fn.id)
        if info is None:
            fdecl = function_declarator(fn)
            name = last_name(fdecl.child_by_field_name("declarator")) if fdecl is not None else None
            info = (
                src.node_text(name) if name is not None else "",
                qualifiers_of(fn, self.qualifier_macros),
            )
            self._fn_info[fn.id] = info
        return info

    # ---- the pass ------------------------------------------------------------------------
    def collect(self, src: Source) -> None:
        caps = captures(_main_query(), src.tree.root_node)
        defines = caps.pop("define", [])
        broken = [d for d in defines if d.has_error]
        if broken:
            # A directive the grammar mis-parsed has bogus nodes in it; its body is re-parsed
            # properly below, so drop whatever the main query found inside it.
            caps = _drop_inside(caps, broken)
        self._index = FunctionIndex(caps.get("function", []))
        if src.macro is None:
            for d in defines:
                if d.type == "preproc_def" and not d.has_error:
                    name, body = d.child_by_field_name("name"), d.child_by_field_name("value")
                    if name is not None and body is not None:
                        quals = qualifier_macro(src.node_text(body))
                        if quals:
                            self.qualifier_macros[name.text] = quals
            for fn in caps.get("function", ()):
                self._function(src, fn)
        for node in caps.get("call", ()):
            self._call(src, node)
        for node in caps.get("launch", ()):
            self._launch(src, node)
        for node in caps.get("tidx", ()):
            parent = node.parent
            if (
                parent is not None
                and parent.type == "field_expression"
                and parent.child_by_field_name("argument") == node
            ):
                node = parent
            self.span(src, node, "thread_index", self._label(src, node))
        for node in caps.get("shared", ()):
            self.span(src, node, "shared_memory", self._label(src, node))
        for node in caps.get("asm", ()):
            self.hit(src, node, "inline_ptx", "inline asm statement")
            code = node.child_by_field_name("assembly_code")
            if code is not None:
                for feature, needle in feat.match_asm(src.node_text(code)):
                    self.hit(src, code, feature, f"asm code contains `{needle}`")
        for node in caps.get("include", ()):
            path = src.node_text(node)
            feature = feat.match_include(path)
            if feature:
                self.hit(src, node, feature, f"#include {path.strip()}")
        for node in caps.get("dim3", ()):
            fn = self._index.find(node.start_byte)
            self.dim3s.extend(build_dim3s(src, node, self.fn_info(src, fn)[0]))
        for node in caps.get("name", ()):
            feature = feat.match_name(src.node_text(node))
            if feature:
                self.hit(src, node, feature, f"identifier `{src.node_text(node)}`")
        for node in caps.get("type_name", ()):
            feature = feat.match_name(src.node_text(node), is_type=True)
            if feature:
                self.hit(src, node, feature, f"type `{src.node_text(node)}`")
        for node in caps.get("namespace", ()):
            feature = feat.NAMESPACES.get(src.node_text(node))
            if feature:
                self.hit(src, node, feature, f"namespace `{src.node_text(node)}::`")
        for node in caps.get("using", ()):
            self._using(src, node)
        if src.macro is None:
            for node in defines:
                self._macro(src, node)

    def _label(self, src: Source, node: Node) -> str:
        name = self.fn_info(src, self._index.find(node.start_byte))[0]
        return name or src.macro or ""

    def _function(self, src: Source, fn: Node) -> None:
        quals = qualifiers_of(fn, self.qualifier_macros)
        if "__global__" not in quals and "__device__" not in quals:
            return
        f = build_function(src, fn, quals)
        if f is None:
            return
        (self.kernels if f.is_kernel else self.device_functions).append(f)

    def _call(self, src: Source, call: Node) -> None:
        callee = call.child_by_field_name("function")
        name_node = last_name(callee)
        if name_node is None:
            return
        name = src.node_text(name_node)
        fn = self._index.find(call.start_byte)
        owner, quals = self.fn_info(src, fn)
        in_device = any(q in ("__global__", "__device__") for q in quals)
        if owner and in_device:
            self.calls.setdefault(owner, set()).add(name)
        if name in API_LAUNCHERS:
            self.api_launches.append(build_api_launch(src, call, name, owner))
            return
        kind = _call_kind(src, callee, name)
        if kind is None:
            return
        if owner is not None and not in_device and not enclosing_function(call)[1]:
            # Host code (outside any lambda, which may be a `__device__` one): `atomicCost<T>()`
            # or `obj.sync()` there is not a device primitive.
            return
        self.span(src, call, kind, owner or src.macro or "")

    def _launch(self, src: Source, syntax: Node) -> None:
        fn, in_lambda = enclosing_function(syntax)
        owner, quals = self.fn_info(src, fn)
        in_device = any(q in ("__global__", "__device__") for q in quals)
        launch = build_launch(src, syntax, owner, in_device, in_lambda)
        self.launches.append(launch)
        self.span(src, syntax, "launch_config", launch.kernel)
        if in_device:
            where = "__global__" if "__global__" in quals else "__device__"
            self.hit(
                src,
                syntax,
                "dynamic_parallelism",
                f"launch of `{launch.kernel}` inside {where} function `{owner}`",
            )
        if fn is None or src.macro is not None:
            return
        body = fn.child_by_field_name("body")
        if body is None:
            return
        defs = self._defs.get(fn.id)
        if defs is None:
            defs = self._defs[fn.id] = Definitions(body)
        call = syntax.parent
        arglist = (
            call.child_by_field_name("arguments")
            if call is not None and call.type == "call_expression"
            else None
        )
        if self._files is None:
            self._files = FileScope(src.tree.root_node)
        for stmt in config_statements(defs, syntax, arglist, self._files):
            self.span(src, stmt, "launch_config", launch.kernel)

    def _using(self, src: Source, node: Node) -> None:
        stack = list(node.named_children)
        while stack:
            n = stack.pop()
            if n.type in ("identifier", "namespace_identifier"):
                feature = feat.NAMESPACES.get(src.node_text(n))
                if feature and n.type == "identifier":  # namespace_identifier is captured already
                    self.hit(src, n, feature, f"using namespace `{src.node_text(n)}`")
            else:
                stack.extend(n.named_children)

    def _macro(self, src: Source, define: Node) -> None:
        """Re-parse a `#define` body so launches, intrinsics and library names in macros are
        seen (offsets and lines are mapped back into the file)."""
        directive = src.node_text(define)
        split = split_define(directive)
        if split is None:
            return
        name, at = split
        body = directive[at:].rstrip("\r\n")
        if len(body) > MAX_MACRO_BODY or not worth_parsing(body):
            return
        wrapped = wrap_body(body)
        before = directive[:at]
        sub = Source(
            wrapped,
            wrapped.encode("utf-8", "surrogatepass"),
            shift=src.start(define) + at - len(WRAP_PREFIX),
            line_shift=define.start_point.row + before.count("\n"),
            macro=name,
            deadline=src.deadline,
        )
        outer_index = self._index
        self.collect(sub)
        self._index = outer_index

    def isolated_launches(self, src: Source) -> None:
        """Launches the tree does not have, found by their tokens (`launch_spans`) and parsed
        alone as a statement: after a statement macro used without a semicolon,
        `CUERR\n k <<< 1, 4 >>>\n (d);` reads to the grammar as a declaration of a function
        `k<...>` of type `CUERR`. A launch whose kernel is not named (`(*f)<<<...`) is left
        to the tree."""
        spans = launch_spans(src.parsed)
        if not spans:
            return
        found = {launch.config_span.start for launch in self.launches}
        for span in spans:
            if src.offsets.char(span.open) in found:
                continue
            m = TRAILING_KERNEL.search(src.parsed, max(0, span.open - 400), span.open)
            if m is None or src.parsed[max(0, m.start() - 8) : m.start()].rstrip().endswith(
                    (b".", b"->", b")", b"]")):
                continue
            first, last = src.offsets.char(m.start()), src.offsets.char(span.end)
            snippet = src.parsed[m.start() : span.end].decode("utf-8", "replace")
            wrapped = WRAP_PREFIX + snippet + ";}"
            sub = Source(wrapped, wrapped.encode("utf-8", "surrogatepass"),
                         shift=first - len(WRAP_PREFIX),
                         line_shift=src.parsed.count(b"\n", 0, m.start()), deadline=src.deadline)
            syntax = next(iter(captures(query("(kernel_call_syntax) @launch"), sub.tree.root_node)
                               .get("launch", ())), None)
            call = syntax.parent if syntax is not None else None
            if call is None or call.type != "call_expression" or sub.start(call) != first \
                    or sub.end(call) != last:
                continue
            owner, quals = self.fn_info(src, self._index.find(m.start()))
            in_device = any(q in ("__global__", "__device__") for q in quals)
            launch = build_launch(sub, syntax, owner, in_device, False)
            self.launches.append(launch)
            self.span(sub, syntax, "launch_config", launch.kernel)

    # ---- after the pass ------------------------------------------------------------------
    def kernel_bodies(self) -> None:
        """Bodies of kernels and of the device functions reachable from them (by name)."""
        devices: dict[str, list[Function]] = {}
        for f in self.device_functions:
            devices.setdefault(f.name, []).append(f)
        # Operator overloads (`a + b` on float2, a functor's `operator()`) are called without
        # their name appearing: with kernels present, count them as reached.
        reached = {n for n in devices if n.startswith("operator")} if self.kernels else set()
        todo = [k.name for k in self.kernels] + sorted(reached)
        while todo:
            name = todo.pop()
            for callee in self.calls.get(name, ()):
                if callee in devices and callee not in reached:
                    reached.add(callee)
                    todo.append(callee)
        for k in self.kernels:
            self.raw_spans.append((k.body.start, k.body.end, "kernel_body", k.name))
        for f in self.device_functions:
            if f.name in reached:
                self.raw_spans.append((f.body.start, f.body.end, "kernel_body", f.name))


def _call_kind(src: Source, callee: Node | None, name: str) -> str | None:
    """The span kind of a call to `name` (a sync, atomic, warp or index primitive), if any."""
    ctype = callee.type if callee is not None else ""
    if name in SYNC_CALLS:
        return "sync"
    if name in SYNC_METHODS and ctype in ("field_expression", "qualified_identifier"):
        return "sync"
    if name.startswith(("atomic", "__nv_atomic_")):
        return "atomic"
    if name in WARP_CALLS or name.startswith(WARP_PREFIXES):
        return "warp_primitive"
    if ctype == "field_expression":
        if name.startswith(WARP_METHOD_PREFIXES):
            return "warp_primitive"
        if name in CG_INDEX_METHODS:
            return "thread_index"
    elif ctype == "qualified_identifier" and name in CG_WARP_COLLECTIVES:
        scope = callee.child_by_field_name("scope") if callee is not None else None
        if scope is not None and src.node_text(scope) in CG_NAMESPACES:
            return "warp_primitive"
    return None


def _drop_inside(caps: dict[str, list[Node]], ranges: list[Node]) -> dict[str, list[Node]]:
    starts = [r.start_byte for r in ranges]

    def inside(node: Node) -> bool:
        i = bisect_right(starts, node.start_byte) - 1
        return i >= 0 and node.start_byte < ranges[i].end_byte

    return {name: [n for n in nodes if not inside(n)] for name, nodes in caps.items()}


def _refused(decoded: Decoded, reason: str) -> Analysis:
    return Analysis(
        text=decoded.text, encoding=decoded.encoding, errors=[reason], notes=decoded.notes,
        refused=True,
    )


TIME_LIMIT_S = 30.0
"""CPU seconds (of the calling thread) of parsing after which a pathological input is given up."""


MEMO_CHARS = 16_000_000
"""How much source text (in characters) the remembered analyses may hold (`analyze`): a few
hundred files of a repository; one text larger than this is analysed every time."""


def analyze(source: str | bytes, *, time_limit: float | None = TIME_LIMIT_S) -> Analysis:
    """Kernels, device functions, launches, spans and feature flags of one CUDA source text.

    Never raises for any input: undecodable, binary, oversized, too deeply nested
    (`parse.MAX_NESTING`) or unparsable text gives an `Analysis` whose `.errors` names the
    problem (and whatever could still be found). A NUL byte is read as a space, as g++ does.
    `time_limit` (None: no limit) bounds the CPU time spent parsing an input.

    The analyses of the texts seen last are remembered: a file is analysed once however many of
    its kernels become records and however many stages ask (gather, extract, the prompt's
    excerpt, annotate). The result is shared: read it, never change it.
    """
    if not isinstance(source, (str, bytes)):
        return _analyze_text(source, time_limit)
    return MEMO.get((source, time_limit), len(source), lambda: _analyze_text(source, time_limit))


MEMO: Memo[Analysis] = Memo(MEMO_CHARS)


def _analyze_text(source: str | bytes, time_limit: float | None) -> Analysis:
    try:
        decoded = decode(source)
    except Exception as exc:  # e.g. a wrong argument type: still a result, not a traceback
        return Analysis(text="", errors=[f"cannot read input: {type(exc).__name__}: {exc}"])
    if decoded.refuse:
        return _refused(decoded, decoded.refuse)
    deadline = time.thread_time() + time_limit if time_limit is not None else None
    try:
        return _analyze(decoded, deadline)
    except AnalysisTimeout:
        return _refused(
            decoded,
            f"analysis gave up after {time_limit:g} s of CPU time (input too irregular to parse)",
        )
    except Exception as exc:  # the contract is "never raise"; say what broke instead
        return _refused(decoded, f"analysis failed: {type(exc).__name__}: {exc}")


def _analyze(decoded: Decoded, deadline: float | None) -> Analysis:
    src = Source(decoded.text, decoded.data, deadline=deadline)
    col = _Collector(decoded.text)
    col.collect(src)
    col.isolated_launches(src)
    col.kernel_bodies()
    errors = parse_errors(src)
    features = sorted({h.feature for h in col.hits})
    notes = list(decoded.notes)
    if not col.kernels and not col.launches and not col.api_launches:
        notes.append("no __global__ kernel and no launch found")
    return Analysis(
        text=decoded.text,
        encoding=decoded.encoding,
        kernels=sorted(col.kernels, key=lambda f: f.span.start),
        device_functions=sorted(col.device_functions, key=lambda f: f.span.start),
        launches=sorted(col.launches, key=lambda x: x.config_span.start),
        api_launches=sorted(col.api_launches, key=lambda x: x.call_span.start),
        dim3s=sorted(col.dim3s, key=lambda x: x.span.start),
        spans=merge(col.raw_spans),
        features=features,
        feature_hits=sorted(col.hits, key=lambda h: (h.span.start, h.feature)),
        errors=errors,
        notes=notes,
    )
