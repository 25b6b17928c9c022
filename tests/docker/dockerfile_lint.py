"""A small structural Dockerfile linter: the rules this project's images keep, checked where
hadolint is not installed (and beside it, for rules hadolint does not have)."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass


@dataclass(frozen=True)
class Instruction:
    line: int
    op: str
    args: str


@dataclass(frozen=True)
class Stage:
    name: str | None
    image: str
    instructions: list[Instruction]


def instructions(text: str) -> list[Instruction]:
    """Instructions with continuation lines joined and comment lines dropped (as Docker does,
    also inside a continued instruction)."""
    out: list[Instruction] = []
    buf: list[str] = []
    start = 0
    for no, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if not buf:
            start = no
        cont = line.endswith("\\")
        buf.append(line[:-1].strip() if cont else line)
        if not cont:
            op, _, args = " ".join(buf).partition(" ")
            out.append(Instruction(start, op.upper(), args.strip()))
            buf = []
    return out


def global_args(ins: list[Instruction]) -> dict[str, str]:
    """ARGs with defaults declared before the first FROM (the ones FROM lines may use)."""
    args: dict[str, str] = {}
    for i in ins:
        if i.op == "FROM":
            break
        if i.op == "ARG" and "=" in i.args:
            k, v = i.args.split("=", 1)
            args[k.strip()] = v.strip()
    return args


def stages(text: str) -> list[Stage]:
    ins = instructions(text)
    args = global_args(ins)
    out: list[Stage] = []
    for i in ins:
        if i.op == "FROM":
            words = [w for w in i.args.split() if not w.startswith("--")]
            image = re.sub(r"\$\{(\w+)\}|\$(\w+)",
                           lambda m: args.get(m[1] or m[2], m[0]), words[0])
            name = words[2] if len(words) >= 3 and words[1].upper() == "AS" else None
            out.append(Stage(name, image, []))
        elif out:
            out[-1].instructions.append(i)
    return out


def _runs(stage: Stage) -> list[Instruction]:
    return [i for i in stage.instructions if i.op == "RUN"]


def problems(text: str, *, service_stages: tuple[str, ...] = ()) -> list[str]:
    """What breaks the rules, one line each (empty when none):
    - FROM pinned by a tag (or digest), never `latest`, every ARG in it resolved;
    - no ADD of a URL (RUN with a checked download, or COPY);
    - `apt-get install` with -y and --no-install-recommends, after `apt-get update` and
      followed by removing /var/lib/apt/lists in the same RUN;
    - `pip install` only against the constraints file (or naming exact versions);
    - the last USER of every stage that is an image (not only a builder) is not root;
    - a HEALTHCHECK in each stage named in `service_stages`."""
    found: list[str] = []
    all_stages = stages(text)
    names = {s.name for s in all_stages if s.name}
    copied_from = {m for s in all_stages for i in s.instructions if i.op == "COPY"
                   for m in re.findall(r"--from=(\S+)", i.args)}
    for s in all_stages:
        where = f"stage {s.name or s.image}"
        if s.image in names:
            pass  # built on an earlier stage of this file
        elif "$" in s.image:
            found.append(f"{where}: FROM {s.image}: an ARG without a default")
        else:
            ref = s.image.split("@", 1)[0]
            tag = ref.rsplit(":", 1)[1] if ":" in ref.rsplit("/", 1)[-1] else None
            if "@sha256:" not in s.image and tag is None:
                found.append(f"{where}: FROM {s.image}: no tag")
            elif tag == "latest":
                found.append(f"{where}: FROM {s.image}: `latest` is not a version")
        for i in s.instructions:
            if i.op == "ADD" and re.search(r"\b(https?|ftp)://", i.args):
                found.append(f"line {i.line}: ADD of a URL (use RUN with a checked download)")
        for i in _runs(s):
            cmd = i.args
            if "apt-get install" in cmd:
                if "--no-install-recommends" not in cmd:
                    found.append(f"line {i.line}: apt-get install without --no-install-recommends")
                if not re.search(r"apt-get install[^&;|]*\s-y\b|apt-get -y install", cmd):
                    found.append(f"line {i.line}: apt-get install without -y")
                if "apt-get update" not in cmd.split("apt-get install")[0]:
                    found.append(f"line {i.line}: apt-get install without apt-get update first "
                                 "in the same RUN")
                if not re.search(r"rm -rf /var/lib/apt/lists/\*?", cmd.split("apt-get install")[1]):
                    found.append(f"line {i.line}: apt-get install without removing "
                                 "/var/lib/apt/lists in the same RUN")
            for part in re.split(r"&&|;|\|\|", cmd):
                if re.search(r"\bpip3? install\b", part):
                    words = shlex.split(part)
                    rest = words[words.index("install") + 1:]
                    pinned = "-c" in rest or "--constraint" in rest
                    pkgs = [w for w in rest if not w.startswith("-") and "/" not in w]
                    if not pinned and not all("==" in p for p in pkgs):
                        found.append(f"line {i.line}: pip install without the constraints file "
                                     "or exact versions")
        users = [i.args.split(":")[0] for i in s.instructions if i.op == "USER"]
        is_builder = s.name in copied_from and s is not all_stages[-1]
        if not is_builder and s.image not in names and (not users or users[-1] in ("root", "0")):
            found.append(f"{where}: runs as root (add a USER)")
        if s.image in names and users and users[-1] in ("root", "0"):
            found.append(f"{where}: runs as root")
        if s.name in service_stages and not any(i.op == "HEALTHCHECK" for i in s.instructions):
            found.append(f"{where}: a service without a HEALTHCHECK")
    return found
