"""NumPy references run in the sandbox; outputs are validated and cached; hostile ones fail."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import numpy as np
import pytest

from schemas import InputCase, Reference, Task, TensorSpec
from validators.cases import materialize
from validators.reference import ReferenceError, ReferenceRunner
from validators.sandbox import Limits, sandbox_mode

TIGHT = Limits(cpu_seconds=2, wall_seconds=30, memory_bytes=1 << 30, file_size_bytes=1 << 20,
               max_processes=32, output_bytes=64 << 10)

ADD = "import numpy as np\ndef reference(inputs, sizes):\n    return {'c': inputs['a'] + inputs['b']}\n"


def _task(code: str = ADD, out_dtype: str = "float32") -> Task:
    return Task(
        name="add", description="c = a + b",
        inputs=[TensorSpec(name="a", dtype="float32", shape=["N"]),
                TensorSpec(name="b", dtype="float32", shape=["N"])],
        outputs=[TensorSpec(name="c", dtype=out_dtype, shape=["N"])],
        sizes={"N": 100}, cases=[InputCase(name="c0", seed=1), InputCase(name="c1", seed=2, sizes={"N": 37})],
        reference=Reference(code=code),
    )


@pytest.fixture
def runner(tmp_path) -> ReferenceRunner:
    return ReferenceRunner(tmp_path / "refs", limits=TIGHT)


def test_outputs_computed_in_sandbox_and_cached(runner, tmp_path):
    task = _task()
    for case in task.cases:
        inputs = materialize(task, case)
        outs, cached = runner.outputs(task, case, inputs)
        assert not cached
        np.testing.assert_array_equal(outs["c"], inputs["a"] + inputs["b"])
        assert outs["c"].dtype == np.float32 and outs["c"].shape == (task.case_sizes(case)["N"],)
        again, cached = runner.outputs(task, case, inputs)
        assert cached and np.array_equal(again["c"], outs["c"])
    assert (os.stat(tmp_path / "refs").st_mode & 0o777) == 0o700


def test_cache_key_covers_code_and_inputs(runner):
    task = _task()
    case = task.cases[0]
    inputs = materialize(task, case)
    runner.outputs(task, case, inputs)
    other = _task(ADD.replace("+", "-"))
    outs, cached = runner.outputs(other, case, inputs)
    assert not cached and np.array_equal(outs["c"], inputs["a"] - inputs["b"])
    inputs2 = {k: v + 1 for k, v in inputs.items()}
    _, cached = runner.outputs(task, case, inputs2)
    assert not cached


def test_corrupted_cache_entry_recomputed(runner):
    task = _task()
    case = task.cases[0]
    inputs = materialize(task, case)
    runner.outputs(task, case, inputs)
    for npy in runner.root.rglob("c.npy"):
        np.save(npy, np.zeros(100, np.float32))
    # Another process's runner: this one also holds the outputs in memory.
    outs, cached = ReferenceRunner(runner.root, limits=TIGHT).outputs(task, case, inputs)
    assert not cached and np.array_equal(outs["c"], inputs["a"] + inputs["b"])


def test_float64_result_cast_to_spec(runner):
    task = _task("def reference(inputs, sizes):\n    return {'c': inputs['a'].astype('float64') * 2}\n")
    case = task.cases[0]
    outs, _ = runner.outputs(task, case, materialize(task, case))
    assert outs["c"].dtype == np.float32


@pytest.mark.parametrize("code,reason", [
    ("def reference(inputs, sizes):\n    raise ValueError('boom')\n", "ValueError: boom"),
    ("def other(inputs, sizes):\n    return {}\n", "defines no function 'reference'"),
    ("def reference(inputs, sizes):\n    return [1]\n", "not a dict"),
    ("def reference(inputs, sizes):\n    return {'d': inputs['a']}\n", "no output 'c'"),
    ("def reference(inputs, sizes):\n    return {'c': inputs['a'][:5]}\n", "has 5 elements"),
    ("def reference(inputs, sizes):\n    return {'c': object()}\n", "not an array"),
    ("def reference(:\n", "SyntaxError"),
    ("import os\ndef reference(inputs, sizes):\n    os.makedirs('out')\n"
     "    os.symlink('/etc/hostname', 'out/c.npy')\n    return {}\n", "unreadable: .*symbolic link"),
])
def test_bad_references_have_clear_reasons(runner, code, reason):
    task = _task(code)
    case = task.cases[0]
    with pytest.raises(ReferenceError, match=reason):
        runner.outputs(task, case, materialize(task, case))


def test_non_integer_values_for_integer_output(runner):
    task = _task("def reference(inputs, sizes):\n    return {'c': inputs['a'] * 0.5}\n", out_dtype="int32")
    case = task.cases[0]
    with pytest.raises(ReferenceError, match="non-integer"):
        runner.outputs(task, case, materialize(task, case))


HOSTILE = {
    "infinite_loop": ("def reference(inputs, sizes):\n    while True: pass\n", "cpu limit|timed out"),
    # Contained either way: on a VM the kernel time of first-touch page faults varies tenfold,
    # so the 2 s CPU budget can run out before the 1 GiB address space does.
    "memory_bomb": ("def reference(inputs, sizes):\n    x = []\n    while True: x.append(bytearray(1 << 26))\n",
                    "memory limit|MemoryError|cpu limit"),
    "fork_bomb": ("import os\ndef reference(inputs, sizes):\n    while True: os.fork()\n",
                  "processes limit|cpu limit|timed out|BlockingIOError|Resource temporarily"),
    "big_file": ("def reference(inputs, sizes):\n    f = open('big', 'wb')\n    while True: f.write(b'x' * (1 << 20))\n",
                 "file_size limit|File too large"),
    "big_stdout": ("import sys\ndef reference(inputs, sizes):\n    while True: sys.stdout.write('y' * 65536)\n",
                   "output limit"),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_reference_contained(runner, name):
    code, reason = HOSTILE[name]
    task = _task(code)
    case = task.cases[0]
    with pytest.raises(ReferenceError, match=reason):
        runner.outputs(task, case, materialize(task, case))


@pytest.mark.skipif(sandbox_mode() == "rlimits", reason="needs namespaces")
def test_hostile_reference_file_and_network_access_denied(runner, tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir(mode=0o755)
    (home / "secret").write_text("s3cret")
    monkeypatch.setenv("HOME", str(home))
    victim = tmp_path / "victim"
    victim.write_text("keep")
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    port = srv.getsockname()[1]
    code = f"""
import os, socket
def attempt(fn):
    try:
        fn(); return 'yes'
    except Exception:
        return 'no'
def reference(inputs, sizes):
    r = [attempt(lambda: open({str(home / 'secret')!r}).read()),
         attempt(lambda: open({str(tmp_path / 'planted')!r}, 'w').write('x')),
         attempt(lambda: os.unlink({str(victim)!r})),
         attempt(lambda: socket.create_connection(('127.0.0.1', {port}), timeout=1)),
         attempt(lambda: os.listdir({str(runner.root)!r}))]
    raise RuntimeError('attempts:' + ','.join(r))
"""
    task = _task(code)
    case = task.cases[0]
    try:
        with pytest.raises(ReferenceError, match="attempts:no,no,no,no,no"):
            runner.outputs(task, case, materialize(task, case))
    finally:
        srv.close()
    assert victim.read_text() == "keep" and not (tmp_path / "planted").exists()
    assert Path(home / "secret").read_text() == "s3cret"


def test_references_fork_from_a_numpy_zygote_and_give_the_exec_d_outputs(tmp_path, monkeypatch):
    """A NumPy reference's process forks from a zygote that imported NumPy (its import is most
    of a small reference's CPU); with zygotes off it is exec'd, and the outputs are the same."""
    import validators.reference as reference
    from validators import sandbox, zygote

    if sandbox_mode() != "namespaces+uid" or sandbox._use_launcher() is None:
        pytest.skip(f"runs fork from zygotes only with the C launcher (sandbox mode {sandbox_mode()})")
    seen = []

    def spy(*args, **kwargs):
        out = real(*args, **kwargs)
        seen.append(out.extra.get("zygote"))
        return out

    real = reference.run_sandboxed
    monkeypatch.setattr(reference, "run_sandboxed", spy)
    task = _task()
    got = {}
    for on in ("1", "0"):
        monkeypatch.setenv("CKD_TORCH_ZYGOTE", on)
        runner = ReferenceRunner(tmp_path / f"refs{on}", limits=TIGHT)
        case = task.cases[1]
        got[on], cached = runner.outputs(task, case, materialize(task, case))
        assert not cached
    assert seen == ["numpy", None]
    assert np.array_equal(got["1"]["c"], got["0"]["c"])
    assert any(key[1] == reference.NUMPY_PREIMPORT for key in zygote._ZYGOTES)
