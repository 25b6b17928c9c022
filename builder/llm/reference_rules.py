"""The allow-list an LLM-written NumPy reference is checked against before it runs.

A reference only computes: arrays in, arrays out. Everything it names must be on these lists,
so an alias (`import os as o`, `g = getattr`, `from numpy import load as ld`), a route through
`__builtins__` or a namespace with file or foreign-function access (`np.lib`, `np.ctypeslib`,
`arr.tofile`) is refused by name rather than missed by a deny-list:

- imports: `REFERENCE_IMPORTS` only; `from M import x` only for an `x` of M's allowed names;
- names: any builtin it uses (read, bound or called) must be in `ALLOWED_BUILTINS` (so `open`,
  `getattr`, `eval`, `__import__` are refused however they are reached), and no `__dunder__`
  name (`__builtins__`, `__loader__`) at all;
- attributes: every `.name` must be in `ALLOWED_ATTRIBUTES`, the public names of the allowed
  modules (less `NUMPY_EXCLUDED`: files, memory maps, foreign functions, introspection, and
  randomness, which no reference needs) and of the values they produce (arrays, dtypes,
  ufuncs, numbers, containers); never a dunder.

The check is static and conservative: it is a readable refusal that the LLM can act on (the
re-ask path), not the guarantee. The guarantee is the sandbox the reference runs in
(`validators.reference`, `validators.sandbox`): no network, no files outside its folder, its
own process tree and limits, whatever the code does.
"""

from __future__ import annotations

import ast
import builtins
import cmath
import functools
import itertools
import math
import types

import numpy as np

REFERENCE_IMPORTS = frozenset({"numpy", "numpy.linalg", "numpy.fft", "math", "cmath",
                               "functools", "itertools", "operator"})
"""Modules a reference may import: pure computation."""

NUMPY_EXCLUDED = frozenset({
    # files, memory maps, pickles
    "load", "save", "savez", "savez_compressed", "savetxt", "loadtxt", "genfromtxt", "fromfile",
    "fromregex", "memmap", "DataSource", "tofile", "dump", "dumps",
    # foreign memory and functions, compilation, native libraries
    "ctypeslib", "ctypes", "f2py", "distutils", "from_dlpack", "__dlpack__", "get_include",
    # introspection and namespaces that reach the above
    "lib", "core", "_core", "testing", "info", "source", "lookfor", "show_config",
    "show_runtime", "rec", "char", "strings", "ma", "typing", "version", "exceptions",
    "dtypes", "matlib", "polynomial", "emath", "array_api", "compat", "os", "sys",
    # randomness: a reference is a function of its inputs
    "random",
})

ALLOWED_BUILTINS = frozenset({
    "abs", "all", "any", "bool", "complex", "dict", "divmod", "enumerate", "filter", "float",
    "frozenset", "int", "isinstance", "iter", "len", "list", "map", "max", "min", "next", "pow",
    "print", "range", "reversed", "round", "set", "slice", "sorted", "sum", "tuple", "zip",
    "ord", "chr", "bin", "hex", "oct", "callable", "hash", "NotImplemented", "Ellipsis",
}) | frozenset(n for n in dir(builtins)
               if isinstance(getattr(builtins, n), type) and issubclass(getattr(builtins, n), BaseException))
"""Builtins a reference may use; exceptions are only raised or caught."""

_OPERATOR_ALLOWED = frozenset({
    "abs", "add", "and_", "concat", "contains", "countOf", "eq", "floordiv", "ge", "gt", "index",
    "indexOf", "inv", "invert", "itemgetter", "le", "lshift", "lt", "matmul", "mod", "mul", "ne",
    "neg", "not_", "or_", "pos", "pow", "rshift", "sub", "truediv", "truth", "xor",
})
_FUNCTOOLS_ALLOWED = frozenset({"reduce", "partial", "lru_cache", "cache", "cmp_to_key"})
_STR_EXCLUDED = frozenset({"format", "format_map"})
"""`"{0.__class__}".format(x)` reaches attributes through a string, out of sight of the AST."""


def _public(obj: object, exclude: frozenset[str] = frozenset()) -> set[str]:
    return {n for n in dir(obj) if not n.startswith("_") and n not in exclude}


def _numpy_names(module: types.ModuleType) -> set[str]:
    # Submodules are reached only through the allowed ones (linalg, fft).
    return {n for n in _public(module, NUMPY_EXCLUDED)
            if not isinstance(getattr(module, n, None), types.ModuleType)}


def _module_names() -> dict[str, frozenset[str]]:
    return {
        "numpy": frozenset(_numpy_names(np) | {"linalg", "fft"}),
        "numpy.linalg": frozenset(_numpy_names(np.linalg)),
        "numpy.fft": frozenset(_numpy_names(np.fft)),
        "math": frozenset(_public(math)),
        "cmath": frozenset(_public(cmath)),
        "itertools": frozenset(_public(itertools)),
        "functools": _FUNCTOOLS_ALLOWED,
        "operator": _OPERATOR_ALLOWED,
    }


MODULE_NAMES = _module_names()
"""What `from M import x` may take, per allowed module."""


def _value_attributes() -> set[str]:
    values: list[object] = [
        np.zeros(1), np.dtype("float32"), np.finfo(np.float32), np.iinfo(np.int32), np.add,
        np.float32(0), np.int64(0), np.errstate(), np.nditer(np.zeros(1)), np.ndindex(1),
        np.zeros(1).flat, np.linalg.svd(np.eye(2)), 0, 0.0, 0j, True, "", b"", [], (), {},
        set(), frozenset(), range(0), slice(0), {}.items(), functools.partial(abs),
    ]
    names: set[str] = set()
    for v in values:
        names |= _public(v, NUMPY_EXCLUDED | _STR_EXCLUDED)
    return names


ALLOWED_ATTRIBUTES = frozenset(set().union(*MODULE_NAMES.values()) | _value_attributes())
"""Every `.name` a reference may use: the allowed modules' names and those of the values
they produce."""


def _is_dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


def reference_problems(tree: ast.AST) -> list[str]:
    """Everything in `tree` outside the allow-lists, one line each with its line number."""
    problems: list[str] = []
    for node in ast.walk(tree):
        line = getattr(node, "lineno", "?")
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name not in REFERENCE_IMPORTS:
                    problems.append(f"reference imports {a.name!r} (line {line}); only "
                                    f"{', '.join(sorted(REFERENCE_IMPORTS))} are allowed")
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level or module not in REFERENCE_IMPORTS:
                problems.append(f"reference imports from {module or '.'!r} (line {line}); only "
                                f"{', '.join(sorted(REFERENCE_IMPORTS))} are allowed")
                continue
            for a in node.names:
                if a.name not in MODULE_NAMES.get(module, frozenset()):
                    problems.append(f"reference imports {a.name!r} from {module} (line {line}), "
                                    f"which is not on the list of what a reference may use")
        elif isinstance(node, ast.Name):
            if _is_dunder(node.id):
                problems.append(f"reference uses the name {node.id} (line {line})")
            elif hasattr(builtins, node.id) and node.id not in ALLOWED_BUILTINS:
                problems.append(f"reference uses the builtin {node.id}() (line {line}); a "
                                f"reference only computes: file, process and introspection "
                                f"builtins are refused")
        elif isinstance(node, ast.arg | ast.alias):
            name = node.arg if isinstance(node, ast.arg) else (node.asname or node.name)
            if hasattr(builtins, name.split(".")[0]) and name not in ALLOWED_BUILTINS:
                problems.append(f"reference binds the builtin name {name} (line {line})")
        elif isinstance(node, ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef):
            if hasattr(builtins, node.name) and node.name not in ALLOWED_BUILTINS:
                problems.append(f"reference redefines the builtin {node.name} (line {line})")
        elif isinstance(node, ast.Attribute):
            if _is_dunder(node.attr):
                problems.append(f"reference uses the dunder attribute {node.attr} (line {line})")
            elif node.attr not in ALLOWED_ATTRIBUTES:
                problems.append(f"reference uses .{node.attr} (line {line}), not on the allow-list "
                                f"(NumPy computation and array methods, math, cmath, itertools, "
                                f"functools, operator; no files, memory maps, foreign functions "
                                f"or randomness)")
        elif isinstance(node, ast.Global | ast.Nonlocal):
            for name in node.names:
                if hasattr(builtins, name) and name not in ALLOWED_BUILTINS:
                    problems.append(f"reference rebinds the builtin {name} (line {line})")
    return problems
