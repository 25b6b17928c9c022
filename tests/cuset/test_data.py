"""Chat rendering, response labels, the CUDA mask, truncation and the data report."""

from __future__ import annotations

import pytest
from cuset_testdata import corpus_records, make_record, write_dataset

from cuset.data import Collator, check_chat_template, encode_record, load_rows, prepare
from cuset.errors import CusetError
from cuset.tiny import build_tokenizer, corpus_programs
from schemas import CUDA_MASK_KINDS, Span, record_to_row


@pytest.fixture(scope="module")
def tok():
    return build_tokenizer()


def _row(rec):
    return record_to_row(rec)


def test_labels_cover_response_and_end_of_turn_only(tok):
    rec = corpus_records()[0]
    ex, reason, truncated = encode_record(_row(rec), tok, 4096)
    assert reason is None and not truncated
    labelled = [t for t, lab in zip(ex.input_ids, ex.labels, strict=True) if lab != -100]
    assert all(lab in (-100, t) for t, lab in zip(ex.input_ids, ex.labels, strict=True))
    text = tok.decode(labelled)
    assert text.startswith(rec.response)
    assert text[len(rec.response):].strip() == "<|im_end|>"
    prompt_part = tok.decode([t for t, lab in zip(ex.input_ids, ex.labels, strict=True) if lab == -100])
    assert rec.prompt in prompt_part and "__global__" not in prompt_part


def test_cuda_mask_is_any_overlap_with_kernel_and_launch_spans(tok):
    for rec in corpus_records():
        row = _row(rec)
        ex, reason, _ = encode_record(row, tok, 4096)
        assert reason is None, (rec.id, reason)
        full = tok.apply_chat_template(row["messages"], tokenize=False)
        start = full.rfind(rec.response)
        offs = tok(full, add_special_tokens=False, return_offsets_mapping=True)["offset_mapping"]
        spans = [(start + s.start, start + s.end) for s in rec.spans if s.kind in CUDA_MASK_KINDS]
        for (a, b), m, lab in zip(offs, ex.cuda_mask, ex.labels, strict=True):
            overlaps = any(a < e and s < b for s, e in spans)
            assert bool(m) == (overlaps and lab != -100), (rec.id, full[a:b])
        # every character of every CUDA span lies in a masked token
        covered = set()
        for (a, b), m in zip(offs, ex.cuda_mask, strict=True):
            if m:
                covered.update(range(a, b))
        assert all(set(range(s, e)) <= covered for s, e in spans)
        assert 0 < sum(ex.cuda_mask) < sum(1 for x in ex.labels if x != -100)


def test_truncation_cuts_everything_together(tok):
    rec = corpus_records()[0]
    full, _, _ = encode_record(_row(rec), tok, 4096)
    cut, reason, truncated = encode_record(_row(rec), tok, 200)
    assert reason is None and truncated
    assert len(cut.input_ids) == len(cut.labels) == len(cut.cuda_mask) == 200
    assert cut.input_ids == full.input_ids[:200]
    assert cut.labels == full.labels[:200]
    assert cut.cuda_mask == full.cuda_mask[:200]


def test_records_whose_spans_do_not_land_are_reported(tok):
    good = [_row(r) for r in corpus_records()[:2]]
    no_cuda = _row(make_record("vector_add", corpus_programs()["vector_add"],
                               spans=[Span(start=0, end=8, kind="sync")], rec_id="no-cuda"))
    long_prompt = _row(make_record("relu", corpus_programs()["relu"], rec_id="long-prompt"))
    long_prompt["messages"][0]["content"] = "word " * 3000
    wrong_last = _row(make_record("relu", corpus_programs()["relu"], rec_id="wrong-last"))
    wrong_last["messages"][-1]["content"] = "something else"
    past_end = _row(make_record("relu", corpus_programs()["relu"], rec_id="past-end"))
    past_end["spans"] = [{"start": 5, "end": 10**6, "kind": "kernel_body", "label": ""}]
    ds, report = prepare(good + [no_cuda, long_prompt, wrong_last, past_end], tok, max_length=512)
    assert len(ds) == report.used == 2
    assert report.total == 6
    assert report.dropped == {
        "no_cuda_spans": ["no-cuda"],
        "no_response_tokens_within_max_length": ["long-prompt"],
        "last_message_is_not_the_response": ["wrong-last"],
        "span_past_end_of_response": ["past-end"],
    }
    assert "long-prompt" in report.truncated
    assert "no-cuda" in report.summary()


def test_span_in_whitespace_a_template_strips_is_reported(tok):
    import copy

    stripping = copy.copy(tok)
    stripping.chat_template = (
        "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] | trim }}<|im_end|>\n{% endfor %}"
    )
    body = corpus_programs()["relu"]
    resp = "\n\n" + body
    spans = [Span(start=0, end=2, kind="kernel_body")] + [
        Span(start=s.start + 2, end=s.end + 2, kind=s.kind) for s in make_record("relu", body).spans
    ]
    ok = make_record("relu", resp, spans=spans[1:], rec_id="shifted-ok")
    bad = make_record("relu", resp, spans=spans, rec_id="in-stripped-space")
    ex, reason, _ = encode_record(_row(ok), stripping, 4096)
    assert reason is None and sum(ex.cuda_mask) > 0
    _, reason, _ = encode_record(_row(bad), stripping, 4096)
    assert reason == "span_outside_rendered_response"


def test_dataset_without_spans_is_a_clear_error(tok, tmp_path):
    rows = [_row(r) for r in corpus_records()[:2]]
    for r in rows:
        r["spans"] = []
    with pytest.raises(CusetError, match="kernel_body or launch_config span"):
        prepare(rows, tok)
    import datasets

    (tmp_path / "data").mkdir()
    bare = [{k: v for k, v in r.items() if k != "spans"} for r in rows]
    datasets.Dataset.from_list(bare).to_parquet(str(tmp_path / "data" / "train-00000-of-00001.parquet"))
    with pytest.raises(CusetError, match="lacks the column.*spans"):
        load_rows(tmp_path)


def test_builder_layout_loads_by_split(tmp_path):
    recs = corpus_records()
    recs.append(make_record("relu", corpus_programs()["relu"], rec_id="held-out", split="test"))
    write_dataset(recs, tmp_path)
    train = load_rows(tmp_path, "train")
    test = load_rows(tmp_path, "test")
    assert len(train) == len(corpus_programs()) and test["id"] == ["held-out"]
    assert train[0]["spans"] and train[0]["messages"][-1]["role"] == "assistant"
    with pytest.raises(CusetError, match="no 'valid' split"):
        load_rows(tmp_path, "valid")
    with pytest.raises(CusetError, match="does not exist"):
        load_rows(tmp_path / "nope")


def test_missing_chat_template_is_a_clear_error(tok):
    import copy

    bare = copy.copy(tok)
    bare.chat_template = None
    with pytest.raises(CusetError, match="has no chat template"):
        check_chat_template(bare, "some/model")
    check_chat_template(tok, "tiny")


def test_collator_pads_right():
    batch = Collator(pad_token_id=7)([
        {"input_ids": [1, 2, 3], "labels": [-100, 2, 3], "cuda_mask": [0, 1, 0]},
        {"input_ids": [4], "labels": [4], "cuda_mask": [1]},
    ])
    assert batch["input_ids"].tolist() == [[1, 2, 3], [4, 7, 7]]
    assert batch["attention_mask"].tolist() == [[1, 1, 1], [1, 0, 0]]
    assert batch["labels"].tolist() == [[-100, 2, 3], [4, -100, -100]]
    assert batch["cuda_mask"].tolist() == [[False, True, False], [True, False, False]]
