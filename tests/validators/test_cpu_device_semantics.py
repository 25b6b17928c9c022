"""Which shifts and casts the cpu rewrite gives a GPU's meaning (validators/cpu/device_semantics.py):
run-time shift amounts and explicit casts to 32/64-bit integers, in device code only; what runs
is in cpu_programs/device_semantics.cu."""

from __future__ import annotations

from validators.cpu.rewrite import _parse, rewrite

WRAP = " ::cudashim::shift_amount("  # each opens with a space (see the last test)


def test_only_device_run_time_amounts_are_wrapped():
    source = """struct S { unsigned f : 4; unsigned g; };
#if (1 << 3) > 4
#endif
unsigned host(unsigned x, int b) { return x << b; }
__device__ unsigned dev(unsigned x, int b, S *s) {
#if (2 >> 1) == 1
  x >>= b;
#endif
  s->f <<= b;
  s->g <<= b;
  return (x << 3) | (x << (32 - b)) | (x >> (b << 1));
}
__global__ void k(unsigned *o, int b) { auto l = [=] __device__ (unsigned v) { return v << b; }; o[0] = l(o[1]); }
"""
    out = rewrite(source, lockstep=False).text
    lines = out.splitlines()
    assert len(lines) == len(source.splitlines())
    assert lines[1] == "#if (1 << 3) > 4" and lines[5] == "#if (2 >> 1) == 1"
    assert lines[3] == "unsigned host(unsigned x, int b) { return x << b; }"  # host: x86's meaning
    assert lines[6] == f"  x >>= {WRAP}b);"
    assert lines[8] == "  s->f <<= b;"  # a bit-field: no reference binds to it
    assert lines[9] == f"  s->g <<= {WRAP}b);"
    assert lines[10] == f"  return (x << 3) | (x << {WRAP}(32 - b))) | (x >> {WRAP}(b << 1)));"
    assert f"v << {WRAP}b)" in lines[12]


def test_a_bit_field_another_file_declares_is_left_alone():
    source = "__device__ void f(Hdr *h, int n) { h->flags <<= n; h->other <<= n; }\n"
    out = rewrite(source, lockstep=False, bit_fields=frozenset({"flags"})).text
    assert "h->flags <<= n;" in out and f"h->other <<= {WRAP}n);" in out


def test_host_only_branches_and_stream_manipulators_are_not_amounts():
    source = """__host__ __device__ int f(int v, int y) {
#ifndef __CUDA_ARCH__
  std::cout << v << std::endl;
#else
  y = v << y;
#endif
#ifdef __CUDA_ARCH__
  y = y << v;
#else
  std::cout << y;
#endif
  std::cerr << y << std::endl << "s";
  return y;
}
"""
    lines = rewrite(source, lockstep=False).text.splitlines()
    assert lines[2] == "  std::cout << v << std::endl;" and lines[9] == "  std::cout << y;"
    assert lines[4] == f"  y = v << {WRAP}y);" and lines[7] == f"  y = y << {WRAP}v);"
    assert lines[11] == f"  std::cerr << {WRAP}y) << std::endl << \"s\";"


def test_integer_casts_of_device_code_are_wrapped():
    cvt = " ::cudashim::gpu_cvt"
    source = """__device__ long f(float x, double d, S s) {
  int a = (int)x + (int)3.5f + (int)sizeof(S);
  unsigned b = (unsigned int)(x * 2) + static_cast<unsigned long long>(d) + int(x);
  float c = (float)a + (MyInt)x + (short)x;
  return (long)(unsigned)x;
}
int host(float x) { return (int)x; }
"""
    lines = rewrite(source, lockstep=False).text.splitlines()
    assert lines[1] == f"  int a = (int){cvt}<int>(x) + (int)3.5f + (int)sizeof(S);"
    assert lines[2] == (f"  unsigned b = (unsigned int){cvt}<unsigned int>((x * 2)) + "
                        f"static_cast<unsigned long long>({cvt}<unsigned long long>(d)) + int({cvt}<int>(x));")
    # Not an integer type of 32 or 64 bits by name: left alone.
    assert lines[3] == "  float c = (float)a + (MyInt)x + (short)x;"
    assert lines[4] == f"  return (long){cvt}<long>((unsigned){cvt}<unsigned>(x));"
    assert lines[6] == "int host(float x) { return (int)x; }"


def test_integer_divisions_of_device_code_are_wrapped():
    source = """struct S { int bits : 3; int v; };
__device__ int f(int a, int b, float x, S s) {
  int q = a / b + a % b + a / 2 + (a / b) / (b % a) + a / sizeof(S);
  a /= b; s.bits %= b; s.v %= b;
  return q;
}
int host(int a, int b) { return a / b; }
"""
    lines = rewrite(source, lockstep=False).text.splitlines()
    div, rem = " ::cudashim::gpu_div(", " ::cudashim::gpu_rem("
    assert lines[2] == (f"  int q = {div}a , b) + {rem}a , b) + a / 2 + "
                        f"{div}({div}a , b)) , ({rem}b , a))) + a / sizeof(S);")
    # A bit-field binds to no reference: its compound division keeps x86's meaning.
    assert lines[3] == "   ::cudashim::gpu_div_assign(a , b); s.bits %= b;  ::cudashim::gpu_rem_assign(s.v , b);"
    assert lines[6] == "int host(int a, int b) { return a / b; }"


def test_wrapped_code_in_a_subscript_still_parses_and_later_launches_are_rewritten():
    # `a[::f(x)]` is an error to tree-sitter (it reads `[:`), so the rewrite's later edits (a
    # launch after the kernel) were built from a broken tree: every insertion opens with a space.
    source = """__global__ void k(float *s, const float *x, int n, int m, float f) {
  s[threadIdx.x / n] = x[threadIdx.x % m] + s[(int)f] + s[threadIdx.x << n];
}
void run(float *s, const float *x, int n, int m) {
  switch (n) {
    case 1: k<<<1, 32>>>(s, x, n, m, 1.5f); break;
  }
}
"""
    out = rewrite(source, lockstep=False)
    assert [launch.kernel for launch in out.launches] == ["k"], out.warnings
    assert not out.warnings
    tree = _parse(out.text.encode())
    stack, broken = [tree.root_node], []
    while stack:
        node = stack.pop()
        broken += [node] if node.is_error or node.is_missing else []
        stack.extend(node.children)
    assert not broken, [out.text.encode()[b.start_byte:b.end_byte] for b in broken]


def test_implicit_conversions_to_integers_are_wrapped_where_the_tree_says_the_target():
    cvt = " ::cudashim::gpu_cvt"
    source = """typedef float real;
struct Bin { int idx; float w; };
struct Other { long idx; };
__device__ float g(float);
template <typename T> __device__ void put(int *dst, const T *v, int i) { dst[i] = v[i]; }
__device__ int f(const real *x, float2 p, int *q, Bin b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x, j = p.x, k(x[0]), m = 3;
  int s = (int)x[0] + sizeof(float) + n / 2;
  q[i] = x[i] * 0.5f;
  b.idx = g(x[0]);
  n = b.w;
  i = i + 1;
  auto l = [=] __device__ (float v) { return v; };
  return x[1];
}
__device__ int *h(float *x) { return nullptr; }
int host(float x) { int y = x; return x; }
"""
    lines = rewrite(source, lockstep=False).text.splitlines()
    assert lines[4].endswith(f"dst[i] = {cvt}<int>(v[i]); }}")  # T may be float
    # Index arithmetic, a call's form of initialiser and literals are not wrapped; a float member is.
    assert lines[6] == f"  int i = blockIdx.x * blockDim.x + threadIdx.x, j = {cvt}<int>(p.x), k(x[0]), m = 3;"
    # An explicit cast already converts, and sizeof gives no float.
    assert lines[7] == f"  int s = (int){cvt}<int>(x[0]) + sizeof(float) + n / 2;"
    assert lines[8] == f"  q[i] = {cvt}<int>(x[i] * 0.5f);"
    # `idx` is an int member here and a long one in Other: which one is assigned is not the
    # name's to say, so it is left alone; `n`, an int wherever it is declared, is converted.
    assert lines[9] == "  b.idx = g(x[0]);"
    assert lines[10] == f"  n = {cvt}<int>(b.w);"
    assert lines[11] == "  i = i + 1;"
    assert lines[12] == "  auto l = [=] __device__ (float v) { return v; };"  # the lambda's own return
    assert lines[13] == f"  return {cvt}<int>(x[1]);"
    assert lines[15] == "__device__ int *h(float *x) { return nullptr; }"
    assert lines[16] == "int host(float x) { int y = x; return x; }"


def test_arguments_to_integer_parameters_of_a_function_declared_one_way_are_wrapped():
    cvt = " ::cudashim::gpu_cvt"
    source = """__device__ void add(int *h, int bin, float w);
__device__ void add(int *h, int bin, float w) { atomicAdd(h + bin, 1); }
__device__ int over(int a); __device__ int over(float a);
__device__ int byref(int &a, unsigned b, ...);
template <typename T> __device__ T tw(T v, int k) { return v; }
__global__ void k(int *h, const float *x, int r) {
  add(h, x[threadIdx.x] * 10.f, x[0]);
  over(x[0]);
  byref(r, x[0]);
  tw(x[0], x[1]);
  add(h, threadIdx.x, 1.f);
}
"""
    lines = rewrite(source, lockstep=False).text.splitlines()
    assert lines[6] == f"  add(h, {cvt}<int>(x[threadIdx.x] * 10.f), x[0]);"
    assert lines[7] == "  over(x[0]);"  # overloaded: which one is called is not the name's to say
    # A reference binds, no conversion; the fixed parameters of a variadic one convert.
    assert lines[8] == f"  byref(r, {cvt}<unsigned>(x[0]));"
    assert lines[9] == f"  tw(x[0], {cvt}<int>(x[1]));"
    assert lines[10] == "  add(h, threadIdx.x, 1.f);"


def test_aliases_of_integer_types_are_resolved_and_others_are_not_taken_for_one():
    cvt = " ::cudashim::gpu_cvt"
    source = """typedef unsigned int count_t;
using index_t = count_t;
typedef unsigned short half_word;
__global__ void k(const float *x, unsigned *o) {
  uint a = x[0];
  count_t b = x[1];
  index_t c = (index_t)x[2] + uint(x[3]);
  half_word d = x[4];
}
"""
    lines = rewrite(source, lockstep=False).text.splitlines()
    assert lines[4] == f"  uint a = {cvt}<unsigned int>(x[0]);"  # glibc's <sys/types.h>
    assert lines[5] == f"  count_t b = {cvt}<unsigned int>(x[1]);"
    assert lines[6] == f"  index_t c = (index_t){cvt}<unsigned int>(x[2]) + uint({cvt}<unsigned int>(x[3]));"
    assert lines[7] == "  half_word d = x[4];"  # 16 bits: not a target here
    # A program's own `uint` of another width is its own.
    own = "typedef unsigned char uint;\n__global__ void k(const float *x) { uint a = x[0]; }\n"
    assert rewrite(own, lockstep=False).text.splitlines()[1] == "__global__ void k(const float *x) { uint a = x[0]; }"


def test_an_integers_compound_assignment_of_a_float_converts_its_result():
    source = """struct Hist { int n; unsigned bits : 4; };
__global__ void k(const float *x, int *q, int r, Hist h) {
  int i = 0, m = 1;
  i += x[0];
  q[r] -= x[1] * 2.0f;
  h.n *= x[2];
  h.bits += x[3];
  i += m;
  m += r * 2;
  i /= x[4];
  float f = 1.f;
  f += x[5];
}
"""
    lines = rewrite(source, lockstep=False).text.splitlines()
    assert lines[3] == "   ::cudashim::gpu_add_assign(i , x[0]);"
    assert lines[4] == "   ::cudashim::gpu_sub_assign(q[r] , x[1] * 2.0f);"
    assert lines[5] == "   ::cudashim::gpu_mul_assign(h.n , x[2]);"
    assert lines[6] == "  h.bits += x[3];"  # a bit-field cannot bind to the wrapper's reference
    assert lines[7] == "  i += m;"  # integers alone: as written
    assert lines[8] == "  m += r * 2;"
    assert lines[9] == "   ::cudashim::gpu_div_assign(i , x[4]);"  # converts in the header too
    assert lines[11] == "  f += x[5];"  # a float target is no conversion
