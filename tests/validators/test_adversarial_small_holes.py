"""Issue 21, class 8: smaller holes. Each exploit fails with its reason; the honest form passes.

- a closing code fence followed by CRLF (or a lone CR) ends the extracted program;
"""

from __future__ import annotations

import pytest

from builder.llm.extract import extract_json
from cuset.eval.extract import extract_program

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
