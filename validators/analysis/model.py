"""Result types of the static analysis: plain pydantic models, JSON-ready.

Every offset is a Python `str` character offset into `Analysis.text` (never a byte offset), and
every range is half-open `[start, end)`, like `schemas.Span`.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from schemas import Span


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TextRange(_Model):
    """A half-open character range into `Analysis.text`."""

    start: int = Field(ge=0)
    end: int = Field(ge=0)

    def text(self, source: str) -> str:
        return source[self.start : self.end]


class Param(_Model):
    name: str
    """Empty for an unnamed parameter (`int`) or `...`."""
    type: str
    """The declaration text without the name, whitespace-normalised: `const float* __restrict__`."""


class Function(_Model):
    """A `__global__` kernel or a `__device__` function definition."""

    name: str
    """The unqualified name (`k` for `ns::k`, `operator()` for call operators)."""
    qualified_name: str
    """The declarator's name as written (`Foo::bar`)."""
    qualifiers: list[str]
    """CUDA execution-space qualifiers in source order: `__global__`, `__device__`, `__host__`."""
    return_type: str
    params: list[Param]
    template_params: list[str] = []
    """The template parameter declarations as written (`typename T`, `int B`), empty if none."""
    line: int
    """1-based line of the definition's first character (the `template` keyword if templated)."""
    span: TextRange
    """The whole definition, including its `template <...>` header."""
    body: TextRange
    """The body, braces included."""

    @property
    def is_kernel(self) -> bool:
        return "__global__" in self.qualifiers

    @property
    def is_template(self) -> bool:
        return bool(self.template_params)


class Launch(_Model):
    """A `kernel<<<grid, block, shmem, stream>>>(args)` launch site."""

    kernel: str
    """The unqualified kernel name (`k` for `ns::k<float, 256>`), empty when unknown."""
    callee: str
    """The callee as written, template arguments included: `ns::k<float, 256>`."""
    template_args: list[str] = []
    config: list[str]
    """The texts between `<<<` and `>>>`, in order (2 to 4 of them)."""
    args: list[str]
    """The call's argument texts."""
    line: int
    config_span: TextRange
    """From `<<<` to `>>>` inclusive."""
    call_span: TextRange
    """The whole call expression, callee through the closing parenthesis."""
    function: str | None = None
    """The enclosing function's name, None at file scope or inside a macro body."""
    in_device_code: bool = False
    """Inside a `__global__`/`__device__` function: a dynamic-parallelism launch."""
    in_lambda: bool = False
    macro: str | None = None
    """The `#define` whose body holds this launch, if any."""

    @property
    def grid(self) -> str | None:
        return self.config[0] if len(self.config) > 0 else None

    @property
    def block(self) -> str | None:
        return self.config[1] if len(self.config) > 1 else None

    @property
    def shmem(self) -> str | None:
        return self.config[2] if len(self.config) > 2 else None

    @property
    def stream(self) -> str | None:
        return self.config[3] if len(self.config) > 3 else None


class ApiLaunch(_Model):
    """A launch through the runtime/driver API: `cudaLaunchKernel((void*)k, grid, block, args, 0, s)`,
    `cudaLaunchCooperativeKernel`, `cudaLaunchKernelEx`, `cuLaunchKernel`."""

    api: str
    kernel: str
    """The kernel named in the first argument (casts and `&` stripped), empty when not a name."""
    args: list[str]
    """All argument texts of the API call."""
    line: int
    call_span: TextRange
    function: str | None = None


class Dim3Decl(_Model):
    """One declarator of a `dim3` declaration: `dim3 grid((n + 255) / 256)`."""

    name: str
    args: list[str]
    """The constructor/initialiser arguments (empty for `dim3 g;`)."""
    line: int
    span: TextRange
    """This declarator, initialiser included."""
    statement: TextRange
    """The whole declaration statement (shared by `dim3 a(1), b(2);`)."""
    function: str | None = None


class FeatureHit(_Model):
    """Why a feature flag was raised: the construct that was seen, and where."""

    feature: str
    reason: str
    """Human readable: `identifier tex2D`, `include <cublas_v2.h>`, `asm string contains cp.async`."""
    line: int
    span: TextRange


class Analysis(_Model):
    """Everything `analyze()` found in one source text."""

    text: str
    encoding: str = "utf-8"
    """How bytes were decoded: `utf-8`, `latin-1` (fallback) or `str` (text was given)."""
    kernels: list[Function] = []
    device_functions: list[Function] = []
    launches: list[Launch] = []
    api_launches: list[ApiLaunch] = []
    """Launches written as API calls rather than `<<<>>>` (not rewritten by a `<<<>>>` rewrite)."""
    dim3s: list[Dim3Decl] = []
    spans: list[Span] = []
    features: list[str] = []
    feature_hits: list[FeatureHit] = []
    """Evidence for each flag (the first few sightings of each feature)."""
    errors: list[str] = []
    """Parse errors with line numbers, or why the input was not parsed at all."""
    refused: bool = False
    """The input was not parsed at all (`errors` says why): nothing it found is evidence of
    absence (no launches found is not "no launches")."""
    notes: list[str] = []
    """Things worth knowing that are not errors (decoding fallback, BOM, truncated lists)."""

    @property
    def kernel_names(self) -> list[str]:
        return [k.name for k in self.kernels]

    @property
    def launched_kernels(self) -> list[str]:
        """Distinct launched kernel names, in order of first launch."""
        return list(dict.fromkeys(launch.kernel for launch in self.launches if launch.kernel))

    def spans_of(self, kind: str) -> list[Span]:
        return [s for s in self.spans if s.kind == kind]

    def span_texts(self, kind: str) -> list[str]:
        return [self.text[s.start : s.end] for s in self.spans if s.kind == kind]

    def feature_reasons(self) -> dict[str, str]:
        """One human reason per raised feature, for messages like `needs_gpu: texture (tex2D, line 12)`."""
        out: dict[str, str] = {}
        for hit in self.feature_hits:
            out.setdefault(hit.feature, f"{hit.reason} (line {hit.line})")
        return out
