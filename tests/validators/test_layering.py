"""Nothing under `validators/` imports `cuset` or `builder`: the validation service is built on
`validators`, `schemas` and the task loaders (`sources`), so it can be deployed without the
training and data-building code (issue 24, item 6)."""

from __future__ import annotations

import ast
from pathlib import Path

import validators

FORBIDDEN = ("cuset", "builder")


def _imports(tree: ast.AST) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):  # function-level (lazy) imports count too
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute | ast.Name)
              and (getattr(node.func, "attr", None) or getattr(node.func, "id", None))
              in ("import_module", "__import__")
              and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)):
            found.append((node.lineno, node.args[0].value))
    return found


def test_validators_imports_neither_cuset_nor_builder():
    root = Path(validators.__file__).parent
    files = sorted(root.rglob("*.py"))
    assert len(files) > 20, f"found only {len(files)} modules under {root}"
    bad = [f"{f.relative_to(root.parent)}:{line}: imports {name}"
           for f in files for line, name in _imports(ast.parse(f.read_text(encoding="utf-8")))
           if name.split(".")[0] in FORBIDDEN]
    assert not bad, "\n".join(bad)


def test_the_check_sees_a_lazy_import():
    tree = ast.parse("def f():\n    from cuset.eval.extract import extract_program\n")
    assert _imports(tree) == [(2, "cuset.eval.extract")]
