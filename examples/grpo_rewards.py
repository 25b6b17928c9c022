"""GRPO on the built-in tasks with rewards from the validation service, on the CPU.

    python examples/grpo_rewards.py                       # starts a local cpu-backend server
    python examples/grpo_rewards.py --url http://host:8000 --token-env CKD_TOKEN

The prompts are the tasks the service lists (`GET /v1/tasks`), each with its `task_id` column;
`validators.reward.ServiceReward` sends every group of completions to `POST /v1/score`. The
policy is the tiny model of `cuset.tiny` (built from a config, its tokenizer trained on the
bundled CUDA programs), so this runs offline in seconds; its completions are mostly
not programs yet, and their reward is 0 until they are. Swap in a real checkpoint with
`--model`.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's packages, not an older installed copy
INSTRUCTION = "\n\nAnswer with one complete CUDA program in a single ```cuda code block."


def build_dataset(url: str, token: str | None = None, limit: int | None = None) -> Any:
    """A conversational prompt dataset with a `task_id` column, from the service's tasks."""
    from datasets import Dataset

    from validators.client import ValidationClient

    with ValidationClient(url, token=token) as client:
        tasks = client.tasks()[:limit]
    return Dataset.from_list([
        {"prompt": [{"role": "user", "content": t["description"] + INSTRUCTION}],
         "task_id": t["id"]} for t in tasks])


def train(url: str, out_dir: str | Path, *, token: str | None = None, steps: int = 2,
          model: str | None = None, limit: int | None = 8, num_generations: int = 2,
          max_completion_length: int = 32) -> list[dict[str, Any]]:
    """Run `steps` GRPO steps against the service at `url`; returns the trainer's log history."""
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    from validators.reward import ServiceReward

    if model is None:
        from cuset.tiny import tiny_checkpoint

        model = str(tiny_checkpoint())
    tokenizer = AutoTokenizer.from_pretrained(model)
    policy = AutoModelForCausalLM.from_pretrained(model)
    reward = ServiceReward(url, token=token)
    config = GRPOConfig(
        output_dir=str(out_dir), max_steps=steps, per_device_train_batch_size=num_generations,
        num_generations=num_generations, max_completion_length=max_completion_length,
        learning_rate=1e-4, logging_steps=1, save_strategy="no", report_to="none",
        use_cpu=True, bf16=False, seed=0, disable_tqdm=True,
    )
    trainer = GRPOTrainer(model=policy, reward_funcs=[reward], args=config,
                          train_dataset=build_dataset(url, token, limit),
                          processing_class=tokenizer)
    try:
        trainer.train()
    finally:
        reward.close()
    return trainer.state.log_history


def _start_local_server() -> tuple[subprocess.Popen, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "validators", "serve", "--backend", "cpu",
                             "--port", str(port), "--workers", "2"], cwd=ROOT)
    url = f"http://127.0.0.1:{port}"
    import httpx

    for _ in range(600):
        try:
            if httpx.get(url + "/healthz", timeout=2).status_code == 200:
                return proc, url
        except httpx.TransportError:
            time.sleep(0.2)
        if proc.poll() is not None:
            break
    proc.kill()
    raise SystemExit("the local validation server did not start")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--url", help="a running service (default: start one with the cpu backend)")
    p.add_argument("--token-env", help="environment variable holding the service's token")
    p.add_argument("--steps", type=int, default=2)
    p.add_argument("--model", help="a causal LM checkpoint (default: the tiny built-in one)")
    p.add_argument("--out", default="runs/grpo-rewards")
    args = p.parse_args()
    token = os.environ.get(args.token_env) if args.token_env else None
    proc, url = (None, args.url) if args.url else _start_local_server()
    try:
        history = train(url, args.out, token=token, steps=args.steps, model=args.model)
    finally:
        if proc is not None:
            proc.send_signal(signal.SIGTERM)
            proc.wait(60)
    for row in history:
        print({k: v for k, v in row.items() if "reward" in k or k in ("step", "loss")})
    return 0


if __name__ == "__main__":
    sys.exit(main())
