"""The engine digest: part of every count cache key, so counts cached by one version of the
counting code are never served by another.

It hashes the source of every `ccls` module the counting path imports, found by walking the
import statements of the counting entry points (at any depth, inside functions too) rather than
by a list kept by hand: a module that starts to change counts is covered the day it is imported.
"""
from __future__ import annotations

import functools
import importlib.util
import os
import re

import ccls
from ccls import serialize
from ccls.cache import cache_key, text_digest

# Where counts are made: compile (front ends, flags, tools), read, count, the reduced units the
# service compiles, and the cache's serialisation of what they produce.
COUNTING_ENTRY_POINTS = ("ccls.engine", "ccls.frontends", "ccls.compile_db", "ccls.toolchain", "ccls.source_map",
                         "ccls.service.units", "ccls.serialize")
_PACKAGE = "ccls"
# Import statements at any indentation; a regular expression rather than `ast` because the
# digest is computed on every run of the command line (30x faster; a docstring line that looks
# like an import only adds a module to the digest, never drops one). It is tried only at the
# start of lines that hold the word (`_import_statements`): searched for from every position of
# the 1.5 MB of source, a `^` under MULTILINE costs most of the walk.
_IMPORT = re.compile(rb"[ \t]*(?:from[ \t]+([.\w]+)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)|import[ \t]+([^\n]*))")
_IMPORT_WORD = re.compile(rb"import")


# Where a command line's printed report is made from counts (costing, scoring, rendering, the
# report formats): the key of a whole report kept by `ccls analyze` (`service.batch.report_key`).
REPORT_ENTRY_POINTS = ("ccls.cli", *COUNTING_ENTRY_POINTS)


@functools.lru_cache(maxsize=1)
def engine_digest() -> str:
    """Digest of the version, the cache's schema and the source of every counting module."""
    return _digest("engine/2", counting_modules())


@functools.lru_cache(maxsize=1)
def report_digest() -> str:
    """Digest of the version and the source of every module the command line reaches (the
    counting modules among them): a change to how reports are costed or printed is a new key."""
    return _digest("report/1", imported_modules(REPORT_ENTRY_POINTS))


def forget() -> None:
    """Drop what this process remembers of the modules' source (a test that edits one)."""
    for memoised in (engine_digest, report_digest, counting_modules, imported_modules, _package_files, _source_path,
                     _source, _source_digest, _imports):
        memoised.cache_clear()


def _digest(kind: str, modules: tuple[str, ...]) -> str:
    root = os.path.dirname(os.path.abspath(ccls.__file__))
    parts: list[str] = [ccls.__version__, str(serialize.SCHEMA)]
    parts += [f"{name}:{_source_digest(_source_path(name, root))}" for name in modules]
    return cache_key(kind, parts)


@functools.lru_cache(maxsize=1)
def counting_modules() -> tuple[str, ...]:
    """Every `ccls` module the counting entry points import, directly or not (sorted names)."""
    return imported_modules(COUNTING_ENTRY_POINTS)


@functools.lru_cache(maxsize=4)
def imported_modules(entry_points: tuple[str, ...]) -> tuple[str, ...]:
    """Every `ccls` module `entry_points` import, directly or not (sorted names)."""
    root = os.path.dirname(os.path.abspath(ccls.__file__))
    seen: set[str] = set()
    not_modules: set[str] = set()  # `from ccls.model import Loop` names ccls.model.Loop: looked for once
    pending = list(entry_points)
    while pending:
        name = pending.pop()
        if name in seen or name in not_modules:
            continue
        if _source_path(name, root) not in _package_files(root):
            not_modules.add(name)
            continue
        seen.add(name)
        pending.extend(_imports(name, root))
    return tuple(sorted(seen))


@functools.lru_cache(maxsize=None)
def _package_files(root: str) -> frozenset[str]:
    """Every `.py` file of the package, listed once: a walk asks whether a name is a module
    ~500 times (`from ccls.model import Loop` names ccls.model.Loop), a stat each otherwise."""
    found = set()
    for folder, folders, names in os.walk(root):
        folders[:] = [f for f in folders if f != "__pycache__"]
        found.update(os.path.join(folder, name) for name in names if name.endswith(".py"))
    return frozenset(found)


# Memoised per process: the counting and the report digests walk mostly the same modules.
@functools.lru_cache(maxsize=None)
def _source_path(name: str, root: str) -> str:
    stem = os.sep.join([root, *name.split(".")[1:]])
    package = stem + os.sep + "__init__.py"
    return package if package in _package_files(root) else stem + ".py"


@functools.lru_cache(maxsize=None)
def _source(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


@functools.lru_cache(maxsize=None)
def _source_digest(path: str) -> str:
    return text_digest(_source(path))


@functools.lru_cache(maxsize=None)
def _imports(name: str, root: str) -> frozenset[str]:
    """The `ccls` modules one module imports: its import statements, the packages that hold
    it (Python runs their `__init__`), and every module of a package that loads its modules
    dynamically (the front-end registry imports each front end by name on first use)."""
    path = _source_path(name, root)
    source = _source(path)
    is_package = path.endswith("__init__.py")
    found = {".".join(name.split(".")[:k]) for k in range(2, name.count(".") + 1)}
    for source_module, from_names, plain in _import_statements(source):
        if plain:
            if _PACKAGE.encode() in plain:  # only the package's own modules are kept
                found.update(_names(plain))
            continue
        module = source_module.decode()
        level = len(module) - len(module.lstrip("."))
        base = importlib.util.resolve_name(module, name if is_package else name.rpartition(".")[0]) \
            if level else module
        if _ours(base):
            found.add(base)
            found.update(f"{base}.{alias}" for alias in _names(from_names))  # `from pkg import module`
    if is_package and (b"iter_modules(__path__)" in source or b"import_module(" in source):
        directory = os.path.dirname(path)
        found.update(f"{name}.{entry[:-3]}" for entry in os.listdir(directory)
                     if entry.endswith(".py") and entry != "__init__.py")
        found.update(f"{name}.{entry}" for entry in os.listdir(directory)
                     if os.path.exists(os.path.join(directory, entry, "__init__.py")))
    return frozenset(module for module in found if _ours(module))


def _ours(module: str) -> bool:
    return module == _PACKAGE or module.startswith(_PACKAGE + ".")


def _import_statements(source: bytes) -> list[tuple[bytes, bytes, bytes]]:
    """`_IMPORT`'s groups for each import statement, in order: the pattern tried at the start of
    each line that holds the word `import` (every statement's first line does) and after the end
    of the statement before, as a search over every line start would find them."""
    found = []
    end = 0  # where the last statement ended (a parenthesised list spans lines)
    tried = -1
    for word in _IMPORT_WORD.finditer(source):
        start = source.rfind(b"\n", 0, word.start()) + 1
        if start == tried or start < end:
            continue
        tried = start
        statement = _IMPORT.match(source, start)
        if statement is not None:
            found.append(statement.groups(b""))
            end = statement.end()
    return found


def _names(text: bytes) -> list[str]:
    """`a, b as c` or `(a,\n b)` → ["a", "b"] (comments dropped)."""
    text = re.sub(rb"#[^\n]*", b"", text).strip(b"()")
    return [part.split()[0].decode() for part in text.split(b",") if part.split()]
