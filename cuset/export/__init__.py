"""Exporting a trained run (`python -m cuset export`): the LoRA adapter, or the merged model in
safetensors, with tokenizer and chat template; optionally uploaded to the Hugging Face Hub."""

from .command import add_arguments, main, run

__all__ = ["add_arguments", "main", "run"]
