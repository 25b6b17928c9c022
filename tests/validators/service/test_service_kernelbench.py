"""KernelBench problems as tasks of the real service (`serve --tasks kernelbench:DIR`): each
completion's Python answer is checked by `validators.kernelbench` and rewarded
alpha * correct + beta * compiled; `validators.reward.ServiceReward` scores them as it does
CUDA tasks. The problem and the answers' extension are those of
tests/validators/kernelbench/test_verify_extensions.py, so a session that runs both builds the
extension once (the build cache is content-addressed)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import httpx
import pytest
from service_server import start_server

from validators.client import ValidationClient
from validators.kernelbench.answer import emulation_available
from validators.reward import ServiceReward
from validators.service.tasks import TaskSetError, load_task_set

HERE = Path(__file__).resolve().parent
ALPHA, BETA = 1.0, 0.25
TASK = "1_LeakyReLU"


def _extension_tests():
    path = HERE.parent / "kernelbench" / "test_verify_extensions.py"
    spec = importlib.util.spec_from_file_location("kb_extension_tests", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


KB = _extension_tests()
TORCH_ONLY = ("import torch\nimport torch.nn as nn\n\nclass ModelNew(nn.Module):\n"
              "    def __init__(self, slope):\n        super().__init__()\n"
              "        self.slope = slope\n    def forward(self, x):\n"
              "        return torch.where(x > 0, x, x * self.slope)\n")
NO_IMPORT = "raise ImportError('no such extension')\n" + TORCH_ONLY


def _python(source: str, kernel_first: bool = False) -> str:
    # A kernel shown first in a ```cpp block is not the answer: the ```python block is.
    shown = f"The kernel:\n```cpp\n{KB.KERNEL}\n```\n" if kernel_first else ""
    return f"{shown}The answer:\n```python\n{source}```\nDone."


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    if not emulation_available():
        pytest.skip("validators.cpu.torch_cuda (CUDA extensions on the CPU) is not available")
    tmp = tmp_path_factory.mktemp("kernelbench-service")
    problems = tmp / "level1"
    problems.mkdir()
    (problems / f"{TASK}.py").write_text(KB.PROBLEM)
    (problems / "helpers.py").write_text("def not_a_problem():\n    pass\n")
    # The fast check behind rewards (the reward's terms are under test, not the thorough
    # check's variants, which tests/validators/kernelbench covers): a third of the cost. A cold
    # extension build on a loaded 2-core machine must not meet the service's limit.
    srv = start_server(tmp, "--backend", "cpu", "--workers", "2", "--timeout", "900",
                       "--score-check", "fast",
                       "--tasks", f"kernelbench:{problems}", "--alpha", str(ALPHA),
                       "--beta", str(BETA))
    yield srv
    srv.stop()


@pytest.mark.slow  # cold: the emulator and the extension built, then five sandboxed checks
def test_rewards_of_kernelbench_answers(server):
    # The client waits for a cold batch.
    reward = ServiceReward(server.url, client=ValidationClient(server.url, timeout=900),
                           require_check="fast")
    completions = [
        _python(KB.answer(), kernel_first=True),                       # correct
        _python(KB.answer("return ext.leaky(x, -self.slope)")),        # wrong: same extension
        _python(TORCH_ONLY),                                           # no kernel launched
        "I would write a kernel, but here is prose only.",             # no code block
        [{"role": "assistant", "content": _python(NO_IMPORT)}],        # does not import
    ]
    logged: dict[str, list] = {}
    got = reward(prompts=["p"] * 5, completions=completions, task_id=[TASK] * 5,
                 log_extra=lambda k, v: logged.setdefault(k, v))
    assert logged["validation"] == ["passed", "failed", "rejected", "no_code_block",
                                    "runtime_error"]
    assert got == pytest.approx([ALPHA + BETA, BETA, BETA, 0.0, 0.0])
    reward.close()


def test_score_answer_fields_speed_and_tasks(server):
    body = {"task_id": TASK, "completions": ["```cpp\nint main() {}\n```"], "speed_cap": 2.0}
    answer = httpx.post(server.url + "/v1/score", json=body, timeout=60).json()
    assert answer["kind"] == "kernelbench" and answer["speed_cap"] == 2.0
    item = answer["results"][0]  # only a C++ block: no Python answer
    assert (item["status"], item["reward"]) == ("no_code_block", 0.0)
    refused = httpx.post(server.url + "/v1/score", json={**body, "speed": 0.5}, timeout=60)
    assert refused.status_code == 400 and "cuda backend" in refused.json()["error"]
    tasks = httpx.get(server.url + "/v1/tasks", timeout=60).json()["tasks"]
    assert [(t["id"], t["kind"]) for t in tasks] == [(TASK, "kernelbench")]  # helpers.py: none
    assert "task skipped" in server.log_text() and "helpers.py" in server.log_text()


def test_kernelbench_task_sets_that_cannot_load_are_named(tmp_path):
    with pytest.raises(TaskSetError, match="nowhere.*not a folder"):
        load_task_set(f"kernelbench:{tmp_path / 'nowhere'}")
    (tmp_path / "notes.py").write_text("x = 1\n")
    with pytest.raises(TaskSetError, match=r"no KernelBench problem file.*notes\.py: defines no"):
        load_task_set(f"kernelbench:{tmp_path}")
