"""The short build report: a funnel plot (PNG) and a markdown page."""

from __future__ import annotations

from pathlib import Path

from schemas import BuildManifest

FUNNEL_PNG = "funnel.png"
REPORT_MD = "build_report.md"


def funnel_rows(manifest: BuildManifest) -> list[tuple[str, int, dict[str, int]]]:
    """(stage, records left after it, its rejections) from first to last stage."""
    rows: list[tuple[str, int, dict[str, int]]] = []
    for st in manifest.stages:
        name = "written" if st.name == "write" else st.name
        rows.append((name, st.records_out, dict(st.rejected)))
    return rows


def plot_funnel(manifest: BuildManifest, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = funnel_rows(manifest)
    if not rows:
        return
    names = [r[0] for r in rows]
    left = [r[1] for r in rows]
    start = manifest.stages[0].records_in if manifest.stages else 0
    names = ["read", *names]
    left = [start, *left]
    fig_h = 1.0 + 0.55 * len(names)
    fig, ax = plt.subplots(figsize=(10, fig_h), dpi=110)
    ys = list(range(len(names)))[::-1]
    top = max(left) if max(left) > 0 else 1
    ax.barh(ys, left, color="#4C72B0", height=0.6)
    for y, n, row in zip(ys, left, [None, *rows], strict=True):
        label = f"{n}"
        if row is not None and row[2]:
            reasons = sorted(row[2].items(), key=lambda kv: (-kv[1], kv[0]))
            shown = ", ".join(f"{k} {v}" for k, v in reasons[:3])
            if len(reasons) > 3:
                shown += f", +{len(reasons) - 3} more"
            label += f"   (dropped: {shown})"
        ax.text(n + top * 0.01, y, label, va="center", fontsize=9)
    ax.set_yticks(ys)
    ax.set_yticklabels(names, fontsize=10)
    ax.set_xlim(0, top * 1.9)
    ax.set_xlabel("records remaining after the stage")
    kept = manifest.splits
    title = f"Build funnel ({manifest.backend} backend): " + ", ".join(f"{k} {v}" for k, v in kept.items())
    ax.set_title(title, fontsize=11)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def report_markdown(
    manifest: BuildManifest, wall_seconds: float, notes: list[str], phases: dict[str, float] | None = None
) -> str:
    lines = [
        "# Build report",
        "",
        f"Built {manifest.created_at:%Y-%m-%d %H:%M UTC} from sources {', '.join(manifest.sources)} "
        f"on the `{manifest.backend}` backend in {wall_seconds:.1f} s (wall clock).",
        "",
        f"Kept: {', '.join(f'{k} {v}' for k, v in manifest.splits.items()) or 'nothing'}.",
        "",
        f"![funnel]({FUNNEL_PNG})",
        "",
        "| stage | in | out | cached | busy s | rejected |",
        "| --- | ---: | ---: | ---: | ---: | --- |",
    ]
    for st in manifest.stages:
        rej = ", ".join(f"{k} {v}" for k, v in sorted(st.rejected.items())) or "-"
        lines.append(
            f"| {st.name} | {st.records_in} | {st.records_out} | {st.cached} | {st.seconds:.1f} | {rej} |"
        )
    lines += [
        "",
        "`busy s` sums the time spent on each record in the stage (records run in parallel, "
        "so it can exceed the wall clock); `cached` counts results reused from the stage cache.",
        "Per-record reasons are in `rejections.jsonl`; counts and the environment in `manifest.json`.",
    ]
    if manifest.archive:
        lines += ["", "## AI CUDA Engineer archive", "",
                  "Each row's extension verified as it is (`validators.kernelbench`); "
                  "`manifest.json` `archive` holds the same counts.", "",
                  "| rows | count |", "| --- | ---: |"]
        lines += [f"| {k} | {v} |" for k, v in manifest.archive.items()]
    if phases:
        lines += ["", "Wall clock per phase: " + ", ".join(f"{k} {v:.1f} s" for k, v in phases.items()) + "."]
    if notes:
        lines += ["", "## Notes", ""] + [f"- {n}" for n in notes]
    return "\n".join(lines) + "\n"
