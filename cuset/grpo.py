"""`python -m cuset grpo`: GRPO (TRL's `GRPOTrainer`) on verified rewards from the validation
service. Config: `GrpoRunConfig` (YAML sections `model`, `lora`, `tasks`, `reward`, `grpo`,
`training`; dotted `key=value` overrides as `cuset train`). Defaults are the recipe's: G = 6
completions per prompt, no KL (beta 0), one policy update per generation (mu = 1, so the ratio
is 1 and clipping never engages), token-level normalisation (TRL's `dapo` loss), LoRA rank 32,
lr 1e-5, r_max 3.0.
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from . import warm_start
from .config import LoraConfig, ModelConfig, _build, read_config_data
from .errors import CusetError


@dataclass
class GrpoModelConfig(ModelConfig):
    init_from: str | None = None
    """The SFT warm start: a `cuset train` output folder (its `final/`, else its newest
    checkpoint, or that folder itself). A LoRA adapter is merged into its base model, which must
    be `name_or_path`; a fully fine-tuned model is loaded as it is. GRPO's own adapter is then
    trained on top of those weights."""


@dataclass
class TasksConfig:
    spec: str = "builtin"
    """`builtin`, a folder of task folders, a builder dataset folder (`data/*.parquet`), or
    `kernelbench:DIR` (the service's `--tasks`)."""
    split: Literal["train", "test", "all"] = "train"
    """Built-in tasks and datasets: `train` leaves out the held-out tasks `cuset eval` measures
    on (a dataset's `test` split)."""
    limit: int | None = None
    """Use the first N tasks (None: all)."""


@dataclass
class RewardConfig:
    url: str | None = None
    """A running service; None with `local: true` starts one for the run."""
    local: bool = True
    token_env: str | None = None
    """Environment variable holding the service's bearer token."""
    compiled: float = 0.1
    correct: float = 1.0
    speed: float | None = None
    """gamma; None: 1.0 when the service's backend is `cuda`, 0 otherwise (the cpu backend
    refuses timing, and so does a KernelBench task on any backend)."""
    speed_cap: float = 3.0
    """r_max."""
    on_error: Literal["skip", "raise"] = "skip"
    """A completion the service could not judge: left out of the advantage (`skip`) or stop."""
    require_check: Literal["thorough", "fast"] | None = "thorough"
    local_backend: Literal["cpu", "cuda", "auto"] = "cpu"
    local_workers: int = 2
    local_timeout: float = 300.0


@dataclass
class JudgeConfig:
    """The LLM judge (`cuset/grpo_judge.py`): off unless `base_url` is set."""

    base_url: str | None = None
    """Any OpenAI-compatible endpoint (`.../v1`)."""
    model: str | None = None
    weight: float = 0.5
    """lambda in r' = r + lambda * J."""
    until_correct: float | None = None
    """Drop the judge term for a batch whose share of correct completions is at least this
    (None: always on, as in the recipe)."""
    prompt_version: str = "v1"
    """`cuset/prompts/judge.<version>.md`."""
    api_key_env: str = "OPENAI_API_KEY"
    concurrency: int = 8
    max_retries: int = 2
    timeout: float = 120.0
    temperature: float = 0.0
    max_tokens: int = 256
    schema_retries: int = 0
    """Re-asks (with the error fed back) for an answer that is not the schema; 0: J = 0 at once."""


@dataclass
class GrpoParams:
    num_generations: int = 6
    beta: float = 0.0
    num_iterations: int = 1
    epsilon: float = 0.2
    loss_type: str = "dapo"
    """TRL's name for token-level normalisation over the accumulated batch."""
    scale_rewards: Literal["group", "batch", "none"] = "group"
    max_completion_length: int = 2048
    temperature: float = 1.0
    top_p: float = 1.0


@dataclass
class GrpoTrainingConfig:
    output_dir: str = "runs/grpo"
    learning_rate: float = 1e-5
    num_train_epochs: float = 1.0
    max_steps: int = -1
    per_device_train_batch_size: int = 6
    """Completions per device and micro-batch (a multiple of `grpo.num_generations` keeps whole
    groups together)."""
    gradient_accumulation_steps: int = 1
    lr_scheduler_type: str = "constant"
    warmup: float = 0.0
    weight_decay: float = 0.0
    max_grad_norm: float = 1.0
    optim: str = "adamw_torch"
    seed: int = 42
    bf16: Literal["auto", True, False] = "auto"
    logging_steps: int = 1
    save_strategy: str = "steps"
    save_steps: int = 50
    save_total_limit: int | None = 2
    resume_from_checkpoint: str | None = None
    report_to: list[str] = field(default_factory=lambda: ["tensorboard"])
    disable_tqdm: bool = False


@dataclass
class GrpoRunConfig:
    model: GrpoModelConfig = field(default_factory=GrpoModelConfig)
    lora: LoraConfig = field(default_factory=lambda: LoraConfig(r=32, alpha=64))
    tasks: TasksConfig = field(default_factory=TasksConfig)
    reward: RewardConfig = field(default_factory=RewardConfig)
    judge: JudgeConfig = field(default_factory=JudgeConfig)
    grpo: GrpoParams = field(default_factory=GrpoParams)
    training: GrpoTrainingConfig = field(default_factory=GrpoTrainingConfig)


def load_grpo_config(path: str | Path | None, overrides: list[str] | None = None) -> GrpoRunConfig:
    data = read_config_data(path, overrides)
    strategy = data.get("training", {})
    if isinstance(strategy, dict) and strategy.get("save_strategy") is False:
        strategy["save_strategy"] = "no"  # YAML 1.1 reads a bare `no` as False
    cfg = _build(GrpoRunConfig, data, "")
    _validate(cfg)
    return cfg


def _validate(cfg: GrpoRunConfig) -> None:
    g, t, r = cfg.grpo, cfg.training, cfg.reward
    if g.num_generations < 2:
        raise CusetError(f"grpo.num_generations must be at least 2: a group of one has no "
                         f"advantage (got {g.num_generations})")
    if t.per_device_train_batch_size % g.num_generations:
        raise CusetError(f"training.per_device_train_batch_size ({t.per_device_train_batch_size}) "
                         f"must be a multiple of grpo.num_generations ({g.num_generations})")
    if g.num_iterations < 1:
        raise CusetError(f"grpo.num_iterations must be at least 1 (got {g.num_iterations})")
    if r.speed_cap <= 0:
        raise CusetError(f"reward.speed_cap must be positive (got {r.speed_cap})")
    if r.url is None and not r.local:
        raise CusetError("no reward service: give --reward-url URL (reward.url) or --reward-local")
    if r.local_workers < 1:
        raise CusetError(f"reward.local_workers must be at least 1 (got {r.local_workers})")
    j = cfg.judge
    if bool(j.base_url) != bool(j.model):
        raise CusetError("the judge needs both --judge-base-url (judge.base_url) and --judge-model "
                         f"(judge.model); got base_url={j.base_url!r}, model={j.model!r}")
    if j.weight < 0:
        raise CusetError(f"judge.weight must be at least 0 (got {j.weight})")
    if j.until_correct is not None and not 0.0 < j.until_correct <= 1.0:
        raise CusetError(f"judge.until_correct is a share in (0, 1] (got {j.until_correct})")
    if j.base_url:
        from .grpo_judge import judge_prompt

        try:
            judge_prompt(j.prompt_version)
        except ValueError as e:
            raise CusetError(f"judge.prompt_version: {e}") from None
        try:
            _judge_llm_config(j)
        except ValueError as e:
            raise CusetError(f"judge: {e}") from None


def _judge_llm_config(j: JudgeConfig) -> Any:
    from builder.llm import LLMConfig

    return LLMConfig(model=str(j.model), base_url=j.base_url, api_key_env=j.api_key_env,
                     concurrency=j.concurrency, max_retries=j.max_retries, timeout=j.timeout,
                     temperature=j.temperature, max_tokens=j.max_tokens,
                     schema_retries=j.schema_retries)


def _judge_term(cfg: GrpoRunConfig) -> Any:
    """The judge as a reward term, or None; an endpoint nothing listens at is an error now,
    before the model is loaded, rather than J = 0 at every step."""
    j = cfg.judge
    if not j.base_url:
        return None
    from builder.llm import LLMClient, LLMError

    from .eval.errors import EvalError
    from .eval.samplers import _reachable
    from .grpo_judge import JudgeTerm, LLMJudge

    try:
        _reachable(j.base_url)
        client = LLMClient(_judge_llm_config(j))
    except (EvalError, LLMError) as e:
        raise CusetError(f"judge: {e}") from None
    return JudgeTerm(LLMJudge(client, version=j.prompt_version), weight=j.weight,
                     until_correct=j.until_correct)


def prompt_rows(cfg: GrpoRunConfig) -> list[dict[str, Any]]:
    """One row per task: `prompt` (the chat turns `cuset eval` sends for it) and `task_id`."""
    from .eval.errors import EvalError
    from .eval.samplers import chat_messages

    spec = cfg.tasks.spec
    try:
        if _is_dataset(spec):
            items = _dataset_prompts(Path(spec), cfg.tasks.split)
        elif spec == "builtin":
            from sources.builtin import HELD_OUT, load_all

            loaded = load_all()
            keep = {"train": lambda n: n not in HELD_OUT, "test": lambda n: n in HELD_OUT,
                    "all": lambda n: True}[cfg.tasks.split]
            items = [(t.name, t.description, None) for t, _ in loaded.tasks if keep(t.name)]
        else:
            from .eval.benchmarks import load_benchmark

            items = [(_service_id(e), e.prompt, e.system) for e in load_benchmark(spec)]
    except EvalError as e:
        raise CusetError(f"--tasks {spec}: {e}") from None
    items = items[:cfg.tasks.limit] if cfg.tasks.limit is not None else items
    if not items:
        raise CusetError(f"--tasks {spec}: no tasks (split {cfg.tasks.split})")
    return [{"prompt": chat_messages(prompt, system), "task_id": task_id}
            for task_id, prompt, system in items]


def _is_dataset(spec: str) -> bool:
    return not spec.startswith("kernelbench:") and any(Path(spec).glob("data/*.parquet"))


def _dataset_prompts(root: Path, split: str) -> list[tuple[str, str, str | None]]:
    """(service task id, prompt, system) per task of a builder dataset: the record's own training
    prompt (its chat turns before the answer), as `cuset train` gave it to the SFT model, and
    its task's name, which is the id the service answers for a dataset (`--tasks DATASET`)."""
    import pyarrow.parquet as pq

    from schemas import SchemaError, Task

    try:
        fmt = json.loads((root / "manifest.json").read_text()).get("config", {}).get("format")
    except (OSError, ValueError, AttributeError):
        fmt = None  # a dataset without the builder's manifest: its records say what they are
    if fmt == "kernelbench":
        # Its answers are ModelNew modules; the service judges a dataset's tasks as CUDA
        # programs, so every completion would earn nothing, silently.
        raise CusetError(f"--tasks {root}: a dataset written with --format kernelbench; give its "
                         "problems as kernelbench:DIR")
    items: dict[str, tuple[str, str, str | None]] = {}
    for shard in sorted((root / "data").glob("*.parquet")):
        shard_split = shard.name.split("-", 1)[0]
        if split != "all" and shard_split != split:
            continue
        try:
            rows = pq.read_table(shard, columns=["task_json", "messages", "prompt"]).to_pylist()
        except (OSError, KeyError, ValueError) as exc:
            raise CusetError(f"--tasks {root}: cannot read {shard.name}: {exc}") from None
        for i, row in enumerate(rows):
            try:
                task = Task.parse(row["task_json"], origin=f"{shard.name} row {i}")
            except SchemaError as exc:
                raise CusetError(f"--tasks {root}: {exc}") from None
            turns = [m for m in row.get("messages") or [] if m.get("role") != "assistant"]
            system = next((m["content"] for m in turns if m.get("role") == "system"), None)
            user = next((m["content"] for m in turns if m.get("role") == "user"), row["prompt"])
            items.setdefault(task.name, (task.name, user, system))
    return list(items.values())


def _service_id(task: Any) -> str:
    # a KernelBench problem is known to the service by its file's stem
    if task.kind == "kernelbench" and task.kernelbench is not None:
        return Path(task.kernelbench.path).stem
    return task.id


def _trim_reward_log(path: Path, checkpoint: str | None) -> None:
    """Keep the lines of the steps before `checkpoint` (all of a fresh run's are dropped): the
    resumed run redoes the later ones, so the log matches an uninterrupted run's."""
    if not path.exists():
        return
    if checkpoint is None:
        path.unlink()
        return
    state = json.loads((Path(checkpoint) / "trainer_state.json").read_text())
    done = int(state.get("global_step", 0))
    kept = [line for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip() and json.loads(line).get("step", 0) <= done]
    path.write_text("".join(line + "\n" for line in kept), encoding="utf-8")


def _grpo_arguments(cfg: GrpoRunConfig, bf16: bool) -> Any:
    import torch
    from trl import GRPOConfig

    t, g = cfg.training, cfg.grpo
    kw: dict[str, Any] = dict(
        output_dir=t.output_dir, learning_rate=t.learning_rate,
        num_train_epochs=t.num_train_epochs, max_steps=t.max_steps,
        per_device_train_batch_size=t.per_device_train_batch_size,
        gradient_accumulation_steps=t.gradient_accumulation_steps,
        lr_scheduler_type=t.lr_scheduler_type, warmup_steps=t.warmup,
        weight_decay=t.weight_decay, max_grad_norm=t.max_grad_norm, optim=t.optim,
        seed=t.seed, data_seed=t.seed, bf16=bf16, logging_steps=t.logging_steps,
        save_strategy=t.save_strategy, save_steps=t.save_steps,
        save_total_limit=t.save_total_limit, report_to=t.report_to or "none",
        disable_tqdm=t.disable_tqdm,
        num_generations=g.num_generations, beta=g.beta, num_iterations=g.num_iterations,
        epsilon=g.epsilon, loss_type=g.loss_type, scale_rewards=g.scale_rewards,
        max_completion_length=g.max_completion_length, temperature=g.temperature,
        top_p=g.top_p, gradient_checkpointing=cfg.model.gradient_checkpointing,
    )
    if not torch.cuda.is_available():
        kw["use_cpu"] = True
    try:
        return GRPOConfig(**kw)
    except (ValueError, TypeError) as e:
        raise CusetError(f"invalid GRPO settings: {e}") from None


def _speed_weight(cfg: GrpoRunConfig, client: Any) -> float:
    if cfg.reward.speed is not None:
        return cfg.reward.speed
    try:
        backend = client.health().get("backend")
    except Exception as e:  # noqa: BLE001 - any failure here means the service is unusable
        raise CusetError(f"reward service: cannot read /healthz: {e}") from None
    # the service times nothing of a KernelBench answer yet and refuses any speed weight there
    timed = not cfg.tasks.spec.startswith("kernelbench:")
    return 1.0 if backend == "cuda" and timed else 0.0


def run_grpo(cfg: GrpoRunConfig) -> dict[str, Any]:
    """Train; write `final/`, `trainer_state.json`, `rewards.jsonl` and `cuset_config.json` to
    `training.output_dir`. Returns the log history."""
    import contextlib

    from datasets import Dataset

    from validators.client import ValidationClient

    from .grpo_reward import LocalService, RewardWeights, VerifiedReward
    from .trainer import resolve_checkpoint

    out = Path(cfg.training.output_dir)
    checkpoint = resolve_checkpoint(cfg.training.resume_from_checkpoint, out)
    rows = prompt_rows(cfg)
    warm = start_record(cfg, out, checkpoint)
    out.mkdir(parents=True, exist_ok=True)
    write_run_config(cfg, warm, out)
    log_path = out / "rewards.jsonl"
    _trim_reward_log(log_path, checkpoint)
    token = os.environ.get(cfg.reward.token_env) if cfg.reward.token_env else None
    judge = _judge_term(cfg)
    with contextlib.ExitStack() as stack:
        url = cfg.reward.url
        if url is None:
            service = stack.enter_context(LocalService(
                cfg.tasks.spec, out / "reward-service.log", backend=cfg.reward.local_backend,
                workers=cfg.reward.local_workers, timeout=cfg.reward.local_timeout))
            url = service.url
            print(f"[cuset] reward service: local ({cfg.reward.local_backend}) at {url}", flush=True)
        client = stack.enter_context(ValidationClient(url, token=token))
        if judge is not None:
            stack.callback(judge.judge.close)
            print(f"[cuset] judge: {cfg.judge.model} at {cfg.judge.base_url} (weight "
                  f"{judge.weight}, until correct share {judge.until_correct})", flush=True)
        weights = RewardWeights(compiled=cfg.reward.compiled, correct=cfg.reward.correct,
                                speed=_speed_weight(cfg, client), speed_cap=cfg.reward.speed_cap)
        reward = VerifiedReward(client, weights, num_generations=cfg.grpo.num_generations,
                                log_path=log_path, on_error=cfg.reward.on_error,
                                require_check=cfg.reward.require_check, judge=judge)
        trainer = _trainer(cfg, Dataset.from_list(rows), reward, warm)
        if checkpoint:
            print(f"[cuset] resuming from {checkpoint}", flush=True)
        try:
            trainer.train(resume_from_checkpoint=checkpoint)
        finally:
            trainer.save_state()
        trainer.save_model(str(out / "final"))
        warm_start.write(warm, out / "final")
    return {"log_history": trainer.state.log_history}


def write_run_config(cfg: GrpoRunConfig, warm: Any, out: Path) -> None:
    """`cuset_config.json`: the config, and with a warm start its record (`warm_start`), which
    every loader of the run's adapter needs to rebuild the policy it was trained on."""
    data = dataclasses.asdict(cfg)
    data["warm_start"] = warm.to_dict() if warm is not None else None
    (out / "cuset_config.json").write_text(json.dumps(data, indent=2, default=str))


def start_record(cfg: GrpoRunConfig, out: Path, checkpoint: str | None) -> Any:
    """The warm start of this run (`cuset.warm_start.WarmStart`), or None. A resumed run goes
    on from what its first part started from: the recorded SFT weights when `model.init_from`
    is not given again (checked unchanged), and an error when a different one is given, or
    one is given to a run that started from the bare base (its checkpoint would then be
    loaded on top of other weights)."""
    recorded = None
    if checkpoint is not None:
        cfg_path = out / "cuset_config.json"
        try:
            run_config = json.loads(cfg_path.read_text()) if cfg_path.is_file() else None
        except (OSError, ValueError) as e:
            raise CusetError(f"cannot read {str(cfg_path)!r}: {e}") from None
        if run_config is not None:
            recorded = warm_start.for_adapter(Path(checkpoint), run_config)
            if recorded is None and cfg.model.init_from:
                raise CusetError(f"--resume: the run in {str(out)!r} started from "
                                 f"{run_config.get('model', {}).get('name_or_path')!r} without "
                                 f"a warm start; model.init_from={cfg.model.init_from!r} would "
                                 "resume its checkpoint on other weights (leave it out)")
    if recorded is not None:
        warm_start.verify(recorded, f"the checkpoint {checkpoint}")
        if not cfg.model.init_from:
            cfg.model.init_from = recorded.folder
            print(f"[cuset] resuming on the recorded warm start {recorded.folder}", flush=True)
    if not cfg.model.init_from:
        return None
    try:
        warm = warm_start.resolve(cfg.model.init_from, cfg.model.name_or_path)
    except CusetError as e:
        raise CusetError(f"model.init_from: {e}") from None
    if recorded is not None and warm.fingerprint != recorded.fingerprint:
        raise CusetError(f"--resume: the run in {str(out)!r} started from the SFT weights in "
                         f"{recorded.folder!r}, but model.init_from={cfg.model.init_from!r} "
                         f"holds other weights ({warm.folder}): leave model.init_from out")
    if recorded is not None:
        warm = dataclasses.replace(warm, init_from=recorded.init_from)
    return warm


def _load_causal_lm(cfg: GrpoRunConfig, path: str, dtype: str, what: str) -> Any:
    from transformers import AutoModelForCausalLM

    kwargs: dict[str, Any] = {"dtype": dtype, "trust_remote_code": cfg.model.trust_remote_code}
    if cfg.model.attn_implementation:
        kwargs["attn_implementation"] = cfg.model.attn_implementation
    try:
        return AutoModelForCausalLM.from_pretrained(path, **kwargs)
    except Exception as e:  # noqa: BLE001 - transformers raises many kinds for a bad model
        raise CusetError(f"cannot load {what}: {e}") from None


def load_policy(cfg: GrpoRunConfig, bf16: bool, warm: Any = None) -> tuple[Any, Any]:
    """The starting policy and its tokenizer: `model.name_or_path`, or with `model.init_from`
    the SFT run's weights (its adapter merged into the base, or its full model; `warm` is its
    record when the caller made one) and the tokenizer and chat template it trained with."""
    from .modeling import load_tokenizer, resolve_model_path

    dtype = cfg.model.dtype
    dtype = ("bfloat16" if bf16 else "float32") if dtype == "auto" else dtype
    init = cfg.model.init_from
    if not init:
        path = resolve_model_path(cfg.model.name_or_path)
        tokenizer = load_tokenizer(cfg, path)  # type: ignore[arg-type]  # reads cfg.model only
        return _load_causal_lm(cfg, path, dtype, f"the model {cfg.model.name_or_path!r}"), tokenizer
    from .export.source import find_weights
    from .export.write import load_tokenizer as run_tokenizer

    try:
        weights = find_weights(init)
        warm = warm or warm_start.resolve(init, cfg.model.name_or_path)
    except CusetError as e:
        raise CusetError(f"model.init_from: {e}") from None
    base = _warm_start_base(cfg, weights) if weights.kind == "adapter" else None
    kwargs: dict[str, Any] = {"dtype": dtype, "trust_remote_code": cfg.model.trust_remote_code}
    if cfg.model.attn_implementation:
        kwargs["attn_implementation"] = cfg.model.attn_implementation
    # the loader every consumer of the run's adapter uses, so they rebuild this very policy
    model = warm_start.load_start_model(warm, base, f"model.init_from {init!r}", **kwargs)
    tokenizer = run_tokenizer(weights, base)
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    print(f"[cuset] warm start: {weights.kind} from {weights.folder}", flush=True)
    return model, tokenizer


def _warm_start_base(cfg: GrpoRunConfig, weights: Any) -> str:
    """The base of the SFT adapter, which must be the policy's `model.name_or_path`: an adapter
    merged into another model would train something nobody asked for."""
    from .export.source import base_model
    from .modeling import resolve_model_path

    trained = weights.run_config.get("model", {}).get("name_or_path")
    recorded = weights.adapter_config.get("base_model_name_or_path")
    mine = cfg.model.name_or_path
    if trained is not None and trained != mine:
        raise CusetError(f"model.init_from {cfg.model.init_from!r} trained an adapter on "
                         f"{trained!r}, but model.name_or_path is {mine!r}: set "
                         f"model.name_or_path={trained}")
    path = resolve_model_path(mine)
    if trained is None and recorded and recorded not in (mine, path):
        raise CusetError(f"model.init_from {cfg.model.init_from!r} holds an adapter of "
                         f"{recorded!r}, but model.name_or_path is {mine!r}")
    return base_model(weights, mine)


def _warm_start_callback(warm: Any) -> Any:
    """A callback that puts the warm-start record beside every checkpoint's adapter, so a
    checkpoint copied out of its run still says what it was trained on top of."""
    from transformers import TrainerCallback

    class RecordWarmStart(TrainerCallback):
        def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            folder = Path(args.output_dir) / f"checkpoint-{state.global_step}"
            if state.is_world_process_zero and folder.is_dir():
                warm_start.write(warm, folder)

    return RecordWarmStart()


def _trainer(cfg: GrpoRunConfig, dataset: Any, reward: Any, warm: Any = None) -> Any:
    from peft import LoraConfig as PeftLoraConfig
    from trl import GRPOTrainer

    from .modeling import bf16_supported

    bf16 = bf16_supported() if cfg.training.bf16 == "auto" else bool(cfg.training.bf16)
    model, tokenizer = load_policy(cfg, bf16, warm)
    peft_config = None
    if cfg.lora.enabled:
        peft_config = PeftLoraConfig(r=cfg.lora.r, lora_alpha=cfg.lora.alpha,
                                     lora_dropout=cfg.lora.dropout,
                                     target_modules=cfg.lora.target_modules,
                                     task_type="CAUSAL_LM", bias="none")
    callbacks = [_warm_start_callback(warm)] if warm is not None else None
    return GRPOTrainer(model=model, reward_funcs=[reward], args=_grpo_arguments(cfg, bf16),
                       train_dataset=dataset, processing_class=tokenizer,
                       peft_config=peft_config, callbacks=callbacks)


def add_arguments(p: Any) -> None:
    p.add_argument("--config", required=True, help="YAML config (cuset/configs/grpo-*.yaml)")
    p.add_argument("--tasks", help="builtin, a folder of task folders, a builder dataset, or kernelbench:DIR "
                   "(overrides tasks.spec)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--reward-url", help="a running validation service (reward.url)")
    where.add_argument("--reward-local", action="store_true",
                       help="start a local service on loopback for the run (the default)")
    p.add_argument("--judge-base-url", help="an OpenAI-compatible endpoint for the LLM judge "
                   "(judge.base_url)")
    p.add_argument("--judge-model", help="the judge's model (judge.model)")
    p.add_argument("--judge-weight", type=float, help="lambda in r' = r + lambda * J "
                   "(judge.weight, default 0.5)")
    p.add_argument("--judge-until-correct", type=float, metavar="F",
                   help="drop the judge term for a batch whose correct share reaches F "
                   "(judge.until_correct; default: always on)")
    p.add_argument("--init-from", metavar="DIR", help="SFT warm start: a `cuset train` output "
                   "folder (model.init_from)")
    p.add_argument("--output-dir", help="overrides training.output_dir")
    p.add_argument("--resume", nargs="?", const="latest", metavar="CKPT",
                   help="continue from the newest checkpoint-* in the output folder, or CKPT")
    p.add_argument("overrides", nargs="*", metavar="key=value",
                   help="dotted config overrides, e.g. grpo.num_generations=4")


def run(args: Any) -> int:
    import sys

    overrides = list(args.overrides)
    if args.resume and "=" in args.resume and not os.path.exists(args.resume):
        overrides.insert(0, args.resume)  # `--resume key=value`: argparse took the override
        args.resume = "latest"
    if args.tasks:
        overrides.append(f"tasks.spec={args.tasks}")
    if args.reward_url:
        overrides.append(f"reward.url={args.reward_url}")
    if args.reward_local:
        overrides += ["reward.url=null", "reward.local=true"]
    for flag, key in (("judge_base_url", "judge.base_url"), ("judge_model", "judge.model"),
                      ("judge_weight", "judge.weight"),
                      ("judge_until_correct", "judge.until_correct"),
                      ("init_from", "model.init_from")):
        if getattr(args, flag) is not None:
            overrides.append(f"{key}={getattr(args, flag)}")
    if args.output_dir:
        overrides.append(f"training.output_dir={args.output_dir}")
    if args.resume:
        overrides.append(f"training.resume_from_checkpoint={args.resume}")
    try:
        run_grpo(load_grpo_config(args.config, overrides))
    except CusetError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0
