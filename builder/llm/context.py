"""What of a source file the LLM sees for one kernel: the kernel and what it uses, not the file.

A scraped file with eight kernels is one record per kernel; sending the whole file with each
would pay for the other seven kernels eight times. `kernel_context` cuts the file (and each
large local header of the record) down to:

- the focus kernel (every definition of that name: overloads, `#if` alternatives);
- transitively, every top-level definition it names: `__device__` functions, macros, typedefs,
  structs, enums, constants, templates, `__constant__`/`__device__` variables, and kernels it
  launches from device code;
- `__device__` operator overloads (called without their name);
- short host code that names the kernel (a launcher `run_k(...)`, a dispatch table, an
  explicit instantiation), with the macros, types and short host helpers it names;
- every `#include`, `#pragma`, `using namespace` and flag `#define`, and the lines of the
  `#if`/`namespace`/`extern "C"` blocks around anything kept.

Top-level units come from a tree-sitter walk (`validators.analysis.parse`); which of them are
kernels and `__device__` functions comes from `validators.analysis.analyze`, so macro-written
qualifiers count as they do everywhere else. A unit "names" an identifier when the identifier
appears in its text outside comments and strings: a name shared by a local and a top-level
definition only brings in more than needed, never less. Left-out lines become one
`// ... (N lines omitted: ...)` marker per run, naming what was there, so the model knows it
sees an excerpt. The original order is kept; kept lines are the author's, byte for byte.

The whole file is shown instead when it is small, defines one kernel, has no focus, or when
the analysis cannot place the focus kernel (`Context.fallback` says why).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from validators.analysis.memo import Memo

__all__ = ["ContextOptions", "Context", "Shown", "kernel_context"]

_COMMENT_OR_STRING = re.compile(
    r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])'", re.DOTALL)
_IDENT = re.compile(r"[A-Za-z_]\w*")
_CONTAINERS = frozenset({"preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif",
                         "preproc_elifdef", "namespace_definition", "linkage_specification"})
_ALWAYS = frozenset({"preproc_include", "preproc_call", "using_declaration"})
_TYPE_NODES = frozenset({"struct_specifier", "class_specifier", "union_specifier",
                         "enum_specifier"})
_MAX_NAMES_IN_MARKER = 6


@dataclass(frozen=True)
class ContextOptions:
    excerpt: bool = True
    """False: every file whole, as prompts were before excerpts (for comparisons)."""
    whole_below: int = 6000
    """Files (and headers) shorter than this many characters are shown whole: an excerpt
    would save little and could only lose something."""
    max_host_lines: int = 40
    """Host code that names the kernel (a launcher) or that a launcher calls is shown when it
    is at most this many lines long; a longer `main` is left out (and named in a marker)."""


@dataclass
class Shown:
    """One file as the LLM sees it."""

    path: str
    text: str
    whole: bool
    omitted: list[str] = field(default_factory=list)
    """What was left out, as labels (`kernel sgemm_v2`, `host function main`)."""
    lines_shown: int = 0
    lines_total: int = 0


@dataclass
class Context:
    main: Shown
    headers: list[Shown] = field(default_factory=list)
    """Local headers shown (whole or excerpted), in path order."""
    unused_headers: list[str] = field(default_factory=list)
    """Large headers nothing kept names: left out entirely."""
    fallback: str | None = None
    """Why the file is shown whole (None when it is excerpted)."""

    def note(self, focus: str | None) -> str:
        """A sentence for the prompt saying what the code holds, so the model knows it sees an
        excerpt and what exists but is not shown."""
        cut = [s for s in [self.main, *self.headers] if not s.whole]
        if not cut and not self.unused_headers:
            return ""
        how = ("`// ... (N lines omitted: ...)` marks where code that this kernel does not need "
               "was left out.")
        if not self.main.whole:
            parts = [f"The code below is an excerpt: the kernel {focus} with the definitions it "
                     "uses and the host code that launches it, in the original order; " + how]
        else:
            parts = ["Large local headers are excerpts: the definitions the file uses, in the "
                     "original order; " + how]
        for s in cut:
            counts: dict[str, int] = {}
            for label in s.omitted:
                what = label.rpartition(" ")[0] or label
                counts[what] = counts.get(what, 0) + 1
            if counts:
                listed = ", ".join(f"{n} {what}{'s' if n > 1 else ''}" for what, n in counts.items())
                parts.append(f"Left out of {s.path} ({s.lines_shown} of {s.lines_total} lines "
                             f"shown): {listed}, each named in its marker.")
        if self.unused_headers:
            parts.append("Local headers not shown (nothing the kernel uses is in them): "
                         f"{', '.join(self.unused_headers)}.")
        return " ".join(parts)


@dataclass(eq=False)
class _Unit:
    file: str
    kind: str
    """kernel, device, host, macro, type, variable, prototype, always, container, other."""
    names: set[str]
    refs: set[str]
    rows: list[int]
    """The rows shown when the unit is kept (containers: only their own directive lines)."""
    parent: _Unit | None = None
    operator: bool = False
    sketch: list[int] | None = None
    """For a long host function that launches the focus kernel: its signature, the launch
    and the statements computing the launch configuration, and its closing row."""
    sketch_refs: set[str] = field(default_factory=set)
    head: list[int] | None = None
    """A host function's rows up to its body's opening (what a sketch of it starts with)."""
    start_row: int = 0
    end_row: int = 0
    """The unit's own first and last rows (without the comment above it)."""

    @property
    def size(self) -> int:
        return len(self.rows)

    def label(self) -> str:
        what = {"kernel": "kernel", "device": "device function", "host": "host function",
                "macro": "macro", "type": "type", "variable": "declaration",
                "prototype": "declaration"}.get(self.kind)
        name = ", ".join(sorted(self.names))
        return f"{what} {name}" if what and name else "other code"


def _refs(text: str) -> set[str]:
    return set(_IDENT.findall(_COMMENT_OR_STRING.sub(" ", text)))


def _names(labels: list[str], limit: int = _MAX_NAMES_IN_MARKER) -> str:
    """`kernels a, b; host function main` from labels, grouped by what they are."""
    groups: dict[str, list[str]] = {}
    for label in labels:
        what, _, name = label.rpartition(" ")
        if not what:
            what, name = label, ""
        groups.setdefault(what, [])
        if name and name not in groups[what]:
            groups[what].append(name)
    out = []
    for what, names in groups.items():
        if not names:
            out.append(what)
            continue
        shown = names[:limit] + ([f"{len(names) - limit} more"] if len(names) > limit else [])
        plural = what + ("s" if len(names) > 1 and not what.endswith("code") else "")
        out.append(f"{plural} {', '.join(shown)}")
    return "; ".join(out)


class _Walker:
    """The top-level units of one file (descending into `#if`, namespaces and `extern "C"`),
    whatever the focus kernel (`units_for` adds what depends on it). Read-only once built:
    one walker serves every kernel of its file (`_walker`)."""

    def __init__(self, path: str, text: str) -> None:
        from validators.analysis import analyze
        from validators.analysis.parse import AnalysisTimeout, Source, decode

        self.path, self.text = path, text
        analysis = analyze(text)
        if analysis.errors and not analysis.kernels and not analysis.device_functions \
                and analysis.errors[0].startswith(("input ", "analysis ")):
            raise ValueError(analysis.errors[0])
        self.kernel_rows = [(k.name, *self._span_rows(k.span.start, k.span.end))
                            for k in analysis.kernels]
        self.device_rows = [(f.name, *self._span_rows(f.span.start, f.span.end))
                            for f in analysis.device_functions]
        # Rows of each launch, with the statements computing its configuration, by kernel.
        ranges = [(sp.label.split(","), sp.start, sp.end) for sp in analysis.spans_of("launch_config")]
        ranges += [([x.kernel], x.call_span.start, x.call_span.end)
                   for x in [*analysis.launches, *analysis.api_launches] if x.kernel]
        self.launch_rows: dict[str, set[int]] = {}
        for kernels, a, b in ranges:
            r0, r1 = self._span_rows(a, b)
            for k in kernels:
                self.launch_rows.setdefault(k, set()).update(range(r0, r1 + 1))
        self.lines = text.split("\n")
        decoded = decode(text)
        try:
            src = Source(decoded.text, decoded.data)
        except AnalysisTimeout as exc:  # pragma: no cover - only without a deadline
            raise ValueError("parse timed out") from exc
        self.units: list[_Unit] = []
        self._walk(src.tree.root_node, None)

    def units_for(self, focus: str | None) -> list[_Unit]:
        """The units, where a long host function launches `focus`, with its sketch: its
        signature, the launch and the statements computing the launch configuration, and its
        closing row (copies: the walker's own units stay as they are)."""
        rows = self.launch_rows.get(focus, set()) if focus is not None else set()
        if not rows:
            return self.units
        out = []
        for u in self.units:
            inside = sorted(r for r in rows if u.head is not None and u.start_row <= r <= u.end_row)
            if inside:
                assert u.head is not None
                sketch = sorted({*u.head, *inside, u.end_row})
                refs = _refs("\n".join(self.lines[r] for r in sketch if r < len(self.lines))) - u.names
                u = replace(u, sketch=sketch, sketch_refs=refs)
            out.append(u)
        return out

    def _span_rows(self, start: int, end: int) -> tuple[int, int]:
        return self.text.count("\n", 0, start), self.text.count("\n", 0, max(start, end - 1))

    @staticmethod
    def _rows(node) -> tuple[int, int]:
        r0, r1 = node.start_point.row, node.end_point.row
        if node.end_point.column == 0 and r1 > r0:
            r1 -= 1  # a directive's node ends after its newline
        return r0, r1

    def _node_text(self, node) -> str:
        return node.text.decode("utf-8", "replace")

    def _walk(self, node, parent: _Unit | None) -> None:
        # A comment block that ends on the row just above a unit is shown (or left out) with it.
        block_start: int | None = None
        block_end = -2
        skip = {c.id for c in (node.child_by_field_name("name"),
                               node.child_by_field_name("condition")) if c is not None}
        for child in node.named_children:
            if child.id in skip:
                continue
            r0, r1 = self._rows(child)
            if child.type == "comment":
                if block_start is None or r0 > block_end + 1:
                    block_start = r0
                block_end = r1
                continue
            first = block_start if block_start is not None and r0 <= block_end + 1 else r0
            block_start = None
            if child.type in _ALWAYS or child.type == "preproc_def" \
                    and child.child_by_field_name("value") is None:
                first = r0  # a file's opening comment is not about its first #include
            if child.type == "declaration_list":  # the `{ ... }` of a namespace / extern "C"
                self._walk(child, parent)
            elif child.type in _CONTAINERS:
                self._container(child, parent, first)
            else:
                self._leaf(child, parent, first, r0, r1)

    def _container(self, node, parent: _Unit | None, first: int) -> None:
        r0, r1 = self._rows(node)
        body = node.child_by_field_name("body")
        head_end = self._rows(body)[0] if body is not None else r0
        cond = node.child_by_field_name("condition") or node.child_by_field_name("name")
        refs = _refs(self._node_text(cond)) if cond is not None and node.type.startswith(
            "preproc") else set()
        if node.type.startswith("preproc"):
            # Its directive line, and the `#endif` (the end row of the outermost conditional).
            rows = list(range(first, r0 + 1))
            last_child = node.children[-1] if node.children else None
            if last_child is not None and last_child.type == "#endif":
                rows.append(last_child.start_point.row)
            if cond is not None:
                rows += range(r0, self._rows(cond)[1] + 1)
        else:
            rows = [*range(first, head_end + 1), r1]
        unit = _Unit(self.path, "container", set(), refs, sorted(set(rows)), parent)
        self.units.append(unit)
        if node.type in ("namespace_definition", "linkage_specification") and body is not None \
                and body.type != "declaration_list":
            self._leaf(body, unit, *self._rows(body), self._rows(body)[1])
            return
        self._walk(node if body is None else body, unit)

    def _leaf(self, node, parent: _Unit | None, first: int, r0: int, r1: int) -> None:
        t = node.type
        text = self._node_text(node)
        names, kind, operator = self._names(node), "other", False
        if t in _ALWAYS:
            kind = "always"
        elif t in ("preproc_def", "preproc_function_def"):
            value = node.child_by_field_name("value")
            kind = "macro" if value is not None or t == "preproc_function_def" else "always"
        elif t in ("type_definition", "alias_declaration", "namespace_alias_definition") \
                or t in _TYPE_NODES:
            kind = "type"
        elif t in ("declaration", "template_declaration", "function_definition",
                   "template_instantiation", "static_assert_declaration"):
            kind = self._declaration_kind(node)
        if kind in ("host", "prototype", "variable", "other"):
            for name, k0, k1 in self.kernel_rows:
                if k0 <= r1 and r0 <= k1:
                    kind, names = "kernel", {name}
        if kind in ("host", "prototype", "variable", "other"):
            for name, d0, d1 in self.device_rows:
                if d0 <= r1 and r0 <= d1:
                    kind = "device"
                    names = names or {name}
        if any(n.startswith("operator") for n in names):
            operator = True
        refs = _refs(text) - names
        unit = _Unit(self.path, kind, names, refs, list(range(first, r1 + 1)), parent, operator,
                     start_row=r0, end_row=r1)
        fn = self._function(node)
        if fn is not None and kind == "host":
            body = fn.child_by_field_name("body")
            unit.head = list(range(r0, self._rows(body)[0] + 1)) if body is not None else [r0]
        self.units.append(unit)

    @staticmethod
    def _function(node):
        while node is not None and node.type == "template_declaration":
            inner = [c for c in node.named_children
                     if c.type in ("function_definition", "template_declaration")]
            node = inner[-1] if inner else None
        return node if node is not None and node.type == "function_definition" else None

    def _declaration_kind(self, node) -> str:
        inner = node
        while inner.type == "template_declaration":
            nxt = [c for c in inner.named_children if c.type in (
                "function_definition", "declaration", "template_declaration", "alias_declaration",
                *_TYPE_NODES)]
            if not nxt:
                return "other"
            inner = nxt[-1]
        if inner.type == "function_definition":
            return "host"
        if inner.type in _TYPE_NODES or inner.type == "alias_declaration":
            return "type"
        if inner.type == "declaration":
            decl = inner.child_by_field_name("declarator")
            while decl is not None and decl.type in ("pointer_declarator", "reference_declarator"):
                decl = decl.child_by_field_name("declarator")
            if decl is not None and decl.type == "function_declarator":
                return "prototype"
            return "variable"
        return "other"

    def _names(self, node) -> set[str]:
        """The names a top-level unit defines (functions, variables, types, enumerators,
        macros)."""
        from validators.analysis.functions import declarator_name, last_name

        out: set[str] = set()

        def add(n) -> None:
            if n is None:
                return
            n = last_name(n) or n
            if n.type in ("identifier", "type_identifier", "field_identifier", "operator_name",
                          "namespace_identifier"):
                out.add(self._node_text(n))

        def visit(n, depth: int = 0) -> None:
            if n is None or depth > 6:
                return
            t = n.type
            if t in ("preproc_def", "preproc_function_def", "alias_declaration",
                     "namespace_alias_definition"):
                add(n.child_by_field_name("name"))
                return
            if t in _TYPE_NODES:
                add(n.child_by_field_name("name"))
                body = n.child_by_field_name("body")
                if t == "enum_specifier" and body is not None:
                    for e in body.named_children:
                        if e.type == "enumerator":
                            add(e.child_by_field_name("name"))
                return
            if t in ("template_declaration", "template_instantiation"):
                for c in n.named_children:
                    if c.type != "template_parameter_list":
                        visit(c, depth + 1)
                return
            if t in ("function_definition", "declaration", "type_definition"):
                visit(n.child_by_field_name("type"), depth + 1)
                for c in n.children_by_field_name("declarator"):
                    add(declarator_name(c))
                return

        visit(node)
        return out


def _excerpt_units(units: list[_Unit], roots: Iterable[_Unit], focus: str | None,
                  opts: ContextOptions) -> dict[int, list[int]]:
    """The units kept (by id) with the rows shown of each: the closure of `roots` over the
    names they use."""
    index: dict[str, list[_Unit]] = {}
    for u in units:
        for n in u.names:
            index.setdefault(n, []).append(u)
    kept: dict[int, list[int]] = {}
    # (unit, whether it is device code reached from the focus kernel): only device code brings
    # in other kernels (dynamic parallelism); host code never does.
    queue: list[tuple[_Unit, bool]] = [(u, True) for u in roots]
    queue += [(u, True) for u in units if u.operator and u.kind == "device"]
    queue += [(u, True) for u in units if u.kind == "always"]
    if focus is not None:
        queue += [(u, False) for u in units
                  if focus in u.refs and u.kind not in ("kernel", "container")
                  and (u.size <= opts.max_host_lines or u.sketch is not None)]
    # A unit is visited again when it is reached as device code after being reached as host
    # code only: what it brings in then grows. Keeping the first visit instead would make the
    # excerpt depend on the queue's order, which follows set iteration (the hash seed).
    as_device: dict[int, bool] = {}
    while queue:
        u, device = queue.pop()
        if id(u) in as_device and (as_device[id(u)] or not device):
            continue
        as_device[id(u)] = device
        sketched = u.size > opts.max_host_lines and u.sketch is not None and u.kind == "host"
        kept[id(u)] = u.sketch if sketched and u.sketch is not None else u.rows
        p = u.parent
        while p is not None and (id(p) not in as_device or device and not as_device[id(p)]):
            queue.append((p, device))
            p = p.parent
        for ref in u.sketch_refs if sketched else u.refs:
            for v in index.get(ref, ()):
                if as_device.get(id(v)) is True:
                    continue
                if v.kind == "kernel" and not (device and u.kind in ("kernel", "device", "macro")):
                    continue
                if v.kind == "host" and v.size > opts.max_host_lines:
                    continue
                queue.append((v, device and v.kind != "host"))
    return kept


def _render(w: _Walker, units: list[_Unit], kept: dict[int, list[int]]) -> Shown:
    lines = w.lines
    keep = [False] * len(lines)
    for u in units:
        for r in kept.get(id(u), ()):
            if 0 <= r < len(lines):
                keep[r] = True
    # What each omitted row held, for the markers: the unit starting there, or, inside a
    # sketched function, that function.
    owner: dict[int, _Unit] = {}
    for u in units:
        if u.kind == "container":
            continue
        if id(u) not in kept:
            owner.setdefault(u.rows[0], u)
    out: list[str] = []
    omitted: list[str] = []
    r = 0
    while r < len(lines):
        if keep[r]:
            out.append(lines[r])
            r += 1
            continue
        start = r
        while r < len(lines) and not keep[r]:
            r += 1
        if all(not line.strip() for line in lines[start:r]):
            out.extend(lines[start:r])  # blank lines are not worth a marker
            continue
        labels = list(dict.fromkeys(owner[i].label() for i in range(start, r)
                                    if i in owner and owner[i].names))
        omitted += labels
        what = f": {_names(labels)}" if labels else ""
        n = r - start
        first = next(line for line in lines[start:r] if line.strip())
        indent = first[: len(first) - len(first.lstrip())]
        out.append(f"{indent}// ... ({n} line{'s' if n != 1 else ''} omitted{what})")
    return Shown(w.path, "\n".join(out), whole=False, omitted=omitted,
                 lines_shown=sum(keep), lines_total=len(lines))


_WALKERS = Memo[_Walker](16_000_000)
"""The walks of the files seen last, within a budget of characters of source (as the analyses':
`validators.analysis.analyzer.MEMO_CHARS`), so a few huge files cannot hold memory unbounded."""


def _walker(path: str, text: str) -> _Walker:
    """One file's walker, built once for all its kernels (a file with eight kernels is eight
    records, and each large header is shown with every kernel of the files that include it)."""
    return _WALKERS.get((path, text), len(text), lambda: _Walker(path, text))


def _whole(path: str, text: str) -> Shown:
    n = text.count("\n") + 1
    return Shown(path, text, whole=True, lines_shown=n, lines_total=n)


def kernel_context(text: str, focus: str | None, files: Mapping[str, str] | None = None, *,
                   path: str = "source.cu", options: ContextOptions | None = None) -> Context:
    """The code the LLM sees for kernel `focus` of `text` (a file at `path`) with its local
    headers `files` (path -> text). Never raises: when the analysis fails the whole file and
    headers are shown, and `fallback` says why."""
    opts = options or ContextOptions()
    files = dict(files or {})
    try:
        return _context(text, focus, files, path, opts)
    except Exception as exc:  # our analysis failing is no reason to lose the record
        return Context(main=_whole(path, text), headers=[_whole(p, t) for p, t in sorted(files.items())],
                       fallback=f"excerpt failed: {type(exc).__name__}: {exc}")


def _context(text: str, focus: str | None, files: dict[str, str], path: str,
             opts: ContextOptions) -> Context:
    if not opts.excerpt:
        return Context(main=_whole(path, text),
                       headers=[_whole(p, t) for p, t in sorted(files.items())],
                       fallback="excerpts are off")
    main = _walker(path, text)
    headers = {p: _walker(p, t) for p, t in sorted(files.items()) if len(t) >= opts.whole_below}
    main_units = main.units_for(focus)
    header_units = {p: w.units_for(focus) for p, w in headers.items()}
    units = main_units + [u for us in header_units.values() for u in us]
    kernels = {n for u in main_units if u.kind == "kernel" for n in u.names}
    fallback = None
    if focus is None:
        fallback = "no focus kernel: every kernel of the file is wanted"
    elif focus not in kernels:
        fallback = f"the analysis found no kernel {focus} at the top level of the file"
    elif len(kernels) == 1:
        fallback = "the file defines one kernel"
    elif len(text) < opts.whole_below:
        fallback = f"the file is under {opts.whole_below} characters"
    if fallback is None:
        roots = [u for u in main_units if u.kind == "kernel" and focus in u.names]
        kept = _excerpt_units(units, roots, focus, opts)
        shown_main = _render(main, main_units, kept)
        if shown_main.lines_shown >= shown_main.lines_total:
            shown_main = _whole(path, text)
    else:
        roots = list(main_units)
        kept = _excerpt_units(units, roots, None, opts)
        shown_main = _whole(path, text)
    shown_headers: list[Shown] = []
    unused: list[str] = []
    for p, t in sorted(files.items()):
        w = headers.get(p)
        if w is None:
            shown_headers.append(_whole(p, t))
            continue
        used = [u for u in header_units[p] if id(u) in kept and u.kind not in ("always", "container")]
        if not used:
            unused.append(p)
            continue
        s = _render(w, header_units[p], kept)
        shown_headers.append(_whole(p, t) if s.lines_shown >= s.lines_total else s)
    return Context(main=shown_main, headers=shown_headers, unused_headers=unused,
                   fallback=fallback)
