"""C++ display names (issue 17, defect 8): the name c++filt prints, without the parameter list
unless overloads would then share a name; one llvm-cxxfilt caller for C++, CUDA and PTX."""
import shutil
import subprocess

import pytest

from ccls import demangle, toolchain
from ccls.frontends import SourceFile
from ccls.frontends.c_family import analyze_with_clang
from ccls.options import AnalysisOptions

needs_clang = pytest.mark.skipif(shutil.which("clang-19") is None and shutil.which("clang") is None,
                                 reason="clang-19 is not installed (apt-get install clang-19)")

# ../shared/repro/real-code/cxx_names.cpp
REPRO = """namespace { int twice(int x) { return 2 * x; } }
int apply(int (*g)(int), int v);
int f(int v) {
    auto l = [](int x) { return x + 1; };
    return apply(+l, twice(v));
}
"""


def analyse(code: str, path: str = "/tmp/ccls-test/names.cpp") -> list:
    result = analyze_with_clang(SourceFile(path, code), AnalysisOptions(), "cpp", [])
    assert result.errors == []
    return result.functions


def cxxfilt(symbols: list[str]) -> list[str]:
    tool = toolchain.find_tool("llvm-cxxfilt")
    return subprocess.run([tool], input="\n".join(symbols) + "\n", capture_output=True, text=True,
                          check=True).stdout.splitlines()


@needs_clang
def test_the_repro_names_are_what_cxxfilt_prints_without_parameters():
    functions = analyse(REPRO)
    printed = dict(zip([f.name for f in functions], cxxfilt([f.name for f in functions])))
    names = {f.display_name for f in functions}
    assert "(anonymous namespace)::twice" in names
    assert "f::$_0::operator int (*)(int)" in names  # the lambda's conversion to a function pointer
    assert "f::$_0::operator()" in names and "f" in names
    assert "" not in names and not any(n.startswith("namespace)") for n in names)
    for fn in functions:  # each name is c++filt's text, cut at the parameter list
        if fn.name.startswith("_Z"):
            assert printed[fn.name].replace("f(int)::", "f::").startswith(fn.display_name)


@needs_clang
def test_overloads_keep_their_parameter_lists_so_no_two_functions_share_a_name():
    functions = analyse("namespace fmt { long size(int x) { return x; } long size(const char *s) "
                        "{ long n = 0; while (s[n]) n++; return n; } long once(long v) { return v + 1; } }\n")
    names = sorted(f.display_name for f in functions)
    assert names == ["fmt::once", "fmt::size(char const*)", "fmt::size(int)"]


@pytest.mark.parametrize("printed, shown", [
    ("(anonymous namespace)::twice(int)", "(anonymous namespace)::twice"),
    ("a::(anonymous namespace)::b<int>::g() const", "a::(anonymous namespace)::b<int>::g"),
    ("f(int)::$_0::operator int (*)(int)() const", "f::$_0::operator int (*)(int)"),
    ("T::operator char const*() const &", "T::operator char const*"),
    ("A::operator<=>(A const&) const", "A::operator<=>"),
    ("std::function<void (int)> make<int>(int)", "make<int>"),
])
def test_names_that_the_old_cut_garbled(printed, shown):
    assert demangle.without_parameters(printed) == shown


def test_every_caller_falls_back_the_same_way_when_the_tool_fails(monkeypatch):
    symbols = ["_Z1fi", "_Z1gv"]
    monkeypatch.setattr(toolchain, "find_tool", lambda name: "/bin/false")
    assert demangle.demangled_names(symbols) == {}  # exit 1: keep the symbols
    monkeypatch.setattr(toolchain, "find_tool", lambda name: "/bin/echo")
    assert demangle.demangled_names(symbols) == {}  # one line for two symbols: not trusted
    monkeypatch.setattr(toolchain, "find_tool", lambda name: None)
    assert demangle.demangled_names(symbols) == {}
    from ccls.frontends import cuda, ptx
    assert cuda.demangled_names is ptx.demangled_names is demangle.demangled_names
