"""Issue 21, class 8: smaller holes. Each exploit fails with its reason; the honest form passes.

- a closing code fence followed by CRLF (or a lone CR) ends the extracted program;
- the HeCBench harness reads a quoted `#include` only from beneath the program's folder and its
  Makefile's sibling folders: an absolute path, a `..` component or a link is refused, named;
- the static check of an LLM-written reference is an allow-list (imports, builtins, attributes):
  aliases, `__builtins__` and NumPy's file and foreign-function namespaces are refused by name.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from builder.llm.extract import extract_json
from cuset.eval.extract import extract_program
from sources.builtin.loader import load_all

F = "```"
PROGRAM = "int main() {\n  return 0;\n}\n"


@pytest.mark.parametrize("eol", ["\n", "\r\n", "\r"])
def test_a_closing_fence_ends_the_program_whatever_the_line_ending(eol):
    text = eol.join(["Here:", f"{F}cuda", "int main() {", "  return 0;", "}", F,
                     "Explanation: this prose is not code.", ""])
    assert extract_program(text) == PROGRAM


@pytest.mark.parametrize("eol", ["\r\n", "\r"])
def test_only_the_first_block_is_taken_with_crlf_or_cr(eol):
    text = eol.join([f"{F}cuda", "first", F, f"{F}cuda", "second", F])
    assert extract_program(text) == "first\n"


@pytest.mark.parametrize("eol", ["\n", "\r\n", "\r"])
def test_a_json_answer_in_a_fence_parses_whatever_the_line_ending(eol):
    # An object before the fence is not the answer: the fenced one is, once its fence is seen.
    text = eol.join(['For example {"program": "not this"}:', f"{F}json", '{"program": "x"}', F, ""])
    assert extract_json(text) == {"program": "x"}


# --- the HeCBench harness inlines quoted includes from beneath the include folders only ---

REPO = Path(__file__).resolve().parents[2]


def _harness():
    spec = importlib.util.spec_from_file_location("hecbench_cpu_small_holes", REPO / "benchmarks" / "hecbench_cpu.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Path]:
    """data/prog-cuda (the program), data/sib-cuda (a sibling), and a secret outside both."""
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "key.h").write_text("SECRET_KEY_MATERIAL\n")
    prog = tmp_path / "data" / "prog-cuda"
    (prog / "sub").mkdir(parents=True)
    (tmp_path / "data" / "sib-cuda").mkdir()
    (tmp_path / "data" / "sib-cuda" / "common.h").write_text("int sibling_helper;\n")
    (prog / "local.h").write_text('#include "sub/inner.h"\nint local_helper;\n')
    (prog / "sub" / "inner.h").write_text("int inner_helper;\n")
    (prog / "Makefile").write_text("CFLAGS := -I../sib-cuda\nrun:\n\t./main 1\n")
    (prog / "linked.h").symlink_to(secret / "key.h")
    (prog / "linkdir").symlink_to(secret)
    return {"prog": prog, "secret": secret}


def test_honest_includes_are_inlined_from_the_folder_and_its_siblings(tree):
    h = _harness()
    dirs, _ = h.include_dirs(tree["prog"])
    out = h.inline_local_includes(dirs, '#include "local.h"\n#include "common.h"\n#include <cstdio>\n')
    assert out == "int inner_helper;\n\nint local_helper;\n\nint sibling_helper;\n\n#include <cstdio>\n"
    # Found nowhere: left for the compiler to report.
    assert h.inline_local_includes(dirs, '#include "missing.h"\n') == '#include "missing.h"\n'


@pytest.mark.parametrize("include, why", [
    ("{secret}/key.h", "an absolute path"),
    ("../../secret/key.h", "'..' component"),
    ("sub/../../../secret/key.h", "'..' component"),
    ("linked.h", "symbolic link"),
    ("linkdir/key.h", "symbolic link"),
])
def test_an_include_outside_the_folders_is_refused_and_never_read(tree, include, why):
    h = _harness()
    include = include.format(secret=tree["secret"])
    dirs, _ = h.include_dirs(tree["prog"])
    with pytest.raises(h.IncludeRefused, match=why) as err:
        h.inline_local_includes(dirs, f'int x;\n#include "{include}"\n')
    assert f'#include "{include}" refused' in str(err.value)


def test_a_header_cannot_smuggle_an_escape_either(tree):
    h = _harness()
    (tree["prog"] / "local.h").write_text(f'#include "{tree["secret"]}/key.h"\n')
    with pytest.raises(h.IncludeRefused, match="an absolute path"):
        h.inline_local_includes(h.include_dirs(tree["prog"])[0], '#include "local.h"\n')


def test_makefile_include_folders_are_siblings_only(tree):
    h = _harness()
    (tree["prog"].parent / "linksib").symlink_to(tree["secret"])
    (tree["prog"] / "Makefile").write_text("CFLAGS := -I../.. -I../linksib -I../sib-cuda\n")
    dirs, notes = h.include_dirs(tree["prog"])
    assert dirs == [tree["prog"], tree["prog"].parent / "sib-cuda"]
    assert any("-I../.. ignored" in n for n in notes) and any("-I../linksib ignored" in n for n in notes)


def test_the_harness_reports_the_program_refused(tree):
    h = _harness()
    (tree["prog"] / "main.cu").write_text(f'#include "{tree["secret"]}/key.h"\nint main() {{}}\n')
    row = h.run_one(None, tree["prog"], ["forward"], ["plain"])
    assert row["verdict"] == "refused" and "an absolute path" in row["reason"], row


# --- an LLM-written NumPy reference: an allow-list, which aliases cannot walk around ---

def _ref(body: str, head: str = "import numpy as np\n") -> str:
    return head + "def reference(inputs, sizes):\n" + "".join(f"    {ln}\n" for ln in body.splitlines())


@pytest.mark.parametrize("code, named", [
    (_ref("return {'c': ld('c.npy')}", "import numpy as np\nfrom numpy import load as ld\n"), "'load' from numpy"),
    (_ref("g = getattr\nf = g(np, 'load')\nreturn {'c': f('c.npy')}"), "builtin getattr()"),
    (_ref("o = open\nreturn {'c': np.array(len(o('/etc/passwd').read()))}"), "builtin open()"),
    (_ref("f = __builtins__['open']\nreturn {'c': f('/etc/hostname')}"), "the name __builtins__"),
    (_ref("m = np.lib.format.open_memmap('c.npy', mode='r')\nreturn {'c': m}"), ".lib"),
    (_ref("lib = np.ctypeslib.load_library('libc', '/lib')\nreturn {'c': inputs['a']}"), ".ctypeslib"),
    (_ref("return {'c': npyio.DataSource().open('/etc/hostname')}", "import numpy.lib.npyio as npyio\n"), "'numpy.lib.npyio'"),
    (_ref("f = operator.attrgetter('__globals__')\nreturn {'c': f(reference)}", "import operator\n"), ".attrgetter"),
    (_ref("s = '{0.__globals__}'.format(reference)\nreturn {'c': inputs['a']}"), ".format"),
    (_ref("rng = np.random.default_rng()\nreturn {'c': rng.random(3)}"), ".random"),
    (_ref("open = np.add\nreturn {'c': inputs['a']}"), "builtin open()"),
])
def test_a_reference_that_aliases_its_way_past_a_deny_list_is_refused(code, named):
    from builder.llm.answers import check_reference

    problems = check_reference(code)
    assert any(named in p for p in problems), problems


HONEST_REFERENCE = """
import math
import functools
import itertools
import operator
import numpy as np
from numpy.linalg import norm


def reference(inputs, sizes):
    a = inputs["a"].astype(np.float64)
    n = int(sizes["N"])
    with np.errstate(over="ignore", invalid="ignore"):
        spectrum = np.abs(np.fft.rfft(a))
    hist = np.zeros(8, dtype=np.int64)
    np.add.at(hist, (np.arange(n) % 8), 1)
    pairs = sum(i * j for i, j in itertools.product(range(3), repeat=2))
    prod = functools.reduce(operator.mul, [1, 2, 3], 1)
    if n < 0:
        raise ValueError("negative size")
    out = {"c": (a / max(norm(a), 1e-30) + math.sqrt(2) + pairs + prod).astype(np.float32),
           "h": hist.astype(np.int32), "s": spectrum.sum(keepdims=True).astype(np.float32)}
    return {k: np.ascontiguousarray(v) for k, v in out.items()}
"""


def test_honest_references_pass_the_allow_list():
    from builder.llm.answers import check_reference

    assert check_reference(HONEST_REFERENCE) == []
    loaded = load_all()
    assert len(loaded.tasks) == 59
    refused = {t.name: check_reference(t.reference.code, t.reference.entrypoint) for t, _ in loaded.tasks}
    assert {k: v for k, v in refused.items() if v} == {}
