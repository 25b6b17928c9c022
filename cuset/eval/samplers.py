"""Where completions come from: an OpenAI-compatible endpoint, or a local transformers model with
an optional LoRA adapter. Both send the dataset's system prompt
(`builder.stages.specify.SYSTEM_PROMPT`), so a model trained on the dataset sees what it was
trained with, and the task prompt as the user turn.

Each sample is seeded by its index (endpoint: the request's `seed`; local: a generator per
(task, sample)), so the n samples of a task differ, and a sample asked again is the same sample:
the endpoint answer is in the LLM cache, the local one is drawn from the same generator.
"""

from __future__ import annotations

import hashlib
import socket
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlparse

from ..errors import CusetError
from .benchmarks import EvalTask
from .errors import EvalError


@dataclass(frozen=True)
class Completion:
    task_id: str
    sample: int
    text: str
    tokens: int


class Sampler(Protocol):
    label: str

    def sample(self, items: list[tuple[EvalTask, int]]) -> Iterator[Completion]: ...


def chat_messages(prompt: str, system: str | None = None) -> list[dict[str, str]]:
    """The chat turns of a task: `system` is the benchmark's own system turn (KernelBench's);
    None gives the dataset's, what a model trained on it saw."""
    if system is None:
        from builder.stages.specify import SYSTEM_PROMPT

        system = SYSTEM_PROMPT
    return [{"role": "system", "content": system}, {"role": "user", "content": prompt}]


def sample_seed(task_id: str, sample: int) -> int:
    """A seed that depends only on the task and the sample index (not on batching or order)."""
    digest = hashlib.sha256(f"{task_id}\0{sample}".encode()).digest()
    return int.from_bytes(digest[:8], "little") & 0x7FFF_FFFF_FFFF_FFFF


class EndpointSampler:
    """Samples through `builder.llm.LLMClient`: bounded concurrency, retries, on-disk cache."""

    def __init__(self, base_url: str, model: str, *, api_key_env: str = "OPENAI_API_KEY",
                 temperature: float = 0.2, top_p: float = 0.95, max_tokens: int = 4096,
                 concurrency: int = 8, max_retries: int = 2) -> None:
        from builder.llm import LLMClient, LLMConfig, LLMError

        _reachable(base_url)
        try:
            self._client = LLMClient(LLMConfig(
                model=model, base_url=base_url, api_key_env=api_key_env, temperature=temperature,
                top_p=top_p, max_tokens=max_tokens, seed=0, json_mode=False,
                concurrency=concurrency, max_retries=max_retries))
        except (LLMError, ValueError) as exc:
            raise EvalError(f"endpoint {base_url}: {exc}") from None
        self.base_url = base_url
        self.concurrency = concurrency
        self.label = model

    def _one(self, task: EvalTask, idx: int) -> Completion:
        reply = self._client.chat(chat_messages(task.prompt, task.system), seed=idx)
        return Completion(task.id, idx, reply.text, reply.usage.completion_tokens)

    def sample(self, items: list[tuple[EvalTask, int]]) -> Iterator[Completion]:
        from builder.llm import LLMError

        pool = ThreadPoolExecutor(self.concurrency, thread_name_prefix="eval-sample")
        try:
            futures = [pool.submit(self._one, t, i) for t, i in items]
            for fut in as_completed(futures):
                try:
                    yield fut.result()
                except LLMError as exc:
                    raise EvalError(f"endpoint {self.base_url}: {exc}") from None
        finally:
            pool.shutdown(wait=True, cancel_futures=True)


def _reachable(base_url: str) -> None:
    """Fail at once, on one line, when nothing listens at the endpoint (rather than after the
    client's retries with backoff)."""
    u = urlparse(base_url)
    if u.scheme not in ("http", "https") or not u.hostname:
        raise EvalError(f"endpoint {base_url}: not an http(s) URL")
    port = u.port or (443 if u.scheme == "https" else 80)
    try:
        with socket.create_connection((u.hostname, port), timeout=10):
            pass
    except OSError as exc:
        raise EvalError(f"endpoint {base_url}: cannot connect ({exc.strerror or exc})") from None


class LocalSampler:
    """Batched sampling from a transformers checkpoint (`model_path`, or `builtin:tiny`), with the
    LoRA adapter in `adapter` (a `cuset train` output folder or its `final/`) loaded by peft.

    Sampling (temperature, top-p) is done by `_SeededSampling`, one generator per row seeded by
    (task, sample), and `generate` then decodes greedily: a row's tokens do not depend on which
    other rows share its batch."""

    def __init__(self, model_path: str, *, adapter: str | None = None, temperature: float = 0.2,
                 top_p: float = 0.95, max_new_tokens: int = 1024, batch_size: int = 4,
                 device: str | None = None, dtype: str = "auto") -> None:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        from ..modeling import resolve_model_path

        path = resolve_model_path(model_path)
        if not Path(path).is_dir():
            raise EvalError(f"model {model_path}: no such folder")
        adapter_dir = _adapter_dir(adapter) if adapter else None
        tok_dir = adapter_dir if adapter_dir and (adapter_dir / "tokenizer_config.json").is_file() \
            else Path(path)
        if not any((tok_dir / f).is_file() for f in ("tokenizer.json", "tokenizer_config.json",
                                                      "tokenizer.model", "vocab.json")):
            raise EvalError(f"model {model_path}: the folder has no tokenizer")
        try:
            self.tok = AutoTokenizer.from_pretrained(str(tok_dir))
        except Exception as exc:
            raise EvalError(f"model {model_path}: cannot load its tokenizer: {exc}") from None
        if self.tok.pad_token_id is None:
            self.tok.pad_token = self.tok.eos_token
        self.tok.padding_side = "left"  # generation continues every row from its last token
        self.device, torch_dtype = placement(device, dtype)
        warm = _warm_start(adapter, adapter_dir, model_path) if adapter_dir is not None else None
        try:
            if warm is not None:
                from ..warm_start import load_start_model

                # the run trained its adapter on top of its SFT warm start: rebuild that policy
                model = load_start_model(warm, path, f"adapter {adapter}", dtype=torch_dtype)
            else:
                model = AutoModelForCausalLM.from_pretrained(path, dtype=torch_dtype)
            model = model.to(self.device)
        except CusetError as exc:
            raise EvalError(str(exc)) from None
        except Exception as exc:
            raise EvalError(f"model {model_path}: cannot load on {self.device} as {torch_dtype}: "
                            f"{exc}") from None
        if adapter_dir is not None:
            from peft import PeftModel

            try:
                model = PeftModel.from_pretrained(model, str(adapter_dir))
            except Exception as exc:
                raise EvalError(f"adapter {adapter}: cannot load: {exc}") from None
        self.model = model.eval()
        self.temperature, self.top_p = temperature, top_p
        self.max_new_tokens, self.batch_size = max_new_tokens, batch_size
        self.label = Path(model_path).name + (f"+{Path(adapter).name}" if adapter else "")

    def _prompt(self, prompt: str, system: str | None = None) -> str:
        msgs = chat_messages(prompt, system)
        if getattr(self.tok, "chat_template", None):
            return self.tok.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True)
        return "\n\n".join(m["content"] for m in msgs) + "\n\n"  # a base model without a template

    def sample(self, items: list[tuple[EvalTask, int]]) -> Iterator[Completion]:
        import torch
        from transformers import LogitsProcessorList

        for start in range(0, len(items), self.batch_size):
            batch = items[start:start + self.batch_size]
            enc = self.tok([self._prompt(t.prompt, t.system) for t, _ in batch], return_tensors="pt",
                           padding=True, add_special_tokens=False).to(self.device)
            seeds = [sample_seed(t.id, i) for t, i in batch]
            proc = _SeededSampling(seeds, self.temperature, self.top_p)
            with torch.no_grad():
                out = self.model.generate(
                    **enc, do_sample=False, max_new_tokens=self.max_new_tokens,
                    logits_processor=LogitsProcessorList([proc]),
                    pad_token_id=self.tok.pad_token_id, eos_token_id=self.tok.eos_token_id)
            gen = out[:, enc["input_ids"].shape[1]:]
            for (task, idx), row in zip(batch, gen, strict=True):
                ids = row.tolist()
                n = _generated_length(ids, self.tok.eos_token_id)
                text = self.tok.decode(ids[:n], skip_special_tokens=True)
                yield Completion(task.id, idx, text, n)


def placement(device: str | None, dtype: str = "auto") -> tuple[str, Any]:
    """(device, torch dtype) a local model loads with: a GPU when one answers (else the CPU),
    and on it bfloat16 where supported (float16 otherwise); float32 on the CPU. `device` and
    `dtype` (not "auto") override."""
    import torch

    cuda = torch.cuda.is_available()
    where = device or ("cuda" if cuda else "cpu")
    if dtype != "auto":
        return where, getattr(torch, dtype)
    if where.startswith("cuda"):
        return where, torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    return where, torch.float32


def _generated_length(ids: list[int], eos: int | None) -> int:
    """Tokens the model generated: through the first end-of-sequence token (padding after it is
    the batch's, not the model's)."""
    if eos is not None and eos in ids:
        return ids.index(eos) + 1
    return len(ids)


def _warm_start(adapter: str | None, adapter_dir: Path, model_path: str) -> Any:
    """The warm start the adapter was trained on top of (`cuset.warm_start`), or None; its base
    must be `model_path`."""
    from ..warm_start import for_adapter, same_base

    try:
        warm = for_adapter(adapter_dir)
    except CusetError as exc:
        raise EvalError(f"adapter {adapter}: {exc}") from None
    if warm is not None and warm.kind == "adapter" and not same_base(warm, model_path):
        raise EvalError(f"adapter {adapter}: trained on top of {warm.base_model!r} with the SFT "
                        f"adapter {warm.folder!r} merged, not on --model-path {model_path!r}")
    return warm


def _adapter_dir(adapter: str) -> Path:
    p = Path(adapter)
    for d in (p, p / "final"):
        if (d / "adapter_config.json").is_file():
            return d
    raise EvalError(f"adapter {adapter}: no adapter_config.json (train with lora.enabled=true)")


class _SeededSampling:
    """A logits processor that draws each row's next token from its own generator (temperature,
    then nucleus top-p) and leaves only that token possible, so greedy decoding takes it.

    The draw is made on the CPU from the row's probabilities in float32, whatever device and
    dtype the model runs in: a CPU generator cannot draw from CUDA tensors, and this way a row's
    tokens follow from its seed and its logits alone (the same on any device)."""

    def __init__(self, seeds: list[int], temperature: float, top_p: float) -> None:
        import torch

        self.gens = [torch.Generator().manual_seed(s) for s in seeds]
        self.temperature, self.top_p = temperature, top_p

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import torch

        out = torch.full_like(scores, float("-inf"))
        for row, gen in enumerate(self.gens):
            logits = scores[row].float().cpu()
            if self.temperature <= 0:
                choice = int(torch.argmax(logits))
            else:
                probs = torch.softmax(logits / self.temperature, dim=-1)
                sorted_p, order = torch.sort(probs, descending=True)
                keep = torch.cumsum(sorted_p, 0) - sorted_p < self.top_p  # always keeps the top one
                sorted_p = torch.where(keep, sorted_p, torch.zeros_like(sorted_p))
                pick = torch.multinomial(sorted_p / sorted_p.sum(), 1, generator=gen)
                choice = int(order[pick])
            out[row, choice] = 0.0
        return out
