"""PTX text → module structure: comments out, a token stream (statements, labels, braces, line
directives), then the target, the `.file` table and each function's header and body tokens.
Knows nothing about what instructions mean."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass


_MAX_STATEMENT_CHARS = 200_000  # a runaway "statement" is malformed input, not PTX


def _strip_comments(text: str) -> str:
    """Blank out // and /* */ comments (keeping newlines, so line numbers survive); strings kept."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = text.find('"', i + 1)
            nl = text.find("\n", i + 1)
            if j < 0 or (0 <= nl < j):  # unterminated string: stop at the line end
                j = (nl - 1) if nl >= 0 else n - 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        else:
            j = i
            while j < n and text[j] not in '"/':
                j += 1
            if j == i:  # a lone '/'
                j += 1
            out.append(text[i:j])
            i = j
    return "".join(out)


@dataclass(frozen=True)
class Token:
    kind: str  # "stmt" | "header" | "label" | "open" | "close" | "line" | "bad"
    text: str
    line: int  # 1-based PTX line where the token starts


_LINE_DIRECTIVE = re.compile(r"\.(loc|file|version|target|address_size)\b")
_SECTION = re.compile(r"\.section\b")
_LABEL = re.compile(r"([A-Za-z_$%][\w$]*)[ \t]*:(?!:)")
_HEADER = re.compile(r"(?:\.(?:visible|extern|weak|common)\s+)*\.(?:entry|func)\b")


def tokenize(text: str) -> list[Token]:
    text = _strip_comments(text)
    tokens: list[Token] = []
    pos, n, line = 0, len(text), 1
    while pos < n:
        c = text[pos]
        if c == "\n":
            line += 1
            pos += 1
        elif c.isspace() or c == ";":
            pos += 1
        elif c in "{}":
            tokens.append(Token("open" if c == "{" else "close", c, line))
            pos += 1
        elif _LINE_DIRECTIVE.match(text, pos):
            end = text.find("\n", pos)
            end = n if end < 0 else end
            tokens.append(Token("line", text[pos:end].strip(), line))
            pos = end
        elif _SECTION.match(text, pos):
            pos, line = _skip_section(text, pos, line)
        elif (m := _LABEL.match(text, pos)) is not None:
            tokens.append(Token("label", m.group(1), line))
            pos = m.end()
        else:
            start_line = line
            pos, line, token = _statement(text, pos, line)
            tokens.append(Token(token[0], token[1], start_line))
    return tokens


def _skip_section(text: str, pos: int, line: int) -> tuple[int, int]:
    """Skip `.section name { ... }` (debug sections), or just the directive's line."""
    n = len(text)
    end = text.find("\n", pos)
    end = n if end < 0 else end
    brace = re.compile(r"\.section[^\n{]*\s*\{").match(text, pos)
    if brace is None:  # no block follows: the directive is one line
        return end, line
    j = brace.end() - 1
    depth = 0
    while j < n:
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                break
        j += 1
    line += text.count("\n", pos, j + 1)
    return min(j + 1, n), line


def _statement(text: str, pos: int, line: int) -> tuple[int, int, tuple[str, str]]:
    """Read one statement up to ';' (or a function header up to its body's '{')."""
    n = len(text)
    start = pos
    header = _HEADER.match(text, pos) is not None
    depth = 0  # braces and parentheses inside the statement: `{%r1, %r2}`, `= {1, 2}`, `(param0)`
    while pos < n:
        c = text[pos]
        if c == "\n":
            line += 1
        elif c == ";" and depth <= 0:
            return pos + 1, line, ("header" if header else "stmt", text[start:pos].strip())
        elif c in "({[":
            if c == "{" and header and depth == 0:
                return pos + 1, line, ("header", text[start:pos].strip() + " {")
            depth += 1
        elif c in ")]}":
            if depth == 0:  # closes an enclosing block: this statement lacks its ';'
                if pos == start:  # a stray ')' or ']': consume it
                    return pos + 1, line, ("bad", c)
                return pos, line, ("bad", text[start:pos].strip())
            depth -= 1
        pos += 1
        if pos - start > _MAX_STATEMENT_CHARS:
            break
    return pos, line, ("bad", text[start:pos].strip()[:200])


# ------------------------------------------------------------------------------------------------
# Module structure: target, .file table, function headers and bodies.
# ------------------------------------------------------------------------------------------------

@dataclass
class RawFunction:
    kind: str  # "entry" | "func"
    name: str
    params: list[str]  # PTX parameter names, in order
    header_line: int
    end_line: int
    body: list[Token]


_PARAM_DECL = re.compile(r"\.(?:param|reg)\b[^,()]*?([A-Za-z_$%][\w$]*)\s*(?:\[[^\]]*\])?\s*$")


def split_top(text: str, sep: str = ",") -> list[str]:
    """Split at `sep` outside (), [], {}."""
    parts, depth, cur = [], 0, []
    for c in text:
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        if c == sep and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
    tail = "".join(cur).strip()
    if tail or parts:
        parts.append(tail)
    return parts


def _parse_header(text: str) -> tuple[str, str, list[str]] | None:
    """`.visible .entry name(.param .u32 a, ...)` → ("entry", name, [param names])."""
    m = re.search(r"\.(entry|func)\b", text)
    if m is None:
        return None
    rest = text[m.end():].strip()
    if rest.startswith("("):  # .func (.param .b32 retval) name(...)
        close = _matching_paren(rest, 0)
        if close < 0:
            return None
        rest = rest[close + 1:].strip()
    nm = re.match(r"([A-Za-z_$%][\w$]*)", rest)
    if nm is None:
        return None
    name = nm.group(1)
    rest = rest[nm.end():].strip()
    params: list[str] = []
    if rest.startswith("("):
        close = _matching_paren(rest, 0)
        if close < 0:
            return None
        for decl in split_top(rest[1:close]):
            if not decl:
                continue
            pm = _PARAM_DECL.search(decl)
            params.append(pm.group(1) if pm else decl.split()[-1])
    return m.group(1), name, params


def _matching_paren(text: str, start: int) -> int:
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return i
    return -1


@dataclass
class _Module:
    target: str | None
    files: dict[int, str]
    functions: list[RawFunction]
    errors: list[tuple[int, str]]  # (PTX line, message) outside any function


def parse_module(tokens: list[Token]) -> _Module:
    module = _Module(None, {}, [], [])
    i, n = 0, len(tokens)
    while i < n:
        tok = tokens[i]
        if tok.kind == "line":
            _module_directive(tok, module)
            i += 1
        elif tok.kind == "header" and tok.text.endswith("{"):
            parsed = _parse_header(tok.text[:-1])
            body, j, closed = _collect_body(tokens, i + 1)
            end_line = tokens[j - 1].line if closed and j > 0 else (tokens[-1].line if tokens else tok.line)
            if parsed is None:
                module.errors.append((tok.line, f"cannot read function header: {tok.text[:120]}"))
            elif not closed:
                module.errors.append((tok.line, f"function {parsed[1]}: body has no closing '}}'"))
            else:
                module.functions.append(RawFunction(parsed[0], parsed[1], parsed[2], tok.line, end_line, body))
            i = j
        elif tok.kind in ("stmt", "header"):
            i += 1  # declarations: .global/.const/.shared variables, .extern .func prototypes
        elif tok.kind == "bad":
            module.errors.append((tok.line, f"statement without ';': {tok.text[:120]}"))
            i += 1
        elif tok.kind in ("open", "close"):
            module.errors.append((tok.line, f"unexpected '{tok.text}' outside a function"))
            i += 1
        else:
            i += 1  # a stray label at module level carries no code
    for tok in tokens:  # nvcc puts .file directives after the code
        if tok.kind == "line" and tok.text.startswith(".file"):
            _module_directive(tok, module)
    return module


def _module_directive(tok: Token, module: _Module) -> None:
    if tok.text.startswith(".target"):
        parts = tok.text[len(".target"):].replace(",", " ").split()
        if parts:
            module.target = parts[0]
    elif tok.text.startswith(".file"):
        m = re.match(r'\.file\s+(\d+)\s+"([^"]*)"(?:\s*,?\s*"([^"]*)")?', tok.text)
        if m:
            path = os.path.join(m.group(2), m.group(3)) if m.group(3) else m.group(2)
            module.files[int(m.group(1))] = path


def _collect_body(tokens: list[Token], start: int) -> tuple[list[Token], int, bool]:
    """Tokens up to the '}' matching an already consumed '{' → (body, next index, closed?)."""
    depth = 1
    j = start
    while j < len(tokens):
        tok = tokens[j]
        if tok.kind == "open":
            depth += 1
        elif tok.kind == "close":
            depth -= 1
            if depth == 0:
                return tokens[start:j], j + 1, True
        elif tok.kind == "header" and tok.text.endswith("{") and depth == 1:
            return tokens[start:j], j, False  # the next function starts: this one was not closed
        j += 1
    return tokens[start:], j, False
