"""load_inline's bindings with the names taken out (validators/cpu/bindings.py): when the
placeholder form may stand for torch's text, and the link's aliases from real objects."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from validators.cpu import bindings, extension, toolchain


def test_declarations_that_differ_only_by_names_give_one_text():
    a = bindings.shared_bindings(["torch::Tensor relu_cuda(torch::Tensor x);"], {"relu_cuda": "relu_cuda"}, True)
    b = bindings.shared_bindings(["torch::Tensor gelu_cuda(torch::Tensor x);"], {"gelu_cuda": "Gaussian."}, True)
    assert a is not None and b is not None
    assert a.text == b.text and "relu" not in a.text and "gelu" not in b.text
    assert (a.names, a.docs, b.names, b.docs) == (("relu_cuda",), ("relu_cuda",), ("gelu_cuda",), ("Gaussian.",))
    assert "torch::wrap_pybind_function(cudashim_bound_000)" in a.text
    bare = bindings.shared_bindings(["torch::Tensor relu_cuda(torch::Tensor x);"], {"relu_cuda": "d"}, False)
    assert bare is not None and "wrap_pybind_function" not in bare.text
    # Several functions, references, qualifiers after the parameter list, default arguments.
    many = bindings.shared_bindings(
        ["torch::Tensor& add_(torch::Tensor& a, const torch::Tensor& b) noexcept;",
         "std::vector<torch::Tensor> split3(torch::Tensor x, int64_t dim = 0);"],
        {"add_": "a", "split3": "b"}, True)
    assert many is not None and "cudashim_bound_001(torch::Tensor p0, int64_t p1 = 0);" in many.text


def test_parameter_names_do_not_matter_and_are_the_only_other_change():
    a = bindings.shared_bindings(["torch::Tensor leaky_relu_cuda(torch::Tensor x, double negative_slope);"],
                                 {"leaky_relu_cuda": "d"}, True)
    b = bindings.shared_bindings(["torch::Tensor rms_norm_cuda(torch::Tensor input, double eps);"],
                                 {"rms_norm_cuda": "d"}, True)
    assert a is not None and b is not None and a.text == b.text
    assert "cudashim_bound_000(torch::Tensor p0, double p1);" in a.text
    every = bindings.shared_bindings(
        ["torch::Tensor& f(torch::Tensor& x, const std::vector<int64_t>& sizes, double eps = 1e-5, "
         "float* q, int a[3], void (*cb)(int), torch::Tensor&& t, int);"], {"f": "d"}, True)
    assert every is not None and (
        "cudashim_bound_000(torch::Tensor& p0, const std::vector<int64_t>& p1, double p2 = 1e-5, "
        "float* p3, int p4[3], void (*p5)(int), torch::Tensor&& p6, int);") in every.text
    # Other declarations keep their names; a text the parser cannot read keeps them all.
    kept = bindings.shared_bindings(["int helper(int keep);", "int f(int x);"], {"f": "d"}, True)
    assert kept is not None and "int helper(int keep);" in kept.text and "cudashim_bound_000(int p0);" in kept.text
    broken = bindings.shared_bindings(["int f(int x);", "struct {"], {"f": "d"}, True)
    assert broken is not None and "cudashim_bound_000(int x);" in broken.text


@pytest.mark.parametrize("sources, functions", [
    # a definition: the host unit would hold the function itself
    (["torch::Tensor twice(torch::Tensor x) { return x * 2; }"], {"twice": "d"}),
    # the name used again (overloads, a call, a mention in a string or comment)
    (["torch::Tensor f(torch::Tensor x);", "torch::Tensor f(torch::Tensor x, double a);"], {"f": "d"}),
    (["torch::Tensor f(torch::Tensor x);", "torch::Tensor g(torch::Tensor x) { return f(x); }"], {"f": "d"}),
    (["torch::Tensor f(torch::Tensor x); // f"], {"f": "d"}),
    (['torch::Tensor f(torch::Tensor x);', 'const char* s = "f";'], {"f": "d"}),
    # not declared here, or only as a call or member
    (["#include <vector>"], {"f": "d"}),
    (["auto y = f(x);"], {"f": "d"}),
    (["void g() { return obj.f(1); }"], {"f": "d"}),
    # docstrings torch's literal would not reproduce, names that are no identifiers
    (["torch::Tensor f(torch::Tensor x);"], {"f": 'say "hi"'}),
    (["torch::Tensor f(torch::Tensor x);"], {"f": "line\nbreak"}),
    (["torch::Tensor f(torch::Tensor x);"], {"f": "back\\slash"}),
    (["torch::Tensor f(torch::Tensor x);"], {"f(": "d"}),
    # the module's name in the sources, our own placeholder spelling, nothing bound
    (["torch::Tensor f(torch::Tensor x); // TORCH_EXTENSION_NAME"], {"f": "d"}),
    (["torch::Tensor cudashim_bound_000(torch::Tensor x);"], {"cudashim_bound_000": "d"}),
    (["torch::Tensor f(torch::Tensor x);"], {}),
])
def test_texts_the_placeholder_form_cannot_stand_for_are_built_as_they_are(sources, functions):
    assert bindings.shared_bindings(sources, functions, True) is None


def test_aliases_map_mangled_placeholders_to_the_functions_and_refuse_what_is_missing():
    sb = bindings.shared_bindings(["int relu(int x);", "double mean(const double* p);"],
                                  {"relu": "r", "mean": "m"}, True)
    assert sb is not None
    undefined = {"_Z18cudashim_bound_000i", "_Z18cudashim_bound_001PKd", "_ZN2at6TensorC1Ev"}
    defined = {"_Z4relui", "_Z4meanPKd"}
    assert bindings.aliases(sb, undefined, set(), defined) == [
        "_Z18cudashim_bound_000i=_Z4relui", "_Z18cudashim_bound_001PKd=_Z4meanPKd"]
    assert bindings.aliases(sb, undefined, set(), {"_Z4relui"}) is None  # mean not defined by a CUDA unit
    assert bindings.aliases(sb, undefined, {"_Z18cudashim_bound_000i"}, defined) is None
    assert bindings.aliases(sb, {"_Z18cudashim_bound_000i"}, set(), defined) is None  # mean never called


def test_the_names_table_escapes_what_a_literal_cannot_hold():
    sb = bindings.SharedBindings(text="", names=("f",), docs=("naïve ∑ tab\tend",))
    src = bindings.names_table_source(sb)
    assert '"f"' in src and "\\303\\257" in src and "\\011" in src and "ï" not in src


@pytest.mark.skipif(shutil.which("g++") is None or shutil.which("nm") is None, reason="needs g++ and nm")
def test_placeholders_link_to_the_functions_real_objects_define(tmp_path: Path):
    """Real objects (no torch: the same mechanism): the host unit calls the placeholders, the
    "CUDA" unit defines the functions; the aliases and the names table link into a program that
    calls the right functions under the right names."""
    sb = bindings.shared_bindings(["int twice(int x);", "int neg(int x);"], {"twice": "2x", "neg": "-x"}, True)
    assert sb is not None
    host = sb.text.replace("#include <torch/extension.h>", "#include <cstdio>").split("PYBIND11_MODULE")[0]
    host += ('int main() { std::printf("%s=%d %s=%d %s\\n", cudashim_bound_names[0], cudashim_bound_000(21), '
             'cudashim_bound_names[1], cudashim_bound_001(5), cudashim_bound_docs[1]); }\n')
    (tmp_path / "host.cpp").write_text(host)
    (tmp_path / "kern.cpp").write_text("int twice(int x) { return 2 * x; }\nint neg(int x) { return -x; }\n")
    for src in ("host.cpp", "kern.cpp"):
        subprocess.run([toolchain.gxx(), "-c", src, "-o", src + ".o"], cwd=tmp_path, check=True)
    got = extension._bind_placeholders(sb, ["host.cpp.o", "kern.cpp.o"], tmp_path,
                                       runner=toolchain.run_local, expose=[])
    assert got is not None
    flags, table, _ = got
    subprocess.run([toolchain.gxx(), "host.cpp.o", "kern.cpp.o", table, *flags, "-o", "prog"],
                   cwd=tmp_path, check=True)
    out = subprocess.run([str(tmp_path / "prog")], capture_output=True, text=True, check=True).stdout
    assert out == "twice=42 neg=-5 -x\n"
    # A function the other unit does not define: no aliases, torch's text is built instead.
    (tmp_path / "kern.cpp").write_text("int twice(int x) { return 2 * x; }\n")
    subprocess.run([toolchain.gxx(), "-c", "kern.cpp", "-o", "kern.cpp.o"], cwd=tmp_path, check=True)
    assert extension._bind_placeholders(sb, ["host.cpp.o", "kern.cpp.o"], tmp_path,
                                        runner=toolchain.run_local, expose=[]) is None


MODULE_SOURCE = """#include <torch/extension.h>
__global__ void k(const float* x, float* y, int n) { int i = threadIdx.x; if (i < n) y[i] = x[i]; }
torch::Tensor forward(torch::Tensor x, double slope) {
  auto y = torch::empty_like(x);
  k<<<1, 32>>>(x.data_ptr<float>(), y.data_ptr<float>(), (int)x.numel());
  return y;
}
at::Tensor& scale_(at::Tensor& x, const std::vector<int64_t>& dims) { return x; }
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("forward", &forward, "leaky relu");  // the answer's entry point
    m.def("scale_", scale_);
}
"""


def test_a_source_that_binds_itself_splits_into_kernels_and_a_shared_binding_unit():
    parts = bindings.split_module(MODULE_SOURCE)
    assert parts is not None
    assert "PYBIND11_MODULE" not in parts.kernels and not extension.binds_to_python(parts.kernels)
    assert parts.kernels.count("\n") == MODULE_SOURCE.count("\n")  # lines kept for diagnostics
    assert parts.bindings.names == ("forward", "scale_") and parts.bindings.docs == ("leaky relu", None)
    assert "torch::Tensor cudashim_bound_000(torch::Tensor p0, double p1);" in parts.bindings.text
    assert "at::Tensor& cudashim_bound_001(at::Tensor& p0, const std::vector<int64_t>& p1);" in parts.bindings.text
    assert "nullptr" in bindings.names_table_source(parts.bindings)
    # Another answer with another kernel and other names over the same shapes: the same unit.
    other = bindings.split_module(MODULE_SOURCE.replace("forward", "run").replace("y[i] = x[i]", "y[i] = -x[i]")
                                  .replace("scale_", "noop"))
    assert other is not None and other.bindings.text == parts.bindings.text


@pytest.mark.parametrize("change", [
    ('m.def("scale_", scale_);', 'm.def("scale_", [](at::Tensor& x) { return x; });'),  # a lambda
    ('m.def("scale_", scale_);', 'm.def("scale_", scale_, py::arg("x"), py::arg("dims"));'),  # extras
    ('m.def("scale_", scale_);', 'm.def("scale_", scale_); m.attr("v") = 1;'),  # not only defs
    ('m.def("scale_", scale_);', 'm.def("scale_", missing);'),  # not defined here
    ('m.def("scale_", scale_);', 'm.def("again", forward);'),  # one function, two names
    ("torch::Tensor forward(", "static torch::Tensor forward("),  # not visible to another unit
    ("torch::Tensor forward(", "inline torch::Tensor forward("),
    ("torch::Tensor forward(torch::Tensor x, double slope)", "torch::Tensor forward(torch::Tensor x, Params p)"),
    ("#include <torch/extension.h>", "#include <torch/extension.h>\nPYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {}"),
    ('"leaky relu"', '"say \\"hi\\""'),
])
def test_sources_whose_bindings_might_mean_something_else_are_not_split(change):
    old, new = change
    assert old in MODULE_SOURCE
    assert bindings.split_module(MODULE_SOURCE.replace(old, new, 1)) is None
