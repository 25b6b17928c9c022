"""`eval` with a local transformers model: the tiny model plus a LoRA adapter trained by
`python -m cuset train`; the figures are near 0, so this checks the plumbing, the counts, the
seeding per (task, sample) and the resume."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cuset.cli import main as cli_main
from cuset.eval import samplers

REPO = Path(__file__).resolve().parents[2]
TINY = REPO / "cuset" / "configs" / "tiny.yaml"


@pytest.fixture(scope="module")
def adapter_run(cuda_dataset, tmp_path_factory):
    out = tmp_path_factory.mktemp("lora")
    rc = cli_main(["train", "--config", str(TINY), "--data", str(cuda_dataset), "--output-dir",
                   str(out), "training.max_steps=2", "training.disable_tqdm=true",
                   "training.report_to=[]", "data.max_length=512"])
    assert rc == 0
    assert (out / "final" / "adapter_config.json").is_file()
    return out


def _eval(out: Path, adapter: Path, *extra: str) -> int:
    from cuset.tiny import tiny_checkpoint

    return cli_main(["eval", "--benchmark", "builtin", "--limit", "2", "--n", "2", "--k", "1,2",
                     "--backend", "cpu", "--out", str(out), "--model-path", str(tiny_checkpoint()),
                     "--adapter", str(adapter), "--max-new-tokens", "12", "--temperature", "1.0",
                     "--batch-size", "3", "--quiet", *extra])


def test_local_model_with_adapter_counts_and_resume(adapter_run, tmp_path, monkeypatch):
    asked: list[tuple[str, int]] = []
    real = samplers.LocalSampler.sample

    def counting(self, items):
        asked.extend((t.id, i) for t, i in items)
        yield from real(self, items)

    monkeypatch.setattr(samplers.LocalSampler, "sample", counting)
    out = tmp_path / "local"
    assert _eval(out, adapter_run) == 0
    assert sorted(asked) == [("avgpool2d", 0), ("avgpool2d", 1), ("dot_product", 0),
                             ("dot_product", 1)]
    summary = json.loads((out / "summary.json").read_text())
    assert set(summary) == {"n_tasks", "n_samples", "compile_pass_at_k", "function_pass_at_k",
                            "avg_tokens", "backend", "n_errors"}
    assert (summary["n_tasks"], summary["n_samples"], summary["backend"]) == (2, 4, "cpu")
    assert set(summary["compile_pass_at_k"]) == {"1", "2"}
    lines = (out / "samples.jsonl").read_text().splitlines()
    recs = [json.loads(x) for x in lines]
    assert len(recs) == 4
    assert all(1 <= r["tokens"] <= 12 for r in recs)
    assert summary["avg_tokens"] == pytest.approx(sum(r["tokens"] for r in recs) / 4)
    # 12 tokens of a barely trained model hold no fenced program.
    assert all(not r["passed"] for r in recs)
    by_task = {}
    for r in recs:
        by_task.setdefault(r["task"], []).append(r["completion"])
    assert any(len(set(v)) == 2 for v in by_task.values()), "the samples of a task should differ"

    # Resume: drop the last sample; only it is generated again, in a batch of one this time,
    # and its per-(task, sample) generator draws the same text.
    (out / "samples.jsonl").write_text("\n".join(lines[:-1]) + "\n")
    gone = recs[-1]
    asked.clear()
    assert _eval(out, adapter_run) == 0
    assert asked == [(gone["task"], gone["sample"])]
    again = [json.loads(x) for x in (out / "samples.jsonl").read_text().splitlines()]
    assert len(again) == 4
    assert again[-1]["completion"] == gone["completion"]
    assert json.loads((out / "summary.json").read_text()) == summary


def test_adapter_folder_or_its_final(adapter_run):
    assert samplers._adapter_dir(str(adapter_run)) == adapter_run / "final"
    assert samplers._adapter_dir(str(adapter_run / "final")) == adapter_run / "final"


def test_model_without_tokenizer_is_one_line(tmp_path, capsys):
    from cuset.tiny import tiny_checkpoint

    bare = tmp_path / "bare"
    bare.mkdir()
    for f in Path(tiny_checkpoint()).iterdir():
        if f.is_file() and "token" not in f.name and f.name not in ("vocab.json", "merges.txt"):
            shutil.copy(f, bare / f.name)
    rc = cli_main(["eval", "--limit", "1", "--backend", "cpu", "--out", str(tmp_path / "o"),
                   "--model-path", str(bare), "--quiet"])
    assert rc == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: model {bare}: the folder has no tokenizer"]


def test_a_local_model_is_placed_as_a_gpu_user_expects(monkeypatch):
    """On a GPU: the GPU, bfloat16 where it has it (else float16); on the CPU: float32; the
    flags override. (No GPU here: torch's answers are stood in.)"""
    import torch

    from cuset.eval.samplers import placement

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert placement(None) == ("cpu", torch.float32)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda: True)
    assert placement(None) == ("cuda", torch.bfloat16)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda: False)
    assert placement(None) == ("cuda", torch.float16)
    assert placement("cuda:1", "float32") == ("cuda:1", torch.float32)
    assert placement("cpu") == ("cpu", torch.float32)


def test_seeded_draws_do_not_depend_on_the_models_dtype():
    """The draw is made on the CPU in float32 from the row's logits: half-precision scores (as
    on a GPU) give the same tokens as the same logits in float32, and a CPU generator never
    meets a device tensor."""
    import torch

    from cuset.eval.samplers import _SeededSampling

    logits = torch.randn(3, 50, generator=torch.Generator().manual_seed(0)).round(decimals=1)
    a = _SeededSampling([1, 2, 3], 0.8, 0.9)(None, logits.clone())
    b = _SeededSampling([1, 2, 3], 0.8, 0.9)(None, logits.to(torch.bfloat16))
    assert torch.equal(a.argmax(-1), b.argmax(-1))
