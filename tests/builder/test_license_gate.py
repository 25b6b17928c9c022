"""The licence policy runs at gather: a refused record reaches no stage that costs (extract, the
LLM, validation). A real build with the local source and the OpenAI stand-in."""

from __future__ import annotations

import json
from pathlib import Path

from llm_scripts import record_of
from openai_standin import Answer, StandIn

from builder.cli import main
from tests.sources.license_texts import BSD_3


def test_refused_licences_cost_nothing(tmp_path: Path, capsys) -> None:
    """A local folder whose licence is a lower-case `license.txt` is detected; a kernel under a
    copyleft SPDX line and one under no licence are refused at gather: no extract, specify or
    validate cache entry, no LLM call. `--local-license` overrides detection."""
    root = tmp_path / "kernels"
    for sub in ("ok", "gpl", "none"):
        (root / sub).mkdir(parents=True)
    (root / "ok" / "license.txt").write_text(BSD_3)
    (root / "ok" / "k.cu").write_text("__global__ void k(int* x) { x[0] = 1; }\n")
    (root / "gpl" / "g.cu").write_text(
        "// SPDX-License-Identifier: GPL-3.0-or-later\n__global__ void g(int* x) { x[0] = 2; }\n")
    (root / "none" / "n.cu").write_text("__global__ void n(int* x) { x[0] = 3; }\n")

    def build(out: Path, *extra: str) -> dict:
        with StandIn(respond=lambda body: Answer(content="no")) as llm:
            code = main([
                "run", "--sources", "local", "--local-dir", str(root), *extra,
                "--llm-model", "scripted", "--llm-base-url", llm.url,
                "--llm-cache-dir", str(out / "llm-cache"), "--llm-schema-retries", "0",
                "--llm-retries", "0", "--repair-rounds", "0", "--backend", "cpu", "--quick",
                "--executor", "local", "--no-progress", "--out", str(out),
            ])
            asked = sorted(record_of(r.body) for r in llm.chat_requests())
        assert code in (0, 3), capsys.readouterr()  # 3: a build that kept nothing
        manifest = json.loads((out / "manifest.json").read_text())
        cached = {}
        for stage in ("extract", "specify", "validate"):
            folder = out / ".cache" / stage
            texts = [p.read_text() for p in folder.rglob("*") if p.is_file()] if folder.exists() else []
            cached[stage] = {rid for rid in ("local/ok/k.cu#k", "local/gpl/g.cu#g", "local/none/n.cu#n")
                             if any(f'"{rid}"' in t for t in texts)}
        stages = {s["name"]: s for s in manifest["stages"]}
        return {"asked": asked, "cached": cached, "gather": stages["gather"]["rejected"]}

    got = build(tmp_path / "detected")
    assert got["gather"] == {"license_copyleft": 1, "license_unknown": 1}
    assert got["asked"] == ["local/ok/k.cu#k"]
    assert got["cached"]["extract"] == {"local/ok/k.cu#k"}
    assert not got["cached"]["specify"] - {"local/ok/k.cu#k"} and not got["cached"]["validate"]
    rejections = [json.loads(x) for x in (tmp_path / "detected" / "rejections.jsonl").read_text()
                  .splitlines()]
    gpl = next(r for r in rejections if r["id"] == "local/gpl/g.cu#g")
    assert gpl["stage"] == "gather" and "GPL-3.0-or-later" in gpl["detail"]
    assert "gpl/g.cu: SPDX-License-Identifier" in gpl["detail"]

    forced = build(tmp_path / "forced", "--local-license", "MIT")
    assert forced["gather"] == {}
    assert forced["asked"] == ["local/gpl/g.cu#g", "local/none/n.cu#n", "local/ok/k.cu#k"]
