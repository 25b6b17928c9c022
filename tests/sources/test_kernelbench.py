"""The KernelBench source: module files as records (AST only), licence detection, broken files."""

from __future__ import annotations

from pathlib import Path

import pytest

from schemas import RawRecord
from sources.base import SourceError, UnreadableRecord, get_source
from sources.kernelbench import records
from sources.kernelbench.reader import detect_license
from tests.sources import license_texts

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
LEVEL1 = DATA / "kernelbench_level1"

GOOD = """import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return x * 2

n = 8

def get_inputs():
    return [torch.rand(n)]

def get_init_inputs():
    return []
"""

MIT = license_texts.MIT  # the whole text: a licence is identified by all of it


def test_real_level1_folder():
    if not LEVEL1.is_dir():
        pytest.skip("shared KernelBench data not present")
    recs = list(records(LEVEL1))
    assert len(recs) == 100 and all(isinstance(r, RawRecord) for r in recs)
    first = recs[0]
    assert first.id == "kernelbench/1_Square_matrix_multiplication_"
    assert [r.id.split("/")[1].split("_")[0] for r in recs[:3]] == ["1", "2", "3"]
    assert first.kind == "module" and first.text == "" and "class Model" in first.module
    assert first.split == "test" and first.meta == {"file": first.id.split("/")[1] + ".py",
                                                     "level": "1"}
    assert first.provenance.source == "kernelbench" and first.provenance.license == "MIT"
    assert first.provenance.origin == str(LEVEL1 / "1_Square_matrix_multiplication_.py")
    assert len(list(records(LEVEL1, limit=7, split="train"))) == 7
    assert {r.split for r in records(LEVEL1, limit=3, split="train")} == {"train"}


def test_broken_files_are_unreadable_and_the_rest_still_read(tmp_path):
    folder = tmp_path / "kb"
    folder.mkdir()
    (folder / "1_good.py").write_text(GOOD)
    (folder / "2_syntax.py").write_text("def broken(:\n")
    (folder / "3_no_inputs.py").write_text(GOOD.replace("def get_inputs", "def other"))
    (folder / "4_latin1.py").write_bytes(b"x = '\xe9'\n")
    (folder / "notes.txt").write_text("not python")
    out = list(records(folder))
    assert [r.id for r in out] == ["kernelbench/1_good", "kernelbench/2_syntax",
                                   "kernelbench/3_no_inputs", "kernelbench/4_latin1"]
    good, syntax, missing, latin = out
    assert isinstance(good, RawRecord) and good.module == GOOD
    assert good.provenance.license == "unknown" and "level" not in good.meta
    assert isinstance(syntax, UnreadableRecord) and syntax.code == "not_a_module"
    assert "2_syntax.py: not valid Python" in syntax.reason
    assert isinstance(missing, UnreadableRecord) and missing.code == "not_a_module"
    assert "defines no get_inputs" in missing.reason
    assert isinstance(latin, UnreadableRecord) and "cannot read" in latin.reason


def test_license_from_the_folder_or_its_parent_or_the_option(tmp_path):
    level = tmp_path / "KernelBench" / "level2"
    level.mkdir(parents=True)
    (level / "1_good.py").write_text(GOOD)
    assert detect_license(level) == "unknown"
    (tmp_path / "KernelBench" / "LICENSE").write_text(MIT)
    rec = next(records(level))
    assert rec.provenance.license == "MIT" and rec.meta["level"] == "2"
    (level / "LICENSE").write_text("All rights reserved.")
    assert next(records(level)).provenance.license == "unknown"
    assert next(records(level, license="Apache-2.0")).provenance.license == "Apache-2.0"


def test_not_a_folder_is_a_source_error(tmp_path):
    with pytest.raises(SourceError, match="is not a folder"):
        list(records(tmp_path / "missing"))
    (tmp_path / "file.py").write_text(GOOD)
    with pytest.raises(SourceError, match="is not a folder"):
        list(records(tmp_path / "file.py"))


def test_usable_through_the_source_registry(tmp_path, monkeypatch):
    import sources.base

    (tmp_path / "1_good.py").write_text(GOOD)
    monkeypatch.setitem(sources.base._REGISTRY, "kernelbench", "sources.kernelbench:records")
    src = get_source("kernelbench", path=tmp_path)
    assert [r.id for r in src.records()] == ["kernelbench/1_good"]
