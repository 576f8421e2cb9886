"""Per-function incremental analysis end to end: what gets recompiled after an edit, the
persistent cache across restarts, moved functions, context changes and the whole-file fallback."""
from __future__ import annotations

from tests.e2e.conftest import (change, hints, hover, neovim_capabilities, open_doc, running_server, stats,
                                vscode_capabilities, wait_published)


def generated_c(count: int = 12, bound: int = 100) -> str:
    parts = ["#include <stddef.h>", f"#define N {bound}", ""]
    for i in range(count):
        parts += [f"long f{i}(const long *a, long n) {{",
                  "    long s = 0;",
                  f"    for (long k = 0; k < n; k++) s += a[k] * {i + 1};",
                  "    for (long k = 0; k < N; k++) s ^= k;",
                  "    return s;",
                  "}", ""]
    return "\n".join(parts)


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.split("\n")) if needle in line)


def labels_by_line(got) -> dict[int, str]:
    return {h.position.line: h.label for h in got}


async def replace_on_line(client, uri: str, text: str, row: int, old: str, new: str, version: int = 2):
    """One editor change: the first `old` on line `row` of `text` becomes `new`; waits for the
    publish and returns it with the document's `ccls/stats` entry."""
    col = text.split("\n")[row].index(old)
    change(client, uri, version, (row, col), (row, col + len(old)), new)
    published = await wait_published(client, uri, version)
    return published, (await stats(client))["documents"][uri]


async def test_editing_one_body_recompiles_only_that_function(workspace, cache_dir):
    text = generated_c()
    path = workspace / "gen.c"
    path.write_text(text)
    async with running_server(workspace, cache_dir, vscode_capabilities()) as client:
        uri = open_doc(client, path)
        await wait_published(client, uri, 1)
        first = labels_by_line(await hints(client, uri))
        assert len(first) == 12

        _, doc = await replace_on_line(client, uri, text, line_of(text, "s += a[k] * 8;"), "* 8", "/ 3")  # f7
        assert doc["compiledFunctions"] == ["f7"]
        assert doc["compiles"] == 1 and doc["reduced"] is True and doc["fallback"] is None
        assert doc["cachedFunctions"] == 11
        second = labels_by_line(await hints(client, uri))
        assert set(second) == set(first)
        f7_line = line_of(text, "long f7(")
        assert second[f7_line] != first[f7_line]  # a division costs more than a multiplication
        assert {k: v for k, v in second.items() if k != f7_line} == {k: v for k, v in first.items() if k != f7_line}

        # Moving every function down (a comment and blank lines above them) compiles nothing,
        # and the cached counts follow the functions to their new lines.
        change(client, uri, 3, (0, 0), (0, 0), "/* moved */\n\n\n")
        await wait_published(client, uri, 3)
        doc = (await stats(client))["documents"][uri]
        assert doc["compiles"] == 0 and doc["cachedFunctions"] == 12
        moved = labels_by_line(await hints(client, uri))
        assert moved == {line + 3: label for line, label in second.items()}
        f3_line = line_of(text, "long f3(") + 3
        shown = (await hover(client, uri, f3_line, 6)).contents.value
        assert f"line {f3_line + 3}," in shown  # the loop two lines below the signature, 1-based

        # A change to what every function depends on (a macro) recompiles the whole file once.
        define_row = line_of(text, "#define N") + 3
        change(client, uri, 4, (define_row, 10), (define_row, 13), "200")
        await wait_published(client, uri, 4)
        doc = (await stats(client))["documents"][uri]
        assert doc["compiles"] == 1 and doc["reduced"] is False and len(doc["compiledFunctions"]) == 12


async def test_restart_with_a_warm_cache_compiles_nothing(workspace, cache_dir):
    text = generated_c(6)
    path = workspace / "warm.c"
    path.write_text(text)
    async with running_server(workspace, cache_dir, neovim_capabilities()) as client:
        uri = open_doc(client, path)
        await wait_published(client, uri, 1)
        cold = labels_by_line(await hints(client, uri))
        assert (await stats(client))["compiles"] == 1
    async with running_server(workspace, cache_dir, neovim_capabilities()) as client:
        uri = open_doc(client, path)
        await wait_published(client, uri, 1)
        warm = await stats(client)
        assert warm["compiles"] == 0 and warm["cacheHits"] >= 6
        assert labels_by_line(await hints(client, uri)) == cold


async def test_editing_a_callee_recompiles_its_callers_too(workspace, cache_dir):
    text = "\n".join([
        "static long sq(long x) { return x * x; }",
        "long a(long n) { long s = 0; for (long i = 0; i < n; i++) s += sq(i); return s; }",
        "long b(long n) { return sq(n) + 1; }",
        "long c(long n) { return n - 1; }",
        "",
    ])
    path = workspace / "calls.c"
    path.write_text(text)
    async with running_server(workspace, cache_dir, vscode_capabilities()) as client:
        uri = open_doc(client, path)
        await wait_published(client, uri, 1)
        # sq may be inlined into a and b, so their counts depend on its body.
        _, doc = await replace_on_line(client, uri, text, 0, "x * x", "x * x * x")
        assert sorted(doc["compiledFunctions"]) == ["a", "b", "sq"] and doc["reduced"] is True


async def test_reduced_unit_that_cannot_compile_falls_back_to_the_whole_file(workspace, cache_dir):
    # K is defined inside first()'s body, so a unit without that body cannot compile second().
    text = "\n".join([
        "int first(void) {",
        "#define K 3",
        "    return 1;",
        "}",
        "int second(int n) { return n * K; }",
        "int third(int n) { return n + 2; }",
        "",
    ])
    path = workspace / "macro.c"
    path.write_text(text)
    async with running_server(workspace, cache_dir, vscode_capabilities()) as client:
        uri = open_doc(client, path)
        await wait_published(client, uri, 1)
        published, doc = await replace_on_line(client, uri, text, 4, "*", "+")
        assert doc["fallback"] and "did not compile" in doc["fallback"]
        assert doc["reduced"] is False and doc["compiles"] == 2
        assert not [d for d in published.diagnostics if d.code == "compile-error"]
        assert 4 in labels_by_line(await hints(client, uri))


async def test_cpp_members_reduce_without_fallback(workspace, cache_dir):
    text = "\n".join([
        "#include <vector>",
        "namespace geo {",
        "struct Grid {",
        "    explicit Grid(int n) : cells(n) {}",
        "    double total() const { double s = 0; for (double c : cells) s += c; return s; }",
        "    double scaled(double k) const;",
        "    std::vector<double> cells;",
        "};",
        "double Grid::scaled(double k) const {",
        "    return total() * k;",
        "}",
        "}",
        "double area(double w, double h) { return w * h; }",
        "",
    ])
    path = workspace / "grid.cpp"
    path.write_text(text)
    async with running_server(workspace, cache_dir, vscode_capabilities()) as client:
        uri = open_doc(client, path, language_id="cpp")
        await wait_published(client, uri, 1)
        published, doc = await replace_on_line(client, uri, text, 12, "w * h", "w * h * 0.5")
        assert doc["compiledFunctions"] == ["area"] and doc["reduced"] is True and doc["fallback"] is None
        assert not published.diagnostics or all(d.code != "compile-error" for d in published.diagnostics)
        assert 12 in labels_by_line(await hints(client, uri))


async def test_a_static_callee_shared_by_two_callers_stays_out_of_line_after_an_edit(workspace, cache_dir):
    # Too large to inline where it has two callers; a reduced unit holding `a` alone would give
    # it one caller, and clang inlines a static function's only call whatever its size.
    body = " ".join(f"if (p[i] > s) s ^= p[(i * {k}) % n] * {k} + (s >> {k % 5 + 1}) - m;" for k in range(3, 13))
    text = "\n".join([
        f"static long big(const long *p, long n, long m) {{ long s = 0; for (long i = 0; i < n; i++) {{ {body} }} return s; }}",
        "long a(const long *p, long n) { return big(p, n, 3) + 1; }",
        "long b(const long *p, long n) { return big(p, n, 5) * 2; }",
        "long c(long n) { return n - 1; }",
        "",
    ])
    path = workspace / "shared.c"
    path.write_text(text)
    async with running_server(workspace, cache_dir, vscode_capabilities()) as client:
        uri = open_doc(client, path)
        await wait_published(client, uri, 1)
        whole = labels_by_line(await hints(client, uri))
        _, doc = await replace_on_line(client, uri, text, 1, "+ 1", "+ 2")
        assert doc["reduced"] is True and sorted(doc["compiledFunctions"]) == ["a", "b", "big"]
        assert labels_by_line(await hints(client, uri))[1] == whole[1]  # still a call, as in the whole file
