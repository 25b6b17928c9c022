"""The cpu rewrite (validators/cpu/rewrite.py) costs about as much as its input is long, whatever
its shape: it runs in the validator's own process, before the sandboxed compiler and outside its
time limit. A valid 45 KB kernel with 1,500 `else if` links took it minutes (the guards of each
assignment were found by walking up every ancestor, and tree-sitter's `Node.parent` is itself a
walk down from the root); the service answered `service_timeout` instead of a verdict. No test
here measures time: each input is one that took seconds to minutes before and must come out
right now."""

from __future__ import annotations

import random
import re

import pytest

from validators.cpu import rewrite as rw
from validators.cpu.rewrite import rewrite
from validators.cpu.syntax import walk

RELU = """\
__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ y, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    float v = x[i];
    y[i] = v > 0.0f ? v : 0.0f;
  }
}
void run(const float* x, float* y, int n) {
  relu_kernel<<<(n + 255) / 256, 256>>>(x, y, n);
}
"""
STATEMENT = "y[i] = v > 0.0f ? v : 0.0f;"


def _chain(links: int, last: str = STATEMENT) -> str:
    """`links` never-taken `else if` branches in front of `last`, all on one line."""
    return "if (v > 1e30f) y[i] = v;" + " else if (v > 1e30f) y[i] = v;" * links + " else " + last


def test_an_else_if_chain_of_1500_links_rewrites_like_any_other_statement() -> None:
    long = RELU.replace(STATEMENT, _chain(1500))
    plain = rewrite(RELU, filename="chain.cu", lockstep=False)
    chained = rewrite(long, filename="chain.cu", lockstep=False)
    # The chain is not touched; everything else is rewritten exactly as without it.
    assert chained.text == plain.text.replace(STATEMENT, _chain(1500))
    assert chained.launches == plain.launches and chained.warnings == plain.warnings == []
    assert "::cudashim::launch" in chained.text and "spin_point" not in chained.text
    # With the lockstep copies (what a build asks for) it completes too and keeps every line.
    full = rewrite(long, filename="chain.cu", lockstep=True)
    assert _chain(1500) in full.text
    assert [x.kernel for x in full.launches] == ["relu_kernel"]


WAITING = """\
__global__ void k(int* lock, float* y, float v) {
  while (true) {
    LINKS_ATOMIC
  }
  while (true) {
    LINKS_PLAIN
  }
}
"""


@pytest.mark.parametrize("links", [1, 1500])
def test_a_loop_left_only_through_a_deep_else_if_is_judged_by_that_guard(links: int) -> None:
    """The exit's guards are every condition of the chain above it: an atomic one makes the
    loop a wait (a spin point), a plain one does not, however deep it sits."""
    src = WAITING.replace(
        "LINKS_ATOMIC", _chain(links, "if (atomicCAS(lock, 0, 1) == 0) break;").replace("y[i]", "y[0]")
    ).replace("LINKS_PLAIN", _chain(links, "if (v > 2.0f) break;").replace("y[i]", "y[0]"))
    out = rewrite(src, filename=f"waiting{links}.cu", lockstep=False).text
    lines = out.splitlines()
    assert len(lines) == len(src.splitlines())
    assert [n for n, line in enumerate(lines, 1) if "spin_point" in line] == [2]
    assert lines[1] == "  while (::cudashim::spin_point(), true) {"


def test_loops_nested_hundreds_deep_complete_and_every_waiting_one_keeps_its_spin_point() -> None:
    """Each loop's answer walks its body: 400 loops inside each other walked their innermost
    statements 400 times. Past a budget of a few passes over the text a loop counts as waiting,
    so a loop that does wait is never left without its spin point."""
    depth = 400
    src = ("__global__ void k(int* c, float* y) {\n"
           + "while (atomicAdd(c, 0) == 0) {\n" * depth + "y[0] = 1.0f;\n" + "}\n" * depth + "}\n")
    out = rewrite(src, filename="nested.cu", lockstep=True).text
    lines = out.splitlines()
    assert sum("while (::cudashim::spin_point(), atomicAdd(c, 0) == 0) {" == line for line in lines) == depth
    plain = src.replace("atomicAdd(c, 0) == 0", "c[0] < 4")
    assert len(rewrite(plain, filename="nested.cu", lockstep=True).text.splitlines()) >= len(plain.splitlines())


def test_a_loop_past_the_budget_counts_as_waiting(monkeypatch: pytest.MonkeyPatch) -> None:
    src = ("__global__ void k(float* x) {\n"
           "  for (int i = 0; i < 8; ++i) x[i] = 2.0f * x[i];\n"
           "}\n")
    assert "spin_point" not in rewrite(src, filename="budget.cu", lockstep=False).text
    monkeypatch.setattr(rw, "LOOP_NODES", -10 * len(src))
    spent = rewrite(src, filename="budget_spent.cu", lockstep=False)
    assert "for (int i = 0; ::cudashim::spin_point(), i < 8; ++i)" in spent.text


def test_shared_declarations_thousands_of_blocks_deep_are_all_rewritten() -> None:
    """Whether a `__shared__` declaration is inside a function, and in a block, came from walking
    up its ancestors (cubic in the depth): 2,000 blocks deep with 200 of them took 7 s, with 2,000
    of them (a 41 KB kernel) 72 s."""
    depth, count = 2000, 200
    decls = "".join(f"__shared__ int s{j};\n" for j in range(count))
    src = "__global__ void k(int* out) {\n" + "{\n" * depth + decls + "out[0] = s0;\n" + "}\n" * depth + "}\n"
    out = rewrite(src, filename="deep_shared.cu", lockstep=True).text
    assert len(out.splitlines()) == len(src.splitlines())
    calls = re.findall(r'::cudashim::shared_decl\(\(void\*\)&(s\d+), sizeof\(s\d+\), "s\d+", __LINE__\);', out)
    assert calls == [f"s{j}" for j in range(count)]


# --- the one-walk exit words against their definition, on random bodies ------------------------

_BREAKABLE = ("for_statement", "while_statement", "do_statement", "switch_statement", "for_range_loop")


def _guard_words_by_ancestors(src: bytes, node, loop) -> set[str]:
    words: set[str] = set()
    child, parent = node, node.parent
    while parent is not None and parent != loop:
        if parent.type in rw._GUARDS:
            cond = parent.child_by_field_name("condition")
            if cond is not None and cond != child:
                words |= rw._words(src, cond)
        child, parent = parent, parent.parent
    return words


def _exit_words_by_definition(src: bytes, loop) -> set[str]:
    """What `_exit_words` computed before it was made one walk (the reference)."""
    deps = rw._words(src, loop.child_by_field_name("condition"))
    body = loop.child_by_field_name("body")
    if body is None:
        return deps
    sources = []
    for node in walk(body):
        if node.type in ("return_statement", "goto_statement", "break_statement"):
            if node.type == "break_statement":
                target = node.parent
                while target is not None and target != loop and target.type not in _BREAKABLE:
                    target = target.parent
                if target != loop:
                    continue
            deps |= _guard_words_by_ancestors(src, node, loop)
        elif node.type in ("assignment_expression", "update_expression"):
            target = node.child_by_field_name("left") or node.child_by_field_name("argument")
            sources.append((rw._words(src, target),
                            rw._words(src, node.child_by_field_name("right"))
                            | _guard_words_by_ancestors(src, node, loop)))
        elif node.type == "init_declarator":
            ident = rw._declared_identifier(node)
            if ident is not None:
                sources.append(({rw._text(src, ident)},
                                rw._words(src, node.child_by_field_name("value"))
                                | _guard_words_by_ancestors(src, node, loop)))
    changed = True
    while changed:
        changed = False
        for assigned, depends in sources:
            if assigned & deps and not depends <= deps:
                deps |= depends
                changed = True
    return deps


def test_exit_words_match_their_definition_on_random_loop_bodies() -> None:
    pieces = ["if (a) ", "if (atomicAdd(f, 0)) ", "while (b) ", "for (; c;) ", "switch (d) { case 1: ",
              "do ", "x = y;", "y = atomicCAS(l, 0, 1);", "break;", "return;", "goto out;", "{", "}",
              "else ", "z = c ? x : w;", "int q = y;", "c++;", "done = true;", ";", "} while (e);",
              "a = b = z;", "if (q > 2.0f) "]
    rng = random.Random(11)
    checked = 0
    for _ in range(150):
        body = " ".join(rng.choice(pieces) for _ in range(rng.randrange(3, 40)))
        text = ("__global__ void k(int* f, int* l) { int a, b, c, d, e, x, y, z, w, q, done;\n"
                f"  while (!done) {{ {body} }}\n  out: ;\n}}\n")
        src = text.encode()
        for loop in walk(rw._parser().parse(src).root_node):
            if loop.type in rw._LOOP_TYPES:
                assert rw._exit_words(src, loop) == _exit_words_by_definition(src, loop), text
                checked += 1
    assert checked > 300


def test_a_nul_byte_is_read_as_the_space_g_plus_plus_reads() -> None:
    """To tree-sitter a NUL is an error token that can break the statement around it (the launch,
    the kernel's qualifiers); g++ reads it as white space, so the rewrite must see what g++ sees."""
    plain = rewrite(RELU, filename="nul.cu", lockstep=True)
    spaces = [i for i, c in enumerate(RELU) if c == " "]
    for i in spaces:
        out = rewrite(RELU[:i] + "\0" + RELU[i + 1 :], filename="nul.cu", lockstep=True)
        assert [x.kernel for x in out.launches] == ["relu_kernel"], (i, out.warnings)
        assert out.warnings == [] and out.lockstep == plain.lockstep, i
        assert len(out.text.splitlines()) == len(plain.text.splitlines())
