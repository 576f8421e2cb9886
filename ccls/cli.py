"""Command line: `ccls analyze PATH…` for batch/CI use, `ccls --stdio` for the language server."""
from __future__ import annotations

import argparse
import math
import os
import sys
from typing import Sequence

from ccls import __version__
from ccls.collection import collect_less_often
from ccls.options import OPTION_SPECS, AnalysisOptions, OptionSpec
from ccls.targets import CPU_ARCHES

EXIT_OK, EXIT_ANALYSIS_ERRORS, EXIT_USAGE = 0, 1, 2
_EXECUTOR_HELP = ("where the per-file work runs: dask://HOST:PORT (a Dask scheduler; --jobs is then ignored) or "
                  "dask-local (a Dask cluster of --jobs worker processes); needs 'ccls-cost[distributed]'. Workers "
                  "must see the sources, their headers and the compiler at the same paths (this machine or a shared "
                  "filesystem); the count cache stays with this command. Default: a process pool here")
_SKIP_DIRS = {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".mypy_cache"}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ccls", description="Cost-aware analysis: CU, energy, CO2 and $ per function.")
    parser.add_argument("--version", action="version", version=f"ccls-cost {__version__}")
    parser.add_argument("--stdio", action="store_true", help="run the language server over stdin/stdout")
    parser.add_argument("--log-file", help="language server log file")
    parser.add_argument("--log-level", default="INFO", help="language server log level (DEBUG, INFO, WARNING…)")
    sub = parser.add_subparsers(dest="command")
    analyze = sub.add_parser("analyze", help="analyse files or directories and print a table or JSON")
    analyze.add_argument("paths", nargs="+", metavar="PATH")
    analyze.add_argument("--profile", default="DEFAULT", help="RESEARCH, COMMERCIAL, MOBILE, HPC, DEFAULT")
    analyze.add_argument("--region", default="WORLD", help="carbon/price region id from cost_tables/regions.json")
    analyze.add_argument("--format", choices=("table", "json", "sarif", "html", "markdown"), default="table",
                         help="table (default), json (ccls.analysis/1), sarif (2.1.0, for code scanning), html (one "
                              "self-contained page), markdown (a pull-request comment)")
    analyze.add_argument("--scoring", choices=("cohort", "absolute"), default="cohort",
                         help="cohort: min–max within the analysed functions (paper eq. 4); absolute: fixed reference ranges")
    analyze.add_argument("--normalization", choices=("log-minmax", "minmax"), default="log-minmax",
                         help="cohort scoring's scale: log-minmax = min–max of log10 between the cohort's 5th and 95th "
                              "percentiles (default); minmax = the paper's eq. 4 on raw values")
    _add_analysis_options(analyze)
    analyze.add_argument("--tables", help="directory of cost tables (default: the bundled ones)")
    analyze.add_argument("--jobs", "-j", type=_whole_number(1, 4096), default=None, metavar="N",
                         help="worker processes (default: the number of cores); results do not depend on it")
    analyze.add_argument("--executor", type=_executor_spec, default=None, metavar="WHERE", help=_EXECUTOR_HELP)
    analyze.add_argument("--no-cache", action="store_true",
                         help="neither read nor write the count cache (an unchanged re-run then recompiles)")
    analyze.add_argument("--cache-dir", metavar="DIR",
                         help="count cache directory, shared with the language server (default: $CCLS_CACHE_DIR, "
                              "else $XDG_CACHE_HOME/ccls-cost)")
    _add_gate_commands(sub, analyze)
    _add_calibrate_command(sub)
    return parser


def _add_calibrate_command(sub: argparse._SubParsersAction) -> None:
    calibrate = sub.add_parser("calibrate", help="measure this machine (our own probe, never your code) and write "
                                                 "the cost table --arch host uses")
    calibrate.add_argument("--quick", action="store_true", help="seconds instead of about a minute: fewer repeats, "
                                                                "smaller buffers (rougher DRAM figures)")
    calibrate.add_argument("--runs", type=_whole_number(1, 99), default=None,
                           help="probe runs, median taken (default 3; 1 with --quick)")
    calibrate.add_argument("--cache-dir", help="where the table is written (default: $CCLS_CACHE_DIR, else "
                                               "$XDG_CACHE_HOME/ccls-cost): <dir>/calibration/host.json")
    calibrate.add_argument("--compare", default="x86_64", metavar="ARCH",
                           help="the bundled table printed beside the measured figures (default x86_64)")


def _add_gate_commands(sub: argparse._SubParsersAction, analyze: argparse.ArgumentParser) -> None:
    """`ccls check` (the CI gate, with analyze's options) and `ccls diff` (ccls/gate.py)."""
    from ccls.gate import GATE_METRICS

    check = sub.add_parser("check", help="analyse and fail (exit 1) when a function's cost grew beyond a baseline's")
    check.add_argument("paths", nargs="+", metavar="PATH")
    check.add_argument("--baseline", required=True, metavar="FILE",
                       help="the baseline JSON (written by --update; an `analyze --format json` document also works)")
    check.add_argument("--update", action="store_true", help="write the baseline from this analysis and exit")
    _add_comparison_options(check, GATE_METRICS)
    check.add_argument("--scoring", choices=("cohort", "absolute"), default="absolute",
                       help="absolute (default here): a function's grade does not move when others change; cohort: "
                            "min–max within the analysed functions")
    # The analysis options are analyze's own (the same argparse actions, as parents= shares them).
    own = {action.dest for action in check._actions}
    for action in analyze._actions:
        if action.option_strings and action.dest not in own:
            check._add_action(action)
    diff = sub.add_parser("diff", help="compare two analyses (baselines or `analyze --format json` documents)")
    diff.add_argument("old", metavar="OLD.json")
    diff.add_argument("new", metavar="NEW.json")
    _add_comparison_options(diff, GATE_METRICS)
    diff.add_argument("--tables", help="directory of cost tables, for the grade scale (default: the bundled ones)")


def _add_comparison_options(parser: argparse.ArgumentParser, metrics: Sequence[str]) -> None:
    parser.add_argument("--metric", choices=metrics, default="CU", help="the figure the gate compares (default CU)")
    parser.add_argument("--max-increase", type=_tolerance, default=0.05, metavar="PERCENT",
                        help="tolerated growth per function, e.g. 5%% (the default) or 12.5; for --metric score, "
                             "the tolerated fall")
    parser.add_argument("--format", choices=("table", "json", "markdown"), default="table")


def _walk(paths: Sequence[str]) -> tuple[list[str], list[str]]:
    """Files to analyse (supported suffixes, directories walked) and paths that don't exist."""
    from ccls.frontends import handles

    files, missing = [], []
    for path in paths:
        if os.path.isdir(path):
            for root, dirs, names in os.walk(path):
                dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("."))
                files += [os.path.join(root, n) for n in sorted(names) if handles(n)]
        elif os.path.isfile(path):
            files.append(path)
        else:
            missing.append(path)
    return files, missing


def _read_source(path: str):
    """(SourceFile, None) or (None, reason) — binary files are refused unless bitcode."""
    from ccls.frontends import SourceFile

    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as problem:
        return None, f"cannot read: {problem.strerror}"
    if path.endswith(".bc"):
        return SourceFile(os.path.abspath(path), ""), None
    if b"\0" in data[:8192]:
        return None, "binary file (not source text)"
    return SourceFile(os.path.abspath(path), data.decode("utf-8", errors="surrogateescape")), None


def _add_analysis_options(parser: argparse.ArgumentParser) -> None:
    """Every analysis option, from its one definition (ccls.options.OPTION_SPECS); a bad value
    is a usage error (exit 2) that says what was expected."""
    for spec in OPTION_SPECS:
        if spec.kind == "bool":
            parser.add_argument(spec.flag, action=argparse.BooleanOptionalAction, default=spec.batch_default,
                                help=spec.help)
            continue
        shown = "{" + ",".join(c.lstrip("-") for c in spec.choices) + "}" if spec.choices else \
            {"parameters": "NAME=VALUE", "flags": "FLAGS", "globs": "GLOB,…"}.get(spec.kind)
        default = spec.batch_default
        parser.add_argument(spec.flag, type=_typed(spec), metavar=shown,
                            action="append" if spec.kind == "parameters" else "store",
                            default=[] if spec.kind == "parameters" else default,
                            help=spec.help + (f" (default: {default})" if default not in (None, ()) and
                                              spec.kind not in ("globs", "flags") else ""))


def _typed(spec: OptionSpec):
    def parse(text: str):
        try:
            return spec.from_text(text)
        except ValueError as problem:
            raise argparse.ArgumentTypeError(str(problem)) from None
    return parse


def _analysis_options(args: argparse.Namespace) -> AnalysisOptions:
    """AnalysisOptions from the analysis flags; relative paths in flags are the working directory's."""
    chosen = {spec.field: getattr(args, spec.flag.lstrip("-").replace("-", "_")) for spec in OPTION_SPECS}
    chosen["parameter_values"] = tuple(sorted(dict(chosen["parameter_values"]).items()))  # as settings: by name, last wins
    for name in ("flags_override", "extra_flags"):
        if chosen[name]:  # None (no override) and () stay as they are
            from ccls.compile_db import anchored  # with flags only: a Python file's run loads no C machinery

            chosen[name] = anchored(chosen[name], os.getcwd())
    return AnalysisOptions(**chosen)


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return math.nan


def _executor_spec(text: str) -> str:
    from ccls.service.executors import check_spec

    try:
        return check_spec(text)
    except ValueError as problem:
        raise argparse.ArgumentTypeError(str(problem)) from None


def _whole_number(low: int, high: int):
    def parse(text: str) -> int:
        value = _number(text)
        if not (math.isfinite(value) and value == int(value) and low <= value <= high):
            raise argparse.ArgumentTypeError(f"expected a whole number from {low} to {high}, got {text}")
        return int(value)
    return parse


def _tolerance(text: str) -> float:
    from ccls.gate import parse_tolerance
    try:
        return parse_tolerance(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a percentage such as 5% or 2.5, got {text}") from None


def run_analyze(args: argparse.Namespace) -> int:
    from ccls.engine import ReportSettings, report
    from ccls.model import AnalysisError
    from ccls.render import analysis_json, analysis_table
    from ccls.tables import TableError, load_tables

    try:
        tables = load_tables(args.tables, host_table=_host_table(args.arch))
    except TableError as problem:
        print(f"ccls: {problem}", file=sys.stderr)
        return EXIT_USAGE
    for kind, value, known in (("profile", args.profile, tables.profiles), ("region", args.region, tables.regions)):
        if value not in known:
            print(f"ccls: unknown {kind} {value!r}; choose one of: {', '.join(sorted(known))}", file=sys.stderr)
            return EXIT_USAGE
    if args.arch not in CPU_ARCHES or args.arch not in tables.cost:
        print(f"ccls: unknown arch {args.arch!r}; choose one of: {', '.join(CPU_ARCHES)}", file=sys.stderr)
        return EXIT_USAGE
    options = _analysis_options(args)
    settings = ReportSettings(profile=args.profile, region=args.region, scoring=args.scoring,
                              normalization=args.normalization)
    files, missing = _walk(args.paths)
    errors = [AnalysisError(p, None, "no such file or directory") for p in missing]
    sources = []
    for path in files:
        source, problem = _read_source(path)
        if source is None:
            errors.append(AnalysisError(path, None, problem))
        else:
            sources.append(source)
    cache = _count_cache(args)
    try:
        # An unchanged re-run prints the report the last run printed: it is keyed by every
        # file's context key and everything else the report depends on (`_report_key`).
        program, key = None, None
        if cache is not None and sources:
            from ccls.service.batch import prepare_program

            program = prepare_program(sources, options, tables, cache)
            key = _report_key(args, program, tables, options, settings, errors)
            found = cache.get_json(key) if key is not None else None
            if isinstance(found, dict) and isinstance(found.get("report"), str):
                print(found["report"])
                return EXIT_OK
        functions = []
        # one program: sizes flow between its files
        for counted in _count_program(args, sources, options, tables, cache, program):
            functions += counted.functions
            errors += counted.errors
        reports = report(functions, tables, settings, options)
        if args.format in ("json", "sarif", "html", "markdown"):
            from ccls.reports.summary import summarize, summary_json

            summary = summarize(reports, errors, _report_context(args, tables, options, settings))
            if args.format == "json":
                text = analysis_json(reports, errors, settings, args.arch, tables.version,
                                     summary=summary_json(summary))
            else:
                from ccls.reports import FORMATTERS

                text = FORMATTERS[args.format](summary)
        else:
            text = analysis_table(reports, errors, settings, args.arch)
        print(text)
        if program is not None and not errors:
            _keep_report(cache, program, key, text)
    finally:
        if cache is not None:
            cache.close()
    if not files and not missing:
        print("ccls: no supported files found", file=sys.stderr)
        return EXIT_ANALYSIS_ERRORS
    return EXIT_ANALYSIS_ERRORS if errors else EXIT_OK


def _count_cache(args: argparse.Namespace):
    """The count cache of --cache-dir (its messages on stderr), or None with --no-cache."""
    from ccls.cache import CountCache, default_cache_dir

    cache = None if vars(args).get("no_cache") else CountCache(default_cache_dir(vars(args).get("cache_dir")))
    for message in cache.messages if cache is not None else ():
        print(f"ccls: {message}", file=sys.stderr)
    return cache


def _report_key(args: argparse.Namespace, program, tables, options, settings, errors) -> str | None:
    """The key of the whole printed report, where it can have one: every file cacheable, no file
    in error, no repository clone (a temporary checkout). It holds every file's context key
    (text, flags, compiler, headers, counting options, the counting code: with the call sites
    cached under them, they fix every count), the settings, options, format and table version,
    the paths as given and the working directory (reports name paths relative to it), and the
    source of every module the command line reaches."""
    from dataclasses import asdict

    from ccls.service.batch import file_keys, report_key

    if errors or vars(args).get("checkouts"):
        return None
    keys = file_keys(program)
    if keys is None:
        return None
    return report_key(keys, args.command, args.format, list(args.paths), os.getcwd(), tables.version,
                      asdict(settings), asdict(options), __version__)


def _keep_report(cache, program, key: str | None, text: str) -> None:
    """Store a printed report under its key, where every file's counts are in the cache (a
    reading cut short by the clock is not stored: nor is the report)."""
    from ccls.service.batch import counts_keys

    if key is None:
        return
    keys = counts_keys(program)
    if keys is not None and all(cache.contains(k) for k in keys):
        cache.put_json_many([(key, {"report": text})])


def _count_program(args: argparse.Namespace, sources, options, tables, cache, program=None):
    """Counted files through the service: the count cache (None: --no-cache) and --jobs
    processes; a progress bar on stderr for a table on a terminal, nothing otherwise."""
    from ccls.service.batch import count_program, default_jobs

    jobs = vars(args).get("jobs") or default_jobs()
    show = vars(args).get("format", "table") == "table" and sys.stderr.isatty()
    with _progress_bar(len(sources), show) as progress:
        return count_program(sources, options, tables, cache, jobs, progress, vars(args).get("executor"), program)


def _progress_bar(total: int, show: bool):
    """A `service.batch.Progress` drawing files done / total, rate and ETA with tqdm."""
    import contextlib

    from ccls.service.batch import Progress

    if not show:
        return contextlib.nullcontext(Progress())
    from tqdm import tqdm

    class Bar(Progress):
        def __init__(self) -> None:
            self.bar = tqdm(total=total, unit="file", file=sys.stderr, leave=False, desc="ccls")

        def file_done(self) -> None:
            self.bar.update(1)

        def compiled(self, done: int, total: int) -> None:
            self.bar.set_postfix_str(f"compiled {done}/{total}")

        def __enter__(self) -> "Bar":
            return self

        def __exit__(self, *exc: object) -> None:
            self.bar.close()
    return Bar()


def _report_context(args: argparse.Namespace, tables, options, settings):
    """What the SARIF/HTML/Markdown reports need besides the functions: paths are named relative to
    the clone of a repository URL, else to the working directory (or the analysed folders' own)."""
    from ccls.reports import ReportContext
    from ccls.reports.summary import report_root

    checkouts = vars(args).get("checkouts") or []
    if len(checkouts) == 1 and len(args.paths) == 1:
        root, source, revision = checkouts[0].path, checkouts[0].url, checkouts[0].revision
    else:
        folders = [p if os.path.isdir(p) else os.path.dirname(os.path.abspath(p)) for p in args.paths]
        root, source, revision = report_root(folders, os.getcwd()), " ".join(args.paths), ""
    return ReportContext(settings=settings, arch=args.arch, table_version=tables.version, root=root,
                         tool_version=__version__, source=source, revision=revision,
                         grade_order=tuple(grade for _, grade, _ in tables.grades.bands), profiles=tables.profiles,
                         options=options)


def run_check(args: argparse.Namespace) -> int:
    """Analyse as `analyze` does; with --update write the baseline, else compare against it."""
    import contextlib
    import io
    import json

    from ccls import gate

    old = None
    if not args.update:
        old = _read_analysis(args.baseline, missing_hint=f"write one with: ccls check PATH… --baseline "
                                                          f"{args.baseline} --update")
        if old is None:
            return EXIT_USAGE
    captured = io.StringIO()
    with contextlib.redirect_stdout(captured):  # the analysis/1 document, as `analyze --format json` prints it
        status = run_analyze(argparse.Namespace(**{**vars(args), "format": "json"}))
    if status == EXIT_USAGE:
        return status
    try:
        current = gate.baseline_from_analysis(json.loads(captured.getvalue()), os.getcwd())
    except (ValueError, gate.GateError) as problem:
        print(f"ccls: the analysis produced no report ({problem})", file=sys.stderr)
        return EXIT_ANALYSIS_ERRORS
    for error in current["errors"]:
        first = (error.get("message") or "").splitlines()[0] if error.get("message") else ""
        print(f"ccls: {error['file']}:{error.get('line') or '?'}: {first}", file=sys.stderr)
    if status != EXIT_OK and not current["errors"]:
        return status  # nothing to analyse (run_analyze said why)
    if args.update:
        try:
            _write_atomically(args.baseline, gate.baseline_json(current))
        except OSError as problem:
            print(f"ccls: cannot write the baseline {args.baseline}: {problem.strerror or problem}", file=sys.stderr)
            return EXIT_USAGE
        print(f"ccls: wrote baseline {args.baseline} ({len(current['functions'])} functions)", file=sys.stderr)
        return EXIT_ANALYSIS_ERRORS if current["errors"] else EXIT_OK
    comparison = _compare(old, current, args)
    if comparison is None:
        return EXIT_USAGE
    print(_render_comparison(comparison, args.format))
    if current["errors"]:
        print(f"ccls: {len(current['errors'])} file(s) could not be analysed; the gate fails until they can",
              file=sys.stderr)
    return EXIT_ANALYSIS_ERRORS if comparison.failed or current["errors"] else EXIT_OK


def run_diff(args: argparse.Namespace) -> int:
    """Compare two analyses and print the report; exit 0 (2 for unreadable input)."""
    old, new = _read_analysis(args.old), _read_analysis(args.new)
    if old is None or new is None:
        return EXIT_USAGE
    comparison = _compare(old, new, args)
    if comparison is None:
        return EXIT_USAGE
    print(_render_comparison(comparison, args.format))
    return EXIT_OK


def run_calibrate(args: argparse.Namespace) -> int:
    """Measure this machine, write its table, print its figures beside a bundled table's."""
    import json

    from tqdm import tqdm

    from ccls import calibrate
    from ccls.tables import default_table_dir

    bundled_path = default_table_dir() / f"{args.compare}.json"
    if args.compare not in CPU_ARCHES or not bundled_path.is_file():
        print(f"ccls: unknown arch {args.compare!r} for --compare; choose one of: "
              f"{', '.join(a for a in CPU_ARCHES if a != 'host')}", file=sys.stderr)
        return EXIT_USAGE
    if not sys.stderr.isatty():
        print(f"ccls: measuring this machine ({'seconds' if args.quick else 'about a minute'})…", file=sys.stderr)
    bar = tqdm(total=0, unit="step", desc="calibrating", file=sys.stderr, disable=None, leave=False)

    def progress(done: int, total: int, step: str) -> None:
        bar.total = total
        bar.n = done
        bar.set_postfix_str(step, refresh=False)
        bar.refresh()

    try:
        result = calibrate.calibrate(args.cache_dir, quick=args.quick, runs=args.runs, progress=progress)
    except calibrate.CalibrationError as problem:
        print(f"ccls: {problem}", file=sys.stderr)
        return EXIT_ANALYSIS_ERRORS
    finally:
        bar.close()
    if result.warning:
        print(f"ccls: warning: {result.warning}", file=sys.stderr)
    bundled = json.loads(bundled_path.read_text(encoding="utf-8"))
    print(calibrate.comparison_text(result.table, bundled, args.compare))
    print(f"\nwrote {result.path} (version {result.table['metadata']['version']}); use it with --arch host")
    return EXIT_OK


def _host_table(arch: str) -> str | None:
    """The calibrated table's path where --arch host asks for it (load_tables says when there is none)."""
    if arch != "host":
        return None
    from ccls.calibrate import table_path
    return table_path()


def _read_analysis(path: str, missing_hint: str = "") -> dict | None:
    """A JSON document from `path`, or None after saying why on stderr."""
    import json

    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except FileNotFoundError:
        print(f"ccls: no such file: {path}" + (f"; {missing_hint}" if missing_hint else ""), file=sys.stderr)
    except OSError as problem:
        print(f"ccls: cannot read {path}: {problem.strerror or problem}", file=sys.stderr)
    except (ValueError, UnicodeDecodeError) as problem:
        print(f"ccls: {path} is not JSON: {problem}", file=sys.stderr)
    return None


def _compare(old: dict, new: dict, args: argparse.Namespace):
    """gate.compare with the tables' grade scale; None after saying why on stderr."""
    from ccls import gate
    from ccls.tables import TableError, load_tables

    try:
        grades = [grade for _, grade, _ in load_tables(getattr(args, "tables", None)).grades.bands]
        return gate.compare(old, new, args.metric, args.max_increase, grades, root=os.getcwd())
    except (TableError, gate.GateError) as problem:
        print(f"ccls: {problem}", file=sys.stderr)
        return None


def _render_comparison(comparison, fmt: str) -> str:
    from ccls import gate

    if fmt == "json":
        return gate.comparison_json(comparison)
    if fmt == "markdown":
        return gate.comparison_markdown(comparison)
    return gate.comparison_table(comparison)


def _write_atomically(path: str, text: str) -> None:
    import contextlib
    import tempfile

    folder = os.path.dirname(os.path.abspath(path))
    handle, temporary = tempfile.mkstemp(prefix=".ccls-", suffix=".json", dir=folder)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def main(argv: Sequence[str] | None = None) -> int:
    collect_less_often()
    parser = _parser()
    args = parser.parse_args(argv)
    if args.stdio:
        from ccls.lsp.server import run_stdio

        run_stdio(args.log_file, args.log_level)
        return EXIT_OK
    from ccls.service.executors import ExecutorError

    if args.command == "analyze":
        from ccls.git_source import CloneError, cloned

        try:
            with cloned(args.paths) as (args.paths, args.checkouts):  # a repository URL: a shallow clone
                return run_analyze(args)
        except (CloneError, ExecutorError) as problem:
            print(f"ccls: {problem}", file=sys.stderr)
            return EXIT_USAGE
        except KeyboardInterrupt:
            return 130
    gate_commands = {"check": run_check, "diff": run_diff, "calibrate": run_calibrate}
    if args.command in gate_commands:
        try:
            return gate_commands[args.command](args)
        except ExecutorError as problem:
            print(f"ccls: {problem}", file=sys.stderr)
            return EXIT_USAGE
        except KeyboardInterrupt:
            return 130
    parser.print_help()
    return EXIT_USAGE


def entry_point() -> None:
    sys.exit(main())
