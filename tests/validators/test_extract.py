"""The program in a completion, as `validators.extract` finds it: the first fenced block, or with
a language asked for (KernelBench answers are Python) the first block in that language, else the
first untagged one; `cuset.eval.extract` is the same code."""

from __future__ import annotations

import pytest

from validators.extract import extract_program, extract_python

F = "```"


@pytest.mark.parametrize(("text", "expected"), [
    (f"{F}python\nclass ModelNew: pass\n{F}", "class ModelNew: pass\n"),
    (f"{F}py\na = 1\n{F}", "a = 1\n"),
    (f"{F}Python3 title=answer.py\nb = 2\n{F}", "b = 2\n"),           # first word, any case
    # the kernel shown first in C++, the answer after it: the Python block is the answer
    (f"{F}cpp\n__global__ void k() {{}}\n{F}\ntext\n{F}python\nanswer\n{F}", "answer\n"),
    (f"{F}\nuntagged\n{F}", "untagged\n"),                             # no language: taken
    (f"{F}\nuntagged\n{F}\n{F}python\ntagged\n{F}", "tagged\n"),       # a tagged one wins
    (f"{F}cuda\nonly CUDA\n{F}", None),                                # no Python at all
    # a fence inside a longer block opens nothing: the block after it is the answer
    (f"````\n{F}python\nquoted\n{F}\n````\n{F}python\nreal\n{F}", "real\n"),
    ("\r\n".join([f"{F}cpp", "k", F, f"{F}python", "x = 1", F, ""]), "x = 1\n"),
    (f"{F}python\ncut by max tokens", "cut by max tokens"),
    ("class ModelNew: pass", None),
])
def test_python_answer(text, expected):
    assert extract_python(text) == expected
    assert extract_program(text, language="python") == expected


def test_without_a_language_the_first_block_wins():
    text = f"{F}cpp\nfirst\n{F}\n{F}python\nsecond\n{F}"
    assert extract_program(text) == "first\n"


def test_cuset_keeps_the_same_extractor():
    from cuset.eval import extract as old

    assert old.extract_program is extract_program
    assert old.extract_python is extract_python
