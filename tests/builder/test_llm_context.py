"""The prompt's code for one kernel: the kernel and what it uses, not the whole file
(`builder.llm.context`), on a file written to exercise each rule and on real repositories."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from llm_scripts import SHARED

from builder.item import Item
from builder.llm import LLMConfig
from builder.llm.context import ContextOptions, kernel_context
from builder.llm.fidelity import kernel_texts
from builder.llm.specify import KernelSpecifier
from schemas import Provenance, RawRecord
from validators.analysis.memo import Memo

GITHUB = SHARED / "github"

# Each name says whether the excerpt for `scale_kernel` needs it.
FILE = """// Kernels for a small library.
#include <cstdio>
#include <cuda_runtime.h>
#pragma once

#define BLOCK 256
#define CLAMP(x) (fminf(fmaxf((x), LOW), HIGH))
#define LOW -1.0f
#define HIGH 1.0f
#define UNUSED_MACRO 42

typedef float real_t;
typedef double unused_t;

struct Pair { real_t a, b; };
struct UnusedStruct { int z; };

enum Mode { MODE_FAST, MODE_SLOW };

__constant__ float c_factor[4];
__constant__ float c_unused[4];

namespace detail {
// Squares a value (used by the kernel through helper).
__device__ real_t square(real_t v) { return v * v; }
__device__ float unused_device(float v) { return v + 1.0f; }
}

__device__ real_t helper(Pair p) { return detail::square(p.a) + p.b; }

__device__ float2 operator+(float2 a, float2 b) { return make_float2(a.x + b.x, a.y + b.y); }

#ifdef USE_FAST
__device__ float pick(float v) { return v; }
#else
__device__ float pick(float v) { return -v; }
#endif

__global__ void other_kernel_a(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = unused_device(x[i]) * UNUSED_MACRO;
}

__global__ void child_kernel(float* x) { x[threadIdx.x] = 0.0f; }

template <int MODE>
__global__ void scale_kernel(const Pair* in, float* out, int n) {
    int i = blockIdx.x * BLOCK + threadIdx.x;
    if (i >= n) return;
    float v = helper(in[i]) * c_factor[MODE];
    out[i] = CLAMP(pick(v));
    if (MODE == MODE_SLOW && i == 0) child_kernel<<<1, 1>>>(out);
}

__global__ void other_kernel_b(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = c_unused[0];
}

void run_other(float* x, int n) { other_kernel_a<<<(n + 255) / 256, 256>>>(x, n); }

void run_scale(const Pair* in, float* out, int n) {
    scale_kernel<MODE_FAST><<<(n + BLOCK - 1) / BLOCK, BLOCK>>>(in, out, n);
}

int main(int argc, char** argv) {
    int n = 1 << 20;
    float* x;
    cudaMalloc(&x, n * sizeof(float));
    run_other(x, n);
""" + "".join(f"    printf(\"step {i}\\n\");\n" for i in range(60)) + """    int threads = 128;
    int blocks = (n + threads - 1) / threads;
    scale_kernel<MODE_SLOW><<<blocks, threads>>>((const Pair*)x, x, n);
    other_kernel_b<<<blocks, threads>>>(x, n);
    cudaFree(x);
    return 0;
}
"""

KEPT = ["#include <cstdio>", "#include <cuda_runtime.h>", "#pragma once", "#define BLOCK 256",
        "#define CLAMP(x)", "#define LOW", "#define HIGH", "typedef float real_t;",
        "struct Pair {", "enum Mode {", "__constant__ float c_factor[4];", "namespace detail {",
        "// Squares a value", "__device__ real_t square", "__device__ real_t helper",
        "operator+(float2 a", "#ifdef USE_FAST", "__device__ float pick(float v) { return v; }",
        "#else", "__device__ float pick(float v) { return -v; }", "#endif",
        "__global__ void child_kernel", "void run_scale(", "int main(int argc, char** argv) {",
        "    int threads = 128;", "    int blocks = (n + threads - 1) / threads;",
        "    scale_kernel<MODE_SLOW><<<blocks, threads>>>((const Pair*)x, x, n);"]
OMITTED = ["UNUSED_MACRO 42", "typedef double unused_t", "struct UnusedStruct {",
           "float c_unused[4]", "float unused_device(float v)", "other_kernel_a(float",
           "other_kernel_b(float", "void run_other(", "printf(", "cudaMalloc",
           "// Kernels for a small library."]


def excerpt(text: str = FILE, focus: str | None = "scale_kernel", **kw):
    return kernel_context(text, focus, kw.pop("files", None), path="lib/kernels.cu",
                          options=ContextOptions(**{"whole_below": 500, **kw}))


def test_the_excerpt_keeps_the_kernel_and_what_it_uses_and_leaves_out_the_rest() -> None:
    ctx = excerpt()
    shown = ctx.main.text
    assert ctx.fallback is None and not ctx.main.whole
    # The kernel, verbatim and whole (template header included).
    assert kernel_texts(shown, "scale_kernel") == kernel_texts(FILE, "scale_kernel")
    for needed in KEPT:
        assert needed in shown, needed
    for unneeded in OMITTED:
        assert unneeded not in shown, unneeded
    # Original order, and every kept line is an original line.
    kept = [line for line in shown.split("\n") if not line.lstrip().startswith("// ... (")]
    original = FILE.split("\n")
    rest = iter(original)
    assert all(line in rest for line in kept)  # a subsequence of the original lines
    # Markers say what was left out where; the note says it is an excerpt.
    markers = re.findall(r"// \.\.\. \((\d+) lines? omitted(?:: ([^)]*))?\)", shown)
    assert sum(int(n) for n, _ in markers) + len(kept) == len(original)
    named = " ".join(what for _, what in markers)
    for name in ("other_kernel_a", "other_kernel_b", "unused_device", "run_other",
                 "UNUSED_MACRO", "UnusedStruct", "c_unused"):
        assert name in named, name
    note = ctx.note("scale_kernel")
    assert "excerpt" in note and "kernel" in note and "host function" in note


def test_host_code_launching_another_kernel_does_not_bring_that_kernel_in() -> None:
    # main launches other_kernel_b and run_scale is short: neither pulls in the other kernels,
    # while the kernel's own device-side launch keeps child_kernel.
    shown = excerpt().main.text
    assert "__global__ void child_kernel" in shown
    assert "__global__ void other_kernel_b" not in shown
    # A long host function shows its signature, the launch with its configuration, its end.
    assert "    other_kernel_b<<<blocks, threads>>>(x, n);" not in shown


def test_launchers_longer_than_the_limit_are_sketched_and_shorter_ones_whole() -> None:
    shown = excerpt(max_host_lines=2).main.text
    assert "void run_scale(" in shown and "scale_kernel<MODE_FAST><<<" in shown
    shown = excerpt(max_host_lines=200).main.text
    assert "printf(" in shown  # main is now short enough to be shown whole


@pytest.mark.parametrize("text, focus, why", [
    (FILE, None, "no focus"),
    (FILE, "not_a_kernel", "no kernel not_a_kernel"),
    ("__global__ void only(float* x) { x[0] = 1.0f; }\n" + "// pad\n" * 200, "only", "one kernel"),
    ("__global__ void a(float* x) {}\n__global__ void b(float* x) {}\n", "a", "under"),
], ids=["no-focus", "unknown-focus", "one-kernel", "small-file"])
def test_the_whole_file_is_shown_when_an_excerpt_is_not_worth_it(text: str, focus: str | None,
                                                                 why: str) -> None:
    ctx = kernel_context(text, focus, path="k.cu")
    assert ctx.main.whole and ctx.main.text == text
    assert ctx.fallback is not None and why in ctx.fallback
    assert ctx.note(focus) == ""


@pytest.mark.parametrize("text", [
    "", "\x00\x01\x02binary" * 100, "__global__ void k(( {{{{ <<<" * 500,
    "#if X\n__global__ void k(float* x) {\n#else\n}\n" * 300,
], ids=["empty", "binary", "garbage", "unbalanced-if"])
def test_bad_input_never_raises_and_keeps_the_text(text: str) -> None:
    ctx = kernel_context(text, "k", {"h.cuh": text}, path="k.cu",
                         options=ContextOptions(whole_below=10))
    assert "k" in ctx.main.text or not text.strip() or ctx.main.whole


HEADER = ("#pragma once\n#define HDR_SCALE 2.0f\n#define HDR_UNUSED 3\n"
          + "".join(f"__device__ float hdr_unused_{i}(float v) {{ return v * {i}; }}\n"
                    for i in range(40))
          + "__device__ float hdr_used(float v) { return v * HDR_SCALE; }\n")
USER = """#include "helpers.cuh"
#include "big_unused.cuh"
#include "small.cuh"
__global__ void uses_header(float* x) { x[threadIdx.x] = hdr_used(x[threadIdx.x]); }
__global__ void another(float* x) { x[threadIdx.x] = 0.0f; }
""" + "// padding\n" * 60


def test_large_headers_are_excerpted_the_same_way_small_ones_stay_whole() -> None:
    small = "#define SMALL 1\n"
    unused = HEADER.replace("hdr_", "zz_").replace("HDR_", "ZZ_")
    files = {"helpers.cuh": HEADER, "big_unused.cuh": unused, "small.cuh": small}
    ctx = excerpt(USER, "uses_header", files=files)
    by_path = {h.path: h for h in ctx.headers}
    assert set(by_path) == {"helpers.cuh", "small.cuh"}
    assert ctx.unused_headers == ["big_unused.cuh"]
    helpers = by_path["helpers.cuh"]
    assert not helpers.whole
    assert "__device__ float hdr_used" in helpers.text and "#define HDR_SCALE" in helpers.text
    assert "device functions hdr_unused_0" in helpers.text  # named in a marker ...
    assert "return v * 0" not in helpers.text  # ... but not shown
    assert "HDR_UNUSED 3" not in helpers.text
    assert by_path["small.cuh"].whole and by_path["small.cuh"].text == small
    assert "big_unused.cuh" in ctx.note("uses_header")


def test_every_kernel_of_a_file_is_excerpted_from_one_analysis_and_one_walk(monkeypatch) -> None:
    """A file with eight kernels is eight records: the file and its headers are analysed and
    walked once, and each kernel's excerpt is the one a fresh walk gives (a launcher sketched
    for one kernel is not sketched for the next)."""
    from builder.llm import context
    from validators.analysis import analyzer

    files = {"helpers.cuh": HEADER}
    text = FILE + '#include "helpers.cuh"\n'
    kernels = ["other_kernel_b", "scale_kernel", "other_kernel_a", "child_kernel"]

    def fresh(focus: str):
        monkeypatch.setattr(context, "_WALKERS", Memo(context._WALKERS.budget))
        monkeypatch.setattr(analyzer, "MEMO", Memo(analyzer.MEMO_CHARS))
        return excerpt(text, focus, files=files, max_host_lines=2)

    expected = {k: fresh(k) for k in kernels}
    fresh(kernels[0])
    analysed, walked = [], []
    real_analyze, real_walker = analyzer._analyze_text, context._Walker
    monkeypatch.setattr(analyzer, "_analyze_text", lambda src, limit: analysed.append(src) or real_analyze(src, limit))
    monkeypatch.setattr(context, "_Walker", lambda path, t: walked.append(path) or real_walker(path, t))
    for k in [*kernels[1:], *kernels]:
        assert excerpt(text, k, files=files, max_host_lines=2) == expected[k], k
    assert analysed == [] and walked == []  # the first kernel's walk served every other one
    assert "other_kernel_b<<<" in expected["other_kernel_b"].main.text
    assert "other_kernel_b<<<" not in expected["scale_kernel"].main.text


def test_the_analysis_of_a_text_is_remembered_within_a_budget(monkeypatch) -> None:
    from validators.analysis import analyze, analyzer

    monkeypatch.setattr(analyzer, "MEMO", Memo(analyzer.MEMO_CHARS))
    a = FILE
    assert analyze(a) is analyze(a) and analyze(a.encode()) is not analyze(a)
    assert analyze(a, time_limit=None) is not analyze(a)
    assert analyze(a + " ").kernel_names == analyze(a).kernel_names
    memo = Memo(3 * len(a) + 3)
    monkeypatch.setattr(analyzer, "MEMO", memo)
    texts = [a + "\n" * i for i in range(6)]
    for t in texts:
        analyze(t)
    assert memo.used <= memo.budget and len(memo) == 2
    assert (texts[-1], analyzer.TIME_LIMIT_S) in memo and (texts[0], analyzer.TIME_LIMIT_S) not in memo
    big = a * 4  # over the budget alone: analysed, not kept
    assert analyze(big).kernel_names == analyze(a).kernel_names * 4
    assert (big, analyzer.TIME_LIMIT_S) not in memo and len(memo) == 2


def record(text: str, focus: str, files: dict[str, str] | None = None) -> RawRecord:
    return RawRecord(id=f"github/o/r/lib/kernels.cu#{focus}", text=text, focus=focus,
                     kind="kernel", files=files or {},
                     provenance=Provenance(source="github", origin="x", license="MIT",
                                           path="lib/kernels.cu"))


def test_the_prompt_carries_the_excerpt_and_says_so() -> None:
    spec = KernelSpecifier(LLMConfig(model="m", base_url="http://127.0.0.1:9/v1"),
                           context=ContextOptions(whole_below=500))
    user = spec.messages(Item(raw=record(FILE, "scale_kernel")))[-1]["content"]
    assert kernel_texts(FILE, "scale_kernel")["scale_kernel"] in user
    assert "other_kernel_a(float" not in user and "lines omitted" in user
    assert "The code below is an excerpt" in user
    assert "The record: github/o/r/lib/kernels.cu#scale_kernel." in user
    # Switched off, the prompt holds the whole file as before.
    whole = KernelSpecifier(spec.llm, context=ContextOptions(excerpt=False))
    assert FILE in whole.messages(Item(raw=record(FILE, "scale_kernel")))[-1]["content"]
    assert spec.config()["context"] != whole.config()["context"]  # part of the cache key


# ------------------------------------------------------------------------- real repositories

needs_shared = pytest.mark.skipif(not GITHUB.is_dir(), reason="../shared/data is not here")


def real_records(repo: str, path: str) -> list[RawRecord]:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from bench_specify import repo_records

    return [r for r in repo_records(GITHUB / repo) if r.provenance.path == path]


@needs_shared
@pytest.mark.parametrize("repo, path", [
    ("karpathy__llm.c", "dev/cuda/attention_forward.cu"),
    ("NVIDIA__cuda-samples", "Samples/2_Concepts_and_Techniques/reduction/reduction_kernel.cu"),
    ("karpathy__llm.c", "llmc/layernorm.cuh"),
])
def test_real_files_with_several_kernels_cost_a_third_or_less(repo: str, path: str) -> None:
    recs = real_records(repo, path)
    assert len(recs) >= 3, [r.id for r in recs]
    spec = KernelSpecifier(LLMConfig(model="m", base_url="http://127.0.0.1:9/v1"))
    whole = KernelSpecifier(spec.llm, context=ContextOptions(excerpt=False))
    before = after = 0
    for raw in recs:
        item = Item(raw=raw)
        got = spec.messages(item)[-1]["content"]
        # The author's kernel, verbatim: a program copied from this keeps all of it.
        assert kernel_texts(raw.text, raw.focus)[raw.focus] in got, raw.id
        before += len(whole.messages(item)[-1]["content"])
        after += len(got)
    assert before >= 3 * after, (before, after)
