"""The program in a completion: the first fenced block, whatever its info string."""

from __future__ import annotations

import pytest

from cuset.eval.extract import extract_program

F = "```"


@pytest.mark.parametrize(("text", "expected"), [
    (f"Here it is:\n{F}cuda\nint main() {{}}\n{F}\nDone.", "int main() {}\n"),
    (f"{F}cpp\na\n{F}", "a\n"),
    (f"{F}c++\nb\n{F}", "b\n"),
    (f"{F}\nc\n{F}", "c\n"),
    (f"{F}cuda title=main.cu\nd\n{F}", "d\n"),                 # any info string
    (f"{F}cuda\nfirst\n{F}\n{F}cuda\nsecond\n{F}", "first\n"),  # the first block wins
    (f"  {F}cuda\nindented\n  {F}", "indented\n"),
    (f"{F}cuda\ncut by max tokens", "cut by max tokens"),      # unterminated: the rest
    (f"````\nouter {F} inside\n{F}\n````", f"outer {F} inside\n{F}\n"),  # longer fence
    (f"{F}cuda\n{F}", ""),                                      # empty block
    ("int main() { return 0; }", None),                         # no fence: no program
    (f"inline {F}cuda int main(){F} is not a block", None),
    ("", None),
])
def test_extract(text, expected):
    assert extract_program(text) == expected
