"""The layering, read from the source (ast) so that imports inside functions count too: the
core — readers, counting, costing, scoring, rendering and the types they share — runs no tools,
reads no files and knows no editor; the service knows no editor either; only the CLI's --stdio
reaches into `ccls.lsp`. Exceptions that cannot be fixed yet are listed with their reason, and
a listed exception that no longer holds fails the test, so the list only shrinks."""
from __future__ import annotations

import ast
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
PACKAGE = ROOT / "ccls"

# Module names or packages (with everything below them).
CORE = ("ccls.model", "ccls.polynomial", "ccls.taxonomy", "ccls.readers", "ccls.counting", "ccls.early_exit",
        "ccls.unknown_nests", "ccls.machine_code", "ccls.sizes", "ccls.costing", "ccls.scoring", "ccls.table_types", "ccls.report_types",
        "ccls.render", "ccls.serialize", "ccls.reports", "ccls.options", "ccls.targets", "ccls.source_map",
        "ccls.gate", "ccls.advice")
# What the core may reach besides itself: the package, and the front-end registry (Language
# records: source_map picks a grammar by suffix; the registry imports a front end only when one
# is called). Not the table loader, the engine, the service, the front ends or the compile data.
CORE_MAY_ALSO_REACH = ("ccls", "ccls.frontends")
# What the core must not reach, directly or through other ccls modules: the editor protocol,
# processes (subprocess itself, and ccls.toolchain that wraps it), command-line parsing.
EDITOR = ("pygls", "lsprotocol", "ccls.lsp")
TOOLS = ("subprocess", "ccls.toolchain", "multiprocessing")
FORBIDDEN_IN_CORE = EDITOR + TOOLS + ("argparse",)
# Calls that read or write files (builtin open, os and pathlib file calls, json/tomllib load).
_FILE_CALLS = {"open", "listdir", "scandir", "walk", "stat", "remove", "unlink", "rename", "replace", "makedirs",
               "mkdir", "read_text", "read_bytes", "write_text", "write_bytes", "load", "dump"}
_FILE_MODULES = {"os", "os.path", "shutil", "json", "tomllib", "pathlib", "Path"}

# Known exceptions, each with its reason (none left: issue 16 §3 moved llvm-mca's run to
# ccls.frontends.machine_cycles and the table types out of the loader, ccls.tables).
REACHES_TOOLS: dict[str, str] = {}
READS_FILES: dict[str, str] = {}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _within(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


@cache
def _tree(name: str) -> ast.Module:
    return ast.parse(MODULES[name].read_text(encoding="utf-8"), str(MODULES[name]))


@cache
def direct_imports(name: str) -> frozenset[str]:
    """Every module `name` imports anywhere in its source (also inside functions), resolved."""
    package = name if MODULES[name].name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(_tree(name)):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            found.add(base)
            found |= {f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in MODULES}
    return frozenset(found)


def reached(name: str) -> dict[str, str]:
    """Every module `name` imports, through ccls modules, with the chain that gets there."""
    chains: dict[str, str] = {}
    pending = [(name, name)]
    while pending:
        module, chain = pending.pop()
        for imported in direct_imports(module):
            if imported not in chains:
                chains[imported] = f"{chain} -> {imported}"
                if imported in MODULES:
                    pending.append((imported, chains[imported]))
    return chains


def file_calls(name: str) -> list[str]:
    calls = []
    for node in ast.walk(_tree(name)):
        if not isinstance(node, ast.Call):
            continue
        function = node.func
        if isinstance(function, ast.Name) and function.id == "open":
            calls.append(f"line {node.lineno}: {ast.unparse(node)[:60]}")
        elif isinstance(function, ast.Attribute) and function.attr in _FILE_CALLS and (
                ast.unparse(function.value) in _FILE_MODULES or function.attr.startswith(("read_", "write_"))):
            calls.append(f"line {node.lineno}: {ast.unparse(node)[:60]}")
    return calls


CORE_MODULES = sorted(name for name in MODULES if _within(name, CORE))


def test_every_core_name_is_a_module():
    """A renamed or moved module must be named here again, not silently left out."""
    assert [prefix for prefix in CORE if not any(_within(name, (prefix,)) for name in MODULES)] == []
    assert len(CORE_MODULES) >= len(CORE)


@pytest.mark.parametrize("name", CORE_MODULES)
def test_the_core_reaches_no_editor_no_tools_no_argparse(name):
    bad = {module: chain for module, chain in reached(name).items() if _within(module, FORBIDDEN_IN_CORE)}
    if name in REACHES_TOOLS:
        assert bad and all(_within(module, TOOLS) for module in bad), \
            f"{name} no longer reaches a tool: remove it from REACHES_TOOLS ({bad})"
    else:
        assert bad == {}, "\n".join(bad.values())


@pytest.mark.parametrize("name", CORE_MODULES)
def test_the_core_reaches_only_the_core(name):
    """Types the core shares live in the core (table_types, report_types), so no core module
    imports the table loader, the engine facade or a front end to name one."""
    outside = {module: chain for module, chain in reached(name).items()
               if module.split(".")[0] == "ccls" and not _within(module, CORE)
               and module not in CORE_MAY_ALSO_REACH}
    assert outside == {}, "\n".join(outside.values())


@pytest.mark.parametrize("name", CORE_MODULES)
def test_the_core_reads_and_writes_no_files(name):
    calls = file_calls(name)
    if name in READS_FILES:
        assert calls, f"{name} no longer touches files: remove it from READS_FILES"
    else:
        assert calls == [], calls


def test_the_service_knows_no_editor():
    service = [name for name in MODULES if _within(name, ("ccls.service",))]
    assert service, "ccls.service is gone: name the engine package here"
    for name in service:
        bad = {module: chain for module, chain in reached(name).items() if _within(module, EDITOR)}
        assert bad == {}, "\n".join(bad.values())


def test_only_the_language_server_and_its_entry_point_import_it():
    outside = {name: sorted(module for module in direct_imports(name) if _within(module, EDITOR))
               for name in MODULES if not _within(name, ("ccls.lsp",))}
    assert {name: found for name, found in outside.items() if found} == {"ccls.cli": ["ccls.lsp.server"]}


def test_the_core_loads_no_editor_and_no_front_end_at_run_time():
    """Importing every core module (run in a fresh interpreter) loads neither the editor
    protocol nor a front end or the toolchain: front ends are loaded by name, on demand."""
    wanted = [name for name in CORE_MODULES if name not in REACHES_TOOLS]
    probe = ("import importlib, sys\n"
             f"for name in {wanted!r}: importlib.import_module(name)\n"
             "loaded = [m for m in sys.modules if m.split('.')[0] in ('pygls', 'lsprotocol') or m.startswith("
             "('ccls.lsp', 'ccls.toolchain', 'ccls.frontends.', 'ccls.service'))]\n"
             "print(sorted(loaded))\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
