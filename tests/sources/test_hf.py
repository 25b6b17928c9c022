"""The Hugging Face source: the known datasets' mappings on local stand-ins in their published
schemas, the generic column mapping, bad rows, streaming, and opening errors, all read through
the real `datasets` library with the Hub switched off."""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import huggingface_hub.constants
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from schemas import RawRecord
from sources.base import (
    SourceError,
    UnreadableRecord,
    available_sources,
    get_source,
    register_source,
)
from sources.hf import records
from sources.hf.columns import parse_columns
from sources.hf.licenses import combine, to_spdx
from tests.sources.hf_fixtures import (
    OPS_SIGMOID,
    RELU_EXTENSION,
    RELU_FUNCTIONAL,
    SUM_AGGREGATOR,
    builtin_cuda,
    write_binary_code,
    write_generic_jsonl,
    write_kernelbook,
    write_ops6k,
    write_sakana_file,
    write_sakana_snapshot,
    write_table,
)


@pytest.fixture(autouse=True)
def offline(monkeypatch, tmp_path):
    """No test may reach the Hub: the flags are read at import, so patch the loaded values too."""
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_OFFLINE", True)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf-cache"))
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf-cache")


def read(dataset: Path | str, **options) -> tuple[list[RawRecord], list[UnreadableRecord]]:
    options.setdefault("cache_dir", str(Path(str(dataset)).parent / "hf-cache"))
    out = list(records(str(dataset), **options))
    kept = [r for r in out if isinstance(r, RawRecord)]
    bad = [r for r in out if isinstance(r, UnreadableRecord)]
    assert len(kept) + len(bad) == len(out)
    return kept, bad


# --- SakanaAI/AI-CUDA-Engineer-Archive ------------------------------------------------------


def test_sakana_keeps_correct_kernels_with_their_reference(tmp_path):
    path = write_sakana_file(tmp_path / "sakana")
    kept, bad = read(path)  # recognised by its columns
    assert [r.id for r in kept] == [
        "hf/sakana/L1/19/19_ReLU_grid_stride_base",
        "hf/sakana/L1/19/19_ReLU_grid_stride_base~4",
    ]
    first = kept[0]
    assert first.kind == "kernel"
    assert first.text == RELU_EXTENSION
    # The problem the extension is verified against: the functional reference, then the
    # module's sizes and input functions.
    assert first.module.startswith(RELU_FUNCTIONAL)
    assert first.module.endswith("def get_init_inputs():\n    return []\n")
    assert first.meta == {
        "op_name": "19_ReLU", "level": "1", "task_id": "19",
        "kernel_name": "19_ReLU_grid_stride_base", "max_diff": "0.0", "cuda_runtime": "0.0123",
        "entry_point": "Model", "form": "kernelbench_extension", "row": "0",
    }
    assert first.split == "train"
    prov = first.provenance
    assert (prov.source, prov.license, prov.origin) == ("hf", "CC-BY-4.0", f"{path}#0")
    assert prov.url is None  # a local file has no Hub page


def test_sakana_rejects_incorrect_empty_and_oversized_rows_and_says_why(tmp_path):
    path = write_sakana_file(tmp_path / "sakana")
    _, bad = read(path)
    by_row = {b.origin.rsplit("#", 1)[1]: b for b in bad}
    assert sorted(by_row) == ["1", "2", "3"]
    assert by_row["1"].code == "not_correct"
    assert "Correct is False" in by_row["1"].reason
    assert "Max_Diff=4.25" in by_row["1"].reason
    assert "Output mismatch: max difference 4.25" in by_row["1"].reason
    assert by_row["2"].code == "bad_row"
    assert "'CUDA_Code' is empty" in by_row["2"].reason
    assert by_row["3"].code == "bad_row"
    assert "over the 524288-byte cap" in by_row["3"].reason
    assert all(b.reason.startswith(f"{path} row ") for b in bad)


def test_sakana_snapshot_folder_reads_every_level_split(tmp_path):
    folder = write_sakana_snapshot(tmp_path / "AI-CUDA-Engineer-Archive")
    kept, bad = read(folder)
    assert [r.provenance.origin.rsplit("#", 1)[1] for r in kept] == [
        "level_1/0", "level_1/4", "level_2/0", "level_2/1",
    ]
    # A row without a kernel name falls back to its row key.
    assert [r.id for r in kept][2:] == [
        "hf/sakana/L2/40/40_scale_add_fused_base", "hf/sakana/L2/40/level_2/1",
    ]
    assert len(bad) == 3

    only2, _ = read(folder, split="level_2")
    assert [r.id for r in only2] == [r.id for r in kept][2:]
    assert [r.provenance.origin for r in only2] == [r.provenance.origin for r in kept][2:]


def test_streaming_gives_the_same_records_as_a_full_load(tmp_path):
    folder = write_sakana_snapshot(tmp_path / "snap")
    eager = list(records(str(folder), streaming=False, cache_dir=str(tmp_path / "c1")))
    lazy = list(records(str(folder), streaming=True, cache_dir=str(tmp_path / "c2")))
    assert eager == lazy
    path = write_sakana_file(tmp_path / "file")
    assert list(records(str(path), streaming=True)) == list(records(str(path), streaming=False))


def test_limit_stops_after_n_rows_read(tmp_path):
    folder = write_sakana_snapshot(tmp_path / "snap")
    out = list(records(str(folder), streaming=True, limit=3))
    assert [o.origin.rsplit("#", 1)[1] if isinstance(o, UnreadableRecord)
            else o.provenance.origin.rsplit("#", 1)[1] for o in out] == [
        "level_1/0", "level_1/1", "level_1/2"]
    assert list(records(str(folder), limit=0)) == []


def test_records_are_identical_across_runs(tmp_path):
    folder = write_sakana_snapshot(tmp_path / "snap")
    first = [r.model_dump() if isinstance(r, RawRecord) else r for r in records(str(folder))]
    again = [r.model_dump() if isinstance(r, RawRecord) else r for r in records(str(folder))]
    assert first == again


# --- GPUMODE/KernelBook ---------------------------------------------------------------------


def test_kernelbook_rows_become_module_tasks_with_repository_provenance(tmp_path):
    folder = write_kernelbook(tmp_path / "KernelBook")
    kept, bad = read(folder)
    ids = {r.id: r for r in kept}
    assert sorted(ids) == ["hf/kernelbook/1174", "hf/kernelbook/603", "hf/kernelbook/77",
                           "hf/kernelbook/78"]
    one = ids["hf/kernelbook/1174"]
    assert (one.kind, one.text, one.module) == ("module", "", SUM_AGGREGATOR)
    assert one.meta["entry_point"] == "SumAggregator"
    assert one.meta["module_name"] == "SumAggregator"
    assert one.meta["uuid"] == "1174"
    prov = one.provenance
    assert prov.license == "MIT"
    assert prov.repo == "deepgraph/gnn-layers"
    assert prov.commit == "3f2b9c1d0a8e7f6b5c4d3e2f1a0b9c8d7e6f5a4b"
    assert prov.stars == 214
    assert prov.url == "https://github.com/deepgraph/gnn-layers/tree/3f2b9c1d"
    assert prov.origin == f"{folder}#dataset_permissive.parquet/0"


def test_kernelbook_licences_several_none_and_synthetic(tmp_path):
    kept, _ = read(write_kernelbook(tmp_path / "kb"))
    lic = {r.id: r.provenance.license for r in kept}
    assert lic["hf/kernelbook/603"] == "Apache-2.0 AND MIT"  # both detected: both apply
    assert lic["hf/kernelbook/77"] == "unknown"  # GitHub code with no licence: filtered later
    assert lic["hf/kernelbook/78"] == "MIT"  # synthetic, GPU MODE's own: the card's licence
    synthetic = next(r for r in kept if r.id == "hf/kernelbook/78")
    assert synthetic.provenance.repo is None and synthetic.provenance.stars is None


def test_kernelbook_refuses_rows_that_are_not_runnable_modules(tmp_path):
    _, bad = read(write_kernelbook(tmp_path / "kb"))
    codes = {b.origin.rsplit("/", 1)[1]: (b.code, b.reason) for b in bad}
    assert codes["4"][0] == "not_a_module"
    assert "get_init_inputs" in codes["4"][1]
    assert codes["5"][0] == "bad_row"
    assert "'python_code' is empty (None)" in codes["5"][1]


def test_kernelbook_published_as_json_and_parquet_is_read_once(tmp_path):
    folder = write_kernelbook(tmp_path / "kb", with_json_copy=True)
    out = list(records(str(folder)))
    assert len(out) == 6
    assert {o.provenance.origin.split("#")[1].split("/")[0] for o in out
            if isinstance(o, RawRecord)} == {"dataset_permissive.parquet"}


def test_license_option_overrides_row_licences(tmp_path):
    kept, _ = read(write_kernelbook(tmp_path / "kb"), license="bsd-3-clause")
    assert {r.provenance.license for r in kept} == {"BSD-3-Clause"}


# --- BytedTsinghua-SIA/CUDA-Agent-Ops-6K ----------------------------------------------------


def test_ops6k_rows_are_module_tasks(tmp_path):
    path = write_ops6k(tmp_path / "ops6k")
    kept, bad = read(path, columns="ops6k", data_split="test")
    assert [r.id for r in kept] == ["hf/ops6k/0", "hf/ops6k/1"]
    assert kept[1].module == OPS_SIGMOID
    assert kept[0].meta == {"data_source": "torch#2", "ops": "nn.Conv2d, torch.relu",
                            "entry_point": "Model", "row": "0"}
    assert {r.split for r in kept} == {"test"}
    assert {r.provenance.license for r in kept} == {"CC-BY-4.0"}
    assert [(b.id, b.code) for b in bad] == [("hf/ops6k/2", "not_a_module")]
    assert "not valid Python" in bad[0].reason


def test_a_known_mapping_on_a_file_missing_its_columns_is_one_clear_error(tmp_path):
    path = write_table(tmp_path / "x.parquet", [{"code": OPS_SIGMOID, "ops": "torch.sigmoid"}])
    with pytest.raises(SourceError) as err:
        list(records(str(path), columns="ops6k"))
    message = str(err.value)
    assert "\n" not in message
    assert str(path) in message and "'data_source'" in message
    assert "it has: code, ops" in message


# --- generic datasets -----------------------------------------------------------------------


def test_generic_mapping_string_with_filter_split_id_and_licence(tmp_path):
    path = write_generic_jsonl(tmp_path / "corpus.jsonl")
    kept, bad = read(path, columns="text=source,id=name,license=lic,split=part,filter=lang==cuda")
    assert [r.id for r in kept] == ["hf/corpus/relu", "hf/corpus/saxpy", "hf/corpus/5"]
    relu, saxpy, softmax = kept
    assert relu.text == builtin_cuda("relu") and relu.kind == "kernel" and relu.module is None
    assert (relu.split, saxpy.split) == ("train", "test")
    assert (relu.provenance.license, saxpy.provenance.license) == ("MIT", "Apache-2.0")
    assert softmax.provenance.license == "MIT AND ISC"
    assert softmax.meta == {"row": "5"}  # empty id column: the row index
    reasons = {b.id: (b.code, b.reason) for b in bad}
    assert reasons["hf/corpus/2"][0] == "filtered_out"
    assert "lang==cuda" in reasons["hf/corpus/2"][1]
    assert reasons["hf/corpus/3"] == ("bad_row", f"{path} row 3: column 'source' holds int, "
                                      "not text")
    assert reasons["hf/corpus/4"][0] == "bad_row"
    assert "'validation', not train or test" in reasons["hf/corpus/4"][1]


def test_generic_mapping_as_dict_with_modules_and_no_licence(tmp_path):
    path = write_table(tmp_path / "mods.parquet", [
        {"ref": OPS_SIGMOID, "key": "sig"},
        {"ref": "import torch\n", "key": "empty-module"},
    ])
    kept, bad = read(path, columns={"module": "ref", "id": "key"})
    assert [(r.id, r.kind, r.text) for r in kept] == [("hf/mods/sig", "module", "")]
    assert kept[0].provenance.license == "unknown"  # no licence known: filtered by the builder
    assert [b.code for b in bad] == ["not_a_module"]


def test_program_kind_and_streaming_jsonl(tmp_path):
    path = write_generic_jsonl(tmp_path / "c.jsonl")
    kept, _ = read(path, columns="text=source,kind=program,filter=lang!=python", streaming=True,
                   license="MIT")
    assert [r.kind for r in kept] == ["program"] * 4
    assert {r.provenance.license for r in kept} == {"MIT"}


def test_binary_code_column_decodes_utf8_and_refuses_the_rest(tmp_path):
    path = write_binary_code(tmp_path / "bin.parquet")
    kept, bad = read(path, columns="text=code,id=id")
    assert [r.id for r in kept] == ["hf/bin/utf8"]
    assert kept[0].text == builtin_cuda("vector_add_int")
    assert [(b.id, b.code) for b in bad] == [("hf/bin/1", "bad_row")]
    assert "not UTF-8" in bad[0].reason


def test_generic_missing_column_names_the_column_and_its_role(tmp_path):
    path = write_generic_jsonl(tmp_path / "c.jsonl")
    with pytest.raises(SourceError) as err:
        list(records(str(path), columns="text=code,id=name"))
    assert "\n" not in str(err.value)
    assert "missing column(s) 'code' (text)" in str(err.value)
    assert "it has: name, source, lang, lic, part" in str(err.value)


def test_unknown_dataset_without_a_mapping_lists_its_columns(tmp_path):
    path = write_generic_jsonl(tmp_path / "c.jsonl")
    with pytest.raises(SourceError, match=r"not a known dataset .*its columns: name, source"):
        list(records(str(path)))


@pytest.mark.parametrize("spec, message", [
    ("id=name", "needs text=COL or module=COL"),
    ("text", "is not KEY=COLUMN"),
    ("text=a,colour=b", "unknown column mapping key(s) colour"),
    ("text=a,kind=shader", "kind='shader' is not one of"),
    ("text=a,kind=module", "kind=module needs module=COL"),
    ("module=a,kind=kernel", "kind=kernel needs text=COL"),
    ("text=a,filter=lang", "is not COL==VALUE"),
])
def test_bad_column_mappings_are_refused_by_name(spec, message):
    with pytest.raises(SourceError) as err:
        parse_columns(spec, "me/data")
    assert message in str(err.value) and "'me/data'" in str(err.value)


# --- opening ----------------------------------------------------------------------------------


def test_a_hub_id_offline_is_one_line_naming_it():
    with pytest.raises(SourceError) as err:
        list(records("SakanaAI/AI-CUDA-Engineer-Archive"))
    message = str(err.value)
    assert message.startswith("hf dataset 'SakanaAI/AI-CUDA-Engineer-Archive': cannot open it")
    assert "\n" not in message


def test_hub_ids_stream_by_default_with_the_known_files_and_hub_provenance(tmp_path, monkeypatch):
    # The Hub is out of reach, so its answers come from local copies of each repository's layout;
    # what is checked is what the source asks the library for and what it makes of the answer.
    snapshot = write_sakana_snapshot(tmp_path / "sakana")
    book = write_kernelbook(tmp_path / "kb")
    real, calls = datasets.load_dataset, []

    def hub(path, **kwargs):
        calls.append((path, dict(kwargs)))
        local = {"SakanaAI/AI-CUDA-Engineer-Archive": snapshot, "GPUMODE/KernelBook": book}[path]
        files = kwargs.pop("data_files")
        kwargs.pop("revision")
        if files:
            return real("parquet", data_files={"train": str(local / files)}, **kwargs)
        return real(str(local), **kwargs)

    monkeypatch.setattr(datasets, "load_dataset", hub)
    sakana = [r for r in records("SakanaAI/AI-CUDA-Engineer-Archive", split="level_2")
              if isinstance(r, RawRecord)]
    kernelbook = [r for r in records("GPUMODE/KernelBook", revision="1576375b")
                  if isinstance(r, RawRecord)]
    assert [(p, k["streaming"], k["split"], k["data_files"], k["revision"]) for p, k in calls] == [
        ("SakanaAI/AI-CUDA-Engineer-Archive", True, "level_2", None, None),
        ("GPUMODE/KernelBook", True, None, "dataset_permissive.parquet", "1576375b"),
    ]
    hub_page = "https://huggingface.co/datasets/SakanaAI/AI-CUDA-Engineer-Archive"
    assert sakana[0].provenance.url == hub_page
    assert sakana[0].provenance.origin == "SakanaAI/AI-CUDA-Engineer-Archive#level_2/0"
    assert kernelbook[0].provenance.origin == "GPUMODE/KernelBook#train/0"
    assert kernelbook[0].provenance.url == "https://github.com/deepgraph/gnn-layers/tree/3f2b9c1d"
    synthetic = next(r for r in kernelbook if r.meta["synthetic"] == "true")
    assert synthetic.provenance.url == "https://huggingface.co/datasets/GPUMODE/KernelBook"


def test_a_path_that_is_neither_a_file_nor_a_hub_id(tmp_path):
    with pytest.raises(SourceError, match="no such file or folder, and not a Hub id"):
        list(records(str(tmp_path / "nope" / "x.parquet")))


def test_hub_only_options_on_plain_files_are_refused(tmp_path):
    path = write_ops6k(tmp_path / "o")
    with pytest.raises(SourceError, match="split only apply to a Hub id"):
        list(records(str(path), split="train"))


def test_a_broken_file_alone_is_an_error_but_in_a_folder_only_that_file_is_skipped(tmp_path):
    folder = tmp_path / "mixed"
    write_ops6k(folder)
    (folder / "broken.parquet").write_bytes(b"PAR1 this is not parquet")
    with pytest.raises(SourceError, match=r"broken\.parquet': cannot open it \(ArrowInvalid"):
        list(records(str(folder / "broken.parquet"), columns="ops6k"))
    out = list(records(str(folder), columns="ops6k"))
    unreadable = [o for o in out if isinstance(o, UnreadableRecord) and o.code == "unreadable"]
    assert [u.id for u in unreadable] == ["hf/ops6k/broken.parquet"]
    assert "Parquet magic bytes not found" in unreadable[0].reason
    assert sum(isinstance(o, RawRecord) for o in out) == 2


@pytest.mark.parametrize("streaming", [False, True])
def test_a_broken_jsonl_file_is_reported_and_the_next_file_still_read(tmp_path, streaming):
    # The library parses JSON Lines in blocks, so a file broken anywhere in its first block is
    # lost from the start; what matters is that it is counted and the rest goes on.
    folder = tmp_path / "corpus"
    folder.mkdir()
    good = {"text": builtin_cuda("relu")}
    (folder / "a.jsonl").write_text(json.dumps(good) + "\n{not json\n", encoding="utf-8")
    (folder / "b.jsonl").write_text(json.dumps(good) + "\n", encoding="utf-8")
    out = list(records(str(folder), columns="text=text", streaming=streaming,
                       cache_dir=str(tmp_path / "cache")))
    assert [(type(o).__name__, o.id) for o in out] == [
        ("UnreadableRecord", "hf/corpus/a.jsonl/0" if streaming else "hf/corpus/a.jsonl"),
        ("RawRecord", "hf/corpus/b.jsonl/0"),
    ]
    assert out[0].code == "unreadable" and "JSON parse error" in out[0].reason
    assert out[1].text == good["text"]


def test_registered_source_builds_through_the_registry(tmp_path):
    if "hf" not in available_sources():  # until the lead lists it in _BUILTIN_SOURCES
        register_source("hf", "sources.hf:records")
    path = write_sakana_file(tmp_path / "s")
    source = get_source("hf", dataset=str(path), limit=1)
    out = list(source.records())
    assert [r.id for r in out] == ["hf/sakana/L1/19/19_ReLU_grid_stride_base"]


# --- licences ---------------------------------------------------------------------------------


def test_licence_spellings_map_to_spdx():
    assert [to_spdx(s) for s in ("mit", "Apache-2.0", "apache 2.0", "bsd-3-clause", "cc-by-4.0",
                                 "NOASSERTION", "", "Weird-1.0")] == [
        "MIT", "Apache-2.0", "Apache-2.0", "BSD-3-Clause", "CC-BY-4.0", None, None, "Weird-1.0"]
    assert combine(["MIT", "mit", "Apache-2.0"]) == "MIT AND Apache-2.0"
    assert combine("MIT, ISC") == "MIT AND ISC"
    assert combine([]) == combine(None) == combine(["none"]) == combine(7) == "unknown"


def test_parquet_schema_of_the_stand_ins_matches_the_published_column_names(tmp_path):
    # Guards the fixtures themselves: the mapping is only tested if they carry the real names.
    names = pq.read_schema(write_sakana_file(tmp_path / "s")).names
    assert names[:4] == ["Op_Name", "Level_ID", "Task_ID", "Kernel_Name"]
    assert {"CUDA_Code", "PyTorch_Code_Module", "PyTorch_Code_Functional", "Correct",
            "Max_Diff", "Error", "NCU_Profile", "Torch_Profile", "Clang_Tidy"} <= set(names)
    kb = pq.read_schema(write_kernelbook(tmp_path / "k") / "dataset_permissive.parquet")
    assert kb.field("licenses").type == pa.list_(pa.string())
    assert kb.field("uuid").type == pa.int64()
