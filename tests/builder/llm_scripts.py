"""Scripted LLM answers for the builder's tests: what an honest (or careless, or manipulated)
model would answer for real kernels, served by the OpenAI-compatible stand-in.

The programs under `llm_answers/` wrap real third-party kernels verbatim; their harness (main,
file I/O, launch configuration) is ours.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ANSWERS = HERE / "llm_answers"
SHARED = HERE.parents[2] / "shared" / "data"
LIU = SHARED / "github" / "Liu-xiandong__How_to_optimize_in_GPU" / "files"

ADD_REFERENCE = "import numpy as np\n\ndef reference(inputs, sizes):\n    return {'c': inputs['a'] + inputs['b']}\n"


def add_answer(program: str, reference: str = ADD_REFERENCE, **changes: Any) -> dict[str, Any]:
    """A task for Liu-xiandong's `add` kernel (c = a + b), five cases, and `program`."""
    ans: dict[str, Any] = {
        "task_name": "elementwise_add",
        "description": (
            "Elementwise vector addition: c[i] = a[i] + b[i] for i in [0, N).\n\nInputs:\n"
            "- `a`: float32 array of shape [N]\n- `b`: float32 array of shape [N]\nOutputs:\n"
            "- `c`: float32 array of shape [N]\nSizes (defaults): N = 100000.\n\nThe program reads "
            "each input from data/<name>.bin and writes each output to data/<name>.bin (raw "
            "little-endian). N is a macro with an #ifndef default that -D can override."),
        "inputs": [{"name": "a", "dtype": "float32", "shape": ["N"], "description": "first addend"},
                   {"name": "b", "dtype": "float32", "shape": ["N"], "description": "second addend"}],
        "outputs": [{"name": "c", "dtype": "float32", "shape": ["N"], "description": "the sum"}],
        "sizes": {"N": 100000},
        "cases": [
            {"name": "default", "sizes": {}, "distributions": {}},
            {"name": "not_block_multiple", "sizes": {"N": 1000},
             "distributions": {"a": {"kind": "normal", "std": 10.0}}},
            {"name": "one_block", "sizes": {"N": 256}, "distributions": {}},
            {"name": "edges", "sizes": {"N": 4099},
             "distributions": {"a": {"kind": "edge", "low": -1e30, "high": 1e30},
                               "b": {"kind": "edge", "low": -1e30, "high": 1e30}}},
            {"name": "single", "sizes": {"N": 1},
             "distributions": {"b": {"kind": "constant", "value": 3.5}}},
        ],
        "reference": reference,
        "tolerance": {"mode": "allclose", "atol": 1e-6, "rtol": 1e-6},
        "program": program,
    }
    ans.update(changes)
    return ans


def right_add() -> str:
    return (ANSWERS / "elementwise_add.cu").read_text()


def wrong_add() -> str:
    """The same harness launching N / 256 blocks: it drops the tail when N is not a multiple
    of the block (its arrays stay padded to whole blocks, so nothing else is wrong)."""
    wrong = right_add().replace(
        "add<<<blocks, THREAD_PER_BLOCK>>>", "add<<<N / THREAD_PER_BLOCK, THREAD_PER_BLOCK>>>")
    assert wrong != right_add()
    return wrong


def user_text(body: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content", "")) for m in body.get("messages", []) if m.get("role") == "user")


def record_of(body: dict[str, Any]) -> str:
    """The record id the prompt names (`The record: <id>.`)."""
    m = re.search(r"The record: (\S+?)\.(?:\s|$)", user_text(body))
    return m.group(1) if m else ""


def is_repair(body: dict[str, Any]) -> bool:
    return "did not pass" in user_text(body)


def as_json(value: Any) -> str:
    return json.dumps(value)
