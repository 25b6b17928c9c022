"""Bad input never raises: each gives a clear result (no kernels, or a named error)."""

from __future__ import annotations

import random

import pytest
from analysis_helpers import check_invariants

from validators.analysis import analyze
from validators.analysis.parse import MAX_INPUT_BYTES, MAX_NESTING, OffsetMap, nesting_reason

KERNEL = "__global__ void k(float* a) { a[threadIdx.x] = 1.0f; __syncthreads(); }\n"
MAIN = "int main() { dim3 g(4); k<<<g, 32>>>(0); return 0; }\n"


@pytest.mark.parametrize("empty", ["", b"", bytearray()])
def test_empty_input(empty: str | bytes) -> None:
    a = analyze(empty)
    check_invariants(a)
    assert (a.text, a.kernels, a.launches, a.spans, a.features, a.errors) == ("", [], [], [], [], [])
    assert a.notes == ["no __global__ kernel and no launch found"]


def test_no_kernels() -> None:
    a = analyze("#include <stdio.h>\nint main() { printf(\"hi\\n\"); return 0; }\n")
    check_invariants(a)
    assert a.kernels == [] and a.launches == [] and a.spans == [] and a.errors == []
    assert "no __global__ kernel and no launch found" in a.notes


def test_binary_garbage_is_refused_with_a_named_error() -> None:
    rng = random.Random(1234)
    garbage = bytes(rng.randrange(256) for _ in range(20000))
    a = analyze(garbage)
    check_invariants(a)
    assert a.kernels == [] and a.spans == []
    assert len(a.errors) == 1 and a.errors[0].startswith("input looks binary")
    assert len(a.text) == len(garbage)  # decoded Latin-1, one character per byte


def test_garbage_without_nul_bytes_is_refused_too() -> None:
    rng = random.Random(99)
    garbage = bytes(rng.randrange(1, 256) for _ in range(20000))
    a = analyze(garbage)
    assert a.errors[0].startswith("input looks binary")


def test_non_utf8_bytes_fall_back_to_latin1_and_keep_offsets() -> None:
    src = b"// M\xfcller's kernel \xa9 2020\n" + KERNEL.encode() + MAIN.encode()
    a = analyze(src)
    check_invariants(a)
    assert a.encoding == "latin-1"
    assert a.notes[0].startswith("input is not valid UTF-8 (byte 0xfc at offset 4); decoded as Latin-1")
    assert a.text == src.decode("latin-1")
    assert [k.name for k in a.kernels] == ["k"]
    assert a.span_texts("thread_index") == ["threadIdx.x"]
    assert a.span_texts("launch_config") == ["dim3 g(4);", "<<<g, 32>>>"]


def test_utf8_bom_is_kept_in_text_and_ignored_by_the_parser() -> None:
    src = "\ufeff" + KERNEL
    a = analyze(src.encode("utf-8"))
    check_invariants(a)
    assert a.text == src and a.errors == []
    assert a.kernels[0].span.start == 1
    assert any("byte-order mark" in n for n in a.notes)


def test_unterminated_comment_and_string() -> None:
    a = analyze(KERNEL + "/* this comment never ends\n__global__ void hidden() {}\n")
    check_invariants(a)
    assert [k.name for k in a.kernels] == ["k"]
    assert a.errors and a.errors[0].startswith("line 2:")
    b = analyze("/* open from the start\n" + KERNEL)
    check_invariants(b)
    assert b.kernels == [] and b.errors[0].startswith("line 1: syntax error")
    c = analyze(KERNEL + 'const char* s = "no end;\n')
    check_invariants(c)
    assert [k.name for k in c.kernels] == ["k"] and c.errors


def test_five_megabyte_file() -> None:
    # The shape of real huge sources: generated tables and long comments around a few kernels.
    table = "const float table[] = {\n" + "  0.125f, -1.5e-3f, 42.0f, 7.0f,\n" * 100_000 + "};\n"
    comment = "/*" + " long comment line with { braces } and <<<chevrons>>>\n" * 40_000 + "*/\n"
    kernels = "".join(KERNEL.replace("k(", f"k{i}(") for i in range(200))
    src = table + comment + kernels + MAIN
    assert len(src) > 5_000_000
    a = analyze(src)
    assert a.errors == []
    assert len(a.kernels) == 200 and a.kernels[-1].name == "k199"
    assert a.kernels[0].span.start == len(table) + len(comment)
    assert [x.kernel for x in a.launches] == ["k"]
    assert len(a.spans_of("kernel_body")) == 200
    check_invariants(a)


def test_oversized_input_is_refused_not_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    import validators.analysis.parse as parse

    monkeypatch.setattr(parse, "MAX_INPUT_BYTES", 1000)
    a = analyze(KERNEL * 50)
    assert a.errors == [f"input is {len(KERNEL) * 50} bytes, over the 1000-byte limit: not parsed"]
    assert MAX_INPUT_BYTES >= 16 * 1024 * 1024


@pytest.mark.parametrize("bad", [None, 42, 3.5, ["__global__ void k() {}"]])
def test_wrong_argument_type_is_an_error_not_an_exception(bad: object) -> None:
    a = analyze(bad)  # type: ignore[arg-type]
    assert a.text == "" and a.errors[0].startswith("cannot read input: TypeError: expected str or bytes")


def test_lone_surrogates_in_str_input() -> None:
    src = b"// \xff\xfe\n".decode("utf-8", "surrogateescape") + KERNEL
    a = analyze(src)
    check_invariants(a)
    assert [k.name for k in a.kernels] == ["k"]
    assert a.span_texts("sync") == ["__syncthreads()"]


@pytest.mark.parametrize(
    "src",
    [
        "}}}}{{{{",
        "<<<>>>",
        "k<<<",
        ">>>(",
        "__global__",
        "__global__ void",
        "template <",
        "#define",
        "#define X(",
        "#define K(a) k<<<a",
        "asm(",
        '#include "',
        "__global__ void k() { k<<<1>>>(); }",  # one config argument only
        "\\\n\\\n\\",
        "int a = '\\'';",
        "\x1b[31mred\x1b[0m",
        "??=define X 1",
        "#if 0\n__global__ void off() {}\n#else\n__global__ void on() {}\n#endif\n",
    ],
)
def test_fragments_never_raise(src: str) -> None:
    a = analyze(src)
    check_invariants(a)
    assert a.text == src


def test_random_token_soup_never_raises() -> None:
    tokens = [
        "__global__", "__device__", "void", "k", "(", ")", "{", "}", "<<<", ">>>", ",", ";",
        "threadIdx.x", "__syncthreads()", "template", "<", ">", "#define M", "\n", "/*", "*/",
        '"', "asm", "dim3", "=", "atomicAdd(", "__shared__", "[", "]", "é", "😀",
    ]
    rng = random.Random(7)
    for _ in range(200):
        src = " ".join(rng.choice(tokens) for _ in range(rng.randrange(1, 60)))
        a = analyze(src)
        check_invariants(a)


def test_offset_map_matches_python_slicing() -> None:
    text = "aé😀b\u20acc" * 3
    data = text.encode()
    m = OffsetMap(text)
    for i in range(len(text) + 1):
        assert m.char(len(text[:i].encode())) == i
    assert m.char(len(data)) == len(text)


def test_threads_get_the_same_results_as_serial() -> None:
    from concurrent.futures import ThreadPoolExecutor

    sources = [KERNEL.replace("k(", f"k{i}(") + MAIN.replace("k<<<", f"k{i}<<<") for i in range(40)]
    serial = [analyze(s) for s in sources]
    with ThreadPoolExecutor(max_workers=4) as pool:
        threaded = list(pool.map(analyze, sources))
    assert threaded == serial


def test_pathological_input_stops_at_the_time_limit() -> None:
    # Random punctuation makes tree-sitter's error recovery crawl (about 2 s for this 1 MB). Its
    # brackets are kept under the nesting limit (which would refuse it first) by turning an
    # opener that would go deeper into a `;`.
    rng = random.Random(3)
    chars, depth = [], 0
    for _ in range(1_000_000):
        c = rng.choice("{}()[]<>;,")
        if c in "{([":
            c = ";" if depth == 250 else c
            depth += c != ";"
        elif c in "})]":
            depth = max(depth - 1, 0)
        chars.append(c)
    soup = "".join(chars)
    a = analyze(soup, time_limit=0.3)
    assert a.errors == ["analysis gave up after 0.3 s of CPU time (input too irregular to parse)"]
    assert a.text == soup and a.kernels == [] and a.spans == []


def test_many_small_kernels_and_the_time_limit_changes_nothing() -> None:
    unit = KERNEL.replace("k(", "k@(") + MAIN.replace("main", "main@").replace("k<<<", "k@<<<")
    src = "".join(unit.replace("@", str(i)) for i in range(2000))
    assert len(src.encode()) > 256 * 1024  # parsed through the cancellable read callback
    a = analyze(src)
    assert a.errors == []
    assert len(a.kernels) == 2000 and len(a.launches) == 2000
    assert a.launches[-1].kernel == "k1999"
    assert len(a.spans_of("launch_config")) == 4000  # `dim3 g(4);` and `<<<g, 32>>>` each
    check_invariants(a)
    assert analyze(src, time_limit=None) == a


# --- nesting depth (a run of unclosed `(` or `{` costs tree-sitter's query the square of its
# length: 1 MB of `(` took minutes and the service answered `service_timeout`) ----------------


def _too_deep(line: int) -> list[str]:
    return [f"input nests brackets deeper than {MAX_NESTING} levels (line {line}): not parsed"]


@pytest.mark.parametrize("bracket", ["(", "{", "["])
def test_a_megabyte_of_open_brackets_is_refused_with_a_named_error(bracket: str) -> None:
    src = KERNEL + MAIN + bracket * 1_000_000 + "\n"
    a = analyze(src)
    check_invariants(a)
    assert a.errors == _too_deep(3)
    assert a.text == src and a.kernels == [] and a.launches == [] and a.spans == []


def test_nesting_up_to_the_limit_is_parsed_and_one_more_is_not() -> None:
    def nested(depth: int) -> str:
        return KERNEL + "int x = " + "(" * depth + "1" + ")" * depth + ";\n" + MAIN

    ok = analyze(nested(MAX_NESTING))
    assert ok.errors == [] and [k.name for k in ok.kernels] == ["k"] and len(ok.launches) == 1
    assert analyze(nested(MAX_NESTING + 1)).errors == _too_deep(2)
    assert MAX_NESTING >= 256  # real sources reach 16 (libstdc++'s headers); clang allows 256


@pytest.mark.parametrize(
    "hidden",
    [
        "// " + "(" * 1000 + "\n",
        "/* " + "{" * 1000 + "\n */\n",
        'const char* s = "' + "(" * 1000 + '\\" (";\n',
        "char c = '(', d = '\\'';\n" * 300,
        "#define OPEN \"(\"\n" * 300,
        ")" * 1000 + "\n",  # stray closers are an error, not nesting
    ],
)
def test_brackets_in_comments_and_literals_do_not_nest(hidden: str) -> None:
    a = analyze(KERNEL + hidden + MAIN)
    assert not any(e.startswith("input nests") for e in a.errors)
    assert [k.name for k in a.kernels] == ["k"] and [x.kernel for x in a.launches] == ["k"]


@pytest.mark.parametrize(
    "code",
    [
        "/* never closed " + "(" * 300,  # no comment to tree-sitter either: 300 brackets
        'char* s = "never closed ' + "(" * 300,  # a literal ends on its line
        "int x = 1'0" + "(" * 300,  # a digit separator, no character literal
        "char c = '\\'" + "(" * 300,  # an escaped quote does not close it
        ")" * 300 + "(" * 300,  # closers before do not pay for openers after
    ],
)
def test_unclosed_comments_and_literals_hide_no_brackets(code: str) -> None:
    assert nesting_reason((KERNEL + code + "\n").encode()) == _too_deep(2)[0]


def test_the_nesting_scan_is_linear_in_pathological_quoting() -> None:
    # Each quote of a line of escaped quotes would start a scan to the line's end: quadratic.
    for line in ["'" + "\\'" * 300_000, '"' + '\\"' * 300_000, "/* " * 300_000]:
        assert nesting_reason((line + "(" * 300).encode()) == _too_deep(1)[0]


# --- NUL bytes (g++ reads them as white space, with a warning) -------------------------------


def test_a_nul_byte_is_white_space_and_the_code_after_it_is_seen() -> None:
    src = KERNEL + "int q\0 = 1;\n" + MAIN
    a = analyze(src)
    check_invariants(a)
    assert a.text == src and a.errors == []
    assert a.notes == ["input has 1 NUL byte(s) (kept in .text, read as spaces by the parser)"]
    assert [k.name for k in a.kernels] == ["k"] and [x.kernel for x in a.launches] == ["k"]
    assert a.span_texts("launch_config") == ["dim3 g(4);", "<<<g, 32>>>"]


def test_a_nul_byte_past_the_binary_probe_is_white_space_too() -> None:
    src = "// padding\n" * 1000 + "int q\0 = 1;\n" + KERNEL + MAIN
    assert len(src) > 8192
    a = analyze(src.encode())
    check_invariants(a)
    assert a.errors == [] and [x.kernel for x in a.launches] == ["k"]
    assert a.kernels[0].span.start == src.index("__global__")


def test_a_nul_byte_splits_a_word_as_for_gcc() -> None:
    a = analyze(KERNEL.replace("__global__", "__glo\0bal__") + MAIN)
    assert a.kernels == [] and [x.kernel for x in a.launches] == ["k"]


def test_deep_nesting_gets_a_verdict_from_the_engine(tmp_path) -> None:
    """The refusal is the analysis's, not the check's: no exception, no non-verdict; the
    compiler decides (it cannot build 100,000 open brackets)."""
    from schemas import Program, Status
    from sources.builtin.loader import load_tasks
    from validators.backends import BackendUnavailable, get_backend
    from validators.engine import Engine
    from validators.reference import ReferenceRunner

    try:
        backend = get_backend("cpu")
    except BackendUnavailable as exc:
        pytest.skip(str(exc))
    engine = Engine(backend, references=ReferenceRunner(tmp_path / "refs"))
    task, program = next((t, p) for t, p in load_tasks() if t.name == "relu")
    source = program.sources_text()
    deep = engine.check(task, Program(source=source + "\n" + "(" * 100_000 + "\n"), thorough=False)
    assert deep.status == Status.COMPILE_ERROR, (deep.status, deep.reason)
