"""`cuset export` on a real tiny LoRA run: the adapter folder, the merged model, the errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch

from cuset.config import load_config
from cuset.export import main
from cuset.modeling import resolve_model_path
from cuset.tiny import CHAT_TEMPLATE
from cuset.trainer import train

REPO = Path(__file__).resolve().parents[2]
TINY = REPO / "cuset" / "configs" / "tiny.yaml"
PROMPTS = [
    [{"role": "user", "content": "Write a CUDA program that adds two float32 vectors."}],
    [{"role": "system", "content": "You write CUDA."}, {"role": "user", "content": "A ReLU kernel."}],
]


@pytest.fixture(scope="module")
def exported(lora_run, tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("exports")
    assert main(["--run", str(lora_run), "--out", str(root / "adapter")]) == 0
    assert main(["--run", str(lora_run), "--out", str(root / "merged"), "--merge"]) == 0
    return {"adapter": root / "adapter", "merged": root / "merged"}


def _base():
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(resolve_model_path("builtin:tiny")).eval()


def _prompt_ids(tok) -> list[torch.Tensor]:
    return [tok.apply_chat_template(m, add_generation_prompt=True, return_tensors="pt",
                                    return_dict=True)["input_ids"] for m in PROMPTS]


def _greedy(model, ids: list[torch.Tensor]) -> list[list[int]]:
    with torch.no_grad():
        return [model.generate(x, max_new_tokens=16, min_new_tokens=16, do_sample=False)
                [0, x.shape[1]:].tolist() for x in ids]


def test_merged_model_generates_what_the_adapter_on_its_base_generates(lora_run, exported):
    from peft import PeftModel
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(exported["merged"])
    ids = _prompt_ids(tok)
    merged = AutoModelForCausalLM.from_pretrained(exported["merged"]).eval()
    on_base = PeftModel.from_pretrained(_base(), lora_run / "final").eval()
    want = _greedy(on_base, ids)
    assert _greedy(merged, ids) == want
    assert all(len(t) == 16 for t in want)
    # the adapter matters: without it the base model answers differently
    assert _greedy(_base(), ids) != want
    with torch.no_grad():
        torch.testing.assert_close(merged(ids[0]).logits, on_base(ids[0]).logits,
                                   rtol=1e-4, atol=1e-5)


def test_merged_folder_has_the_layout_vllm_reads(exported):
    files = {p.name for p in exported["merged"].iterdir()}
    assert {"config.json", "generation_config.json", "model.safetensors", "tokenizer.json",
            "tokenizer_config.json"} <= files
    assert not any(n.startswith("adapter_") or n.endswith((".bin", ".pt", ".pth")) for n in files)
    cfg = json.loads((exported["merged"] / "config.json").read_text())
    assert cfg["model_type"] == "qwen2" and cfg["architectures"] == ["Qwen2ForCausalLM"]
    assert cfg["use_cache"] is True
    from safetensors import safe_open

    with safe_open(exported["merged"] / "model.safetensors", "pt") as f:
        keys = set(f.keys())
    assert "lm_head.weight" in keys and not any("lora" in k for k in keys)
    gen = json.loads((exported["merged"] / "generation_config.json").read_text())
    from transformers import AutoTokenizer

    assert gen["eos_token_id"] == AutoTokenizer.from_pretrained(exported["merged"]).eos_token_id


def test_adapter_export_loads_with_peft(lora_run, exported):
    from peft import PeftModel

    files = {p.name for p in exported["adapter"].iterdir()}
    assert {"adapter_config.json", "adapter_model.safetensors", "tokenizer.json"} <= files
    assert "training_args.bin" not in files and "config.json" not in files
    loaded = PeftModel.from_pretrained(_base(), exported["adapter"]).eval()
    trained = PeftModel.from_pretrained(_base(), lora_run / "final").eval()
    x = torch.arange(3, 40).reshape(1, -1)
    with torch.no_grad():
        torch.testing.assert_close(loaded(x).logits, trained(x).logits, rtol=0, atol=0)


@pytest.mark.parametrize("which", ["adapter", "merged"])
def test_chat_template_survives(exported, which):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(exported[which])
    assert tok.chat_template == CHAT_TEMPLATE
    text = tok.apply_chat_template(PROMPTS[0], add_generation_prompt=True, tokenize=False)
    assert text.endswith("<|im_start|>assistant\n")


def test_sharded_merged_model_loads(lora_run, exported, tmp_path):
    from transformers import AutoModelForCausalLM

    out = tmp_path / "sharded"
    assert main(["--run", str(lora_run), "--out", str(out), "--merge", "--max-shard-size", "200KB"]) == 0
    index = json.loads((out / "model.safetensors.index.json").read_text())
    shards = set(index["weight_map"].values())
    assert len(shards) > 1 and all((out / s).is_file() for s in shards)
    a = AutoModelForCausalLM.from_pretrained(out).state_dict()
    b = AutoModelForCausalLM.from_pretrained(exported["merged"]).state_dict()
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_checkpoints_export_when_there_is_no_final(lora_run, tmp_path):
    from safetensors.torch import load_file

    run = tmp_path / "run"
    shutil.copytree(lora_run, run, ignore=shutil.ignore_patterns("final"))
    assert main(["--run", str(run), "--out", str(tmp_path / "latest")]) == 0
    assert main(["--run", str(run / "checkpoint-1"), "--out", str(tmp_path / "first")]) == 0
    latest = load_file(tmp_path / "latest" / "adapter_model.safetensors")
    want = load_file(run / "checkpoint-2" / "adapter_model.safetensors")
    first = load_file(tmp_path / "first" / "adapter_model.safetensors")
    assert all(torch.equal(latest[k], want[k]) for k in want)
    assert any(not torch.equal(first[k], want[k]) for k in want)
    # the merge finds the base model through the run's config, one level up
    assert main(["--run", str(run / "checkpoint-1"), "--out", str(tmp_path / "m1"), "--merge"]) == 0


def test_full_fine_tune_exports_the_model(cuda_dataset, tmp_path, capsys):
    from transformers import AutoModelForCausalLM

    run = tmp_path / "full"
    train(load_config(TINY, [
        f"data.path={cuda_dataset}", f"training.output_dir={run}", "training.disable_tqdm=true",
        "lora.enabled=false", "loss.method=sft", "training.max_steps=1", "data.max_length=128",
        "training.report_to=[]",
    ]))
    assert main(["--run", str(run), "--out", str(tmp_path / "out"), "--merge"]) == 0
    assert "nothing to merge" in capsys.readouterr().err
    a = AutoModelForCausalLM.from_pretrained(tmp_path / "out").state_dict()
    b = AutoModelForCausalLM.from_pretrained(run / "final").state_dict()
    assert all(torch.equal(a[k], b[k]) for k in b)


def _error(capsys, argv: list[str]) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err and "Traceback" not in err
    return err


def test_bad_input_is_one_clear_line(lora_run, tmp_path, capsys):
    err = _error(capsys, ["--run", str(tmp_path / "missing"), "--out", str(tmp_path / "o")])
    assert "does not exist" in err
    empty = tmp_path / "empty-run"
    (empty / "final").mkdir(parents=True)
    (empty / "cuset_config.json").write_text("{}")
    err = _error(capsys, ["--run", str(empty), "--out", str(tmp_path / "o")])
    assert "holds no adapter or model" in err

    full = tmp_path / "full"
    full.mkdir()
    (full / "keep.txt").write_text("x")
    err = _error(capsys, ["--run", str(lora_run), "--out", str(full)])
    assert "exists and is not empty" in err and "--overwrite" in err
    assert (full / "keep.txt").is_file()
    err = _error(capsys, ["--run", str(lora_run), "--out", str(lora_run / "export")])
    assert "overlaps the run folder" in err
    err = _error(capsys, ["--run", str(lora_run), "--out", str(tmp_path / "o"), "--private"])
    assert "--private only applies with --push-to-hub" in err
    err = _error(capsys, ["--run", str(lora_run), "--out", str(tmp_path / "o"),
                          "--push-to-hub", "not a/repo id"])
    assert "not a valid repository id" in err
    assert not (tmp_path / "o").exists()


def test_overwrite_replaces_a_non_empty_folder(lora_run, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "stale.txt").write_text("old")
    assert main(["--run", str(lora_run), "--out", str(out), "--overwrite"]) == 0
    assert not (out / "stale.txt").exists() and (out / "adapter_model.safetensors").is_file()
    assert not list(tmp_path.glob(".out.tmp-*"))


def test_dry_run_writes_nothing(lora_run, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["--run", str(lora_run), "--out", str(out), "--merge", "--dry-run"]) == 0
    assert "export the adapter merged into" in capsys.readouterr().err
    assert not out.exists() and not list(tmp_path.iterdir())


def test_merged_dtype_is_chosen_by_flag(lora_run, tmp_path):
    from safetensors import safe_open

    out = tmp_path / "bf16"
    assert main(["--run", str(lora_run), "--out", str(out), "--merge", "--dtype", "bfloat16"]) == 0
    with safe_open(out / "model.safetensors", "pt") as f:
        assert {f.get_tensor(k).dtype for k in f.keys()} == {torch.bfloat16}
    assert json.loads((out / "config.json").read_text())["dtype"] == "bfloat16"
