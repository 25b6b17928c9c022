"""The CUDA datasets on the Hub this source knows: their columns, card licences and how a row
becomes a record.

Where each fact was confirmed (2025-2026 snapshots of the Hub pages and of public code that reads
these datasets):

- `SakanaAI/AI-CUDA-Engineer-Archive`: the dataset card (README.md front matter and its
  `df_l1.columns` listing). Card licence `cc-by-4.0`. Splits `level_1`, `level_2`, `level_3` (one
  Parquet file each, config `default`); no `train` split. Columns: Op_Name, Level_ID, Task_ID,
  Kernel_Name, CUDA_Runtime, PyTorch_Native_Runtime, PyTorch_Compile_Runtime,
  CUDA_Speedup_Native, CUDA_Speedup_Compile, CUDA_Code, PyTorch_Code_Module,
  PyTorch_Code_Functional, Correct, Max_Diff, Error, NCU_Profile, Torch_Profile, Clang_Tidy,
  __index_level_0__.
- `GPUMODE/KernelBook`: the card (README.md, `license: mit` at revision 1576375b; the Hub viewer
  is disabled for it) and the features of a dataset derived from it with the same 18,162 rows:
  entry_point, original_triton_code, python_code, triton_code, repo_name, module_name,
  synthetic (bool), uuid (int64), licenses (list of strings, The Stack v1's detected licences
  of the source repository), stars (int64), sha, repo_link. The repository holds
  `dataset_permissive.parquet` and `dataset_permissive.json` (the same rows twice) and no
  `configs`, so the Parquet file is named explicitly. NOT confirmed: public notes say later
  revisions of the card changed the licence; the card's licence is only used for synthetic rows
  (written by GPU MODE) that carry no repository licence. Every other row takes its own
  repository licences; rows without any are `unknown`.
- `BytedTsinghua-SIA/CUDA-Agent-Ops-6K`: 6,000 rows, one split `train` (`data.parquet`);
  columns `code` (a self-contained PyTorch module: `Model`, `get_inputs`, `get_init_inputs`),
  `ops` (the torch operators it was synthesised from) and `data_source` (e.g. `torch#2`: origin
  library and operator count), from public code that reads it. Licence `cc-by-4.0` as shown on
  the Hub page of its duplicate `kai-celertorai/CUDA-Agent-Ops-6K` ("Duplicated from
  BytedTsinghua-SIA/CUDA-Agent-Ops-6K"); the original card itself was not seen.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import urlparse

from schemas import RawRecord

from .licenses import UNKNOWN, combine
from .rows import BadRow, DatasetContext, check_module, code_column, scalar
from .sakana import FORM as SAKANA_FORM
from .sakana import ArchiveRowError, archive_problem

Converter = Callable[[Mapping[str, object], str, DatasetContext], RawRecord]


@dataclass(frozen=True)
class KnownDataset:
    hub_id: str
    short: str
    card_license: str
    """The card's licence, SPDX."""
    row_license: str
    """The licence of a row that carries none of its own."""
    columns: tuple[str, ...]
    """The columns the mapping reads; a dataset lacking one is refused before any row is read."""
    convert: Converter
    data_files: str | None = None


def _truthy(value: object) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("true", "1", "yes")
    return bool(value) if value is not None else False


def _first_line(value: object, limit: int = 200) -> str:
    text = scalar({"v": value}, "v") or ""
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line[:limit]


def _sakana(row: Mapping[str, object], key: str, ctx: DatasetContext) -> RawRecord:
    if not _truthy(row.get("Correct")):
        error = _first_line(row.get("Error"))
        raise BadRow(
            f"Correct is {row.get('Correct')!r} (Max_Diff={row.get('Max_Diff')!r})"
            + (f": {error}" if error else ""),
            code="not_correct",
        )
    level, task_id = scalar(row, "Level_ID"), scalar(row, "Task_ID")
    if not level or not task_id:
        raise BadRow("Level_ID or Task_ID is empty")
    text = code_column(row, "CUDA_Code", ctx)
    module = code_column(row, "PyTorch_Code_Module", ctx)
    functional = code_column(row, "PyTorch_Code_Functional", ctx)
    try:
        problem = archive_problem(functional, module)
    except ArchiveRowError as exc:
        raise BadRow(str(exc), code="not_a_module") from None
    kernel_name = (scalar(row, "Kernel_Name") or "").strip()
    rid = ctx.unique_id(f"hf/sakana/L{level}/{task_id}/{kernel_name or key}", key)
    meta = {
        "op_name": scalar(row, "Op_Name") or "",
        "level": level,
        "task_id": task_id,
        "kernel_name": kernel_name,
        "max_diff": scalar(row, "Max_Diff") or "",
        "cuda_runtime": scalar(row, "CUDA_Runtime") or "",
        "entry_point": "Model",
        "form": SAKANA_FORM,
        "row": key,
    }
    # `module` is the problem the extension is verified against as it is (no LLM rewrites it).
    return RawRecord(
        id=rid, text=text, kind="kernel", module=problem, split=ctx.data_split, meta=meta,
        provenance=ctx.provenance(key, ctx.row_license(None)),
    )


def _github_repo(link: str | None) -> str | None:
    """`owner/name` from a GitHub link (`https://github.com/o/n`, `.../tree/<sha>`)."""
    if not link:
        return None
    parsed = urlparse(link)
    parts = [p for p in parsed.path.split("/") if p]
    if parsed.netloc.lower().endswith("github.com") and len(parts) >= 2:
        return f"{parts[0]}/{parts[1].removesuffix('.git')}"
    return None


def _kernelbook(row: Mapping[str, object], key: str, ctx: DatasetContext) -> RawRecord:
    module = code_column(row, "python_code", ctx)
    entry_point = (scalar(row, "entry_point") or "").strip() or None
    check_module(module, entry_point)
    license = combine(row.get("licenses"))
    if license == UNKNOWN and _truthy(row.get("synthetic")):
        license = KERNELBOOK.card_license
    link = (scalar(row, "repo_link") or "").strip() or None
    stars = row.get("stars")
    uuid = (scalar(row, "uuid") or "").strip()
    meta = {
        "entry_point": entry_point or "",
        "module_name": scalar(row, "module_name") or "",
        "uuid": uuid,
        "synthetic": "true" if _truthy(row.get("synthetic")) else "false",
        "licenses": scalar(row, "licenses") or "",
        "row": key,
    }
    provenance = ctx.provenance(
        key,
        ctx.row_license(license),
        repo=_github_repo(link) or (scalar(row, "repo_name") or "").strip() or None,
        commit=(scalar(row, "sha") or "").strip() or None,
        stars=stars if isinstance(stars, int) and not isinstance(stars, bool) else None,
    )
    if link and link.startswith(("https://", "http://")):
        # The row's own original beats the dataset page.
        provenance = provenance.model_copy(update={"url": link})
    return RawRecord(
        id=ctx.unique_id(f"hf/kernelbook/{uuid or key}", key), text="", kind="module",
        module=module, split=ctx.data_split, meta=meta, provenance=provenance,
    )


def _ops6k(row: Mapping[str, object], key: str, ctx: DatasetContext) -> RawRecord:
    module = code_column(row, "code", ctx)
    check_module(module, "Model")
    meta = {
        "data_source": scalar(row, "data_source") or "",
        "ops": scalar(row, "ops") or "",
        "entry_point": "Model",
        "row": key,
    }
    return RawRecord(
        id=ctx.unique_id(f"hf/ops6k/{key}", key), text="", kind="module", module=module,
        split=ctx.data_split, meta=meta, provenance=ctx.provenance(key, ctx.row_license(None)),
    )


SAKANA = KnownDataset(
    hub_id="SakanaAI/AI-CUDA-Engineer-Archive",
    short="sakana",
    card_license="CC-BY-4.0",
    row_license="CC-BY-4.0",
    columns=("Op_Name", "Level_ID", "Task_ID", "Kernel_Name", "CUDA_Runtime", "CUDA_Code",
             "PyTorch_Code_Module", "PyTorch_Code_Functional", "Correct", "Max_Diff"),
    convert=_sakana,
)
KERNELBOOK = KnownDataset(
    hub_id="GPUMODE/KernelBook",
    short="kernelbook",
    card_license="MIT",
    row_license=UNKNOWN,
    columns=("entry_point", "python_code", "repo_name", "module_name", "synthetic", "uuid",
             "licenses", "stars", "sha", "repo_link"),
    convert=_kernelbook,
    data_files="dataset_permissive.parquet",
)
OPS6K = KnownDataset(
    hub_id="BytedTsinghua-SIA/CUDA-Agent-Ops-6K",
    short="ops6k",
    card_license="CC-BY-4.0",
    row_license="CC-BY-4.0",
    columns=("code", "ops", "data_source"),
    convert=_ops6k,
)
KNOWN: tuple[KnownDataset, ...] = (SAKANA, KERNELBOOK, OPS6K)


def known_by_name(name: str) -> KnownDataset | None:
    """The known dataset named by its Hub id or short name (case-insensitive)."""
    wanted = name.strip().lower()
    return next((k for k in KNOWN if wanted in (k.hub_id.lower(), k.short)), None)


def known_by_columns(columns: Sequence[str]) -> KnownDataset | None:
    """The known dataset whose columns a local copy has (its schema is distinctive enough)."""
    have = set(columns)
    return next((k for k in KNOWN if set(k.columns) <= have), None)
