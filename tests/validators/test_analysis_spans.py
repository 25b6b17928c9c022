"""Spans: each kind, templates, macros, multi-line configurations, lambdas, braces in strings and
comments, non-ASCII text before spans, and the sorted / non-overlapping contract."""

from __future__ import annotations

from analysis_helpers import check_invariants

from validators.analysis import analyze
from validators.analysis.spans import merge

REDUCE = """\
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
#define FULL_MASK 0xffffffffu

__device__ float warp_sum(float v) {
  for (int o = warpSize / 2; o > 0; o /= 2) v += __shfl_down_sync(FULL_MASK, v, o);
  return v;
}

__device__ float block_sum(float v) {
  static __shared__ float partial[32];
  int lane = threadIdx.x % warpSize;
  v = warp_sum(v);
  if (lane == 0) partial[threadIdx.x / warpSize] = v;
  __syncthreads();
  return partial[0];
}

__global__ void reduce(const float* in, float* out, int n) {
  extern __shared__ float tmp[];
  cg::thread_block block = cg::this_thread_block();
  float v = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) v += in[i];
  tmp[threadIdx.x] = block_sum(v);
  block.sync();
  if (__any_sync(__activemask(), v > 0)) atomicAdd(out, tmp[0]);
  __threadfence();
}

int main() {
  int n = 1 << 20;
  float *in, *out;
  int threads = 256;
  int blocks = 0;
  cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, 0);
  blocks = prop.multiProcessorCount * 4;
  size_t shmem = threads * sizeof(float);
  reduce<<<blocks, threads, shmem>>>(in, out, n);
  return 0;
}
"""


def texts(a, kind):  # noqa: ANN001, ANN201
    return a.span_texts(kind)


def test_every_fine_kind_on_a_reduction() -> None:
    a = analyze(REDUCE)
    check_invariants(a)
    assert a.errors == []
    assert texts(a, "shared_memory") == [
        "static __shared__ float partial[32];",
        "extern __shared__ float tmp[];",
    ]
    assert texts(a, "sync") == ["__syncthreads()", "block.sync()", "__threadfence()"]
    assert texts(a, "atomic") == ["atomicAdd(out, tmp[0])"]
    assert texts(a, "warp_primitive") == [
        "__shfl_down_sync(FULL_MASK, v, o)",
        "__any_sync(__activemask(), v > 0)",  # __activemask nested inside: merged
    ]
    assert texts(a, "thread_index") == [
        "warpSize",
        "threadIdx.x",
        "warpSize",
        "threadIdx.x",
        "warpSize",
        "blockIdx.x",
        "blockDim.x",
        "threadIdx.x",
        "gridDim.x",
        "blockDim.x",
        "threadIdx.x",
    ]
    labels = {s.label for s in a.spans_of("sync")}
    assert labels == {"block_sum", "reduce"}


def test_kernel_body_follows_the_call_graph_transitively() -> None:
    a = analyze(REDUCE)
    bodies = a.spans_of("kernel_body")
    assert [s.label for s in bodies] == ["warp_sum", "block_sum", "reduce"]
    for s in bodies:
        fn = next(f for f in a.kernels + a.device_functions if f.name == s.label)
        assert (s.start, s.end) == (fn.body.start, fn.body.end)
        assert a.text[s.start] == "{" and a.text[s.end - 1] == "}"


def test_launch_config_statements_follow_identifiers_and_out_parameters() -> None:
    a = analyze(REDUCE)
    assert texts(a, "launch_config") == [
        "int threads = 256;",
        "int blocks = 0;",
        "cudaDeviceProp prop;",
        "cudaGetDeviceProperties(&prop, 0);",
        "blocks = prop.multiProcessorCount * 4;",
        "size_t shmem = threads * sizeof(float);",
        "<<<blocks, threads, shmem>>>",
    ]
    # `n` is passed to the kernel: problem data, not configuration.
    assert "int n = 1 << 20;" not in texts(a, "launch_config")
    (launch,) = a.launches
    assert launch.config == ["blocks", "threads", "shmem"]
    assert launch.shmem == "shmem" and launch.stream is None


def test_launch_config_respects_block_scope_and_order() -> None:
    src = """\
__global__ void k(int* a) {}
void f(int* a, bool big) {
  if (big) {
    dim3 grid(1024);
    k<<<grid, 256>>>(a);
  } else {
    dim3 grid(8);
    k<<<grid, 32>>>(a);
  }
  dim3 late(4);
  k<<<late, 1>>>(a);
  late.x = 99;
}
"""
    a = analyze(src)
    check_invariants(a)
    assert texts(a, "launch_config") == [
        "dim3 grid(1024);",
        "<<<grid, 256>>>",
        "dim3 grid(8);",
        "<<<grid, 32>>>",
        "dim3 late(4);",
        "<<<late, 1>>>",
    ]
    assert [d.name for d in a.dim3s] == ["grid", "grid", "late"]
    assert [d.args for d in a.dim3s] == [["1024"], ["8"], ["4"]]


def test_template_kernel_multiline_config_macro_and_lambda_launches() -> None:
    src = """\
#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) return; } while (0)
#define LAUNCH(g, b, ...) scale<float, 64><<<g, b>>>(__VA_ARGS__)
template <typename T, int BS>
__global__ void scale(T* out, const T* in, int n) {
  int i = blockIdx.x * BS + threadIdx.x;
  if (i < n) out[i] = in[i] * T(2);
}
template <typename T>
void run(T* o, const T* in, int n, cudaStream_t st) {
  const int threads = 128;
  dim3 grid((n + threads - 1) / threads);
  scale<T, threads><<<grid,
                      threads,
                      0,
                      st>>>(o, in, n);
  CHECK((scale<T, 64><<<1, 64>>>(o, in, n), cudaGetLastError()));
  LAUNCH(grid, threads, o, in, n);
  auto go = [&](int k) { scale<T, 32><<<k, 32>>>(o, in, n); };
  go(3);
}
"""
    a = analyze(src)
    check_invariants(a)
    (k,) = a.kernels
    assert k.name == "scale" and k.template_params == ["typename T", "int BS"]
    assert [(p.name, p.type) for p in k.params] == [("out", "T*"), ("in", "const T*"), ("n", "int")]
    assert a.text[k.span.start : k.span.start + 8] == "template"
    rows = [(x.line, x.callee, x.template_args, x.config, x.args, x.function, x.in_lambda, x.macro) for x in a.launches]
    assert rows == [
        (2, "scale<float, 64>", ["float", "64"], ["g", "b"], ["__VA_ARGS__"], None, False, "LAUNCH"),
        (12, "scale<T, threads>", ["T", "threads"], ["grid", "threads", "0", "st"], ["o", "in", "n"], "run", False, None),
        (16, "scale<T, 64>", ["T", "64"], ["1", "64"], ["o", "in", "n"], "run", False, None),
        (18, "scale<T, 32>", ["T", "32"], ["k", "32"], ["o", "in", "n"], "run", True, None),
    ]
    assert all(x.kernel == "scale" for x in a.launches)
    assert texts(a, "launch_config") == [
        "<<<g, b>>>",
        "const int threads = 128;",
        "dim3 grid((n + threads - 1) / threads);",
        "<<<grid,\n                      threads,\n                      0,\n                      st>>>",
        "<<<1, 64>>>",
        "<<<k, 32>>>",
    ]
    multi = a.launches[1]
    assert a.text[multi.call_span.start : multi.call_span.end].startswith("scale<T, threads><<<grid,\n")
    assert a.text[multi.call_span.start : multi.call_span.end].endswith("st>>>(o, in, n)")


def test_braces_in_strings_and_comments_do_not_confuse_bodies() -> None:
    src = """\
const char* banner = "kernel { not a brace } }}}";
/* a comment with { unbalanced braces
   and __global__ void fake() { } */
__global__ void k(char* out) {
  const char* s = "}{";  // } stray brace in a comment {
  /* { */ out[threadIdx.x] = s[0]; /* } } */
}
// __global__ void commented_out() {}
int main() { k<<<1, 1>>>(0); /* k<<<2, 2>>>(0); */ const char* t = "k<<<3, 3>>>(0)"; }
"""
    a = analyze(src)
    check_invariants(a)
    assert a.errors == []
    assert [k.name for k in a.kernels] == ["k"]
    body = a.span_texts("kernel_body")[0]
    assert body.startswith('{\n  const char* s = "}{";')
    assert body.endswith("/* } } */\n}")
    assert [x.config for x in a.launches] == [["1", "1"]]


def test_offsets_are_characters_after_non_ascii_text() -> None:
    prefix = "// héllo wörld — ünïcode 😀 Ελληνικά 中文\n"
    body = "__global__ void k(float* a) { a[threadIdx.x] = 1.0f; __syncthreads(); }\n"
    launch = "int main() { k<<<1, 32>>>(0); }\n"
    src = prefix + body + launch
    assert len(src.encode()) > len(src)  # really multi-byte
    a = analyze(src)
    check_invariants(a)
    assert texts(a, "thread_index") == ["threadIdx.x"]
    assert texts(a, "sync") == ["__syncthreads()"]
    assert texts(a, "launch_config") == ["<<<1, 32>>>"]
    k = a.kernels[0]
    assert k.span.start == len(prefix)
    assert a.text[k.body.start : k.body.end] == "{ a[threadIdx.x] = 1.0f; __syncthreads(); }"
    # bytes in, same character offsets out
    b = analyze(src.encode("utf-8"))
    assert b.spans == a.spans and b.encoding == "utf-8"


def test_non_ascii_inside_spans_and_macros() -> None:
    src = '#define TID (blockIdx.x /* é */ * blockDim.x + threadIdx.x)\n__global__ void k(int* a) { const char* s = "π"; a[TID] = s[0]; }\n'
    a = analyze(src)
    check_invariants(a)
    assert texts(a, "thread_index") == ["blockIdx.x", "blockDim.x", "threadIdx.x"]
    assert [s.label for s in a.spans_of("thread_index")] == ["TID"] * 3
    assert a.span_texts("kernel_body") == ['{ const char* s = "π"; a[TID] = s[0]; }']


def test_code_that_does_not_parse_still_reports_what_it_can() -> None:
    src = """\
__global__ void good(float* a) { a[threadIdx.x] = 0.0f; }
__global__ void bad(float* a) { a[threadIdx.x] = ; }
int main() {
  good<<<1, 32>>>(0);
  bad<<<1, 32>>>(0)
  int x = ;
}
"""
    a = analyze(src)
    check_invariants(a)
    assert [k.name for k in a.kernels] == ["good", "bad"]
    assert [(x.kernel, x.function) for x in a.launches] == [("good", "main"), ("bad", "main")]
    assert a.errors == [
        "line 2: syntax error at `=`",
        "line 5: missing `;`",
        "line 6: syntax error at `=`",
    ]


def test_badly_broken_code_still_gives_launches_and_a_named_error() -> None:
    # A broken parameter list swallows the rest of the file into one ERROR node.
    src = "__global__ void bad(float* a { a[threadIdx.x] = 1; }\nint main() { bad<<<1, 32>>>(0); }\n"
    a = analyze(src)
    check_invariants(a)
    assert [x.config for x in a.launches] == [["1", "32"]]
    assert a.errors and a.errors[0].startswith("line 1: ")
    assert a.span_texts("thread_index") == ["threadIdx.x"]


def test_macro_with_comment_and_line_continuations() -> None:
    # A comment inside a #define body breaks tree-sitter's parse of the directive; the body is
    # re-parsed on its own and mapped back (offsets, lines).
    src = (
        "#define TID (blockIdx.x /* é */ * blockDim.x + threadIdx.x)\n"
        "#define   K(a,b) \\\n  k<<<a,\\\n b>>>()\n"
        "__global__ void k(int* a) { a[TID] = 0; }\n"
    )
    a = analyze(src)
    check_invariants(a)
    assert a.span_texts("thread_index") == ["blockIdx.x", "blockDim.x", "threadIdx.x"]
    (launch,) = a.launches
    assert (launch.macro, launch.line, launch.config) == ("K", 3, ["a", "b"])
    assert a.text[launch.config_span.start : launch.config_span.end] == "<<<a,\\\n b>>>"


def test_cluster_dims_attribute_keeps_the_kernel() -> None:
    src = "__global__ void __cluster_dims__(2, 1, 1) ck(float* a) { a[threadIdx.x] = 0; }\n"
    a = analyze(src)
    (k,) = a.kernels
    assert k.name == "ck" and k.qualifiers == ["__global__"]
    assert a.text[k.span.start : k.span.end] == src.strip()
    assert a.span_texts("kernel_body") == ["{ a[threadIdx.x] = 0; }"]
    assert "clusters" in a.features


def test_qualifier_combinations_and_methods() -> None:
    src = """\
extern "C" __global__ void ek(float* __restrict__ a, int n = 4) { a[0] = n; }
static __global__ void sk() {}
__host__ __device__ inline float hd(float x) { return x; }
namespace ns { __global__ void nk(int, ...) {} }
struct Op { __device__ float operator()(float x) const { return x; } };
__device__ __noinline__ int nn(const int (&arr)[4]) { return arr[0]; }
"""
    a = analyze(src)
    check_invariants(a)
    assert [k.name for k in a.kernels] == ["ek", "sk", "nk"]
    assert [(p.name, p.type) for p in a.kernels[0].params] == [("a", "float* __restrict__"), ("n", "int")]
    assert [(p.name, p.type) for p in a.kernels[2].params] == [("", "int"), ("", "...")]
    assert [(f.name, f.qualifiers) for f in a.device_functions] == [
        ("hd", ["__host__", "__device__"]),
        ("operator()", ["__device__"]),
        ("nn", ["__device__"]),
    ]
    assert [(p.name, p.type) for p in a.device_functions[2].params] == [("arr", "const int (&)[4]")]


def test_merge_sorts_and_merges_within_a_kind_only() -> None:
    spans = merge(
        [
            (10, 20, "sync", "a"),
            (0, 5, "atomic", ""),
            (12, 18, "sync", "b"),  # nested: merged, labels joined
            (20, 25, "sync", "c"),  # touching: kept apart
            (10, 30, "thread_index", ""),  # other kind: untouched
            (7, 7, "sync", ""),  # empty: dropped
        ]
    )
    assert [(s.start, s.end, s.kind, s.label) for s in spans] == [
        (0, 5, "atomic", ""),
        (10, 20, "sync", "a,b"),
        (10, 30, "thread_index", ""),
        (20, 25, "sync", "c"),
    ]


def test_launch_config_field_assignments_and_loop_variables() -> None:
    src = """\
__global__ void k(float* a, int n) {}
void f(float* a, int n) {
  dim3 grid;
  grid.x = (n + 127) / 128;
  grid.y = 1;
  int unrelated = 5;
  for (int t = 32; t <= 1024; t *= 2) {
    k<<<grid, t>>>(a, n);
  }
}
"""
    a = analyze(src)
    check_invariants(a)
    assert texts(a, "launch_config") == [
        "dim3 grid;",
        "grid.x = (n + 127) / 128;",
        "grid.y = 1;",
        "int t = 32;",
        "<<<grid, t>>>",
    ]
    assert [(d.name, d.args) for d in a.dim3s] == [("grid", [])]


def test_api_launches_are_listed_separately() -> None:
    src = """\
__global__ void k(float* a) {}
template <typename T> __global__ void t(T* a) {}
void f(float* a, cudaStream_t s) {
  void* args[] = {&a};
  cudaLaunchKernel((void*)k, dim3(1), dim3(32), args, 0, s);
  cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(&t<float>), 1, 32, args);
  cudaLaunchConfig_t cfg = {};
  cudaLaunchKernelEx(&cfg, k, a);
}
"""
    a = analyze(src)
    check_invariants(a)
    assert a.launches == []
    assert [(x.api, x.kernel, x.line, x.function) for x in a.api_launches] == [
        ("cudaLaunchKernel", "k", 5, "f"),
        ("cudaLaunchCooperativeKernel", "t", 6, "f"),
        ("cudaLaunchKernelEx", "k", 8, "f"),
    ]
    assert a.api_launches[0].args == ["(void*)k", "dim3(1)", "dim3(32)", "args", "0", "s"]
    first = a.api_launches[0].call_span
    assert a.text[first.start : first.end] == "cudaLaunchKernel((void*)k, dim3(1), dim3(32), args, 0, s)"
    assert a.features == ["grid_sync"]  # the cooperative launch


def test_launch_config_falls_back_to_file_scope_constants() -> None:
    src = """\
constexpr int kThreads = 256;
static const int kWarps = kThreads / 32;
const int N = 1 << 20;
namespace cfg { const int SH = 1024; }
int kernel_count;
__global__ void k(float* a, int n) {}
int main() {
  float* a;
  k<<<(N + kThreads - 1) / kThreads, kThreads, SH>>>(a, N);
  k<<<kWarps, 32>>>(a, N);
}
"""
    a = analyze(src)
    check_invariants(a)
    # N is the problem size (passed to the kernel), not followed; the others compute the sizes.
    assert texts(a, "launch_config") == [
        "constexpr int kThreads = 256;",
        "static const int kWarps = kThreads / 32;",
        "const int SH = 1024;",
        "<<<(N + kThreads - 1) / kThreads, kThreads, SH>>>",
        "<<<kWarps, 32>>>",
    ]


def test_qualifiers_written_through_macros_of_the_file() -> None:
    src = """\
#define HD __host__ __device__
#define KERNEL __global__
#define DEV static __device__ __forceinline__
#define NOT_A_QUALIFIER float
HD float f(float x) { return x; }
KERNEL void k(float* a) { a[threadIdx.x] = f(1) + g(); }
DEV int g() { return 1; }
NOT_A_QUALIFIER h() { return 0; }
"""
    a = analyze(src)
    check_invariants(a)
    assert [(f.name, f.qualifiers, f.return_type) for f in a.kernels] == [("k", ["__global__"], "void")]
    assert [(f.name, f.qualifiers, f.return_type) for f in a.device_functions] == [
        ("f", ["__host__", "__device__"], "float"),
        ("g", ["__device__"], "int"),
    ]
    assert [s.label for s in a.spans_of("kernel_body")] == ["f", "k", "g"]


def test_align_attribute_does_not_break_the_parse() -> None:
    src = (
        "extern __shared__ __align__(16) char smem[];\n"
        "struct __align__(16) V { float x, y, z, w; };\n"
        "__global__ void k(V* v) {\n"
        "  __shared__ __align__(sizeof(float4)) float s[32];\n"
        "  s[threadIdx.x] = v[threadIdx.x].x;\n"
        "}\n"
    )
    a = analyze(src)
    check_invariants(a)
    assert a.errors == []
    assert a.text == src  # only the parser's copy is masked
    assert texts(a, "shared_memory") == [
        "extern __shared__ __align__(16) char smem[];",
        "__shared__ __align__(sizeof(float4)) float s[32];",
    ]
    assert texts(a, "thread_index") == ["threadIdx.x", "threadIdx.x"]


def test_device_operator_overloads_count_as_reached() -> None:
    src = """\
__device__ float2 operator+(float2 a, float2 b) { return make_float2(a.x + b.x, a.y + b.y); }
struct Scale { float s; __device__ float operator()(float x) const { return helper(x) * s; } };
__device__ float helper(float x) { return x; }
__device__ float unused(float x) { return x; }
template <typename F> __global__ void k(float2* a, F f) { a[0] = a[0] + a[1]; a[0].x = f(a[0].x); }
"""
    a = analyze(src)
    check_invariants(a)
    assert [s.label for s in a.spans_of("kernel_body")] == ["operator+", "operator()", "helper", "k"]
    assert analyze(src.replace("template <typename F> __global__", "template <typename F> __host__")).spans_of(
        "kernel_body"
    ) == []


def test_crlf_line_endings_and_continuations() -> None:
    src = (
        "#define L(k) \\\r\n  k<<<1, 32>>>()\r\n"
        "__global__ void k(float* a) {\r\n  a[threadIdx.x] = 0;\r\n}\r\n"
        "int main() {\r\n  int t = 64;\r\n  k<<<1, t>>>(0);\r\n}\r\n"
    )
    a = analyze(src)
    check_invariants(a)
    assert a.errors == []
    assert [(x.line, x.macro, x.config) for x in a.launches] == [(2, "L", ["1", "32"]), (8, None, ["1", "t"])]
    assert a.kernels[0].line == 3
    assert texts(a, "kernel_body") == ["{\r\n  a[threadIdx.x] = 0;\r\n}"]
    assert texts(a, "launch_config") == ["<<<1, 32>>>", "int t = 64;", "<<<1, t>>>"]


def test_most_vexing_parse_dim3_declarations() -> None:
    # `dim3 grid (nblks);` parses as a function declaration; it is a dim3 built from nblks.
    src = "void f(int n) { int nblks = n / 4, x = 2, y = 3; dim3 grid (nblks); dim3 b(x, y); k<<<grid, b>>>(); }"
    a = analyze(src)
    check_invariants(a)
    assert [(d.name, d.args) for d in a.dim3s] == [("grid", ["nblks"]), ("b", ["x", "y"])]
    assert texts(a, "launch_config") == [
        "int nblks = n / 4, x = 2, y = 3;",
        "dim3 grid (nblks);",
        "dim3 b(x, y);",
        "<<<grid, b>>>",
    ]


def test_launches_with_directives_inside_and_after_a_statement_macro() -> None:
    """The launch forms real programs build with (HeCBench) that the grammar reads apart: a
    launch right after a statement macro used without a semicolon, and preprocessor lines
    inside the configuration or the argument list (read as their first branch)."""
    src = (
        "#define CUERR { cudaError_t e = cudaGetLastError(); if (e) printf(\"%d\", e); }\n"
        "__global__ void k(int *d) { d[threadIdx.x] = 1; }\n"
        "int main() {\n"
        "  int *d; cudaStream_t s;\n"
        "  CUERR\n"
        "  k <<< 1, 4 >>>\n"
        "    (d);\n"
        "  k<<<2, 8\n"
        "#ifdef USE_STREAM\n"
        "  , 0, s\n"
        "#endif\n"
        "  >>>(d);\n"
        "  k<<<3, 16>>>(\n"
        "#ifdef EXTRA\n"
        "  d + 1\n"
        "#else\n"
        "  d\n"
        "#endif\n"
        "  );\n"
        "}\n"
    )
    a = analyze(src)
    check_invariants(a)
    assert a.text == src
    got = [(x.line, x.kernel, x.config, x.args, x.function) for x in a.launches]
    assert got == [
        (6, "k", ["1", "4"], ["d"], "main"),
        (8, "k", ["2", "8", "0", "s"], ["d"], "main"),
        (13, "k", ["3", "16"], ["d + 1"], "main"),
    ]
    assert [src[x.call_span.start:x.call_span.end].split("\n")[0] for x in a.launches] == [
        "k <<< 1, 4 >>>", "k<<<2, 8", "k<<<3, 16>>>("]
    assert texts(a, "launch_config")[0] == "<<< 1, 4 >>>"
