"""Launch sites `k<<<grid, block, shmem, stream>>>(args)` and the statements computing their
configuration."""

from __future__ import annotations

from tree_sitter import Node

from .functions import declarator_name, last_name
from .model import ApiLaunch, Dim3Decl, Launch, TextRange
from .parse import Source, captures, query, squash

MAX_FOLLOW_DEPTH = 4
"""How many definition hops to follow back from a configuration identifier."""


def _args(src: Source, node: Node | None) -> list[str]:
    if node is None:
        return []
    return [squash(src.node_text(c)) for c in node.named_children if c.type != "comment"]


def build_launch(
    src: Source, syntax: Node, function: str | None, in_device: bool, in_lambda: bool
) -> Launch:
    call = syntax.parent
    callee: Node | None
    arglist: Node | None
    if call is not None and call.type == "call_expression":
        callee = call.child_by_field_name("function")
        arglist = call.child_by_field_name("arguments")
        whole = call
    else:
        # Inside an ERROR node: take the neighbours as callee and argument list when they fit.
        callee = syntax.prev_named_sibling
        if callee is not None and last_name(callee) is None:
            callee = None
        arglist = syntax.next_named_sibling
        if arglist is not None and arglist.type != "argument_list":
            arglist = None
        whole = syntax
    name = last_name(callee) if callee is not None else None
    template_args: list[str] = []
    t = callee
    while t is not None and t.type == "qualified_identifier":
        t = t.child_by_field_name("name")
    if t is not None and t.type == "template_function":
        template_args = _args(src, t.child_by_field_name("arguments"))
    start = src.start(callee) if callee is not None and whole is syntax else src.start(whole)
    end = src.end(arglist) if arglist is not None and whole is syntax else src.end(whole)
    return Launch(
        kernel=src.node_text(name) if name is not None else "",
        callee=squash(src.node_text(callee)) if callee is not None else "",
        template_args=template_args,
        config=_args(src, syntax),
        args=_args(src, arglist),
        line=src.line(syntax),
        config_span=TextRange(start=src.start(syntax), end=src.end(syntax)),
        call_span=TextRange(start=start, end=end),
        function=function,
        in_device_code=in_device,
        in_lambda=in_lambda,
        macro=src.macro,
    )


def declarator_value(d: Node) -> Node | None:
    """The initialiser of one declarator in a function body. `dim3 grid (nblks);` parses as a
    function declaration (C++'s most vexing parse); there its parameter list is the
    constructor's argument list, with the variable names as parameter types."""
    if d.type == "init_declarator":
        return d.child_by_field_name("value")
    if d.type == "function_declarator":
        return d.child_by_field_name("parameters")
    return None


def identifiers_in(node: Node) -> list[Node]:
    """Every `identifier` under `node` (not field names: `grid.x` yields `grid`), and the names
    a most-vexing-parse parameter list holds as types (see `declarator_value`)."""
    out = []
    stack = [node]
    while stack:
        n = stack.pop()
        t = n.type
        if t == "identifier" or (
            t == "type_identifier"
            and n.parent is not None
            and n.parent.type == "parameter_declaration"
        ):
            out.append(n)
        elif n.named_child_count:
            stack.extend(n.named_children)
    return out


def _assigned_name(target: Node) -> Node | None:
    """The variable an assignment target writes: `g` for `g`, `g.x`, `g[i]`, `*g`."""
    while target is not None:
        if target.type == "identifier":
            return target
        if target.type in ("field_expression", "subscript_expression"):
            target = target.child_by_field_name("argument")
        elif target.type == "pointer_expression":
            target = target.child_by_field_name("argument")
        elif target.type == "parenthesized_expression":
            target = target.named_child(0) if target.named_child_count else None
        else:
            return None
    return None


_Entry = tuple[Node, "Node | None"]
_STATEMENTS = "(declaration) @decl (expression_statement) @stmt"


class Definitions:
    """Per function: variable name -> the declarations and assignments of it, with scopes.

    A statement "assigns" `v` when it is `v = ...`, `v.x op= ...`, `v++`, or passes `&v` to a call
    (`cudaOccupancyMaxPotentialBlockSize(&minGrid, &block, k)`, `cudaGetDeviceProperties(&p, 0)`).
    Each entry keeps the node whose identifiers feed the value (the initialiser / right side).
    Names resolve by C++ block scope, so `dim3 grid` in one `if` branch is not the `grid` a
    launch in the other branch uses.
    """

    def __init__(self, body: Node) -> None:
        # name -> [(declaration statement, initialiser, scope node)]
        self.decls: dict[bytes, list[tuple[Node, Node | None, Node]]] = {}
        # name -> [(statement, right-hand side)]
        self.assigns: dict[bytes, list[_Entry]] = {}
        caps = captures(query(_STATEMENTS), body)
        for n in caps.get("decl", ()):
            scope = n.parent if n.parent is not None else body
            if scope.type == "condition_clause" and scope.parent is not None:
                scope = scope.parent
            for d in n.children_by_field_name("declarator"):
                name = declarator_name(d)
                if name is not None and name.type == "identifier":
                    self.decls.setdefault(name.text, []).append((n, declarator_value(d), scope))
        for n in caps.get("stmt", ()):
            self._statement(n)

    def resolve(self, name: bytes, at: int) -> tuple[Node, Node | None, Node] | None:
        """The declaration of `name` visible at byte offset `at` (innermost, latest)."""
        best = None
        for entry in self.decls.get(name, ()):
            stmt, _, scope = entry
            if stmt.start_byte < at and scope.start_byte <= at < scope.end_byte:
                if best is None or stmt.start_byte > best[0].start_byte:
                    best = entry
        return best

    def _add(self, name: Node, stmt: Node, value: Node | None) -> None:
        self.assigns.setdefault(name.text, []).append((stmt, value))

    def _statement(self, stmt: Node) -> None:
        if not stmt.named_child_count:
            return
        expr = stmt.named_child(0)
        exprs = [expr]
        while exprs:
            e = exprs.pop()
            t = e.type
            if t == "comma_expression":
                exprs.extend(e.named_children)
            elif t == "assignment_expression":
                name = _assigned_name(e.child_by_field_name("left"))
                if name is not None:
                    self._add(name, stmt, e.child_by_field_name("right"))
            elif t == "update_expression":
                name = _assigned_name(e.child_by_field_name("argument"))
                if name is not None:
                    self._add(name, stmt, None)
            elif t == "call_expression":
                args = e.child_by_field_name("arguments")
                for a in args.named_children if args is not None else ():
                    first = a.child(0) if a.child_count else None
                    if a.type == "pointer_expression" and first is not None and first.type == "&":
                        name = _assigned_name(a.child_by_field_name("argument"))
                        if name is not None:
                            self._add(name, stmt, None)


class FileScope:
    """File- and namespace-scope variable declarations (`constexpr int kBlock = 256;`), indexed
    on first use: most launches never need them."""

    _CONTAINERS = frozenset(
        {
            "namespace_definition",
            "declaration_list",
            "linkage_specification",
            "preproc_if",
            "preproc_ifdef",
            "preproc_else",
            "preproc_elif",
        }
    )

    def __init__(self, root: Node) -> None:
        self._root = root
        self._decls: dict[bytes, tuple[Node, Node | None]] | None = None

    def get(self, name: bytes) -> tuple[Node, Node | None] | None:
        if self._decls is None:
            self._decls = {}
            stack = [self._root]
            while stack:
                for c in stack.pop().named_children:
                    if c.type == "declaration":
                        for d in c.children_by_field_name("declarator"):
                            if d.type == "function_declarator":  # a prototype
                                continue
                            ident = declarator_name(d)
                            if ident is not None and ident.type == "identifier":
                                value = (
                                    d.child_by_field_name("value")
                                    if d.type == "init_declarator"
                                    else None
                                )
                                self._decls.setdefault(ident.text, (c, value))
                    elif c.type in self._CONTAINERS:
                        stack.append(c)
        return self._decls.get(name)


def config_statements(
    defs: Definitions, syntax: Node, arglist: Node | None, files: FileScope | None = None
) -> list[Node]:
    """The statements before this launch that compute the grid, block and shared-memory
    sizes it uses.

    Followed transitively (up to `MAX_FOLLOW_DEPTH` hops), except through variables that are
    also kernel arguments and appear inside a larger expression (`n` in
    `k<<<(n + 255) / 256, 256>>>(x, n)` is problem data, not configuration). Assignments
    count when they come before the launch and write the same variable (same visible
    declaration) the launch reads. Names the function does not declare fall back to
    file-scope declarations (`constexpr int kThreads = 256;`).
    """
    data = {i.text for i in identifiers_in(arglist)} if arglist is not None else set()
    launch_at = syntax.start_byte
    seen: set[tuple[bytes, int]] = set()
    picked: dict[int, Node] = {}
    # A configuration argument that is just a variable (`k<<<1, len>>>(d, len)`) is configuration
    # even when it is also passed to the kernel.
    # Grid, block and shared-memory size only: the stream is not a computed size.
    sized = [a for a in syntax.named_children if a.type != "comment"][:3]
    direct = {a.id for a in sized if a.type == "identifier"}
    frontier = [i for a in sized for i in identifiers_in(a)]
    for _ in range(MAX_FOLLOW_DEPTH):
        nxt: list[Node] = []
        for ident in frontier:
            name = ident.text
            if name in data and ident.id not in direct:
                continue
            decl = defs.resolve(name, ident.start_byte)
            key = (name, decl[0].id if decl is not None else -1)
            if key in seen:
                continue
            seen.add(key)
            if decl is not None:
                picked[decl[0].id] = decl[0]
                if decl[1] is not None:
                    nxt.extend(identifiers_in(decl[1]))
            elif files is not None and name not in defs.assigns:
                top = files.get(name)
                if top is not None and top[0].start_byte < launch_at:
                    picked[top[0].id] = top[0]
                    if top[1] is not None:
                        nxt.extend(identifiers_in(top[1]))
            for stmt, value in defs.assigns.get(name, ()):
                if stmt.start_byte >= launch_at:
                    continue
                target = defs.resolve(name, stmt.start_byte)
                if (target[0].id if target is not None else -1) != key[1]:
                    continue
                picked[stmt.id] = stmt
                if value is not None:
                    nxt.extend(identifiers_in(value))
        if not nxt:
            break
        frontier = nxt
    return sorted(picked.values(), key=lambda n: n.start_byte)


def build_dim3s(src: Source, decl: Node, function: str | None) -> list[Dim3Decl]:
    out = []
    for d in decl.children_by_field_name("declarator"):
        name = declarator_name(d)
        if name is None:
            continue
        args: list[str] = []
        value = declarator_value(d)
        if value is not None:
            if value.type in ("argument_list", "initializer_list", "parameter_list"):
                args = _args(src, value)
            elif value.type == "call_expression":
                args = _args(src, value.child_by_field_name("arguments"))
            else:
                args = [squash(src.node_text(value))]
        out.append(
            Dim3Decl(
                name=src.node_text(name),
                args=args,
                line=src.line(d),
                span=TextRange(start=src.start(d), end=src.end(d)),
                statement=TextRange(start=src.start(decl), end=src.end(decl)),
                function=function,
            )
        )
    return out


API_LAUNCHERS = frozenset(
    {
        "cudaLaunchKernel",
        "cudaLaunchCooperativeKernel",
        "cudaLaunchKernelEx",
        "cudaLaunchKernelExC",
        "cuLaunchKernel",
        "cuLaunchKernelEx",
        "cuLaunchCooperativeKernel",
    }
)
# Where the kernel is in the argument list: cudaLaunchKernelEx(&config, kernel, args...).
_KERNEL_ARG = {"cudaLaunchKernelEx": 1, "cudaLaunchKernelExC": 1, "cuLaunchKernelEx": 1}


def _kernel_in(arg: Node | None) -> Node | None:
    """The function name inside `(void*)k`, `&k`, `reinterpret_cast<void*>(k)`, `k<float>`."""
    while arg is not None:
        t = arg.type
        if t in ("identifier", "qualified_identifier", "template_function"):
            return last_name(arg)
        if t == "cast_expression":
            arg = arg.child_by_field_name("value")
        elif t == "pointer_expression":
            arg = arg.child_by_field_name("argument")
        elif t == "parenthesized_expression":
            arg = arg.named_child(0) if arg.named_child_count else None
        elif t == "call_expression":  # reinterpret_cast<const void*>(k)
            args = arg.child_by_field_name("arguments")
            arg = args.named_child(0) if args is not None and args.named_child_count else None
        else:
            return None
    return None


def build_api_launch(src: Source, call: Node, api: str, function: str | None) -> ApiLaunch:
    arglist = call.child_by_field_name("arguments")
    named = (
        [c for c in arglist.named_children if c.type != "comment"] if arglist is not None else []
    )
    pos = _KERNEL_ARG.get(api, 0)
    name = _kernel_in(named[pos]) if len(named) > pos else None
    return ApiLaunch(
        api=api,
        kernel=src.node_text(name) if name is not None else "",
        args=[squash(src.node_text(c)) for c in named],
        line=src.line(call),
        call_span=TextRange(start=src.start(call), end=src.end(call)),
        function=function,
    )
