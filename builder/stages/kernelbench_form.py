"""KernelBench-form records (`python -m builder run --format kernelbench`).

A record's prompt is the KernelBench problem inside the instruction `cuset eval --benchmark
kernelbench:DIR` sends (`cuset/eval/kernelbench_prompt.md`, read here, never copied, so a model
is trained on the prompt it is evaluated with) and its response is the `ModelNew` answer: a
Python file with the CUDA source inline, compiled with `load_inline`. The verdict is
`validators.kernelbench.verify` on the (problem, answer) pair, and the spans are those of
`validators.analysis` on each CUDA string of the answer, shifted to character offsets into the
Python response, so CuSeT trains on them unchanged.

Who writes the answer:
- `KernelBenchArchive`: an AI CUDA Engineer row (`archive.is_archive`): its extension verbatim,
  inline in a `ModelNew` that calls the problem's functional `Model` with `fn=` the extension's
  `forward` (how the archive runs it), no LLM;
- `KernelBenchAnswerer`: a PyTorch module (`--sources kernelbench`, KernelBook-style `hf`
  rows): an LLM answers the prompt; its first Python block must define `ModelNew` and hold a
  CUDA string with a `__global__` kernel, or it is asked again with the problems;
- `NotKernelBenchForm`: anything else (a standalone task, raw CUDA with no module) has no
  problem to pose and is rejected `not_kernelbench_form`.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass
from typing import Any

from schemas import ChatMessage, Program, Span

from ..item import Item
from .archive import _task_name, is_archive
from .specify import Specification, SpecifyError

FORMATS = ("program", "kernelbench")
"""`--format`: `program` (default) is the standalone CUDA program of the file convention."""
KERNELBENCH = "kernelbench"
NOT_FORM_REASON = "not_kernelbench_form"
_PREFIXES = re.compile(r"^([A-Za-z]*)")


# ----------------------------------------------------------------------------- the prompt


def prompt_parts() -> tuple[str, str, str]:
    """(version, system turn, user template) of the evaluation prompt: one file for both."""
    from cuset.eval.kernelbench import prompt_template

    return prompt_template()


def user_prompt(problem: str) -> str:
    from cuset.eval.kernelbench import user_prompt as _user_prompt

    return _user_prompt(problem)


def messages_for(prompt: str, response: str | None = None) -> list[ChatMessage]:
    msgs = [ChatMessage(role="system", content=prompt_parts()[1]),
            ChatMessage(role="user", content=prompt)]
    if response is not None:
        msgs.append(ChatMessage(role="assistant", content=response))
    return msgs


def problem_source(item: Item) -> str:
    """The record's module as a KernelBench problem. KernelBook names its class per row
    (`meta["entry_point"]`); KernelBench's prompt and verifier need `Model`, so a subclass of
    that name is appended (same constructor, same forward)."""
    module = item.raw.module or ""
    entry = item.raw.meta.get("entry_point") or "Model"
    if entry == "Model" or not entry.isidentifier():
        return module
    return f"{module.rstrip()}\n\n\nclass Model({entry}):\n    pass\n"


# ------------------------------------------------------------------- CUDA strings and spans


@dataclass(frozen=True)
class CudaLiteral:
    start: int
    """Character offset of the string's first character of content in the Python source."""
    text: str


def cuda_literals(source: str) -> list[CudaLiteral]:
    """The string literals of a Python source that hold CUDA code (a `__global__` kernel), with
    where their content starts. Only literals whose source text IS their value qualify (raw
    strings, or strings with no escape): elsewhere a character offset into the value is not one
    into the response. Offsets count characters, as `Span` does (tokenize's columns are
    characters; the AST's are UTF-8 bytes)."""
    line_starts = [0]
    for line in source.splitlines(keepends=True):
        line_starts.append(line_starts[-1] + len(line))
    out: list[CudaLiteral] = []
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return out
    for tok in tokens:
        if tok.type != tokenize.STRING or "__global__" not in tok.string:
            continue
        prefix = _PREFIXES.match(tok.string).group(1)  # type: ignore[union-attr]
        if "b" in prefix.lower() or "f" in prefix.lower():
            continue
        body = tok.string[len(prefix):]
        quote = '"""' if body.startswith('"""') else "'''" if body.startswith("'''") else body[0]
        content = body[len(quote):-len(quote)]
        try:
            value = ast.literal_eval(tok.string)
        except (ValueError, SyntaxError):
            continue
        if value != content:
            continue
        start = line_starts[tok.start[0] - 1] + tok.start[1] + len(prefix) + len(quote)
        out.append(CudaLiteral(start=start, text=content))
    return out


def response_spans(source: str) -> list[Span]:
    """`validators.analysis` spans of every CUDA string in a Python answer, as offsets into the
    answer. Raises ValueError when the answer holds no CUDA string the spans can point into."""
    from validators.analysis import analyze

    spans: list[Span] = []
    literals = cuda_literals(source)
    if not literals:
        raise ValueError("the answer holds no CUDA source string with a __global__ kernel whose "
                         "text is its value (a raw or escape-free string literal)")
    for lit in literals:
        analysis = analyze(lit.text)
        if analysis.text != lit.text:
            raise ValueError("the analysis decoded a CUDA string to a different text")
        spans += [s.model_copy(update={"start": s.start + lit.start, "end": s.end + lit.start})
                  for s in analysis.spans]
    return sorted(spans, key=lambda s: (s.start, s.end, s.kind))


# ------------------------------------------------------------------------------ specifiers


def archive_answer(problem: str, extension: str) -> str:
    """A `ModelNew` file holding an AI CUDA Engineer extension verbatim in a raw string: the
    problem's functional code (not its input functions, as `validators.kernelbench` runs
    extension answers) and a `Model` called with `fn=` the extension's `forward`."""
    if '"""' in extension or extension.endswith("\\"):
        raise SpecifyError(NOT_FORM_REASON, "the extension cannot be written as one raw "
                                            "triple-quoted Python string")
    tree = ast.parse(problem)
    lines = problem.splitlines(keepends=True)
    kept = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in ("get_inputs", "get_init_inputs"):
            continue
        start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
        kept.append("".join(lines[start - 1: node.end_lineno]).rstrip("\n"))
    head = "\n\n".join(kept)
    return (
        f"{head}\n\n\n"
        "from torch.utils.cpp_extension import load_inline\n\n"
        f'cuda_source = r"""{extension}"""\n\n'
        "ext = load_inline(name=\"archive_ext\", cpp_sources=\"\", cuda_sources=cuda_source, "
        "verbose=False)\n\n\n"
        "class ModelNew(nn.Module):\n"
        "    def __init__(self, *args, **kwargs):\n"
        "        super().__init__()\n"
        "        self.inner = Model(*args, **kwargs)\n\n"
        "    def forward(self, *args):\n"
        "        return self.inner(*args, fn=ext.forward)\n"
    )


class KernelBenchArchive:
    """An archive row in KernelBench form (no LLM; see the module doc)."""

    name = "kernelbench_archive"
    version = 1

    def applies(self, item: Item) -> bool:
        return is_archive(item) and item.raw.module is not None

    def config(self) -> dict[str, Any]:
        return {"prompt": prompt_parts()[0]}

    def specify(self, item: Item) -> Specification:
        from ..modules import ModuleTaskError, module_task

        problem = item.raw.module or ""
        prompt = user_prompt(problem)
        try:
            task = module_task(_task_name(item), problem, description=prompt)
        except ModuleTaskError as exc:
            raise SpecifyError(f"module_{exc.reason}", str(exc)[:800]) from None
        if "import torch.nn as nn" not in problem and not re.search(r"^\s*from torch import nn", problem, re.M):
            problem = "import torch.nn as nn\n" + problem
        answer = archive_answer(problem, item.raw.text)
        return Specification(task=task, program=Program(source=answer),
                             prompt=prompt, messages=messages_for(prompt, answer))


def answer_problems(answer: str | None) -> list[str]:
    """Why a completion's Python answer is no KernelBench-form response (empty when it is)."""
    from validators.kernelbench import KernelBenchInputError
    from validators.kernelbench.files import read_answer

    if answer is None:
        return ["no Python code block: reply with the complete file in one ```python block"]
    try:
        read = read_answer(answer)
    except KernelBenchInputError as exc:
        return [str(exc)]
    if read.kind != "module":
        return ["the answer must be a Python file defining ModelNew, not an extension source"]
    if not cuda_literals(answer):
        return ["the answer holds no CUDA source with a __global__ kernel in a raw string "
                '(write it as r"""...""" and compile it with load_inline)']
    return []


class KernelBenchAnswerer:
    """A PyTorch module -> the LLM's `ModelNew` answer to the evaluation prompt."""

    name = "kernelbench_llm"
    version = 1

    def __init__(self, llm: Any):
        self.llm = llm
        self._client: Any = None

    def __getstate__(self) -> dict[str, Any]:
        return {"llm": self.llm, "_client": None}

    @property
    def client(self) -> Any:
        if self._client is None:
            from ..llm import LLMClient

            self._client = LLMClient(self.llm)
        return self._client

    def applies(self, item: Item) -> bool:
        return item.raw.task is None and item.raw.module is not None and not is_archive(item)

    def config(self) -> dict[str, Any]:
        return {"llm": self.llm.params(), "prompt": prompt_parts()[0]}

    def specify(self, item: Item) -> Specification:
        from ..item import Synthesis
        from ..llm.specify import task_name_for
        from ..modules import ModuleTaskError, module_task

        syn = Synthesis(specifier=self.name, model=self.llm.model, prompt_version=prompt_parts()[0])
        problem = problem_source(item)
        prompt = user_prompt(problem)
        try:
            # The five cases the record carries; the verdict is the KernelBench verifier's.
            task = module_task(task_name_for(item.id), problem, description=prompt)
        except ModuleTaskError as exc:
            raise SpecifyError(f"module_{exc.reason}", str(exc)[:800], synthesis=syn) from None
        answer = self.answer(prompt, syn)
        return Specification(task=task, program=Program(source=answer), prompt=prompt,
                             messages=messages_for(prompt, answer), synthesis=syn)

    def answer(self, prompt: str, syn: Any) -> str:
        """The LLM's Python answer to `prompt` that passes `answer_problems`, asked again with
        the problems fed back (`schema_retries`); usage and attempts are added to `syn`.
        Raises SpecifyError (`invalid_answer`, or `llm_<reason>` from the endpoint)."""
        from validators.extract import extract_python

        from ..llm import LLMError

        convo = [{"role": m.role, "content": m.content} for m in messages_for(prompt)]
        problems: list[str] = []
        # Plain text: the answer is a Python file, not the JSON object the client asks for.
        overrides = {"response_format": {"type": "text"}} if self.llm.json_mode else {}
        tries, refreshed = int(getattr(self.llm, "schema_retries", 2)) + 1, False
        while tries > 0:
            try:
                reply = self.client.chat(convo, **overrides)
            except LLMError as exc:
                syn.add_usage(getattr(exc, "usage", None))
                raise SpecifyError(f"llm_{getattr(exc, 'reason', 'error')}",
                                   str(getattr(exc, "detail", exc))[:500], synthesis=syn) from None
            syn.add_usage(reply.usage)
            syn.attempts += 1
            answer = extract_python(reply.text)
            problems = answer_problems(answer)
            if not problems and answer is not None:
                return answer
            # a refused answer must not be served from the cache on the next build; one that
            # came from the cache (refused by newer checks) is asked for afresh once
            self.client.forget(convo, **overrides)
            if reply.cached and not refreshed:
                refreshed = True
                continue
            tries -= 1
            convo += [{"role": "assistant", "content": reply.text},
                      {"role": "user", "content": "Your answer could not be used:\n"
                       + "\n".join(f"- {p}" for p in problems)
                       + "\n\nReply again with the complete Python file in one ```python block."}]
        raise SpecifyError("invalid_answer", "; ".join(problems)[:800], synthesis=syn)


class NotKernelBenchForm:
    """The last word under `--format kernelbench`: a record with no PyTorch problem."""

    name = "not_kernelbench_form"
    version = 1

    def applies(self, item: Item) -> bool:
        return True

    def config(self) -> dict[str, Any]:
        return {}

    def specify(self, item: Item) -> Specification:
        if item.raw.module is not None:
            raise SpecifyError("no_task_specifier", "--format kernelbench: the record is a PyTorch "
                               "module and no LLM is configured to answer it (--llm-model)")
        raise SpecifyError(NOT_FORM_REASON, "--format kernelbench needs a PyTorch problem (a "
                           "KernelBench or KernelBook module, an AI CUDA Engineer row); the record "
                           "is " + ("a standalone task" if item.raw.task is not None else "CUDA code"))


def verify_answer(item: Item, backend: str, *, thorough: bool, fresh_seed: int | None) -> Any:
    """The KernelBench verifier's verdict on a KernelBench-form record. Raises
    `validators.kernelbench.KernelBenchInputError` for a pair that is no problem and answer."""
    from validators.kernelbench import verify

    assert item.task is not None and item.program is not None
    problem = (item.raw.module or "") if is_archive(item) else problem_source(item)
    return verify(problem, item.program.source, backend=backend, fast=not thorough,
                  fresh_seed=fresh_seed, task_name=item.task.name)
