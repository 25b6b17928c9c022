"""The built-in corpus: loader, task well-formedness, splits, malformed folders, export."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from schemas import CASES_PER_TASK, Task
from sources.base import UnreadableRecord
from sources.builtin import (
    HELD_OUT,
    LICENSE,
    TASKS_DIR,
    block_size,
    iter_records,
    load_all,
    load_task,
)
from sources.builtin.__main__ import main as builtin_cli

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def corpus():
    return load_all()


@pytest.fixture(scope="module")
def tasks(corpus):
    return {t.name: (t, p) for t, p in corpus.tasks}


def test_loads_at_least_55_tasks_without_errors(corpus):
    assert [str(e) for e in corpus.errors] == []
    names = [t.name for t, _ in corpus.tasks]
    assert len(names) >= 55
    assert len(set(names)) == len(names)
    assert names == sorted(names), "tasks come in a stable (name) order"


def test_every_task_has_five_cases_two_sizes_and_an_unaligned_size(tasks):
    for name, (task, program) in tasks.items():
        assert len(task.cases) == CASES_PER_TASK, name
        assignments = {tuple(sorted(task.case_sizes(c).items())) for c in task.cases}
        assert len(assignments) >= 2, f"{name}: all cases use one size"
        assert len({c.seed for c in task.cases}) == CASES_PER_TASK, f"{name}: repeated seeds"
        block = block_size(task)
        assert block is not None and block > 1, f"{name}: no block:<n> tag"
        assert re.search(rf"(?<![\w.]){block}(?![\w.])", program.source), (
            f"{name}: block size {block} does not appear in main.cu"
        )
        unaligned = [c.name for c in task.cases
                     if any(v > 1 and v % block for v in task.case_sizes(c).values())]
        assert unaligned, f"{name}: every case size is a multiple of the block size {block}"


# Tasks whose inputs cannot take edge values: say why.
NO_EDGE_VALUES = {"lennard_jones": "coincident particles make the pair potential infinite"}


def test_cases_cover_edge_values_and_distinct_distributions(tasks):
    edge_like = {"edge", "constant"}
    for name, (task, _) in tasks.items():
        kinds = {d.kind for c in task.cases for d in c.distributions.values()}
        assert bool(kinds & edge_like) != (name in NO_EDGE_VALUES), name
        dists = {json.dumps({k: v.model_dump() for k, v in sorted(c.distributions.items())})
                 for c in task.cases}
        assert len(dists) >= 3, f"{name}: cases barely vary their values"


def test_sizes_are_ifndef_macros_with_the_same_default(tasks):
    for name, (task, program) in tasks.items():
        for size, default in task.sizes.items():
            macro = task.size_macros.get(size, size)
            m = re.search(rf"#ifndef {macro}\n#define {macro} (\d+)\n#endif", program.source)
            assert m, f"{name}: no #ifndef {macro} block"
            assert int(m.group(1)) == default, f"{name}: {macro} default differs"


def test_description_names_every_tensor_with_dtype_and_shape(tasks):
    for name, (task, _) in tasks.items():
        text = task.description
        assert "data/<name>.bin" in text, f"{name}: file convention not mentioned"
        for spec in [*task.inputs, *task.outputs]:
            shape = "[" + ", ".join(str(d) for d in spec.shape) + "]"
            line = next((ln for ln in text.splitlines() if ln.startswith(f"- `{spec.name}`:")), None)
            assert line is not None, f"{name}: description never names {spec.name}"
            assert spec.dtype in line and shape in line, f"{name}: {spec.name} lacks dtype/shape"


def test_programs_follow_the_convention_and_check_errors(tasks):
    for name, (task, program) in tasks.items():
        src = program.source
        for spec in [*task.inputs, *task.outputs]:
            assert f'"data/{spec.name}.bin"' in src, f"{name}: no data/{spec.name}.bin"
        launches = len(re.findall(r"<<<", src))
        assert launches >= 1, name
        assert src.count("cudaGetLastError()") >= 1, name
        assert "cudaDeviceSynchronize()" in src, name
        assert "CUDA_CHECK(" in src, name
        assert "cudaFree(" in src, name
        assert re.search(r"if \(!?\(?f\b|if \(f == NULL\)|if \(!f\)", src), f"{name}: fopen unchecked"


def test_corpus_covers_the_required_techniques(tasks):
    sources = [p.source for _, p in tasks.values()]

    def count(pattern: str) -> int:
        return sum(1 for s in sources if re.search(pattern, s))

    assert count(r"__shared__") >= 20
    assert count(r"extern __shared__") >= 5
    assert count(r"__shfl_(down|xor|up)?_?sync") >= 8
    assert count(r"__shfl_xor_sync") >= 2 and count(r"__shfl_down_sync") >= 2
    assert count(r"atomic(Add|Exch)") >= 8
    assert count(r"__constant__") >= 2
    assert count(r"template <") >= 3
    assert count(r"dim3 \w+\(\w+, \w+\)") >= 8
    kinds = {tag for t, _ in tasks.values() for tag in t.tags if tag.startswith("kind:")}
    for needed in ("elementwise", "reduction", "scan", "softmax", "normalization", "matmul",
                   "transpose", "convolution", "pooling", "histogram", "sort", "stencil", "topk",
                   "image", "gather", "scatter", "physics", "finance", "sparse", "loss"):
        assert f"kind:{needed}" in kinds, needed


def test_programs_need_no_gpu_only_features(tasks):
    from validators.analysis import analyze

    for name, (_, program) in tasks.items():
        a = analyze(program.source)
        assert a.features == [], f"{name}: {a.features}"
        assert a.kernels, f"{name}: no kernels found"


def test_held_out_split_is_fixed_spread_and_applied(tasks):
    assert len(HELD_OUT) >= 11 and len(set(HELD_OUT)) == len(HELD_OUT)
    missing = [n for n in HELD_OUT if n not in tasks]
    assert missing == []
    kinds = {next(t for t in tasks[n][0].tags if t.startswith("kind:")) for n in HELD_OUT}
    assert len(kinds) >= 9, kinds
    records = list(iter_records())
    assert len(records) == len(tasks)
    for rec in records:
        assert rec.split == ("test" if rec.task.name in HELD_OUT else "train"), rec.id
    assert sum(r.split == "test" for r in records) == len(HELD_OUT)


def test_records_carry_complete_provenance(tasks):
    for rec in iter_records():
        name = rec.task.name
        assert rec.id == f"builtin/{name}"
        assert rec.provenance.source == "builtin"
        assert rec.provenance.license == LICENSE == "Apache-2.0"
        assert rec.provenance.origin == f"sources/builtin/tasks/{name}"
        assert (REPO / rec.provenance.origin / "main.cu").read_text() == rec.text
        assert rec.task.reference.code == (TASKS_DIR / name / "reference.py").read_text()


def _break_json(d: Path) -> str:
    (d / "task.json").write_text((d / "task.json").read_text()[:-40])
    return "task.json line"


def _drop_reference(d: Path) -> str:
    (d / "reference.py").unlink()
    return "missing reference.py"


def _wrong_default(d: Path) -> str:
    spec = json.loads((d / "task.json").read_text())
    spec["sizes"]["N"] += 1
    (d / "task.json").write_text(json.dumps(spec))
    return "main.cu defaults N to"


def _four_cases(d: Path) -> str:
    spec = json.loads((d / "task.json").read_text())
    spec["cases"] = spec["cases"][:4]
    (d / "task.json").write_text(json.dumps(spec))
    return "has 4 cases"


def _bad_schema(d: Path) -> str:
    spec = json.loads((d / "task.json").read_text())
    spec["inputs"][0]["dtype"] = "float16"
    (d / "task.json").write_text(json.dumps(spec))
    return "inputs.0.dtype"


def _no_entrypoint(d: Path) -> str:
    (d / "reference.py").write_text("import numpy as np\n\ndef ref(inputs, sizes):\n    return {}\n")
    return "no top-level function reference()"


def _code_in_json(d: Path) -> str:
    spec = json.loads((d / "task.json").read_text())
    spec["reference"] = {"code": "def reference(i, s): return {}"}
    (d / "task.json").write_text(json.dumps(spec))
    return "the code lives in reference.py"


@pytest.mark.parametrize("breakage", [_break_json, _drop_reference, _wrong_default, _four_cases,
                                      _bad_schema, _no_entrypoint, _code_in_json])
def test_malformed_folder_is_reported_and_the_others_load(tmp_path, breakage):
    for name in ("relu", "saxpy", "sum_reduction"):
        shutil.copytree(TASKS_DIR / name, tmp_path / name)
    expected = breakage(tmp_path / "saxpy")
    result = load_all(tmp_path)
    assert sorted(t.name for t, _ in result.tasks) == ["relu", "sum_reduction"]
    assert len(result.errors) == 1
    err = result.errors[0]
    assert err.task == "saxpy"
    assert expected in err.reason, err.reason
    assert "saxpy" in str(err)
    # the record stream goes on without raising, and names the broken folder with its reason
    stream = list(iter_records(tmp_path))
    assert [r.task.name for r in stream if not isinstance(r, UnreadableRecord)] == [
        "relu",
        "sum_reduction",
    ]
    bad = [r for r in stream if isinstance(r, UnreadableRecord)]
    assert [r.id for r in bad] == ["builtin/saxpy"] and expected in bad[0].reason


def test_misnamed_folder_is_an_error(tmp_path):
    shutil.copytree(TASKS_DIR / "relu", tmp_path / "relu_copy")
    result = load_all(tmp_path)
    assert result.tasks == []
    assert "folder is 'relu_copy'" in result.errors[0].reason


def test_export_writes_standalone_tasks(tmp_path, capsys):
    assert builtin_cli(["export", str(tmp_path), "relu", "top_k"]) == 0
    for name in ("relu", "top_k"):
        task = Task.parse((tmp_path / name / "task.json").read_text())
        original, program = load_task(TASKS_DIR / name)
        assert task == original
        assert (tmp_path / name / "main.cu").read_text() == program.source
    assert builtin_cli(["export", str(tmp_path), "no_such_task"]) == 2
    assert "unknown task" in capsys.readouterr().err


def test_references_run_in_the_sandbox_and_match_the_specs(tasks, tmp_path, monkeypatch):
    """A spread of (task, case) pairs through the sandboxed reference runner; the slow test
    below runs every case of every task through the whole engine."""
    from validators.cases import materialize
    from validators.reference import ReferenceRunner

    runner = ReferenceRunner(root=tmp_path / "refs")
    picked = sorted(HELD_OUT)[:8]
    for i, name in enumerate(picked):
        task, _ = tasks[name]
        case = task.cases[i % CASES_PER_TASK]
        outs, cached = runner.outputs(task, case, materialize(task, case))
        assert not cached
        sizes = task.case_sizes(case)
        for spec in task.outputs:
            assert outs[spec.name].shape == spec.resolve_shape(sizes), (name, spec.name)
            assert outs[spec.name].dtype.name == spec.dtype, (name, spec.name)
