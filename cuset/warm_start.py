"""The starting policy of a warm-started run, recorded so that whatever loads the run's adapter
rebuilds it.

`cuset grpo --init-from DIR` trains its LoRA adapter on top of a `cuset train` output: the SFT
adapter merged into the base model, or a fully fine-tuned model. That adapter is meaningless on
the bare base, so the run records what it started from (`WarmStart`: the SFT weights' folder,
their kind, a sha256 of their files, the base model) in its `cuset_config.json` (`warm_start`)
and beside every adapter it saves (`warm_start.json` in `final/` and each `checkpoint-N/`, and
in an exported adapter folder). `cuset export`, `cuset eval --adapter`, `cuset analyze --adapter`
and a resumed run read it back (`for_adapter`) and rebuild base + SFT before applying the
adapter (`load_start_model`); SFT weights that are gone or whose files changed are refused by
name, never replaced by the bare base.
"""

from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .errors import CusetError

WARM_START_FILE = "warm_start.json"
_WEIGHT_PATTERNS = {
    "adapter": ("adapter_config.json", "adapter_model.safetensors", "adapter_model.bin"),
    "full": ("config.json", "model*.safetensors", "model.safetensors.index.json",
             "pytorch_model*.bin", "pytorch_model.bin.index.json"),
}


@dataclass(frozen=True)
class WarmStart:
    init_from: str
    """As the run's config named it (`model.init_from`)."""
    folder: str
    """The SFT weights the run started from (absolute: `final/` or a `checkpoint-N/`)."""
    kind: str
    """`adapter` (merged into `base_model`) or `full` (loaded as it is)."""
    fingerprint: str | None
    """sha256 of the weight files' names and bytes; None for a run recorded before it was kept."""
    base_model: str | None
    """The run's `model.name_or_path`: the base an SFT adapter is merged into."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Any, where: str) -> WarmStart:
        try:
            return cls(init_from=str(data["init_from"]), folder=str(data["folder"]),
                       kind=str(data["kind"]), fingerprint=data.get("fingerprint"),
                       base_model=data.get("base_model"))
        except (TypeError, KeyError) as e:
            raise CusetError(f"{where}: not a warm-start record (missing {e})") from None


def fingerprint(folder: Path, kind: str) -> str:
    """sha256 over the names and bytes of the files holding the weights (not the tokenizer or
    the training state, which do not change what the model computes)."""
    files = sorted({p for pattern in _WEIGHT_PATTERNS[kind] for p in folder.glob(pattern)
                    if p.is_file()})
    h = hashlib.sha256()
    for path in files:
        h.update(path.name.encode() + b"\0")
        with path.open("rb") as f:
            while chunk := f.read(1 << 20):
                h.update(chunk)
        h.update(b"\0")
    return "sha256:" + h.hexdigest()


def resolve(init_from: str, base_model: str | None) -> WarmStart:
    """The record of a warm start about to be made from `init_from` (a `cuset train` output)."""
    from .export.source import find_weights

    weights = find_weights(init_from)
    folder = weights.folder.resolve()
    return WarmStart(init_from=init_from, folder=str(folder), kind=weights.kind,
                     fingerprint=fingerprint(folder, weights.kind), base_model=base_model)


def write(ws: WarmStart | None, folder: Path) -> None:
    if ws is not None:
        (folder / WARM_START_FILE).write_text(json.dumps(ws.to_dict(), indent=2) + "\n")


def for_adapter(folder: Path, run_config: dict[str, Any] | None = None) -> WarmStart | None:
    """What the adapter in `folder` was trained on top of, or None for the bare base: its
    `warm_start.json`, else the run config's record (`run_config`, or `cuset_config.json` in
    the folder or the run folder above it). A run config naming `model.init_from` without a
    record (written before records were kept) gives an unverified record."""
    own = folder / WARM_START_FILE
    if own.is_file():
        try:
            data = json.loads(own.read_text())
        except (OSError, ValueError) as e:
            raise CusetError(f"cannot read {str(own)!r}: {e}") from None
        return WarmStart.from_dict(data, str(own))
    if run_config is None:
        path = next((p / "cuset_config.json" for p in (folder, folder.parent)
                     if (p / "cuset_config.json").is_file()), None)
        try:
            run_config = json.loads(path.read_text()) if path else {}
        except (OSError, ValueError) as e:
            raise CusetError(f"cannot read {str(path)!r}: {e}") from None
    if not isinstance(run_config, dict):
        return None
    if run_config.get("warm_start"):
        return WarmStart.from_dict(run_config["warm_start"], f"the run config of {str(folder)!r}")
    model = run_config.get("model") or {}
    init = model.get("init_from") if isinstance(model, dict) else None
    if not init:
        return None
    from .export.source import find_weights

    try:
        weights = find_weights(init)
    except CusetError:
        raise CusetError(f"the adapter in {str(folder)!r} was trained on top of the SFT run "
                         f"{init!r} (model.init_from), which is gone: restore it there") from None
    print(f"[cuset] warning: the run of {folder} recorded model.init_from={init!r} without a "
          f"fingerprint: the SFT weights now in {weights.folder} are used unverified",
          file=sys.stderr, flush=True)
    return WarmStart(init_from=init, folder=str(weights.folder.resolve()), kind=weights.kind,
                     fingerprint=None, base_model=model.get("name_or_path"))


def verify(ws: WarmStart, what: str) -> None:
    """The SFT weights are where the run found them and unchanged; `what` names the adapter
    that needs them."""
    folder = Path(ws.folder)
    if not folder.is_dir():
        raise CusetError(f"{what} was trained on top of the SFT weights in {ws.folder!r} "
                         f"(model.init_from={ws.init_from!r}), which are gone: restore that "
                         "folder (its adapter on the bare base would be a different model)")
    if ws.fingerprint is None:
        return
    now = fingerprint(folder, ws.kind)
    if now != ws.fingerprint:
        raise CusetError(f"{what} was trained on top of the SFT weights in {ws.folder!r} "
                         f"(model.init_from={ws.init_from!r}), whose files have changed since "
                         f"({ws.fingerprint[:19]} then, {now[:19]} now): restore them")


def same_base(ws: WarmStart, model_path: str) -> bool:
    """Whether `model_path` is the base the run's SFT adapter was merged into."""
    from .modeling import resolve_model_path

    if ws.base_model is None:
        return True
    mine = {model_path, resolve_model_path(model_path)}
    return bool(mine & {ws.base_model, resolve_model_path(ws.base_model)})


def load_start_model(ws: WarmStart, base: str | None, what: str, **load: Any) -> Any:
    """The policy the run started from, as plain weights: `base` with the SFT adapter merged,
    or the fully fine-tuned SFT model. `load`: `from_pretrained` keywords (dtype, ...)."""
    from transformers import AutoModelForCausalLM

    verify(ws, what)
    path = ws.folder if ws.kind == "full" else base
    if path is None:
        raise CusetError(f"{what}: no base model to merge the SFT adapter {ws.folder!r} into")
    try:
        model = AutoModelForCausalLM.from_pretrained(path, **load)
    except Exception as e:  # noqa: BLE001 - transformers raises many kinds for a bad model
        raise CusetError(f"{what}: cannot load the model {path!r}: {e}") from None
    if ws.kind == "full":
        return model
    from peft import PeftModel

    try:
        # merged rather than stacked: the run's adapter was trained on these plain weights
        return PeftModel.from_pretrained(model, ws.folder).merge_and_unload()
    except Exception as e:  # noqa: BLE001 - a mismatched adapter fails in many ways
        raise CusetError(f"{what}: cannot apply the SFT adapter in {ws.folder!r} to "
                         f"{path!r}: {e}") from None
