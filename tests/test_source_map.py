"""ccls.source_map: function ranges, names and hint positions from tree-sitter."""
from __future__ import annotations

import hashlib
import types

import pytest

from ccls.source_map import SourceFunction, functions_in, parse


def _functions(src: bytes, language: str) -> list[SourceFunction]:
    return functions_in(parse(src, language), src, language)


def _by_name(functions: list[SourceFunction]) -> dict[str, SourceFunction]:
    return {f.qualified_name: f for f in functions}


def _at(src: bytes, point: tuple[int, int], length: int) -> bytes:
    line = src.split(b"\n")[point[0]]
    return line[point[1]:point[1] + length]


def test_c_functions_ranges_and_positions():
    src = (b"#include <stddef.h>\n"
           b"static int square(int x)\n"
           b"{\n"
           b"    return x * x;\n"
           b"}\n"
           b"\n"
           b"double *scale(double *v, size_t n) { for (size_t i = 0; i < n; i++) v[i] *= 2; return v; }\n"
           b"int declared_only(int);\n")
    fns = _functions(src, "c")
    assert [(f.qualified_name, f.start_line, f.end_line) for f in fns] == [("square", 2, 5), ("scale", 7, 7)]
    square, scale = fns
    assert _at(src, square.name_start, 6) == b"square"
    assert square.signature_end == (1, len(b"static int square(int x)"))
    assert src[square.body_start_byte:square.body_end_byte].startswith(b"{\n    return")
    assert src[square.start_byte:square.end_byte] == b"static int square(int x)\n{\n    return x * x;\n}"
    assert square.text_hash == hashlib.sha256(src[square.start_byte:square.end_byte]).hexdigest()
    assert scale.signature_end == (6, len(b"double *scale(double *v, size_t n)"))


def test_cpp_namespaces_classes_templates():
    src = (b"namespace geo {\n"
           b"template <typename T>\n"
           b"T dot(const T *a, const T *b, int n) {\n"
           b"  T s = 0; for (int i = 0; i < n; ++i) s += a[i] * b[i]; return s;\n"
           b"}\n"
           b"class Shape {\n"
           b" public:\n"
           b"  double area() const { return w * h; }\n"
           b"  ~Shape() {}\n"
           b"  bool operator<(const Shape &o) const { return area() < o.area(); }\n"
           b"  Shape() = default;\n"
           b"  double w, h;\n"
           b"};\n"
           b"int Shape_count(int k);\n"
           b"}  // namespace geo\n"
           b"int geo::Shape_count(int k) { return k; }\n"
           b"extern \"C\" { int c_entry(void) { return 1; } }\n"
           b"namespace { int hidden() { return 2; } }\n")
    fns = _by_name(_functions(src, "cpp"))
    assert set(fns) == {"geo::dot", "geo::Shape::area", "geo::Shape::~Shape", "geo::Shape::operator<",
                        "geo::Shape_count", "c_entry", "(anonymous namespace)::hidden"}
    dot = fns["geo::dot"]
    assert (dot.start_line, dot.end_line) == (2, 5)  # includes the template header
    assert dot.name == "dot" and _at(src, dot.name_start, 3) == b"dot"
    area = fns["geo::Shape::area"]
    assert (area.start_line, area.end_line, area.name) == (8, 8, "area")
    assert area.signature_end == (7, len(b"  double area()"))
    assert fns["geo::Shape::operator<"].name == "operator<"
    assert _at(src, fns["geo::Shape::~Shape"].name_start, 6) == b"~Shape"
    assert fns["geo::Shape_count"].start_line == 16


def test_cuda_kernels_and_device_functions():
    src = (b"__device__ __forceinline__ float sq(float v) { return v * v; }\n"
           b"template <int BLOCK>\n"
           b"__global__ void reduce(const float *__restrict__ x, float *out, int n) {\n"
           b"  __shared__ float tile[BLOCK];\n"
           b"  int i = blockIdx.x * BLOCK + threadIdx.x;\n"
           b"  tile[threadIdx.x] = i < n ? sq(x[i]) : 0.0f;\n"
           b"}\n"
           b"void launch(const float *x, float *o, int n) { reduce<256><<<(n + 255) / 256, 256>>>(x, o, n); }\n")
    fns = _by_name(_functions(src, "cuda"))
    assert list(fns) == ["sq", "reduce", "launch"]
    reduce = fns["reduce"]
    assert (reduce.start_line, reduce.end_line) == (2, 7)
    assert reduce.signature_end == (2, len(b"__global__ void reduce(const float *__restrict__ x, float *out, int n)"))
    assert _at(src, reduce.name_start, 6) == b"reduce"


def test_python_qualified_names_match_co_qualname():
    src = (b"import functools\n"
           b"@functools.lru_cache\n"
           b"def fib(n):\n"
           b"    return n if n < 2 else fib(n - 1) + fib(n - 2)\n"
           b"class Matrix:\n"
           b"    def scale(self, k: float) -> 'Matrix':\n"
           b"        def each(v):\n"
           b"            return v * k\n"
           b"        return [each(v) for v in self.rows]\n"
           b"    async def load(self):\n"
           b"        class Loader:\n"
           b"            def run(self): return 1\n"
           b"        return Loader\n"
           b"    if True:\n"
           b"        def conditional(self): pass\n"
           b"square = lambda x: x * x\n")
    fns = _functions(src, "python")
    # compile() only parses and compiles this test's own snippet; nothing is executed.
    expected: dict[str, int] = {}
    pending = [compile(src, "<snippet>", "exec")]
    while pending:
        code = pending.pop()
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                pending.append(const)
                if not const.co_qualname.endswith(("<lambda>", "<listcomp>")) and const.co_name != "Matrix" \
                        and const.co_name != "Loader":
                    expected[const.co_qualname] = const.co_firstlineno
    assert {f.qualified_name: f.start_line for f in fns} == expected
    by = _by_name(fns)
    assert set(by) == {"fib", "Matrix.scale", "Matrix.scale.<locals>.each", "Matrix.load",
                       "Matrix.load.<locals>.Loader.run", "Matrix.conditional"}
    scale = by["Matrix.scale"]
    assert (scale.start_line, scale.end_line) == (6, 9)
    assert scale.signature_end == (5, len(b"    def scale(self, k: float)"))
    assert _at(src, scale.name_start, 5) == b"scale"
    assert by["fib"].start_line == 2 and _at(src, by["fib"].name_start, 3) == b"fib"


def test_invalid_utf8_and_broken_code_do_not_crash():
    src = b"int caf\xe9(void) { return 1; }\nint ok(int a) { return a + \xff\xfe; }\nint broken( { \n"
    fns = _functions(src, "c")
    assert "ok" in [f.name for f in fns]
    assert all(isinstance(f.name, str) for f in fns)
    py = b"def f():\n    return '\xff'\ndef g(:\n"
    assert [f.name for f in _functions(py, "python")][:1] == ["f"]


def test_deep_nesting_does_not_hit_the_recursion_limit():
    src = b"int f(void) { return " + b"(" * 5000 + b"1" + b")" * 5000 + b"; }\n" + b"[" * 5000 + b"\n"
    assert [f.name for f in _functions(src, "c")] == ["f"]
    py = b"x = " + b"[" * 3000 + b"]" * 3000 + b"\ndef g(): pass\n"
    assert [f.name for f in _functions(py, "python")] == ["g"]


def _edit(tree, old: bytes, start: int, old_end: int, insert: bytes):
    def point(text: bytes, offset: int) -> tuple[int, int]:
        before = text[:offset]
        return before.count(b"\n"), offset - (before.rfind(b"\n") + 1)

    new = old[:start] + insert + old[old_end:]
    new_end = start + len(insert)
    tree.edit(start_byte=start, old_end_byte=old_end, new_end_byte=new_end, start_point=point(old, start),
              old_end_point=point(old, old_end), new_end_point=point(new, new_end))
    return new


@pytest.mark.parametrize("language, src, anchor, insert", [
    ("cpp", b"namespace n {\nint a() { return 1; }\nint b() { return 2; }\n}\n", b"int b",
     b"struct S { int m() { return 3; } };\n"),
    ("python", b"def a():\n    return 1\n\ndef b():\n    return 2\n", b"def b", b"class K:\n    def m(self): pass\n\n"),
])
def test_incremental_reparse_matches_full_parse(language, src, anchor, insert):
    tree = parse(src, language)
    before = functions_in(tree, src, language)
    at = src.index(anchor)
    new = _edit(tree, src, at, at, insert)
    incremental = functions_in(parse(new, language, tree), new, language)
    assert incremental == functions_in(parse(new, language), new, language)
    assert len(incremental) == len(before) + 1
    # Deleting text again (an edit that removes bytes) also agrees.
    tree2 = parse(new, language)
    back = _edit(tree2, new, at, at + len(insert), b"")
    assert functions_in(parse(back, language, tree2), back, language) == before


def test_unknown_language_is_an_error():
    with pytest.raises(ValueError):
        parse(b"", "fortran")


def test_loop_bounds_name_what_the_condition_compares_with():
    from ccls.source_map import LoopBound, loop_bounds
    src = (b"struct M { long n; double *d; long rows() const; };\n"
           b"void f(const M &m, long *count) {\n"
           b"  for (long i = 0; i < m.n; i++)\n"
           b"    for (long j = m.rows(); j > 0; --j)\n"
           b"      while (*count) --*count;\n"
           b"  for (long k = 0; k + 1 < m.n; k++) {}\n"
           b"  for (long k = 0; *count > k; ++k) {}\n"
           b"}\n"
           b"int g(int n) { for (int i = 0; i < n; i += 2) {} return 0; }\n"
           b"long h(const V &v) { for (long i = 0; i < v.size(); i++) {} for (long i = 0; i < v.at(0); i++) {} }\n"
           b"long k(const G &g) { for (auto &x : g.items) {} for (auto x : make()) {} }\n"
           b"void r(V &v, V &w) { for (int t = 0; t < 3; t++) std::sort(v.begin(), v.end());\n"
           b"  std::copy(std::cbegin(w), std::cend(w), v.begin()); std::copy(v.begin(), w.end(), v.begin()); }\n")
    assert loop_bounds(parse(src, "cpp"), "cpp") == [
        LoopBound(3, 5, 1, "m.n"),
        LoopBound(4, 5, 2, None),  # compares with 0: no name
        LoopBound(5, 5, 3, None),  # not a `for`
        LoopBound(6, 6, 1, None),  # `k + 1` is not the loop variable alone
        LoopBound(7, 7, 1, "*count"),  # the variable on the right
        LoopBound(9, 9, 1, "n"),  # depth starts again in each function
        LoopBound(10, 10, 1, "v.size()"),  # a container's size
        LoopBound(10, 10, 1, None),  # a call with arguments names no size
        LoopBound(11, 11, 1, "g.items.size()"),  # a range-for over a named container
        LoopBound(11, 11, 1, None),  # over a temporary
        LoopBound(12, 12, 1, None),  # compares with a literal
        LoopBound(12, 12, 2, "v.size()"),  # an algorithm over a range: a loop inside the call
        LoopBound(13, 13, 1, "w.size()"),  # std::cbegin / std::cend
    ]  # (v.begin(), w.end()) is no one container's range
    assert loop_bounds(parse(b"def f(n):\n  for i in range(n): pass\n", "python"), "python") == []
