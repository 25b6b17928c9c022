"""A run warm-started from an SFT run (`cuset grpo --init-from`) trains its adapter on top of
base + SFT: every loader of that adapter (`cuset export` merged and adapter-only, `cuset eval
--adapter`, `cuset analyze --adapter`, `--resume`) rebuilds base + SFT from the run's record, and
refuses SFT weights that are gone or changed by name.

The GRPO adapter is made by hand on the warm-started policy (`load_policy`, as the trainer gets
it) and saved with the run's record as `run_grpo` writes it: what these tests load is exactly
what a run leaves, without the cost of one."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch

from cuset.errors import CusetError

ROOT = Path(__file__).resolve().parents[2]
GRPO_TINY = ROOT / "cuset" / "configs" / "grpo-tiny.yaml"
TEXT = "__global__ void k(float *x) { x[threadIdx.x] = 0; }"


@pytest.fixture(scope="module")
def warm_run(lora_run, tmp_path_factory) -> dict[str, Path]:
    from peft import LoraConfig, get_peft_model

    from cuset import warm_start
    from cuset.grpo import load_grpo_config, load_policy, start_record, write_run_config

    root = tmp_path_factory.mktemp("warm-start")
    sft = root / "sft"
    shutil.copytree(lora_run, sft)  # its own copy: tests move and change it
    out = root / "run"
    cfg = load_grpo_config(GRPO_TINY, [f"model.init_from={sft}", f"training.output_dir={out}"])
    warm = start_record(cfg, out, None)
    model, tok = load_policy(cfg, False, warm)
    torch.manual_seed(0)
    # random B as well as A, so the adapter changes what the model computes from the start
    peft = get_peft_model(model, LoraConfig(r=4, lora_alpha=8, target_modules="all-linear",
                                            init_lora_weights=False, task_type="CAUSAL_LM"))
    out.mkdir()
    write_run_config(cfg, warm, out)
    peft.save_pretrained(str(out / "final"))
    tok.save_pretrained(str(out / "final"))
    warm_start.write(warm, out / "final")
    return {"sft": sft, "run": out, "root": root}


def _logits(model, tok=None) -> torch.Tensor:
    from transformers import AutoTokenizer

    from cuset.tiny import tiny_checkpoint

    tok = tok or AutoTokenizer.from_pretrained(str(tiny_checkpoint()))
    ids = tok(TEXT, return_tensors="pt")["input_ids"]
    with torch.no_grad():
        return model.eval()(input_ids=ids).logits


def _base():
    from transformers import AutoModelForCausalLM

    from cuset.tiny import tiny_checkpoint

    return AutoModelForCausalLM.from_pretrained(str(tiny_checkpoint()), dtype=torch.float32)


@pytest.fixture(scope="module")
def expected(warm_run) -> dict[str, torch.Tensor]:
    """Built here with peft alone: the base, the SFT adapter merged, the run's adapter on top;
    and what the run's adapter on the bare base computes (the wrong model)."""
    from peft import PeftModel

    sft = PeftModel.from_pretrained(_base(), str(warm_run["sft"] / "final")).merge_and_unload()
    right = PeftModel.from_pretrained(sft, str(warm_run["run"] / "final"))
    wrong = PeftModel.from_pretrained(_base(), str(warm_run["run"] / "final"))
    return {"right": _logits(right), "wrong": _logits(wrong)}


def test_the_merged_export_is_base_plus_sft_plus_the_runs_adapter(warm_run, expected, tmp_path):
    from transformers import AutoModelForCausalLM

    from cuset.export import main

    assert not torch.allclose(expected["right"], expected["wrong"], atol=1e-3)  # SFT matters
    assert main(["--run", str(warm_run["run"]), "--out", str(tmp_path / "m"), "--merge"]) == 0
    merged = AutoModelForCausalLM.from_pretrained(str(tmp_path / "m"), dtype=torch.float32)
    torch.testing.assert_close(_logits(merged), expected["right"], atol=1e-4, rtol=1e-4)


def test_eval_and_analyze_rebuild_the_warm_start_from_an_exported_adapter(warm_run, expected,
                                                                          tmp_path):
    from cuset.analysis.confidence import load
    from cuset.eval.errors import EvalError
    from cuset.eval.samplers import LocalSampler
    from cuset.export import main

    assert main(["--run", str(warm_run["run"]), "--out", str(tmp_path / "a")]) == 0
    record = json.loads((tmp_path / "a" / "warm_start.json").read_text())
    assert record["folder"] == str((warm_run["sft"] / "final").resolve())
    for adapter in (tmp_path / "a", warm_run["run"]):  # the export, and the run folder itself
        sampler = LocalSampler("builtin:tiny", adapter=str(adapter), device="cpu",
                               dtype="float32")
        torch.testing.assert_close(_logits(sampler.model), expected["right"], atol=1e-4,
                                   rtol=1e-4)
    # analyze's model carries its chunked head: compare its merged weights with the rebuilt ones
    loaded = load(str(_tiny()), adapter=str(tmp_path / "a"), device=torch.device("cpu"))
    sampler_weights = sampler.model.merge_and_unload().state_dict()
    for name, value in loaded.model.merge_and_unload().state_dict().items():
        if name in sampler_weights:
            torch.testing.assert_close(value, sampler_weights[name], atol=1e-5, rtol=1e-5)
    with pytest.raises(EvalError, match="not on --model-path"):
        LocalSampler(str(tmp_path / "a"), adapter=str(tmp_path / "a"), device="cpu")


def _tiny() -> Path:
    from cuset.tiny import tiny_checkpoint

    return tiny_checkpoint()


def test_sft_weights_gone_or_changed_are_refused_by_name(warm_run, tmp_path, capsys):
    from cuset.eval.errors import EvalError
    from cuset.eval.samplers import LocalSampler
    from cuset.export import main

    sft = warm_run["sft"]
    moved = warm_run["root"] / "sft-moved"
    sft.rename(moved)
    try:
        assert main(["--run", str(warm_run["run"]), "--out", str(tmp_path / "m"), "--merge"]) == 2
        err = capsys.readouterr().err
        assert f"{sft / 'final'}" in err and "gone" in err and "Traceback" not in err
        assert not (tmp_path / "m").exists()
        with pytest.raises(EvalError, match=f"{sft / 'final'}.*gone"):
            LocalSampler("builtin:tiny", adapter=str(warm_run["run"]), device="cpu")
    finally:
        moved.rename(sft)
    weights = sft / "final" / "adapter_model.safetensors"
    original = weights.read_bytes()
    weights.write_bytes(original[:-1] + bytes([original[-1] ^ 1]))
    try:
        assert main(["--run", str(warm_run["run"]), "--out", str(tmp_path / "a")]) == 2
        assert "files have changed" in capsys.readouterr().err
    finally:
        weights.write_bytes(original)


def test_resume_goes_on_from_the_recorded_warm_start(warm_run, lora_run, tmp_path):
    from cuset.grpo import _warm_start_callback, load_grpo_config, start_record

    run = warm_run["run"]
    ckpt = run / "checkpoint-1"
    ckpt.mkdir(exist_ok=True)

    def cfg(*extra: str):
        return load_grpo_config(GRPO_TINY, [f"training.output_dir={run}", *extra])

    # the callback puts the record beside each checkpoint's adapter
    recorded = json.loads((run / "final" / "warm_start.json").read_text())
    first = start_record(cfg(f"model.init_from={warm_run['sft']}"), run, None)
    state = type("S", (), {"global_step": 1, "is_world_process_zero": True})()
    _warm_start_callback(first).on_save(type("A", (), {"output_dir": str(run)})(), state, None)
    assert json.loads((ckpt / "warm_start.json").read_text()) == recorded
    # --resume without --init-from: the recorded SFT weights
    plain = cfg()
    again = start_record(plain, run, str(ckpt))
    assert again == first and plain.model.init_from == recorded["folder"]
    # the same weights elsewhere are the same start; other weights are refused by name
    assert start_record(cfg(f"model.init_from={lora_run}"), run, str(ckpt)).fingerprint == \
        first.fingerprint
    with pytest.raises(CusetError, match="holds other weights"):
        start_record(cfg(f"model.init_from={lora_run / 'checkpoint-1'}"), run, str(ckpt))
    # a run that started from the bare base is not resumed on top of an SFT run
    bare = tmp_path / "bare"
    (bare / "checkpoint-1").mkdir(parents=True)
    (bare / "cuset_config.json").write_text(json.dumps({"model": {"name_or_path": "builtin:tiny"},
                                                        "warm_start": None}))
    with pytest.raises(CusetError, match="without a warm start"):
        start_record(cfg(f"model.init_from={lora_run}"), bare, str(bare / "checkpoint-1"))
