"""`python -m cuset eval` end to end against the OpenAI-compatible stand-in on the built-in
held-out split: right, wrong, garbage and fence-less answers scripted by (task, sample index),
the exact Pass@1 / Pass@3 asserted, resume, and the one-line errors."""

from __future__ import annotations

import json
import shutil
import socket
from pathlib import Path

import pytest
from openai_standin import Answer, StandIn

from cuset.cli import main as cli_main
from sources.builtin import load_tasks

FIRST_FOUR = ("avgpool2d", "dot_product", "elu", "exclusive_scan")  # --limit 4, in name order
WRONG_EDITS = {  # a program that builds and runs but computes the wrong thing
    "dot_product": ("sum += a[i] * b[i];", "sum += a[i] * b[i] + 1.0f;"),
    "elu": ("v > 0.0f ? v : ", "v > 0.0f ? v + 1.0f : "),
}
# What sample i of each task gets: right (the built-in main.cu), wrong, garbage (a fenced block
# that does not compile) or prose (no fenced block at all).
SCRIPT = {
    "avgpool2d": ("right", "right", "right"),
    "dot_product": ("right", "wrong", "prose"),
    "elu": ("wrong", "wrong", "wrong"),
    "exclusive_scan": ("garbage", "prose", "prose"),
}
# Per task (compiled, passed) out of 3: avgpool2d (3, 3), dot_product (2, 1), elu (3, 0),
# exclusive_scan (0, 0). Pass@1 = mean c/n; Pass@3 with n = 3 = share of tasks with c >= 1.
EXPECTED = {
    "compile_pass_at_k": {"1": (3 + 2 + 3 + 0) / 12, "3": 3 / 4},
    "function_pass_at_k": {"1": (3 + 1 + 0 + 0) / 12, "3": 2 / 4},
}


def _programs() -> dict[str, str]:
    return {t.name: p.source for t, p in load_tasks() if t.name in FIRST_FOUR}


def _content(kind: str, task: str, programs: dict[str, str]) -> str:
    if kind == "right":
        return f"Here is the program.\n```cuda\n{programs[task]}```\n"
    if kind == "wrong":
        old, new = WRONG_EDITS[task]
        assert old in programs[task]
        return f"```cuda\n{programs[task].replace(old, new)}```"
    if kind == "garbage":
        return "```cpp\nthis is not C++ at all {{{\n```"
    return "I would write a kernel with one thread per element, then copy the result back."


class Script:
    def __init__(self) -> None:
        self.programs = _programs()
        self.by_prompt = {t.description: t.name for t, _ in load_tasks() if t.name in FIRST_FOUR}
        self.contents: dict[tuple[str, int], str] = {}

    def __call__(self, body: dict) -> Answer:
        task = self.by_prompt[body["messages"][-1]["content"]]
        idx = int(body["seed"])
        text = _content(SCRIPT[task][idx], task, self.programs)
        self.contents[(task, idx)] = text
        return Answer(content=text)


def _eval(srv: StandIn, out: Path, *extra: str) -> int:
    return cli_main(["eval", "--benchmark", "builtin", "--limit", "4", "--backend", "cpu",
                     "--n", "3", "--k", "1,3", "--out", str(out), "--base-url", srv.url,
                     "--model", "standin", "--quiet", *extra])


def _lines(out: Path) -> list[dict]:
    return [json.loads(ln) for ln in (out / "samples.jsonl").read_text().splitlines()]


@pytest.mark.slow
def test_eval_against_the_standin_exact_pass_at_k_and_resume(tmp_path, capsys):
    import os

    script = Script()
    out = tmp_path / "run"
    with StandIn(respond=script) as srv:
        assert _eval(srv, out) == 0
        assert len(srv.chat_requests()) == 12
        assert {r.body["messages"][0]["role"] for r in srv.chat_requests()} == {"system"}
        summary = json.loads((out / "summary.json").read_text())
        assert set(summary) == {"n_tasks", "n_samples", "compile_pass_at_k",
                                "function_pass_at_k", "avg_tokens", "backend", "n_errors"}
        assert summary["n_tasks"] == 4 and summary["n_samples"] == 12
        assert summary["backend"] == "cpu"
        for key, want in EXPECTED.items():
            assert summary[key] == pytest.approx(want), key
        words = [len(script.contents[(t, i)].split()) for t in FIRST_FOUR for i in range(3)]
        assert summary["avg_tokens"] == pytest.approx(sum(words) / 12)

        lines = _lines(out)
        by_key = {(r["task"], r["sample"]): r for r in lines}
        assert len(by_key) == 12
        for (task, idx), r in by_key.items():
            kind = SCRIPT[task][idx]
            assert set(r) == {"task", "sample", "completion", "program", "status", "reason",
                              "tokens", "compiled", "passed"}
            if kind == "right":
                assert (r["status"], r["compiled"], r["passed"]) == ("passed", True, True)
                assert r["program"] == script.programs[task]
            elif kind == "wrong":
                assert (r["status"], r["compiled"], r["passed"]) == ("failed", True, False)
            elif kind == "garbage":
                assert (r["status"], r["compiled"]) == ("compile_error", False)
            else:
                assert (r["status"], r["reason"], r["program"]) == ("compile_error",
                                                                   "no_code_block", None)
        md = (out / "summary.md").read_text()
        assert "| standin | 66.67 | 75.00 | 33.33 | 50.00 |" in md
        assert "| elu | 3 | 3 | 0 | 0 |" in md
        assert "Compile Pass@3" in capsys.readouterr().out

        # Resume: drop the last three samples (and the answer cache, so asking again would
        # reach the server): only those three are asked, and the figures are unchanged.
        path = out / "samples.jsonl"
        kept = path.read_text().splitlines()[:-3]
        path.write_text("\n".join(kept) + "\n" + '{"task": "cut by a cra')  # a torn last line
        shutil.rmtree(Path(os.environ["CKD_CACHE_DIR"]) / "llm")
        before = len(srv.chat_requests())
        assert _eval(srv, out) == 0
        assert len(srv.chat_requests()) - before == 3
        assert len(_lines(out)) == 12
        again = json.loads((out / "summary.json").read_text())
        assert again == summary

        # A finished run asks nothing.
        assert _eval(srv, out) == 0
        assert len(srv.chat_requests()) - before == 3


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _error_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


def test_missing_endpoint_is_one_line(tmp_path, capsys):
    url = f"http://127.0.0.1:{_free_port()}/v1"
    rc = cli_main(["eval", "--limit", "1", "--backend", "cpu", "--out", str(tmp_path),
                   "--base-url", url, "--model", "m", "--quiet"])
    assert rc == 2
    line = _error_line(capsys)
    assert line.startswith(f"error: endpoint {url}: cannot connect")


def test_unreadable_benchmark_is_one_line(tmp_path, capsys):
    bad = tmp_path / "bench.jsonl"
    bad.write_bytes(b"\xff\xfe not utf-8")
    rc = cli_main(["eval", "--benchmark", str(bad), "--reference-solutions", "--backend", "cpu",
                   "--out", str(tmp_path / "o")])
    assert rc == 2
    assert _error_line(capsys).startswith(f"error: benchmark {bad}: cannot read")
    rc = cli_main(["eval", "--benchmark", str(tmp_path / "nope"), "--reference-solutions",
                   "--backend", "cpu", "--out", str(tmp_path / "o")])
    assert rc == 2
    assert "no such file or folder" in _error_line(capsys)
    notcb = tmp_path / "other.jsonl"
    notcb.write_text('{"id": 1, "task_name": "x"}\n')
    assert cli_main(["eval", "--benchmark", str(notcb), "--reference-solutions",
                     "--backend", "cpu", "--out", str(tmp_path / "o")]) == 2
    assert "not a CUDABench file (missing level1_prompt, bench.cu" in _error_line(capsys)


@pytest.mark.parametrize("content", ["", "\n\n"])
def test_empty_benchmark_is_one_line(tmp_path, capsys, content):
    empty_file = tmp_path / "empty.jsonl"
    empty_file.write_text(content)
    assert cli_main(["eval", "--benchmark", str(empty_file), "--reference-solutions",
                     "--backend", "cpu", "--out", str(tmp_path / "o")]) == 2
    assert _error_line(capsys) == f"error: benchmark {empty_file}: holds no tasks"
    empty_dir = tmp_path / "empty_dir"
    empty_dir.mkdir()
    assert cli_main(["eval", "--benchmark", str(empty_dir), "--reference-solutions",
                     "--backend", "cpu", "--out", str(tmp_path / "o")]) == 2
    assert _error_line(capsys) == f"error: benchmark {empty_dir}: holds no tasks"


@pytest.mark.parametrize(("args", "says"), [
    (["--n", "2", "--k", "1,3"], "--k 1,3: every k must be in 1..n (n = 2)"),
    (["--k", "one"], "--k one: not a comma-separated list"),
    ([], "no model: give --base-url and --model"),
    (["--adapter", "x"], "--adapter needs --model-path"),
])
def test_bad_options_are_one_line(tmp_path, capsys, args, says):
    assert cli_main(["eval", "--limit", "1", "--backend", "cpu", "--out", str(tmp_path),
                     *args]) == 2
    assert says in _error_line(capsys)
