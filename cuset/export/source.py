"""What a `cuset train` run folder holds: which weights to export and the base model they need.

A run folder has `final/` (written at the end) and `checkpoint-N/` folders (written during
training); each is a LoRA adapter (`adapter_config.json`) or a full model (`config.json`), with
the tokenizer and chat template the trainer used. `cuset_config.json` names the base model.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import CusetError

_CHECKPOINT = re.compile(r"checkpoint-(\d+)")
_ADAPTER_WEIGHTS = ("adapter_model.safetensors", "adapter_model.bin")


@dataclass(frozen=True)
class RunWeights:
    folder: Path
    """The folder holding the weights (`final/`, a `checkpoint-N/`, or the one given)."""
    kind: str
    """`adapter` (LoRA) or `full` (a whole model)."""
    run_config: dict[str, Any]
    """The run's `cuset_config.json`, or {} when the folder is not inside a run."""

    @property
    def adapter_config(self) -> dict[str, Any]:
        return _read_json(self.folder / "adapter_config.json") if self.kind == "adapter" else {}


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise CusetError(f"cannot read {str(path)!r}: {e}") from None
    if not isinstance(data, dict):
        raise CusetError(f"{str(path)!r} does not hold a JSON object")
    return data


def weights_kind(folder: Path) -> str | None:
    if (folder / "adapter_config.json").is_file() and any(
        (folder / f).is_file() for f in _ADAPTER_WEIGHTS
    ):
        return "adapter"
    if (folder / "config.json").is_file() and (
        any(folder.glob("model*.safetensors")) or any(folder.glob("pytorch_model*.bin"))
    ):
        return "full"
    return None


def _latest_checkpoint(run: Path) -> Path | None:
    found = [(int(m.group(1)), p) for p in run.iterdir()
             if p.is_dir() and (m := _CHECKPOINT.fullmatch(p.name))]
    return max(found)[1] if found else None


def find_weights(run: str | Path) -> RunWeights:
    """`final/` of the run, else its latest checkpoint, else the folder itself when it holds
    weights (so a `checkpoint-N/` can be exported directly)."""
    root = Path(run)
    if not root.is_dir():
        raise CusetError(f"run folder {str(root)!r} does not exist")
    candidates = [root / "final", _latest_checkpoint(root), root]
    for folder in candidates:
        if folder is not None and folder.is_dir() and (kind := weights_kind(folder)):
            # a checkpoint's run config sits one level up
            cfg_path = next((p / "cuset_config.json" for p in (folder, folder.parent, root)
                             if (p / "cuset_config.json").is_file()), None)
            return RunWeights(folder, kind, _read_json(cfg_path) if cfg_path else {})
    raise CusetError(
        f"run folder {str(root)!r} holds no adapter or model: expected final/ or checkpoint-N/ "
        "with adapter_config.json + adapter_model.safetensors, or config.json + model.safetensors"
    )


def base_model(weights: RunWeights, override: str | None = None) -> str:
    """The base model the adapter was trained on: `--base-model`, else the run config's model
    (a `builtin:` name is rebuilt locally), else the path recorded in the adapter config."""
    from ..modeling import resolve_model_path

    if override:
        return resolve_model_path(override)
    name = weights.run_config.get("model", {}).get("name_or_path")
    if name:
        return resolve_model_path(name)
    recorded = weights.adapter_config.get("base_model_name_or_path")
    if recorded:
        return recorded
    raise CusetError(
        f"cannot tell the base model of {str(weights.folder)!r}: no cuset_config.json in the run "
        "and no base_model_name_or_path in adapter_config.json; pass --base-model"
    )


def trust_remote_code(weights: RunWeights) -> bool:
    return bool(weights.run_config.get("model", {}).get("trust_remote_code", False))
