"""Parsing the `repos` option: `OWNER/NAME[@REF]` items as a list, a comma string or `@FILE`."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

_NAME_RE = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}$")
_REF_RE = re.compile(r"^[^\s~^:?*\[\\]+$")


class RepoSpecError(ValueError):
    """A repository item that is not `OWNER/NAME[@REF]`, or an unreadable `@FILE`."""


@dataclass(frozen=True)
class RepoSpec:
    owner: str
    name: str
    ref: str | None = None

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"

    def __str__(self) -> str:
        return self.full_name + (f"@{self.ref}" if self.ref else "")


def parse_spec(item: str, where: str = "") -> RepoSpec:
    text = item.strip()
    if text.startswith("https://github.com/"):
        text = text.removeprefix("https://github.com/").removesuffix(".git").rstrip("/")
    name, _, ref = text.partition("@")
    if not _NAME_RE.match(name) or name.endswith((".", "/")) or "/.." in name:
        raise RepoSpecError(f"{where}{item!r} is not OWNER/NAME or OWNER/NAME@REF")
    if ref and not _REF_RE.match(ref):
        raise RepoSpecError(f"{where}{item!r}: {ref!r} is not a git ref")
    owner, repo = name.split("/")
    return RepoSpec(owner, repo, ref or None)


def parse_repos(value: Iterable[str] | str) -> list[RepoSpec]:
    """The repositories named by `value`, in order, each once."""
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("@"):
            return _from_file(Path(text[1:]).expanduser())
        items: list[tuple[str, str]] = [(i, "") for i in text.split(",") if i.strip()]
    else:
        items = []
        for i in value:
            if str(i).strip().startswith("@"):
                items += [(str(s), "") for s in _from_file(Path(str(i).strip()[1:]).expanduser())]
            elif str(i).strip():
                items.append((str(i), ""))
    specs = [parse_spec(i, w) for i, w in items]
    if not specs:
        raise RepoSpecError("repos: the list is empty")
    return list(dict.fromkeys(specs))


def _from_file(path: Path) -> list[RepoSpec]:
    try:
        lines = path.read_text("utf-8").splitlines()
    except FileNotFoundError:
        raise RepoSpecError(f"repos file {str(path)!r} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise RepoSpecError(f"repos file {str(path)!r} cannot be read: {exc}") from None
    specs = []
    for n, line in enumerate(lines, 1):
        item = line.split("#", 1)[0].strip()
        if item:
            specs.append(parse_spec(item, f"{path}:{n}: "))
    if not specs:
        raise RepoSpecError(f"repos file {str(path)!r} names no repository")
    return specs
