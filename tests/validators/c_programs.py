"""Build tiny C programs with gcc for the sandbox tests (fast, and readable by any uid)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


def build_c_programs(folder: Path, programs: dict[str, str]) -> dict[str, Path]:
    """Compile each `name -> C source` into `folder/name`; the folder is made world-readable
    (sandboxed runs execute as a fresh unprivileged uid)."""
    os.chmod(folder, 0o755)
    out = {}
    for name, src in programs.items():
        (folder / f"{name}.c").write_text(src)
        subprocess.run(["gcc", "-O1", "-o", str(folder / name), str(folder / f"{name}.c")],
                       check=True)
        out[name] = folder / name
    return out
