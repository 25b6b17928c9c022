"""Opening a dataset with the `datasets` library: a Hub id, a Hub snapshot folder, or local
Parquet/JSON Lines files. Each split (Hub) or file (local folder) is one `Part`; row keys name
the part so the same row keeps the same origin whichever options selected it."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..base import SourceError

HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
BUILDERS = {".parquet": "parquet", ".jsonl": "json", ".json": "json"}


@dataclass
class Part:
    """One stream of rows: a split of a Hub dataset, or one local file."""

    label: str | None
    """The split or relative file name; None for a single local file."""
    data: Iterable[dict[str, Any]]
    columns: list[str] | None
    """Known before reading when the data's schema is known (Parquet always is)."""
    error: str | None = None
    """Why this part (one file of a folder) could not be opened; the others still are."""

    def key(self, index: int) -> str:
        return f"{self.label}/{index}" if self.label else str(index)


def is_hub_id(dataset: str) -> bool:
    return not Path(dataset).exists() and bool(HUB_ID.match(dataset))


def one_line(exc: BaseException) -> str:
    """The error in one line; the library wraps its readers' errors (`DatasetGenerationError:
    An error occurred ...`), so the innermost cause is the one worth naming."""
    seen = 0
    while exc.__cause__ is not None and seen < 10:
        exc, seen = exc.__cause__, seen + 1
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:300]}" if text else type(exc).__name__


def _has_configs(folder: Path) -> bool:
    """A folder laid out like a Hub repository (a README whose front matter lists `configs`),
    e.g. a `huggingface-cli download` snapshot: the library reads its splits itself."""
    readme = folder / "README.md"
    if not readme.is_file():
        return False
    text = readme.read_text(encoding="utf-8", errors="replace")
    if not text.startswith("---"):
        return False
    front = text.split("---", 2)[1] if text.count("---") >= 2 else ""
    return bool(re.search(r"^configs:", front, re.MULTILINE))


def _local_files(folder: Path) -> list[Path]:
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix in BUILDERS)
    # The same rows published twice (KernelBook ships .json and .parquet): read the Parquet one.
    parquet_stems = {p.with_suffix("") for p in files if p.suffix == ".parquet"}
    return [p for p in files if p.suffix == ".parquet" or p.with_suffix("") not in parquet_stems]


def _parts(loaded: Any, label: str | None) -> list[Part]:
    import datasets

    if isinstance(loaded, datasets.DatasetDict | datasets.IterableDatasetDict):
        return [Part(str(name), ds, ds.column_names) for name, ds in loaded.items()]
    return [Part(label, loaded, loaded.column_names)]


def open_parts(
    dataset: str,
    *,
    config: str | None,
    split: str | None,
    streaming: bool | None,
    revision: str | None,
    data_files: str | None,
    cache_dir: str | None,
) -> tuple[list[Part], bool]:
    """The parts of `dataset` and whether it is a Hub id; `SourceError` (one line naming the
    dataset) when it cannot be opened."""
    try:
        import datasets
    except ImportError as exc:  # pragma: no cover - the build extra installs it
        raise SourceError(
            f"hf dataset {dataset!r}: the datasets library is missing ({exc})"
        ) from exc

    path = Path(dataset)
    hub = is_hub_id(dataset)
    snapshot = path.is_dir() and _has_configs(path)
    if not hub and not path.exists():
        raise SourceError(
            f"hf dataset {dataset!r}: no such file or folder, and not a Hub id (OWNER/NAME)"
        )
    if not (hub or snapshot):
        given = {k: v for k, v in (("config", config), ("split", split), ("revision", revision))
                 if v is not None}
        if given:
            raise SourceError(
                f"hf dataset {dataset!r}: {', '.join(given)} only apply to a Hub id or a Hub "
                f"snapshot folder (README.md with configs), not to plain local files"
            )
    try:
        if hub or snapshot:
            streaming = hub if streaming is None else streaming
            splits = [s.strip() for s in split.split(",") if s.strip()] if split else [None]
            parts: list[Part] = []
            for one in splits:
                loaded = datasets.load_dataset(
                    dataset, name=config, split=one, streaming=streaming, revision=revision,
                    data_files=data_files if hub else None, cache_dir=cache_dir,
                )
                parts.extend(_parts(loaded, one))
            return parts, hub
        files = [path] if path.is_file() else _local_files(path)
        if not files:
            raise SourceError(f"hf dataset {dataset!r}: no .parquet, .jsonl or .json files in it")
        parts = []
        for file in files:
            builder = BUILDERS.get(file.suffix)
            if builder is None:
                raise SourceError(
                    f"hf dataset {dataset!r}: {file.suffix or 'no'} suffix; expected "
                    f"{', '.join(BUILDERS)}"
                )
            label = None if path.is_file() else file.relative_to(path).as_posix()
            try:
                loaded = datasets.load_dataset(
                    builder, data_files=str(file), split="train", streaming=bool(streaming),
                    cache_dir=cache_dir,
                )
            except Exception as exc:
                if path.is_file():
                    raise
                # One broken file of a folder must not hide the others.
                parts.append(Part(label, (), None, error=one_line(exc)))
                continue
            parts.extend(_parts(loaded, label))
        return parts, hub
    except SourceError:
        raise
    except Exception as exc:
        raise SourceError(f"hf dataset {dataset!r}: cannot open it ({one_line(exc)})") from exc
