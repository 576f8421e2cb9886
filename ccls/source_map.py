"""Function ranges in source text, from tree-sitter: where each function starts and ends, where
its name is, and where an inlay hint goes. Pure: bytes in, ranges out (no files, no compilers).

Positions are tree-sitter's: 0-based rows and UTF-8 byte columns; line numbers in
`SourceFunction.start_line/end_line` are 1-based and inclusive, like compilers report them.
"""
from __future__ import annotations

import hashlib
import importlib
import re
import threading
from dataclasses import dataclass

import tree_sitter

from ccls.frontends import language_named

@dataclass(frozen=True)
class SourceFunction:
    name: str  # as written, without scope: "grow", "operator<", "~Widget", "inner"
    qualified_name: str  # "ns::Widget::grow"; Python: co_qualname style "Outer.method.<locals>.inner"
    start_line: int  # 1-based, inclusive; includes a `template <...>` header or Python decorators
    end_line: int  # 1-based, inclusive
    name_start: tuple[int, int]  # (0-based line, UTF-8 byte column) of the name
    signature_end: tuple[int, int]  # just after the ')' closing the parameter list
    body_start_byte: int
    body_end_byte: int
    start_byte: int
    end_byte: int
    text_hash: str  # sha256 hex of text[start_byte:end_byte]: identity for caching


@dataclass(frozen=True)
class LoopBound:
    """A loop statement of C/C++/CUDA source, and its bound as the source names it: `n` in
    `for (i = 0; i < n; i++)`, `v.size()` in `for (auto x : v)` (None when the condition is not a
    comparison with a name). A call over a container's range, `std::accumulate(v.begin(), v.end(),
    0)`, counts as a loop one deeper than the call, over `v.size()`: the algorithm's inlined loop."""

    start_line: int  # 1-based, inclusive
    end_line: int
    depth: int  # loop statements around it within its function, itself included (1 = outermost)
    bound: str | None


# --- parsers -------------------------------------------------------------------------------------

_languages: dict[str, tree_sitter.Language] = {}
_languages_lock = threading.Lock()
# tree-sitter Parsers keep per-parse state, so each thread (the server parses from workers) has its own.
_parsers = threading.local()


def _grammar(language: str) -> tree_sitter.Language:
    """The tree-sitter grammar its `ccls.frontends.Language` record names (ValueError: none)."""
    with _languages_lock:
        lang = _languages.get(language)
        if lang is None:
            module = language_named(language).grammar
            if module is None:
                raise ValueError(f"no tree-sitter grammar for language {language!r}")
            lang = _languages[language] = tree_sitter.Language(importlib.import_module(module).language())
        return lang


def _parser(language: str) -> tree_sitter.Parser:
    cache = getattr(_parsers, "by_language", None)
    if cache is None:
        cache = _parsers.by_language = {}
    parser = cache.get(language)
    if parser is None:
        parser = cache[language] = tree_sitter.Parser(_grammar(language))
    return parser


def parse(text: bytes, language: str, old_tree: tree_sitter.Tree | None = None) -> tree_sitter.Tree:
    """Parse `text`; pass the previous tree, already `.edit()`ed, to reparse incrementally."""
    parser = _parser(language)
    return parser.parse(text, old_tree) if old_tree is not None else parser.parse(text)


def functions_in(tree: tree_sitter.Tree, text: bytes, language: str) -> list[SourceFunction]:
    """Every function definition with a body, in source order."""
    functions = _FUNCTION_MAPS.get(language_named(language).grammar or "")
    if functions is None:
        raise ValueError(f"no function map for language {language!r}")
    found = functions(tree.root_node, text)
    return sorted(found, key=lambda f: f.start_byte)


def _make(name: str, qualified: str, outer: tree_sitter.Node, name_node: tree_sitter.Node,
          params: tree_sitter.Node, body: tree_sitter.Node, text: bytes) -> SourceFunction:
    end_row, end_col = outer.end_point
    # A node ending at column 0 ends with a newline; its last line is the one before.
    end_line = end_row if end_col == 0 and end_row > outer.start_point[0] else end_row + 1
    return SourceFunction(
        name=name, qualified_name=qualified,
        start_line=outer.start_point[0] + 1, end_line=end_line,
        name_start=(name_node.start_point[0], name_node.start_point[1]),
        signature_end=(params.end_point[0], params.end_point[1]),
        body_start_byte=body.start_byte, body_end_byte=body.end_byte,
        start_byte=outer.start_byte, end_byte=outer.end_byte,
        text_hash=hashlib.sha256(text[outer.start_byte:outer.end_byte]).hexdigest(),
    )


def _text(node: tree_sitter.Node) -> str:
    return (node.text or b"").decode("utf-8", errors="replace")


# --- C, C++, CUDA --------------------------------------------------------------------------------

_WRAPPERS = ("pointer_declarator", "reference_declarator", "attributed_declarator", "parenthesized_declarator")
_CLASS_TYPES = ("class_specifier", "struct_specifier", "union_specifier")


def _tidy(text: str) -> str:
    """Source spelling to demangler spelling: `operator ()` -> `operator()`, `~ S` -> `~S`."""
    text = re.sub(r"\s+", " ", text.strip())
    return re.sub(r"\s*([^\w\s])\s*", r"\1", text)


def _unwrap(node: tree_sitter.Node | None) -> tree_sitter.Node | None:
    while node is not None and node.type in _WRAPPERS:
        inner = node.child_by_field_name("declarator")
        node = inner if inner is not None else next((c for c in node.named_children), None)
    return node


def _find_function_declarator(node: tree_sitter.Node | None) -> tree_sitter.Node | None:
    """The declarator that names this function. In `int (*get(void))(int)` the outer
    function_declarator belongs to the returned pointer type; the innermost one is get's own."""
    node = _unwrap(node)
    if node is None:
        return None
    if node.type == "operator_cast":
        return node
    if node.type == "function_declarator":
        inner = _find_function_declarator(node.child_by_field_name("declarator"))
        return inner if inner is not None else node
    return None


def _name_parts(node: tree_sitter.Node) -> tuple[list[str], tree_sitter.Node]:
    """Scope components of a declarator name (template arguments dropped) and the node of its last one."""
    if node.type == "qualified_identifier":
        scope = node.child_by_field_name("scope")
        name = node.child_by_field_name("name")
        head = [] if scope is None else _scope_parts(scope)
        if name is None:
            return head + [_tidy(_text(node))], node
        rest, last = _name_parts(name)
        return head + rest, last
    if node.type in ("template_function", "template_method", "template_type"):
        name = node.child_by_field_name("name")
        if name is not None:
            return [_tidy(_text(name))], name
    if node.type == "operator_cast":
        params = node.child_by_field_name("declarator")
        end = params.start_byte if params is not None else node.end_byte
        spelled = (node.text or b"")[: end - node.start_byte].decode("utf-8", errors="replace")
        return [_tidy(spelled)], node
    return [_tidy(_text(node))], node


def _scope_parts(node: tree_sitter.Node) -> list[str]:
    if node.type in ("template_type", "template_function"):
        name = node.child_by_field_name("name")
        return [_tidy(_text(name if name is not None else node))]
    if node.type in ("qualified_identifier", "nested_namespace_specifier"):
        return [p for p in (_tidy(s) for s in _text(node).split("::")) if p]
    return [_tidy(_text(node))]


def _c_family_functions(root: tree_sitter.Node, text: bytes) -> list[SourceFunction]:
    found: list[SourceFunction] = []
    # Explicit stack, not recursion: a pathological file nests deeper than Python's recursion limit.
    stack: list[tuple[tree_sitter.Node, tuple[str, ...]]] = [(root, ())]
    while stack:
        node, scope = stack.pop()
        kind = node.type
        if kind == "function_definition":
            fn = _c_function(node, scope, text)
            if fn is not None:
                found.append(fn)
            continue  # function bodies hold no other definitions worth costing separately
        if kind == "compound_statement":
            continue
        if kind == "namespace_definition":
            name = node.child_by_field_name("name")
            scope = scope + (tuple(_scope_parts(name)) if name is not None else ("(anonymous namespace)",))
        elif kind in _CLASS_TYPES and node.child_by_field_name("body") is not None:
            name = node.child_by_field_name("name")
            scope = scope + (tuple(_scope_parts(name)) if name is not None else ("(anonymous)",))
        stack.extend((child, scope) for child in reversed(node.children))
    return found


def _c_function(node: tree_sitter.Node, scope: tuple[str, ...], text: bytes) -> SourceFunction | None:
    body = node.child_by_field_name("body")
    declarator = _find_function_declarator(node.child_by_field_name("declarator"))
    if body is None or declarator is None:  # `= default`, `= delete`, or a parse too broken to use
        return None
    if declarator.type == "operator_cast":
        name_node = declarator
        inner = declarator.child_by_field_name("declarator")
        params = inner.child_by_field_name("parameters") if inner is not None else None
    else:
        name_node = declarator.child_by_field_name("declarator")
        params = declarator.child_by_field_name("parameters")
    if name_node is None or params is None:
        return None
    parts, last = _name_parts(_unwrap(name_node) or name_node)
    parts = [p for p in parts if p]
    if not parts:
        return None
    outer = node.parent if node.parent is not None and node.parent.type == "template_declaration" else node
    return _make(parts[-1], "::".join(scope + tuple(parts)), outer, last, params, body, text)


_LOOP_STATEMENTS = ("for_statement", "while_statement", "do_statement", "for_range_loop")
_COMPARISONS = ("<", "<=", "!=", ">", ">=")
# Bounds that name one value: `n`, `this->n`, `m.rows`, `*count`, `Config::size`.
_NAMED = ("identifier", "field_expression", "pointer_expression", "qualified_identifier")


def loop_bounds(tree: tree_sitter.Tree, language: str) -> list[LoopBound]:
    """Every loop statement of a C-family parse, with the bound its header names, and every call
    over a container's begin and end (source order). Queries find them (a Python walk over every
    node costs ~50 ms on a 5,000-line file)."""
    if _FUNCTION_MAPS.get(language_named(language).grammar or "") is not _c_family_functions:
        return []
    found = []
    captures = _loop_query(language).captures(tree.root_node)
    for node in captures.get("loop", []):
        bound = _for_bound(node) if node.type == "for_statement" else \
            _range_bound(node) if node.type == "for_range_loop" else None
        found.append((node.start_byte, _loop_bound(node, _loop_depth(node), bound)))
    for node in captures.get("range_call", []):
        if (bound := _range_call_bound(node)) is not None:
            found.append((node.start_byte, _loop_bound(node, _loop_depth(node) + 1, bound)))
    return [loop for _, loop in sorted(found, key=lambda item: item[0])]


def _loop_depth(node: tree_sitter.Node) -> int:
    """Loop statements around `node` within its function, itself included."""
    depth, parent = int(node.type in _LOOP_STATEMENTS), node.parent
    while parent is not None and parent.type not in ("function_definition", "lambda_expression"):
        depth += parent.type in _LOOP_STATEMENTS
        parent = parent.parent
    return depth


def _loop_bound(node: tree_sitter.Node, depth: int, bound: str | None) -> LoopBound:
    end_row, end_col = node.end_point
    return LoopBound(node.start_point[0] + 1, end_row + 1 if end_col else end_row, depth, bound)


_loop_queries: dict[str, tree_sitter.Query] = {}
# A call whose first two arguments are a range's ends: `f(v.begin(), v.end(), …)`, `std::begin(v)`.
_RANGE_CALL = ('(call_expression arguments: (argument_list . (call_expression) @first . (call_expression) @second)'
               ' (#match? @first "begin *[(]") (#match? @second "end *[(]")) @range_call')


def _loop_query(language: str) -> tree_sitter.QueryCursor:
    """A fresh cursor (cursors keep state; the server parses on several threads) over the loop
    statements the language's grammar has (C has no range-for) and, in C++, range calls."""
    query = _loop_queries.get(language)
    if query is None:
        grammar = _grammar(language)
        kinds = [k for k in _LOOP_STATEMENTS if grammar.id_for_node_kind(k, True)]
        ranges = "for_range_loop" in kinds  # a C++ grammar: calls over a range's ends too
        patterns = [f"({k}) @loop" for k in kinds] + ([_RANGE_CALL] if ranges else [])
        query = _loop_queries[language] = tree_sitter.Query(grammar, " ".join(patterns))
    return tree_sitter.QueryCursor(query)


def _range_call_bound(call: tree_sitter.Node) -> str | None:
    """`X.size()` for `f(X.begin(), X.end(), …)`, `f(X.cbegin(), X.cend(), …)` or
    `f(std::begin(X), std::end(X), …)` over one named container X."""
    arguments = call.child_by_field_name("arguments")
    first, second = (arguments.named_children[:2] if arguments is not None else [None, None])
    ends = [_range_end(first, ("begin", "cbegin")), _range_end(second, ("end", "cend"))]
    if None in ends or ends[0] != ends[1]:
        return None
    return ends[0] + ".size()"


def _range_end(node: tree_sitter.Node | None, names: tuple[str, ...]) -> str | None:
    """The container X of `X.begin()` or `std::begin(X)` (names: the accepted method names)."""
    if node is None or node.type != "call_expression":
        return None
    function, arguments = node.child_by_field_name("function"), node.child_by_field_name("arguments")
    if function is None or arguments is None:
        return None
    if function.type == "field_expression" and arguments.named_child_count == 0:
        field, operator = function.child_by_field_name("field"), function.child(1)
        if field is None or _text(field) not in names or operator is None or _text(operator) != ".":
            return None  # `p->begin()`: not a named container's own range
        container = function.child_by_field_name("argument")
    elif _text(function) in tuple(f"std::{n}" for n in names) and arguments.named_child_count == 1:
        container = arguments.named_children[0]
    else:
        return None
    if container is None or container.type not in ("identifier", "field_expression", "qualified_identifier"):
        return None
    return _tidy(_text(container))


def _for_bound(loop: tree_sitter.Node) -> str | None:
    """The side of `i < n` that is not the loop's variable (the one its update changes)."""
    condition, update = loop.child_by_field_name("condition"), loop.child_by_field_name("update")
    if condition is None or condition.type != "binary_expression" or update is None:
        return None
    operator = condition.child_by_field_name("operator")
    if operator is None or operator.type not in _COMPARISONS:
        return None
    changed = {_text(n) for n in _descendants(update) if n.type == "identifier"}
    sides = [condition.child_by_field_name("left"), condition.child_by_field_name("right")]
    bounds = [side for side in sides if side is not None and _text(side) not in changed
              and (side.type in _NAMED or _is_size_call(side))]
    variables = [side for side in sides if side is not None and _text(side) in changed]
    return _tidy(_text(bounds[0])) if len(bounds) == 1 and len(variables) == 1 else None


def _range_bound(loop: tree_sitter.Node) -> str | None:
    """`for (auto x : v)` runs `v.size()` times (a named container, not a temporary)."""
    container = loop.child_by_field_name("right")
    if container is None or container.type not in ("identifier", "field_expression", "qualified_identifier"):
        return None
    return _tidy(_text(container)) + ".size()"


def _is_size_call(node: tree_sitter.Node) -> bool:
    """`v.size()`, `s.length()`: a container's size, asked without arguments."""
    function, arguments = node.child_by_field_name("function"), node.child_by_field_name("arguments")
    return (node.type == "call_expression" and function is not None and function.type == "field_expression"
            and arguments is not None and arguments.named_child_count == 0)


def _descendants(node: tree_sitter.Node) -> list[tree_sitter.Node]:
    out, stack = [], [node]
    while stack:
        current = stack.pop()
        out.append(current)
        stack.extend(current.children)
    return out


# --- Python --------------------------------------------------------------------------------------

def _python_functions(root: tree_sitter.Node, text: bytes) -> list[SourceFunction]:
    found: list[SourceFunction] = []
    # (node, qualname prefix, the decorated_definition wrapping node if any)
    stack: list[tuple[tree_sitter.Node, str, tree_sitter.Node | None]] = [(root, "", None)]
    while stack:
        node, prefix, decorated = stack.pop()
        kind = node.type
        if kind == "decorated_definition":
            definition = node.child_by_field_name("definition")
            if definition is not None:
                stack.append((definition, prefix, node))
            continue
        name = node.child_by_field_name("name") if kind in ("function_definition", "class_definition") else None
        body = node.child_by_field_name("body") if name is not None else None
        if kind == "function_definition" and name is not None and body is not None:
            params = node.child_by_field_name("parameters")
            qualname = prefix + _text(name)
            if params is not None:
                # co_firstlineno of a decorated function is its first decorator's line.
                found.append(_make(_text(name), qualname, decorated or node, name, params, body, text))
            stack.append((body, qualname + ".<locals>.", None))
            continue
        if kind == "class_definition" and name is not None and body is not None:
            stack.append((body, prefix + _text(name) + ".", None))
            continue
        stack.extend((child, prefix, None) for child in reversed(node.children))
    return found


# The function map that reads a grammar's parse, by the grammar a language record names.
_FUNCTION_MAPS = {"tree_sitter_c": _c_family_functions, "tree_sitter_cpp": _c_family_functions,
                  "tree_sitter_cuda": _c_family_functions, "tree_sitter_python": _python_functions}
