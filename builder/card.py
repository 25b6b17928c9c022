"""The dataset card: README.md with the Hub's YAML front matter, saying how records were
validated."""

from __future__ import annotations

from collections import Counter

from schemas import BuildManifest, DatasetRecord, record_to_row

from .writer import ROW_SCHEMA


def size_category(n: int) -> str:
    for limit, name in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")):
        if n < limit:
            return name
    return "n>1M"


def card_license(records: list[DatasetRecord]) -> str:
    lics = sorted({r.provenance.license for r in records})
    if len(lics) == 1:
        return lics[0].lower()
    return "other"


def case_design(records: list[DatasetRecord]) -> str:
    """What the cases cover, counted from the tasks rather than promised."""
    if not records:
        return ""
    sized = edged = 0
    for r in records:
        t = r.task
        sizes = {tuple(sorted({**t.sizes, **c.sizes}.items())) for c in t.cases}
        sized += len(sizes) >= 2
        edged += any(d.kind == "edge" for c in t.cases for d in c.distributions.values())
    n = len(records)
    return (
        f"Tasks whose cases use two or more problem sizes: {sized} of {n}; with an edge-value "
        f"case (zeros, extremes, tiny values): {edged} of {n}."
    )


def tolerance_policy(records: list[DatasetRecord]) -> list[str]:
    seen: Counter[str] = Counter()
    for r in records:
        t = r.task
        for out in t.outputs:
            tol = t.tolerance_for(out.name)
            if tol.mode == "allclose":
                desc = f"allclose atol={tol.atol:g} rtol={tol.rtol:g} ({out.dtype})"
            elif tol.mode == "max_abs":
                desc = f"max |out-ref| <= {tol.max_abs:g} ({out.dtype})"
            else:
                desc = f"exact ({out.dtype})"
            seen[desc] += 1
    return [f"{k}: {v} outputs" for k, v in sorted(seen.items(), key=lambda kv: (-kv[1], kv[0]))]


def synthesis_lines(records: list[DatasetRecord], manifest: BuildManifest) -> list[str]:
    """How an LLM took part, counted from the records (nothing when none did)."""
    syn = [r.synthesis for r in records if r.synthesis is not None]
    if not syn:
        return []
    kept = [s.kernel_kept for s in syn if s.kernel_kept is not None]
    m = manifest.synthesis
    lines = [
        "## Written with an LLM",
        "",
        f"{len(syn)} of {len(records)} records had their task (description, cases, reference) "
        f"and the program's harness written by an LLM ({', '.join(sorted({s.model for s in syn}))}, "
        f"prompts {', '.join(sorted({s.prompt_version for s in syn}))}); none of it is trusted: "
        "each record is here because its program passed validation against the reference.",
    ]
    if kept:
        verbatim = sum(1 for v in kept if v >= 0.9999)
        lines.append(
            f"The original author's kernel was kept in {len(kept)} of them: verbatim in {verbatim}, "
            f"mean share of its characters kept {sum(kept) / len(kept):.3f}, lowest {min(kept):.3f} "
            "(`synthesis_json.kernel_kept`).")
    repaired = sum(1 for s in syn if s.repair_rounds)
    if repaired:
        lines.append(f"{repaired} passed after the failed verdict was fed back to the LLM.")
    if m.get("calls"):
        lines.append(f"LLM calls for the whole build: {m['calls']} ({m.get('cached_calls', 0)} "
                     f"from the response cache), {m.get('prompt_tokens', 0)} prompt and "
                     f"{m.get('completion_tokens', 0)} completion tokens.")
    return [*lines, ""]


def split_sizes(records: list[DatasetRecord]) -> dict[str, int]:
    import pyarrow as pa

    by_split: dict[str, list[dict]] = {}
    for r in records:
        by_split.setdefault(r.split, []).append(record_to_row(r))
    return {s: pa.Table.from_pylist(rows, schema=ROW_SCHEMA).nbytes for s, rows in by_split.items()}


def card_yaml(records: list[DatasetRecord], manifest: BuildManifest) -> str:
    splits = [s for s in ("train", "test") if s in {sh.split for sh in manifest.shards}]
    # Imported here: `datasets` is a second of start-up that a build's workers never need.
    from datasets import Features
    from datasets.info import DatasetInfo
    from huggingface_hub import DatasetCardData

    features = Features.from_arrow_schema(ROW_SCHEMA)
    info = DatasetInfo(features=features)._to_yaml_dict()
    # num_bytes (the split's size as Arrow in memory) is required: `datasets` drops a splits
    # entry without it, with a warning on every load
    sizes = split_sizes(records)
    info["splits"] = [{"name": s, "num_bytes": sizes.get(s, 0),
                       "num_examples": manifest.splits.get(s, 0)} for s in splits]
    data = DatasetCardData(
        license=card_license(records) if records else "other",
        language=["en", "code"],
        pretty_name="Validated CUDA kernels",
        size_categories=[size_category(len(records))],
        task_categories=["text-generation"],
        tags=["cuda", "code", "gpu", "kernels", "validated",
              *(["kernelbench"] if build_format(manifest) == "kernelbench" else [])],
        configs=[
            {
                "config_name": "default",
                "data_files": [{"split": s, "path": f"data/{s}-*"} for s in splits],
            }
        ] if splits else None,
        dataset_info=info,
    )
    return data.to_yaml()


def build_format(manifest: BuildManifest) -> str:
    """`program` or `kernelbench` (`--format`); builds from before the flag are programs."""
    return str(manifest.config.get("format") or "program")


FORMAT_INTRO = {
    "program": (
        "Format: `program`. Prompt/response pairs for instruction tuning code models on CUDA: "
        "each prompt is a plain-language task naming every input and output with dtype and shape "
        "(CUDABench level-1 style); each response is one standalone CUDA program that reads its "
        "inputs from `data/<name>.bin` and writes its outputs to `data/<name>.bin`."),
    "kernelbench": (
        "Format: `kernelbench`. Prompt/response pairs in KernelBench's form: each prompt is a "
        "KernelBench problem (a PyTorch `Model` with `get_inputs()` and `get_init_inputs()`) in "
        "the instruction to write `ModelNew` with custom CUDA kernels (the prompt `cuset eval "
        "--benchmark kernelbench:DIR` sends; its version is in `synthesis_json.prompt_version` "
        "where an LLM answered); each response is a Python file defining `ModelNew`, its CUDA "
        "source inline as a string compiled with `torch.utils.cpp_extension.load_inline`."),
}
FORMAT_CHECK = {
    "program": (
        "- Each program was compiled and run on all five input cases of its task; every output "
        "was compared with the task's reference (NumPy code, or the source's PyTorch module) run "
        "in a sandbox. Only records that passed all five cases are here. "),
    "kernelbench": (
        "- Each answer was judged by the KernelBench verifier (`validators.kernelbench.verify`): "
        "its `ModelNew` built and run against the problem's `Model` on several seeds (signed "
        "inputs), its kernels shown to do the work, inputs left unchanged and outputs of "
        "`Model`'s dtype and shape within tolerance. Only answers that passed are here. "),
}


def variant_notes(variants: list[str]) -> str:
    """What each checking build adds, for the card's list of build variants."""
    notes = {
        "asan": "AddressSanitizer: out-of-bounds accesses fail the case",
        "race": "race detector: two threads writing different values to one location with no "
                "barrier, atomic or fence between them (a lost update) fail the case",
    }
    said = [notes[v] for v in variants if v in notes]
    return f" ({'; '.join(said)})" if said else ""


def card_markdown(
    records: list[DatasetRecord],
    manifest: BuildManifest,
    *,
    schedules: list[str],
    variants: list[str],
) -> str:
    n = len(records)
    lics = Counter(r.provenance.license for r in records)
    sources = Counter(r.provenance.source for r in records)
    env = manifest.environment
    # A split without records has no shard (an empty Parquet file does not load): say so.
    split_line = ", ".join(f"`{k}` {v}" + (" (no shard written)" if not v else "")
                           for k, v in manifest.splits.items()) or "none"
    fmt = build_format(manifest)
    body = [
        "# Validated CUDA kernels",
        "",
        FORMAT_INTRO.get(fmt, f"Format: `{fmt}`."),
        "",
        f"Records: {n} ({split_line}). The `test` split holds held-out tasks only; none of "
        "them (nor a near duplicate) is in `train`.",
        "",
        "## How every record was validated",
        "",
        f"- Backend: `{manifest.backend}` "
        + ("(CUDA programs run unmodified on the host by the project's CPU emulation: a shim "
           "header and g++)" if manifest.backend == "cpu" else "(nvcc, run on a GPU)")
        + f"; compilers: {env.get('nvcc', '?')}; {env.get('g++', '?')}.",
        FORMAT_CHECK.get(fmt, FORMAT_CHECK["program"]) + case_design(records),
        f"- Thread schedules each case ran under (results had to agree): {', '.join(schedules) or 'default'}.",
        f"- Build variants: {', '.join(variants) or 'plain'}" + variant_notes(variants) + ".",
        "- Tolerance policy (per output, from the task): " + "; ".join(tolerance_policy(records) or ["-"]) + ".",
        "- Integer outputs are compared exactly; floats with NumPy's allclose rule unless the task says otherwise.",
        "- Spans (`spans` column, character offsets into `response`) mark kernel bodies, launch "
        "configurations and other CUDA-sensitive regions, from a tree-sitter-cuda analysis"
        + (" of each CUDA string of the answer: they point inside those strings." if fmt == "kernelbench"
           else "."),
        "",
        "## Fields",
        "",
        "`prompt`, `messages` (system, user, assistant), `response` (the program), `spans`, "
        "`task_json` (the task with its five cases, reference and tolerances), "
        "`validation_json` (backend, per-case status and errors, compiler command, diagnostics "
        "and resource statistics), `provenance` / `provenance_json` (source, origin, licence), "
        "`license`, `backend`, `status`, `synthesis_json` (LLM model, prompt version, share of the "
        "original kernel kept, repair rounds; empty when no LLM took part). Load a row back into the schema with "
        "`schemas.row_to_record(row)`.",
        "",
        *synthesis_lines(records, manifest),
        "## Provenance and licences",
        "",
        "Sources: " + ", ".join(f"{k} ({v})" for k, v in sorted(sources.items())) + ".",
        "Licences: " + ", ".join(f"{k} ({v})" for k, v in sorted(lics.items())) + "; the licence "
        "of every record is in its `license` column.",
        "",
        "## Build",
        "",
        f"Built by `python -m builder run` (cuda-kernel-data {manifest.tool_version}). "
        "`manifest.json` has the counts per stage and per rejection reason and the environment; "
        "`build_report.md` the funnel; `rejections.jsonl` why each dropped record left.",
    ]
    # DatasetCardData.to_yaml() has no final newline; without one the closing '---' joins the
    # last YAML line and the Hub (and `datasets`) see no front matter at all
    meta = card_yaml(records, manifest).rstrip("\n")
    return f"---\n{meta}\n---\n\n" + "\n".join(body) + "\n"
