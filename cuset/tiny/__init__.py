"""A tiny causal LM and a byte-level BPE tokenizer trained on bundled CUDA programs.

Used by the `tiny` config and the tests: the whole training path (chat template, offsets, LoRA,
the chunked head) runs offline on a model built from a config, saved and loaded back with
`from_pretrained` like a real checkpoint.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

CORPUS_DIR = Path(__file__).with_name("corpus")

CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]

PROMPTS = {
    "vector_add": "Write a CUDA program that adds two float32 vectors a and b of length N into c.",
    "relu": "Write a CUDA program that applies ReLU to the float32 vector x of length N, writing y.",
    "block_sum": "Write a CUDA program that sums the float32 array values of length N into total.",
    "matmul_tiled": "Write a CUDA program that multiplies A (M x K) by B (K x P) into C, float32.",
    "histogram": "Write a CUDA program that counts int32 values in [0, 64) into 64 uint32 bins.",
    "warp_max": "Write a CUDA program that computes the maximum of each row of x (ROWS x COLS).",
}


def corpus_programs() -> dict[str, str]:
    """Bundled CUDA programs by name (written for this project)."""
    return {p.stem: p.read_text() for p in sorted(CORPUS_DIR.glob("*.cu"))}


def _corpus_lines() -> list[str]:
    roles = ["system\n", "user\n", "assistant\n"]
    return list(corpus_programs().values()) + list(PROMPTS.values()) + roles * 20


def build_tokenizer(vocab_size: int = 512):
    """Train a byte-level BPE on the bundled corpus; wrap it as a fast HF tokenizer."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=SPECIAL_TOKENS, show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator(_corpus_lines(), trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>",
        bos_token=None, unk_token=None,
    )
    fast.chat_template = CHAT_TEMPLATE
    return fast


def build_model(vocab_size: int, *, hidden_size: int = 64, layers: int = 2, seed: int = 0):
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    cfg = Qwen2Config(
        vocab_size=vocab_size, hidden_size=hidden_size, intermediate_size=2 * hidden_size,
        num_hidden_layers=layers, num_attention_heads=4, num_key_value_heads=2,
        max_position_embeddings=8192, tie_word_embeddings=False,
    )
    torch.manual_seed(seed)
    return Qwen2ForCausalLM(cfg)


def tiny_checkpoint(cache_dir: str | Path | None = None) -> Path:
    """Build (once) and return a folder holding the tiny model and tokenizer."""
    root = Path(cache_dir or os.environ.get("CKD_CACHE_DIR", Path.home() / ".cache" / "cuda-kernel-data"))
    h = hashlib.sha256()
    for name, text in sorted(corpus_programs().items()):
        h.update(name.encode() + b"\0" + text.encode())
    h.update(CHAT_TEMPLATE.encode() + repr(sorted(PROMPTS.items())).encode() + b"v2")
    out = root / "cuset" / f"tiny-{h.hexdigest()[:12]}"
    if (out / "config.json").is_file() and (out / "tokenizer.json").is_file():
        return out
    tmp = out.with_name(out.name + f".tmp{os.getpid()}")
    tok = build_tokenizer()
    model = build_model(len(tok))
    for c in (model.config, model.generation_config):
        c.eos_token_id, c.pad_token_id, c.bos_token_id = tok.eos_token_id, tok.pad_token_id, None
    tmp.mkdir(parents=True, exist_ok=True)
    tok.save_pretrained(tmp)
    model.save_pretrained(tmp)
    try:
        tmp.rename(out)
    except OSError:
        # another process finished first; its copy is identical
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
    return out
