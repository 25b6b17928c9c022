"""The tree-sitter-cuda syntax tree helpers the rewrite and the lockstep copies share."""

from __future__ import annotations

from collections.abc import Iterator

from tree_sitter import Node


def walk(node: Node) -> Iterator[Node]:
    """Every node under `node`, `node` first, in source order."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))


def text(src: bytes, node: Node) -> str:
    return src[node.start_byte : node.end_byte].decode("utf-8", "replace")
