"""Licence detection (`sources.licenses.detect`) on real licence files and the ways people
write them, and the policy over SPDX expressions."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from sources.licenses import (
    LicenseMap,
    LicensePolicy,
    is_license_file,
    license_of_file_text,
    license_of_source,
    spdx_tags,
)
from sources.local import LocalTree
from tests.sources.license_texts import BSD_3, MIT, PERMISSIVE

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data"
COMMON = Path("/usr/share/common-licenses")  # Debian's copies of the GPL-family texts


def test_real_licence_files_match_what_github_reports():
    if not (SHARED / "github").is_dir():
        pytest.skip("../shared/data is not here")
    seen = 0
    for repo in sorted((SHARED / "github").iterdir()):
        if not (repo / "repo.json").is_file():
            continue
        spdx = json.loads((repo / "repo.json").read_text())["license"]["spdx_id"]
        assert license_of_file_text((repo / "files" / "LICENSE").read_text()) == spdx, repo.name
        seen += 1
    assert seen == 5


@pytest.mark.parametrize("spdx", sorted(PERMISSIVE))
def test_each_allowed_licence_and_its_variants(spdx):
    text = PERMISSIVE[spdx]
    assert license_of_file_text(text) == spdx
    # another copyright line, the text reflowed to one paragraph per line, markdown around it
    other = text.replace("Copyright", "Copyright (c) 1999-2024 Other People and\nCopyright", 1)
    assert license_of_file_text(other) == spdx
    reflowed = "\n\n".join(" ".join(p.split()) for p in text.split("\n\n"))
    assert license_of_file_text(textwrap.fill(reflowed, 60)) == spdx
    md = f"# License\n\n**{spdx}**\n\n> " + text.replace("\n\n", "\n\n> ")
    assert license_of_file_text(md) == spdx
    see_below = ("This project is distributed under the licence below. Some files carry their "
                 "own headers as well.\n\n---\n\n" + text)
    assert license_of_file_text(see_below) == spdx


@pytest.mark.parametrize("name,spdx", [
    ("GPL-2", "GPL-2.0"), ("GPL-3", "GPL-3.0"), ("LGPL-2.1", "LGPL-2.1"), ("LGPL-3", "LGPL-3.0"),
    ("MPL-2.0", "MPL-2.0"), ("Apache-2.0", "Apache-2.0"),
])
def test_copyleft_texts_are_recognised_and_refused(name, spdx):
    if not (COMMON / name).is_file():
        pytest.skip(f"{COMMON / name} is not here")
    found = license_of_file_text((COMMON / name).read_text())
    assert found.split("-only")[0] == spdx
    refusal = LicensePolicy().refusal(found)
    if spdx == "Apache-2.0":
        assert refusal is None
    else:
        assert refusal is not None and refusal.code == "license_copyleft"


def test_not_a_licence_text_stays_unknown():
    assert license_of_file_text("This project is licensed under the MIT license.") == "unknown"
    assert license_of_file_text("All rights reserved.") == "unknown"
    assert license_of_file_text("GNU GENERAL PUBLIC LICENSE Version 3") == "unknown"
    # a file that holds nothing but an SPDX id or expression says it
    assert license_of_file_text("MIT\n") == "MIT"
    assert license_of_file_text("apache-2.0 OR mit") == "Apache-2.0 OR MIT"


@pytest.mark.parametrize("name,ok", [
    ("LICENSE", True), ("license.txt", True), ("Licence.md", True), ("COPYING", True),
    ("copying.rst", True), ("UNLICENSE", True), ("LICENSE.markdown", True),
    ("license.py", False), ("LICENSES", False), ("README.md", False), ("mylicense", False),
])
def test_licence_file_names(name, ok):
    assert is_license_file(name) is ok


def test_spdx_lines():
    assert spdx_tags("/* SPDX-License-Identifier: MIT */\nint x;") == "MIT"
    assert spdx_tags("// SPDX-License-Identifier: apache-2.0 OR mit\n") == "Apache-2.0 OR MIT"
    assert spdx_tags("# SPDX-License-Identifier: GPL-2.0+\n") == "GPL-2.0-or-later"
    assert spdx_tags("int x;") is None
    assert license_of_source("// SPDX-License-Identifier: BSD-3-Clause\n__global__ void k(){}") \
        .spdx == "BSD-3-Clause"
    header = "/*\n" + "".join(f" * {line}\n" for line in MIT.splitlines()) + " */\n"
    assert license_of_source(header + "__global__ void k() {}\n").spdx == "MIT"
    assert license_of_source("// a kernel\n__global__ void k() {}\n") is None


def test_nearest_licence_file_wins(tmp_path: Path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "c").mkdir()
    (tmp_path / "license.txt").write_text(BSD_3)
    (tmp_path / "a" / "COPYING.md").write_text("# Licence\n\n" + MIT)
    (tmp_path / "c" / "LICENSE").write_text("Proprietary. All rights reserved.")
    m = LicenseMap(LocalTree(tmp_path))
    assert m.for_path("k.cu").spdx == "BSD-3-Clause"
    assert m.for_path("a/b/k.cu") == m.for_path("a/k.cu")
    assert m.for_path("a/b/k.cu").spdx == "MIT"
    assert m.for_path("a/b/k.cu").origin == "a/COPYING.md"
    # an unidentified licence file is the nearest statement: unknown, not the parent's BSD
    assert m.for_path("c/k.cu").spdx == "unknown"
    assert "c/LICENSE (text not identified)" in m.for_path("c/k.cu").origin
    # the file's own SPDX line comes first
    assert m.for_path("a/k.cu", "// SPDX-License-Identifier: Zlib\n").spdx == "Zlib"


@pytest.mark.parametrize("expr,code", [
    ("MIT", None), ("MIT OR GPL-3.0-only", None), ("Apache-2.0 WITH LLVM-exception", None),
    ("MIT AND GPL-3.0-only", "license_copyleft"),
    ("GPL-2.0-or-later WITH Classpath-exception-2.0", "license_copyleft"),
    ("AGPL-3.0-only", "license_copyleft"), ("MPL-2.0", "license_copyleft"),
    ("CC-BY-NC-4.0", "license_not_allowed"), ("unknown", "license_unknown"),
    ("NOASSERTION", "license_unknown"), ("", "license_unknown"),
    ("Some Licence", "license_unknown"), ("MIT AND (", "license_unknown"),
])
def test_policy_over_expressions(expr, code):
    got = LicensePolicy().refusal(expr)
    assert (got.code if got else None) == code


def test_allowed_list_is_the_users():
    assert LicensePolicy("GPL-3.0").refusal("GPL-3.0-or-later") is None
    assert LicensePolicy("GPL-3.0").refusal("MIT").code == "license_not_allowed"
    with pytest.raises(ValueError, match="empty list"):
        LicensePolicy(" , ")
