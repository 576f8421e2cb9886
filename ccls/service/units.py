"""Reduced translation units, for per-function incremental counting: the context a function's
key holds, its dependency closure, and the text compiled when only some functions changed.

A *reduced translation unit* keeps the bodies of the functions that must be (re)counted and
turns every other function definition into a declaration, replacing its body by ";" plus the
same number of newlines, so every line keeps its number and debug-info lines stay right. Where
a declaration is not valid C++ (an out-of-line member `A::f`, a constructor with an initializer
list) the body becomes "{}" instead; where the body is needed to compile callers (deduced
`auto` return types, constexpr/consteval, templates) it is kept. The result is only an
optimisation: the caller falls back to the whole file when the reduced unit fails to compile.
"""
from __future__ import annotations

import bisect
import re
from dataclasses import replace
from typing import Iterable, Protocol, Sequence

from ccls.frontends import language_named
from ccls.model import CountedFunction, FindingSite, LoopSummary


class FunctionSpan(Protocol):
    """What the reducer needs from `ccls.source_map.SourceFunction`."""

    name: str
    qualified_name: str
    start_line: int
    end_line: int
    start_byte: int
    end_byte: int
    body_start_byte: int
    body_end_byte: int
    text_hash: str


_IDENT = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")
# Comments and literals, so comment edits outside functions do not change the context hash.
_LEXEME = re.compile(
    rb'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|//[^\n]*|/\*.*?\*/', re.DOTALL)
_SPACES = re.compile(rb"[ \t\r\f\v]+")
_BLANK_LINES = re.compile(rb"\n\s*\n+")
_NEEDS_BODY = re.compile(rb"\b(?:constexpr|consteval|template)\b|\bauto\b(?![^{]*->)|decltype\s*\(\s*auto")


def _strip_comments(data: bytes) -> bytes:
    def keep_literals(match: re.Match[bytes]) -> bytes:
        text = match.group(0)
        return text if text[:1] in (b'"', b"'") else b" "
    return _LEXEME.sub(keep_literals, data)


def outer_functions(functions: Sequence[FunctionSpan]) -> list[FunctionSpan]:
    """Functions not nested inside another function's span (local-class methods are nested)."""
    ordered = sorted(functions, key=lambda f: (f.start_byte, -f.end_byte))
    outer: list[FunctionSpan] = []
    end = -1
    for fn in ordered:
        if fn.start_byte >= end:
            outer.append(fn)
            end = fn.end_byte
    return outer


def context_text(data: bytes, functions: Sequence[FunctionSpan]) -> bytes:
    """The file without its function definitions, comments and layout: what every function's
    compile depends on besides its own text (includes, macros, types, globals, prototypes)."""
    pieces, cursor = [], 0
    for fn in outer_functions(functions):
        pieces.append(data[cursor:fn.start_byte])
        cursor = max(cursor, fn.end_byte)
    pieces.append(data[cursor:])
    text = _strip_comments(b"".join(pieces))
    text = _SPACES.sub(b" ", text)
    return _BLANK_LINES.sub(b"\n", text).strip()


def include_lines(data: bytes) -> list[tuple[str, bool]]:
    """(header name, is_quoted) for each #include in the text, in order."""
    found = []
    for match in re.finditer(rb'^[ \t]*#[ \t]*include[ \t]*([<"])([^>"\n]+)[>"]', data, re.MULTILINE):
        found.append((match.group(2).decode("utf-8", "replace").strip(), match.group(1) == b'"'))
    return found


def callees(data: bytes, functions: Sequence[FunctionSpan]) -> dict[int, set[int]]:
    """For each function (by index), the other functions of the file it names in its body."""
    by_name: dict[bytes, list[int]] = {}
    for index, fn in enumerate(functions):
        by_name.setdefault(fn.name.encode("utf-8", "surrogatepass"), []).append(index)
    names = set(by_name)
    graph: dict[int, set[int]] = {}
    for index, fn in enumerate(functions):
        start = fn.body_start_byte if fn.body_start_byte >= 0 else fn.start_byte
        named = names.intersection(_IDENT.findall(data, start, fn.end_byte))
        graph[index] = {other for token in named for other in by_name[token] if other != index}
    return graph


def closure(graph: dict[int, set[int]], roots: Iterable[int]) -> set[int]:
    """Roots plus everything reachable from them."""
    seen: set[int] = set()
    stack = list(roots)
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        stack.extend(graph.get(node, ()))
    return seen


_INTERNAL = re.compile(rb"\b(?:static|inline|__inline__|__forceinline__)\b")


def _internal(data: bytes, fn: FunctionSpan, language: str) -> bool:
    """Internal or inline linkage: whether the function is emitted (and how it is optimised)
    depends on its callers in the same unit."""
    head = data[fn.start_byte:fn.body_start_byte if fn.body_start_byte >= 0 else fn.end_byte]
    if _INTERNAL.search(head):
        return True
    # C++ members defined in their class (implicitly inline) and anonymous-namespace functions.
    return language != "c" and "::" in fn.qualified_name and b"::" not in head


def units_to_compile(data: bytes, functions: Sequence[FunctionSpan], missing: Iterable[int],
                     language: str, graph: dict[int, set[int]] | None = None) -> set[int]:
    """Functions whose bodies a compile of `missing` needs: the missing ones and the same-file
    callees they may inline (transitively). The C/C++ front end emits every function and keeps
    it external beside the static copy the build inlines (`frontends.as_built`), so a
    function's own code does not depend on its callers; but whether a static callee is inlined
    depends on whether it has other callers (clang inlines a static function's last call
    whatever its size), so a static callee that other functions call keeps one of them. For
    other compilers (nvcc) the direct callers of internal/inline missing functions are kept
    too, so that those are emitted and optimised as in the whole file."""
    graph = callees(data, functions) if graph is None else graph
    callers = _callers(graph)
    roots = set(missing)
    if not language_named(language).emits_every_function:
        for i in list(roots):
            if _internal(data, functions[i], language):
                roots |= callers.get(i, set())
        return closure(graph, roots)
    keep = closure(graph, roots)
    shared = shared_statics(data, functions, graph, language, callers)
    while lone := [i for i in sorted(keep & shared) if len(callers[i] & keep) < 2]:
        # One at a time: a caller kept for one static callee may be another's second caller.
        other = min(callers[lone[0]] - keep, key=lambda j: (functions[j].end_byte - functions[j].start_byte, j))
        keep |= closure(graph, [other])
    return keep


def _callers(graph: dict[int, set[int]]) -> dict[int, set[int]]:
    callers: dict[int, set[int]] = {}
    for caller, called in graph.items():
        for callee in called:
            callers.setdefault(callee, set()).add(caller)
    return callers


def shared_statics(data: bytes, functions: Sequence[FunctionSpan], graph: dict[int, set[int]], language: str,
                   callers: dict[int, set[int]] | None = None) -> set[int]:
    """Internal functions that two or more functions of the file call: the build inlines
    them by its size threshold, not as a static function's only call."""
    callers = _callers(graph) if callers is None else callers
    return {i for i, named_by in callers.items() if len(named_by) >= 2 and _internal(data, functions[i], language)}


def _declaration_form(data: bytes, fn: FunctionSpan, language: str) -> bytes | None:
    """What replaces the body of a function not being counted; None keeps the body."""
    newlines = b"\n" * data.count(b"\n", fn.body_start_byte, fn.body_end_byte)
    if language == "c":
        return b";" + newlines
    head = data[fn.start_byte:fn.body_start_byte]
    if _NEEDS_BODY.search(head):
        return None
    after_parameters = head[head.rfind(b")") + 1:]
    if "::" in fn.qualified_name or b":" in after_parameters:
        # An out-of-line member cannot be redeclared and an initializer list needs a body:
        # keep a definition whose body compiles to almost nothing, without -Wreturn-type noise.
        return b"{__builtin_unreachable();" + newlines + b"}"
    return b";" + newlines


def referenced(data: bytes, functions: Sequence[FunctionSpan], keep: set[int],
               graph: dict[int, set[int]]) -> set[int]:
    """Functions that kept bodies or the file's context (initialisers, macros) name."""
    names = set(_IDENT.findall(context_text(data, functions)))
    named = {i for i, fn in enumerate(functions) if fn.name.encode("utf-8", "surrogatepass") in names}
    for i in keep:
        named |= graph.get(i, set())
    return named


def reduced_text(data: bytes, functions: Sequence[FunctionSpan], keep: set[int], language: str,
                 declare: set[int] | None = None) -> bytes:
    """The file with bodies of functions not in `keep` (indices into `functions`) removed.

    In C, with `declare` given, functions neither kept nor declared are removed whole (only
    their newlines stay): less for the compiler to read. C++ keeps them as declarations: a
    member's definition may be the only declaration of a destructor or virtual function."""
    index_of = {id(fn): i for i, fn in enumerate(functions)}
    kept_starts = sorted(functions[i].start_byte for i in keep)
    replace_spans: list[tuple[int, int, bytes]] = []
    for fn in outer_functions(functions):
        i = index_of[id(fn)]
        if i in keep or fn.body_start_byte < 0 or fn.body_end_byte <= fn.body_start_byte:
            continue
        # A kept function nested in this one (a Python closure, a local class's method) keeps
        # its container's body too.
        at = bisect.bisect_left(kept_starts, fn.start_byte)
        if at < len(kept_starts) and kept_starts[at] < fn.end_byte:
            continue
        if language == "c" and declare is not None and i not in declare:
            replace_spans.append((fn.start_byte, fn.end_byte, b"\n" * data.count(b"\n", fn.start_byte, fn.end_byte)))
            continue
        form = _declaration_form(data, fn, language)
        if form is not None:
            replace_spans.append((fn.body_start_byte, fn.body_end_byte, form))
    out, cursor = [], 0
    for start, end, form in sorted(replace_spans):
        out.append(data[cursor:start])
        out.append(form)
        cursor = end
    out.append(data[cursor:])
    return b"".join(out)


def assign(counted: Sequence[CountedFunction], functions: Sequence[FunctionSpan]) -> dict[int, list[CountedFunction]]:
    """Which source function each counted function came from: the innermost function whose line
    range holds its line, else one with the same name. Unplaced ones are left out."""
    result: dict[int, list[CountedFunction]] = {}
    by_name: dict[str, int] = {}
    for i, fn in enumerate(functions):
        by_name.setdefault(fn.qualified_name, i)
        by_name.setdefault(fn.name, i)
    for cf in counted:
        best: int | None = None
        if cf.line is not None:
            for i, fn in enumerate(functions):
                if fn.start_line <= cf.line <= fn.end_line:
                    if best is None or functions[best].end_line - functions[best].start_line > fn.end_line - fn.start_line:
                        best = i
        if best is None:
            best = by_name.get(cf.display_name, by_name.get(cf.name))
        if best is not None:
            result.setdefault(best, []).append(cf)
    return result


def shift_lines(cf: CountedFunction, delta: int, file: str | None = None) -> CountedFunction:
    """The same counts with every source line moved by `delta` (a function moved in its file)."""
    def move(line: int | None) -> int | None:
        return None if line is None else line + delta
    if delta == 0 and (file is None or file == cf.file):
        return cf

    def move_text(text: str) -> str:
        return shift_line_mentions(text, delta, cf.line, cf.end_line)
    return replace(
        cf,
        file=cf.file if file is None else file,
        line=move(cf.line),
        end_line=move(cf.end_line),
        loops=[replace(loop, line=move(loop.line)) if isinstance(loop, LoopSummary) else loop
               for loop in cf.loops],
        line_counts={line + delta: counts for line, counts in cf.line_counts.items()},
        sites=[replace(site, line=move(site.line), message=move_text(site.message))
               if isinstance(site, FindingSite) else site for site in cf.sites],
        assumptions=[move_text(text) for text in cf.assumptions],
        call_sites=tuple(replace(site, line=move(site.line)) for site in cf.call_sites),
        field_stores=tuple(replace(store, line=move(store.line)) for store in cf.field_stores),
    )


_LINE_MENTION = re.compile(r"\bline (\d+)\b")


def shift_line_mentions(text: str, delta: int, first: int | None, last: int | None) -> str:
    """`text` with each "line N" inside [first, last] (the function's own lines) moved by
    `delta`. Lines elsewhere (the launch site of a GPU kernel) stay."""
    if delta == 0 or first is None or last is None:
        return text

    def move(m: re.Match) -> str:
        line = int(m.group(1))
        return f"line {line + delta}" if first <= line <= last else m.group(0)
    return _LINE_MENTION.sub(move, text)
