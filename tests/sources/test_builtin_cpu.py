"""Every built-in task's canonical program passes all five cases on the CPU backend.

Slow (about 5-25 s per task on 2 cores): the programs are built against the CUDA shim, each
case runs in the sandbox and is compared with the sandboxed NumPy reference. The build and
reference caches are content-addressed (keyed by source, flags, inputs and reference code),
so a cached entry is never stale and re-runs are quicker.
"""

from __future__ import annotations

import pytest

from sources.builtin import TASKS_DIR, load_task


def _cpu_backend_missing() -> str | None:
    try:
        from validators.backends import get_backend
        from validators.engine import check  # noqa: F401

        why = get_backend("cpu").available()
    except Exception as exc:  # ImportError or BackendUnavailable
        return f"cpu backend not usable here: {exc}"
    return f"cpu backend unavailable: {why}" if why else None


_WHY_NOT = _cpu_backend_missing()
pytestmark = [pytest.mark.slow, pytest.mark.skipif(_WHY_NOT is not None, reason=str(_WHY_NOT))]

NAMES = sorted(p.name for p in TASKS_DIR.iterdir() if (p / "task.json").is_file())


@pytest.mark.parametrize("name", NAMES)
def test_builtin_task_passes_on_cpu(name):
    from validators.engine import check

    task, program = load_task(TASKS_DIR / name)
    result = check(task, program, backend="cpu", thorough=False)
    failed = [f"{c.case}: {c.status.value} {c.reason}" for c in result.cases
              if c.status.value != "passed"]
    assert result.status.value == "passed", f"{name}: {result.reason}\n" + "\n".join(failed)
    assert [c.case for c in result.cases] == [c.name for c in task.cases]
