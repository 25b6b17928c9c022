"""`--format kernelbench` without builds: spans of a Python answer point inside its CUDA
strings, archive extensions become ModelNew answers with the extension verbatim, records with
no PyTorch problem are refused by name, and the card says which format a build has."""

from __future__ import annotations

import ast
from datetime import UTC, datetime
from pathlib import Path

import pytest
from builder_helpers import make_raw, scale_program, scale_task

from builder.card import card_markdown
from builder.cli import main
from builder.config import BuildConfig
from builder.item import Item
from builder.pipeline import BuildError, build, specifiers
from builder.stages import Annotate, Specify
from builder.stages.kernelbench_form import archive_answer, cuda_literals, response_spans
from schemas import BuildManifest, Program, StageStats
from validators.analysis import analyze

ANSWERS = Path(__file__).resolve().parents[1] / "validators" / "kernelbench" / "answers"
RELU = (ANSWERS / "19_ReLU.py").read_text()


def cuda_of(answer: str, marker: str) -> tuple[int, str]:
    """Where the CUDA source starts in the answer (found by its text, not by the code under
    test) and the source itself."""
    start = answer.index(marker) + len(marker)
    end = answer.index('"""', start)
    return start, answer[start:end]


def assert_spans_are_the_cuda_analysis_shifted(answer: str, marker: str) -> None:
    start, cuda = cuda_of(answer, marker)
    got = response_spans(answer)
    want = analyze(cuda).spans
    assert len(got) == len(want) > 0
    assert sorted((s.start - start, s.end - start, s.kind) for s in got) == \
        sorted((s.start, s.end, s.kind) for s in want)
    for s in got:
        assert start <= s.start <= s.end <= start + len(cuda)
    kinds = {s.kind for s in got}
    assert {"kernel_body", "launch_config"} <= kinds
    bodies = [answer[s.start:s.end] for s in got if s.kind == "kernel_body"]
    assert any("out[i] = v > 0.0f ? v : 0.0f;" in b for b in bodies)
    assert any(answer[s.start:s.end] == "<<<blocks, threads>>>" for s in got)


def test_spans_point_inside_the_cuda_string_of_the_answer() -> None:
    assert_spans_are_the_cuda_analysis_shifted(RELU, 'relu_source = r"""')


def test_offsets_count_characters_not_bytes() -> None:
    # Characters of several UTF-8 bytes before and inside the CUDA string: the AST's columns
    # are bytes, Span offsets are characters.
    answer = RELU.replace("import torch\n", "import torch  # ReLU — max(x, 0), für alle x\n", 1)
    answer = answer.replace("#include <cuda_runtime.h>\n", "#include <cuda_runtime.h>\n// é → ü\n", 1)
    assert answer != RELU and len(answer.encode()) > len(answer)
    assert_spans_are_the_cuda_analysis_shifted(answer, 'relu_source = r"""')


def test_only_strings_whose_text_is_their_value_carry_spans() -> None:
    # An escaped string's value differs from its text: offsets into it would miss the response.
    start, cuda = cuda_of(RELU, 'relu_source = r"""')
    escaped = RELU[:start - len('r"""')] + repr(cuda) + RELU[start + len(cuda) + 3:]
    assert "\\n" in escaped and "__global__" in escaped
    assert cuda_literals(escaped) == []
    with pytest.raises(ValueError, match="no CUDA source string"):
        response_spans(escaped)
    both = escaped + f'\n\nagain = r"""{cuda}"""\n'
    (lit,) = cuda_literals(both)
    assert both[lit.start:lit.start + len(lit.text)] == cuda


def test_an_answer_without_cuda_is_rejected_at_annotate() -> None:
    item = Item(raw=make_raw("r", ""), program=Program(source="import torch\nclass ModelNew: pass\n"))
    out = Annotate(format="kernelbench").process(item)
    assert out.rejection is not None and out.rejection.reason == "no_cuda_source"
    assert "no CUDA source string" in out.rejection.detail


PROBLEM = '''import torch
import torch.nn as nn
import torch.nn.functional as F


def module_fn(x: torch.Tensor) -> torch.Tensor:
    return F.relu(x)


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, fn=module_fn):
        return fn(x)


def get_inputs():
    return [torch.randn(16, 64)]


def get_init_inputs():
    return []
'''


def test_an_archive_extension_becomes_a_modelnew_holding_it_verbatim() -> None:
    _, extension = cuda_of(RELU, 'relu_source = r"""')
    extension += '\nPYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &relu_cuda); }\n'
    answer = archive_answer(PROBLEM, extension)
    tree = ast.parse(answer)
    defined = {n.name for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    # The functional reference it calls, not the input functions (kept out of the answer).
    assert {"ModelNew", "Model", "module_fn"} <= defined
    assert not defined & {"get_inputs", "get_init_inputs"}
    (lit,) = cuda_literals(answer)
    assert lit.text == extension and answer[lit.start:lit.start + len(extension)] == extension
    assert len(response_spans(answer)) == len(analyze(extension).spans)


def test_records_with_no_pytorch_problem_are_refused_by_name() -> None:
    specify = Specify(specifiers(BuildConfig(format="kernelbench")))
    task_record = specify.process(Item(raw=make_raw("b", scale_program(), task=scale_task())))
    assert task_record.rejection is not None
    assert task_record.rejection.reason == "not_kernelbench_form"
    assert "standalone task" in task_record.rejection.detail
    module = make_raw("m", "").model_copy(update={"kind": "module", "module": PROBLEM})
    no_llm = specify.process(Item(raw=module))
    assert no_llm.rejection is not None and no_llm.rejection.reason == "no_task_specifier"
    assert "--llm-model" in no_llm.rejection.detail


def test_an_unknown_format_is_refused(tmp_path: Path, capsys) -> None:
    with pytest.raises(BuildError, match="--format standalone: must be one of program, kernelbench"):
        build(BuildConfig(format="standalone", out=tmp_path / "o"))
    with pytest.raises(SystemExit) as exc:
        main(["run", "--format", "standalone", "--out", str(tmp_path / "o")])
    assert exc.value.code == 2
    assert "--format" in capsys.readouterr().err


def manifest(fmt: str | None) -> BuildManifest:
    return BuildManifest(
        created_at=datetime(2026, 1, 1, tzinfo=UTC), tool_version="0.1.0", backend="cpu",
        sources=["kernelbench"], shards=[], splits={"train": 0},
        config={} if fmt is None else {"format": fmt},
        stages=[StageStats(name="gather", records_in=1, records_out=1)],
    )


def test_the_card_says_which_format_a_build_has() -> None:
    kb = card_markdown([], manifest("kernelbench"), schedules=["forward"], variants=["plain"])
    assert "Format: `kernelbench`" in kb and "ModelNew" in kb and "validators.kernelbench" in kb
    assert "- kernelbench" in kb.split("\n---\n", 1)[0]  # a Hub tag in the front matter
    for fmt in ("program", None):  # a manifest from before --format is a program build
        text = card_markdown([], manifest(fmt), schedules=["forward"], variants=["plain"])
        assert "Format: `program`" in text and "ModelNew" not in text


def test_a_kernelbook_module_is_posed_as_a_kernelbench_problem() -> None:
    from builder.stages.kernelbench_form import problem_source
    from validators.kernelbench.files import read_problem

    book = PROBLEM.replace("class Model(", "class MyNet(")
    raw = make_raw("hf/kb/1", "").model_copy(update={"kind": "module", "module": book,
                                                      "meta": {"entry_point": "MyNet"}})
    with pytest.raises(ValueError, match="Model"):
        read_problem(book)
    posed = problem_source(Item(raw=raw))
    assert posed.startswith(book.rstrip()) and posed.endswith("class Model(MyNet):\n    pass\n")
    read_problem(posed)


def test_a_refused_answer_is_asked_again_on_the_next_build_not_served_from_cache(tmp_path) -> None:
    from openai_standin import StandIn, ok

    from builder.item import Synthesis
    from builder.llm import LLMConfig
    from builder.stages.kernelbench_form import KernelBenchAnswerer, user_prompt
    from builder.stages.specify import SpecifyError

    prompt = user_prompt(PROBLEM)
    with StandIn(default=ok(f"```python\n{RELU}```\n")) as srv:
        cfg = LLMConfig(model="m", base_url=srv.url, cache_dir=tmp_path, schema_retries=0,
                        max_retries=0)
        srv.push(ok("I would write a grid-stride kernel."))
        with pytest.raises(SpecifyError, match="no Python code block"):
            KernelBenchAnswerer(cfg).answer(prompt, Synthesis(specifier="t", model="m"))
        # the next build (a new answerer on the same cache) asks again
        assert KernelBenchAnswerer(cfg).answer(prompt, Synthesis(specifier="t", model="m")) == RELU
        assert len(srv.chat_requests()) == 2
