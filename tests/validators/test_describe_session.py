"""`DescribeSession`: one sandboxed process answers a size plan's describe calls, each with the
outcome a process of its own (`describe_many`) would give it."""

from __future__ import annotations

import dataclasses

import pytest

from validators.sandbox import sandbox_mode
from validators.torch_module import DESCRIBE_LIMITS, DescribeSession, describe_many

pytestmark = pytest.mark.skipif(sandbox_mode() == "rlimits", reason="needs the namespace sandbox")

# Reads its standard input as a module may: the session's requests must not be what it finds.
MODULE = """import os, sys, time
import torch
import torch.nn as nn

LEFTOVER = sys.stdin.read()

class Model(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.w = nn.Parameter(torch.ones(n, 3))
    def forward(self, x):
        if LEFTOVER:
            raise RuntimeError("stdin held %r" % LEFTOVER[:80])
        return x @ self.w

N = 4
K = 5

def get_inputs():
    if N == 13:
        os._exit(7)
    if N == 17:
        time.sleep(3600)
    return [torch.rand(K, N)]

def get_init_inputs():
    return [N]
"""


def test_one_process_answers_every_call_as_describe_many_would() -> None:
    calls = [([{"N": 4, "K": 5}, {"N": 8, "K": 5}], "meta"), ([{"N": 3, "K": 2}], "cpu"),
             ([{"N": 6, "K": 7}], "cpu")]
    with DescribeSession() as session:
        got = [session(MODULE, variants, device=device, seed=3) for variants, device in calls]
        assert session.processes == 1
    assert all(d.ok for ds in got for d in ds), got
    assert [d.outputs[0].shape for d in got[0]] == [(5, 3), (5, 3)]
    # The same calls, a process per device: the same descriptions.
    alone_meta = describe_many(MODULE, calls[0][0], device="meta", seed=3)
    alone_cpu = describe_many(MODULE, calls[1][0] + calls[2][0], device="cpu", seed=3)
    assert got[0] == alone_meta and got[1] + got[2] == alone_cpu


def test_a_call_that_ends_the_process_gets_its_own_outcome_and_the_next_a_fresh_process() -> None:
    with DescribeSession() as session:
        first = session(MODULE, [{"N": 4, "K": 5}], device="cpu")
        # Exits in the middle of the second call: described again alone, the exit is its verdict.
        dead = session(MODULE, [{"N": 5, "K": 5}, {"N": 13, "K": 5}], device="cpu")
        after = session(MODULE, [{"N": 6, "K": 5}], device="cpu")
        assert session.processes == 2
    assert first[0].ok and after[0].ok
    assert dead[0].ok and not dead[1].ok
    assert dead[1].kind == "error" and "exit code 7" in dead[1].reason, dead[1]


def test_a_call_past_one_describes_wall_time_is_a_timeout_and_the_session_goes_on() -> None:
    # Long enough for the call after to start its fresh process on a loaded machine: a fork of
    # the torch zygote, or torch's whole import where no zygote can start (a few seconds).
    limits = dataclasses.replace(DESCRIBE_LIMITS, wall_seconds=20)
    with DescribeSession(limits) as session:
        hung = session(MODULE, [{"N": 17, "K": 5}], device="cpu")
        after = session(MODULE, [{"N": 6, "K": 5}], device="meta")
        assert session.processes == 2
    assert hung[0].kind == "timeout" and "ran out of time" in hung[0].reason, hung[0]
    assert after[0].ok


def test_a_problems_size_plan_is_made_once_per_process() -> None:
    from validators.kernelbench.shapes import _remembered_plan, plan_sizes

    before = _remembered_plan.cache_info()
    plan = plan_sizes(MODULE)
    plan.notes.append("changed by its caller")
    again = plan_sizes(MODULE)
    after = _remembered_plan.cache_info()
    assert (after.misses - before.misses, after.hits - before.hits) == (1, 1)
    assert again.sizes == {"N": 4, "K": 5} and not again.scaled and again.notes == []
