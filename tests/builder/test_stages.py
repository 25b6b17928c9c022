"""The per-record stages and dedup over schema objects, without Ray or the engine."""

from __future__ import annotations

from builder_helpers import make_raw, scale_program, scale_task

from builder.item import Item
from builder.stages import Annotate, DedupConfig, Extract, Specify, dedup, gather
from builder.stages.specify import SYSTEM_PROMPT
from sources.base import register_source


def extracted(rid: str, text: str, **kw) -> Item:
    return Extract().process(Item(raw=make_raw(rid, text, **kw)))


def test_extract_keeps_kernels_and_drops_files_without_one():
    it = extracted("a", scale_program())
    assert it.alive
    assert it.analysis.kernels == ["scale_kernel"]
    assert it.analysis.launches == ["scale_kernel"]
    assert it.minhash is not None and len(it.minhash) == DedupConfig().num_perm
    host_only = extracted("b", "#include <cstdio>\nint main() { printf(\"hi\\n\"); return 0; }\n")
    assert not host_only.alive
    assert host_only.rejection.stage == "extract"
    assert host_only.rejection.reason == "no_kernel"


def test_exact_dedup_ignores_comments_and_whitespace_and_keeps_smallest_id():
    a = extracted("b/1", scale_program())
    b = extracted("a/1", "// a copy\n" + scale_program().replace("    ", "\t"))
    out = dedup([a, b], DedupConfig(near_threshold=1.0))
    assert [i.id for i in out] == ["a/1", "b/1"]
    assert out[0].alive
    assert out[1].rejection.reason == "duplicate_exact"
    assert "a/1" in out[1].rejection.detail


def test_near_dedup_threshold_and_held_out_records_win():
    base = scale_program()
    variant = base.replace("if (i < n) y[i] = a * x[i];", "if (i < n) { y[i] = a * x[i]; }")
    other = base.replace("a * x[i]", "x[i] > 0.0f ? x[i] : a * x[i] + 1.0f - x[i] * x[i] / (1.0f + a)")
    items = [
        extracted("a/train", base),
        extracted("z/test", variant, split="test"),
        extracted("m/other", other),
    ]
    out = {i.id: i for i in dedup(items, DedupConfig(near_threshold=0.6))}
    # The held-out record is visited first, so the training copy is the one dropped.
    assert out["z/test"].alive
    assert out["a/train"].rejection.reason == "duplicate_near"
    assert "z/test" in out["a/train"].rejection.detail
    assert out["m/other"].alive
    # Disabled near dedup keeps both.
    items = [extracted("a/train", base), extracted("z/test", variant, split="test")]
    assert all(i.alive for i in dedup(items, DedupConfig(near_threshold=1.0)))


def test_dedup_does_not_depend_on_input_order():
    exprs = ["a * x[i]", "a + x[i] * x[i] - 3.0f / (x[i] + 7.0f)", "a * x[i]", "fmaxf(x[i], a) * sqrtf(fabsf(x[i]))"]
    texts = [scale_program().replace("a * x[i]", e) for e in exprs]
    items = [extracted(f"r{i}", t) for i, t in enumerate(texts)]
    fwd = [(i.id, i.rejection) for i in dedup([it.model_copy(deep=True) for it in items])]
    rev = [(i.id, i.rejection) for i in dedup([it.model_copy(deep=True) for it in reversed(items)])]
    assert fwd == rev
    assert [r is None for _, r in fwd] == [True, True, False, True]


def test_specify_builds_prompt_and_chat_from_the_task():
    it = Specify().process(Item(raw=make_raw("s", scale_program(), task=scale_task())))
    assert it.alive
    assert it.prompt == scale_task().description
    assert [m.role for m in it.messages] == ["system", "user", "assistant"]
    assert it.messages[0].content == SYSTEM_PROMPT
    assert it.messages[-1].content == it.program.source == scale_program()


def test_specify_rejects_records_without_a_task():
    it = Specify().process(Item(raw=make_raw("s", scale_program())))
    assert it.rejection.reason == "no_task_specifier"


def test_annotate_spans_index_the_response():
    it = Specify().process(Item(raw=make_raw("s", scale_program(), task=scale_task())))
    it = Annotate().process(it)
    kinds = {s.kind for s in it.spans}
    assert {"kernel_body", "launch_config"} <= kinds
    body = next(s for s in it.spans if s.kind == "kernel_body")
    assert "y[i] = a * x[i]" in body.text(it.program.source)
    launch = next(s for s in it.spans if s.kind == "launch_config")
    assert launch.text(it.program.source).startswith("<<<")


def test_gather_limit_duplicate_ids_and_broken_source():
    def good():
        for i in range(5):
            yield make_raw(f"g/{i}", scale_program(float(i)))
        yield make_raw("g/0", scale_program(9.0))

    def broken():
        yield make_raw("b/0", scale_program())
        raise OSError("disk vanished")

    register_source("test_good", good)
    register_source("test_broken", broken)
    got = gather(["test_broken", "test_good"])
    assert [i.id for i in got.items] == ["b/0", "g/0", "g/1", "g/2", "g/3", "g/4", "g/0"]
    assert got.items[-1].rejection.reason == "duplicate_id"
    assert got.errors and "test_broken" in got.errors[0] and "disk vanished" in got.errors[0]
    assert [i.id for i in gather(["test_good"], limit=3).items] == ["g/0", "g/1", "g/2"]


def test_a_malformed_builtin_task_folder_is_an_unreadable_record(tmp_path):
    """It reaches the funnel and rejections.jsonl with its reason; the good folder still loads."""
    import shutil

    from sources.builtin import TASKS_DIR, iter_records

    shutil.copytree(TASKS_DIR / "relu", tmp_path / "relu")
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "main.cu").write_text("__global__ void k() {}\n")
    register_source("test_corpus_copy", lambda: iter_records(tmp_path))
    got = gather(["test_corpus_copy"])
    by_id = {i.id: i for i in got.items}
    assert by_id["builtin/relu"].rejection is None
    bad = by_id["builtin/broken"]
    assert bad.rejection.stage == "gather" and bad.rejection.reason == "unreadable"
    assert "task.json" in bad.rejection.detail
