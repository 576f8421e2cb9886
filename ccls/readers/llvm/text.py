"""The text reader of an LLVM module: its functions, blocks and instructions (name, opcode,
result type, operands, text, `!dbg` id) in one pass over its lines, with no call into LLVM.

It reads the text LLVM itself prints (`str()` of the module llvmlite parsed and validated):
one instruction a line (a switch's cases and a landingpad's clauses on the lines after it),
every operand with its type where the instruction's operands differ in type, and the names
unescaped as LLVM keeps them (`%"a b"` is `a b`; a numbered value, `%0`, has none).
Operands come in LLVM's order (a conditional branch: condition, false, true; a call: its
arguments, then its callee), as llvmlite's `operands` gives them.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

# An LLVM value or block name as printed: quoted (any characters) or bare.
VALUE_NAME = r'(?:"[^"]*"|[-\w.$]+)'
# The copy of a static function the front end leaves to the optimiser (`frontends.as_built`);
# the optimiser may rename it further (`.constprop.0`).
TWIN_SUFFIX = ".ccls.as.built"
_RESULT = re.compile(rf"%({VALUE_NAME}) = ")
_DBG = re.compile(r"!dbg !(\d+)")
_LABEL = re.compile(rf"^({VALUE_NAME}):(?:\s*; preds = (.*))?$")
_DEFINE = re.compile(rf"^define [^\n]*?@({VALUE_NAME})\(")
_GLOBAL_HEAD = re.compile(rf"^@({VALUE_NAME}) = (.*)$")
_HEX_ESCAPE = re.compile(r"\\([0-9A-Fa-f]{2})")
_DELIMITERS = re.compile(r'"[^"]*"|[()\[\]{}<>,]')
_NAME_AT = re.compile(VALUE_NAME)
_LAST_NAME = re.compile(rf"%({VALUE_NAME})$")
_ORDERING = re.compile(r'(?: (?:syncscope\("[^"]*"\)|unordered|monotonic|acquire|release|acq_rel|seq_cst))+$')
_VECTOR_TYPE = re.compile(r"^<(?:vscale x )?(\d+) x (.+)>$")

_LINKAGES = {"private", "internal", "available_externally", "linkonce", "weak", "common", "appending",
             "extern_weak", "linkonce_odr", "weak_odr", "external"}
# Words that may stand between an opcode and its first type: flags, predicates, orderings.
_PREFIX_WORDS = {"nuw", "nsw", "exact", "disjoint", "nneg", "samesign", "fast", "nnan", "ninf", "nsz", "arcp",
                 "contract", "afn", "reassoc", "inbounds", "nusw", "inrange", "volatile", "atomic", "weak", "inalloca",
                 "swifterror", "eq", "ne", "ugt", "uge", "ult", "ule", "sgt", "sge", "slt", "sle", "oeq", "ogt", "oge",
                 "olt", "ole", "one", "ord", "ueq", "une", "uno", "true", "false", "xchg", "add", "sub", "and", "nand",
                 "or", "xor", "max", "min", "umax", "umin", "fadd", "fsub", "fmax", "fmin", "fmaximum", "fminimum",
                 "uinc_wrap", "udec_wrap", "usub_cond", "usub_sat"}
# Attributes that may stand between a call argument's type and its value (with or without `(…)`).
_PARAM_ATTRIBUTES = {"zeroext", "signext", "noext", "inreg", "byval", "byref", "preallocated", "inalloca", "sret",
                     "elementtype", "align", "noalias", "nocapture", "captures", "nofree", "nest", "returned",
                     "nonnull", "dereferenceable", "dereferenceable_or_null", "swiftself", "swiftasync", "swifterror",
                     "immarg", "noundef", "nofpclass", "alignstack", "allocalign", "allocptr", "readnone", "readonly",
                     "writeonly", "writable", "dead_on_unwind", "dead_on_return", "range", "initializes"}
_CASTS = {"trunc", "zext", "sext", "fptrunc", "fpext", "fptoui", "fptosi", "uitofp", "sitofp", "ptrtoint", "inttoptr",
          "bitcast", "addrspacecast", "ptrtoaddr"}
# Results whose type is not the first type of the text: read from its operands.
_TYPE_FROM_PARTS = {"va_arg", "select", "getelementptr", "extractelement", "shufflevector", "atomicrmw", "cmpxchg",
                    "extractvalue"}
_SAME_TYPE = {"add", "sub", "mul", "udiv", "sdiv", "urem", "srem", "shl", "lshr", "ashr", "and", "or", "xor", "fadd",
              "fsub", "fmul", "fdiv", "frem", "fneg", "freeze", "icmp", "fcmp"}  # one type before all operands


@dataclass(frozen=True, slots=True)
class Operand:
    """One operand of an instruction, as LLVM's `getOperand` gives it."""

    name: str  # the value's name ("" for a constant or a numbered value)
    type_text: str  # "i32", "ptr", "label", "metadata"…
    text: str  # a constant's type and spelling ("i32 7"); an instruction's result: that instruction's text
    is_global_variable: bool = False

    def __str__(self) -> str:  # as llvmlite prints a value (code written against it says str(op))
        return self.text


class IRInstruction:
    """One instruction: name ("" if none), opcode, result type, text (without indentation), its
    `!dbg` id; its operands are read from the text when first asked for."""

    __slots__ = ("name", "opcode", "text", "dbg", "_type_text", "_operands", "_function")

    def __init__(self, name: str, opcode: str, text: str, dbg: str | None, function: "IRFunction"):
        self.name, self.opcode, self.text, self.dbg = name, opcode, text, dbg
        self._type_text: str | None = None
        self._operands: list[Operand] | None = None
        self._function = function

    @property
    def type_text(self) -> str:
        if self._type_text is None:
            self._type_text = _spelled_type(_result_type(self), self._function.module)
        return self._type_text

    @property
    def operands(self) -> list[Operand]:
        if self._operands is None:
            self._operands = _operands(self)
        return self._operands

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"IRInstruction({self.text!r})"


@dataclass
class IRFunction:
    """One function of the module (a declaration has no blocks)."""

    name: str
    linkage: str  # "external", "internal", "linkonce_odr"…
    is_declaration: bool
    arguments: list[tuple[str, str]]  # (name, type)
    blocks: list[tuple[str, list[IRInstruction]]] = field(default_factory=list)
    predecessors: dict[str, list[str]] = field(default_factory=dict)  # from LLVM's `; preds =` comments
    text: str = ""  # as LLVM prints it, with the `; Function Attrs:` line before it
    module: "IRModule | None" = None
    _definitions: dict[str, str] | None = field(default=None, repr=False)  # `%x` → its instruction's text

    def definition_text(self, spelled: str) -> str | None:
        """The text of the instruction that defines the local value spelled `%…` (numbered ones too):
        llvmlite's text of an operand that an instruction computes."""
        if self._definitions is None:
            self._definitions = {"%" + m.group(1): instr.text for _, instrs in self.blocks for instr in instrs
                                 if (m := _RESULT.match(instr.text))}
        return self._definitions.get(spelled)


@dataclass
class IRModule:
    """What the reader needs of a module: its functions, and what their operands refer to."""

    functions: list[IRFunction]
    global_variables: set[str]  # names of the module's global variables (not functions or aliases)
    numbered_globals: dict[str, str]  # `@0` → its definition's text (a nameless global's text, as LLVM's)
    named_types: dict[str, str]  # `%struct.S` → its body `{ i32, ptr }`


# The copies LLVM's interprocedural passes make of a function for some of its callers: a
# specialisation for a constant argument, a promoted or split argument list.
_CLONE_SUFFIX = re.compile(r"\.(?:specialized|constprop|isra|argprom)\.\d+")


def original_name(name: str) -> str:
    """The function a name stands for: itself, or the function an as-built twin or an LLVM
    copy for some callers (`WikiSort.specialized.1`) was made from."""
    at = name.find(TWIN_SUFFIX)
    name = name if at < 0 else name[:at]
    clone = _CLONE_SUFFIX.search(name)
    return name if clone is None else name[:clone.start()]


def read_module(text: str) -> IRModule:
    """Every function, global and named type of the module text, in one pass over its lines."""
    functions: list[IRFunction] = []
    global_variables: set[str] = set()
    numbered_globals: dict[str, str] = {}
    named_types: dict[str, str] = {}
    module = IRModule(functions, global_variables, numbered_globals, named_types)
    lines = text.split("\n")
    count = len(lines)
    i = 0
    while i < count:
        line = lines[i]
        if line.startswith("define "):
            i = _read_function(lines, i, module)
            continue
        if line.startswith("declare "):
            head = _function_head(line, module)
            if head is not None:
                functions.append(IRFunction(head[0], head[1], True, head[2], module=module))
        elif line.startswith("@"):
            if m := _GLOBAL_HEAD.match(line):
                name = m.group(1)
                if _is_variable(m.group(2)) and local_name(name):
                    global_variables.add(local_name(name))
                if name.isdigit():
                    numbered_globals["@" + name] = line
        elif line.startswith("%") and " = type " in line:
            spelled, _, body = line.partition(" = type ")
            named_types[spelled] = body
        i += 1
    return module


def _is_variable(rest: str) -> bool:
    for word in rest.split():
        if word in ("global", "constant"):
            return True
        if word in ("alias", "ifunc"):
            return False
    return False


def _function_head(line: str, module: IRModule) -> tuple[str, str, list[tuple[str, str]]] | None:
    """(name, linkage, arguments) of a `define`/`declare` line."""
    m = re.search(rf"@({VALUE_NAME})\(", line)
    if m is None:
        return None
    words = line[:m.start()].split()[1:]
    linkage = next((w for w in words if w in _LINKAGES), "external")
    close = _matching(line, m.end() - 1)
    arguments = []
    for part in _split_top(line[m.end():close]):
        if part == "...":
            continue
        type_text, value = _split_type(part)
        spelled = _LAST_NAME.search(value)
        arguments.append((local_name(spelled.group(1)) if spelled else "", _spelled_type(type_text, module)))
    return local_name(m.group(1)), linkage, arguments


def _read_function(lines: list[str], start: int, module: IRModule) -> int:
    """Read the function whose `define` line is lines[start]; the index after its `}`."""
    head = _function_head(lines[start], module)
    name, linkage, arguments = head if head is not None else ("", "external", [])
    fn = IRFunction(name, linkage, False, arguments, module=module)
    module.functions.append(fn)
    first = start - 1 if start > 0 and lines[start - 1].startswith("; Function Attrs:") else start
    block: list[IRInstruction] | None = None
    i = start + 1
    count = len(lines)
    while i < count:
        line = lines[i]
        if line.startswith("}"):
            break
        if not line:
            i += 1
            continue
        if not line.startswith(" "):
            if m := _LABEL.match(line):
                block_name = local_name(m.group(1))
                block = []
                fn.blocks.append((block_name, block))
                if m.group(2) is not None:
                    fn.predecessors[block_name] = [local_name(p.strip().lstrip("%")) for p in m.group(2).split(",")]
            i += 1
            continue
        stripped = line.strip()
        if stripped.startswith((";", "#dbg_")):  # a comment, a debug record: no instruction
            i += 1
            continue
        # A switch's cases and a landingpad's clauses continue on deeper-indented lines.
        while i + 1 < count and (lines[i + 1].startswith("   ") or lines[i + 1].lstrip().startswith("]")) \
                and not lines[i + 1].lstrip().startswith((";", "#dbg_")):
            i += 1
            stripped += "\n" + lines[i]
        if block is None:  # an entry block without a name prints no label
            block = []
            fn.blocks.append(("", block))
        block.append(_instruction(stripped, fn))
        i += 1
    fn.text = "\n".join(lines[first:i + 1]) + "\n"
    return i + 1


def _instruction(text: str, fn: IRFunction) -> IRInstruction:
    name = ""
    rest = text
    if text[0] == "%":
        m = _RESULT.match(text)
        if m is not None:
            name = local_name(m.group(1))
            rest = text[m.end():]
    opcode = rest.split(" ", 1)[0].rstrip(",")  # `unreachable, !dbg !7`
    if opcode in ("tail", "musttail", "notail"):
        opcode = "call"
    dbg = _DBG.search(text)
    return IRInstruction(name, opcode, text, dbg.group(1) if dbg else None, fn)


def local_name(spelled: str) -> str:
    """The name LLVM keeps for a spelled name (after its `%`/`@`): unquoted, `\\XX` unescaped;
    "" for a numbered value."""
    if spelled.startswith('"'):
        inner = spelled[1:-1]
        return _HEX_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), inner) if "\\" in inner else inner
    return "" if spelled.isdigit() else spelled


# --- operands and types -------------------------------------------------------------------------

def _matching(text: str, open_at: int) -> int:
    """Index of the bracket closing the one at `open_at` (quotes skipped); len(text) if none."""
    depth = 0
    for m in _DELIMITERS.finditer(text, open_at):
        token = m.group(0)
        if token in "([{<":
            depth += 1
        elif token in ")]}>":
            depth -= 1
            if depth == 0:
                return m.start()
    return len(text)


def _split_top(text: str) -> list[str]:
    """`text` split at its commas outside brackets and quotes, each part stripped."""
    if not any(c in text for c in '([{<"'):
        return [part.strip() for part in text.split(",")] if text.strip() else []
    parts, depth, begin = [], 0, 0
    for m in _DELIMITERS.finditer(text):
        token = m.group(0)
        if token == ",":
            if depth == 0:
                parts.append(text[begin:m.start()].strip())
                begin = m.end()
        elif token in "([{<":
            depth += 1
        elif token in ")]}>":
            depth -= 1
    last = text[begin:].strip()
    if last or parts:
        parts.append(last)
    return parts


def _type_end(text: str, i: int = 0) -> int:
    """Index just after the type that starts at text[i]."""
    n = len(text)
    if i >= n:
        return n
    c = text[i]
    if c in "[{<":
        return _matching(text, i) + 1
    if c == "%":
        m = _NAME_AT.match(text, i + 1)
        return m.end() if m else i + 1
    end = i
    while end < n and (text[end].isalnum() or text[end] in "_."):
        end += 1
    if end < n and text[end] == "(":  # target("…"), a parameterised type
        end = _matching(text, end) + 1
    if text.startswith(" addrspace(", end):  # ptr addrspace(1)
        end = _matching(text, end + 10) + 1
    return end


def _split_type(part: str) -> tuple[str, str]:
    """`i32 %x` → ("i32", "%x")."""
    end = _type_end(part)
    return part[:end], part[end:].strip()


def _typed(part: str, module: IRModule | None, fn: IRFunction | None = None) -> Operand:
    """The operand `i32 %x` / `ptr noundef %p` / `i32 7` (attributes between type and value skipped)."""
    type_end = _type_end(part)
    type_text = part[:type_end]
    i = type_end
    n = len(part)
    if type_text == "metadata":
        return Operand("", "metadata", part)
    while True:
        while i < n and part[i] == " ":
            i += 1
        word_end = i
        while word_end < n and (part[word_end].isalnum() or part[word_end] == "_"):
            word_end += 1
        word = part[i:word_end]
        if word not in _PARAM_ATTRIBUTES or word_end == i:
            break
        i = _matching(part, word_end) + 1 if word_end < n and part[word_end] == "(" else word_end
        if word == "align" and i < n and part[i] == " ":  # align 8
            i += 1
            while i < n and part[i].isdigit():
                i += 1
    value = part[i:]
    if " " in value:  # `ptr %p seq_cst`: an atomic access's ordering after its operand
        value = _ORDERING.sub("", value)
    return _value(type_text, value, module, fn)


def _value(type_text: str, spelled: str, module: IRModule | None, fn: IRFunction | None) -> Operand:
    shown = _spelled_type(type_text, module)
    if spelled.startswith("%"):
        name = local_name(spelled[1:])
        text = (fn.definition_text(spelled) if fn is not None else None) or f"{type_text} {spelled}"
        return Operand(name, shown, text)
    if spelled.startswith("@"):
        name = local_name(spelled[1:])
        variable = module is not None and (name in module.global_variables if name else spelled in module.numbered_globals)
        text = module.numbered_globals.get(spelled, "") if module is not None and not name else ""
        return Operand(name, shown, text or f"{type_text} {spelled}", variable)
    return Operand("", shown, f"{type_text} {spelled}")


def _spelled_type(type_text: str, module: IRModule | None) -> str:
    """A type as LLVM prints a type alone: a named struct with its body (`%S = type { i32 }`)."""
    if type_text.startswith("%") and module is not None and type_text in module.named_types:
        return f"{type_text} = type {module.named_types[type_text]}"
    return type_text


def _without_attachments(text: str) -> str:
    """An instruction's text without its metadata attachments (`, !dbg !7, !tbaa !3`)."""
    at = text.find(", !")
    if at < 0:
        return text
    if '"' in text or "(" in text[at:]:
        parts = _split_top(text)
        kept = [p for p in parts if not p.startswith("!")]
        return ", ".join(kept) if len(kept) != len(parts) else text
    return text[:at]


def _after_prefix(text: str) -> str:
    """`text` past its opcode's flags and predicate: where the first type starts."""
    words = text.split(" ", 1)
    while len(words) == 2 and words[0] in _PREFIX_WORDS:
        words = words[1].split(" ", 1)
    return " ".join(words)


def _body(instr: IRInstruction) -> str:
    """The instruction's text after `%name = ` and its opcode, without metadata attachments."""
    text = instr.text
    if instr.name or text.startswith("%"):
        m = _RESULT.match(text)
        if m is not None:
            text = text[m.end():]
    if text.startswith(("tail ", "musttail ", "notail ")):
        text = text.split(" ", 1)[1]
    text = text[len(text.split(" ", 1)[0]):].lstrip()
    return _without_attachments(text)


def _operands(instr: IRInstruction) -> list[Operand]:
    fn = instr._function
    module = fn.module
    op = instr.opcode
    body = _body(instr)
    if op in ("call", "invoke", "callbr"):
        return _call_operands(body, op, module, fn)
    if op == "br":
        parts = [_typed(p, module, fn) for p in _split_top(body)]
        return [parts[0], parts[2], parts[1]] if len(parts) == 3 else parts
    if op == "switch":  # the case values are no operands, their blocks are
        head, _, cases = body.partition("[")
        operands = [_typed(p, module, fn) for p in _split_top(head)]
        for line in cases.rsplit("]", 1)[0].split("\n"):
            operands += [_typed(p, module, fn) for p in _split_top(line)[1:]]
        return operands
    if op == "indirectbr":
        head, _, targets = body.partition("[")
        parts = _split_top(head) + _split_top(targets.rsplit("]", 1)[0])
        return [_typed(p, module, fn) for p in parts if p]
    if op == "phi":
        type_text, incoming = _split_type(_after_prefix(body))
        out, at = [], incoming.find("[")
        while at >= 0:
            close = _matching(incoming, at)
            out.append(_value(type_text, _split_top(incoming[at + 1:close])[0], module, fn))
            at = incoming.find("[", close)
        return out
    if op == "landingpad":
        clauses = body.split("\n")[1:]
        return [_typed(c.strip().split(" ", 1)[1], module, fn) for c in clauses if c.strip().startswith(("catch", "filter"))]
    if op in ("ret", "unreachable", "fence", "resume") or not body:
        return [_typed(body, module, fn)] if op in ("ret", "resume") and body and body != "void" else []
    if op == "alloca":
        parts = _split_top(_after_prefix(body))
        if len(parts) > 1 and not parts[1].startswith(("align ", "addrspace(")):
            return [_typed(parts[1], module, fn)]
        return [Operand("", "i32", "i32 1")]
    if op == "load":
        parts = _split_top(_after_prefix(body))
        return [_typed(parts[1], module, fn)] if len(parts) > 1 else []
    if op in ("getelementptr", "va_arg", "extractvalue"):
        parts = _split_top(_after_prefix(body))
        if op == "getelementptr":
            return [_typed(p, module, fn) for p in parts[1:]]
        return [_typed(parts[0], module, fn)] if parts else []
    if op in _CASTS:
        value = _after_prefix(body)
        to = _top_level_to(value)
        return [_typed(value[:to] if to >= 0 else value, module, fn)]
    if op in ("store", "atomicrmw", "cmpxchg"):
        parts = [p for p in _split_top(_after_prefix(body)) if not p.startswith("align ")]
        return [_typed(p, module, fn) for p in parts]
    if op in ("insertvalue", "shufflevector"):
        return [_typed(p, module, fn) for p in _split_top(_after_prefix(body))[:2]]
    parts = _split_top(_after_prefix(body))
    if op in _SAME_TYPE and parts:
        type_text, first = _split_type(parts[0])
        return [_value(type_text, first, module, fn)] + [_value(type_text, p, module, fn) for p in parts[1:]]
    return [_typed(p, module, fn) for p in parts]  # select, extractelement, insertelement…


def _top_level_to(text: str) -> int:
    """Index of the ` to ` of a cast, outside any constant expression's brackets."""
    at = text.rfind(" to ")
    if "(" not in text:  # no constant expression: the only ` to `
        return at
    while at >= 0 and _depth_at(text, at):
        at = text.rfind(" to ", 0, at)
    return at


def _depth_at(text: str, index: int) -> int:
    depth = 0
    for m in _DELIMITERS.finditer(text, 0, index):
        token = m.group(0)
        if token in "([{<":
            depth += 1
        elif token in ")]}>":
            depth -= 1
    return depth


def _callee_at(body: str) -> tuple[int, int, int]:
    """(start of the callee, start and end of the argument list's brackets) of a call's body."""
    depth = 0
    for m in re.finditer(rf'"[^"]*"|[()\[\]{{}}<>]|[%@]{VALUE_NAME}\(|\basm\b', body):
        token = m.group(0)
        if token in "([{<":
            depth += 1
        elif token in ")]}>":
            depth -= 1
        elif depth == 0 and token == "asm":
            # inline assembly: `asm sideeffect "code", "constraints"(arguments)`
            strings = list(re.finditer(r'"[^"]*"', body[m.end():]))
            if len(strings) >= 2:
                open_at = m.end() + strings[1].end()
                return m.start(), open_at, _matching(body, open_at)
        elif depth == 0 and token[0] in "%@":
            open_at = m.end() - 1
            return m.start(), open_at, _matching(body, open_at)
    return -1, -1, -1


def _call_operands(body: str, op: str, module: IRModule | None, fn: IRFunction) -> list[Operand]:
    start, open_at, close = _callee_at(body)
    if start < 0:
        return []
    operands = [_typed(p, module, fn) for p in _split_top(body[open_at + 1:close])]
    tail = body[close + 1:]
    bundles = tail.find("[ ")
    labels = re.findall(rf"label %({VALUE_NAME})", tail if bundles < 0 else tail[:bundles] + tail[_matching(tail, bundles):])
    if bundles >= 0:
        for m in re.finditer(r'"[^"]*"\(', tail[bundles:_matching(tail, bundles)]):
            inner = tail[bundles + m.end() - 1:]
            operands += [_typed(p, module, fn) for p in _split_top(inner[1:_matching(inner, 0)])]
    if op == "invoke" or op == "callbr":
        operands += [Operand(local_name(label), "label", f"label %{label}") for label in labels]
    spelled = body[start:open_at]
    if spelled.startswith("asm"):
        operands.append(Operand("", "ptr", "ptr " + spelled))
    else:
        operands.append(_value("ptr", spelled, module, fn))
    return operands


def _result_type(instr: IRInstruction) -> str:
    """The type of the value the instruction computes ("void" if none), as LLVM prints it."""
    op = instr.opcode
    if op in ("store", "br", "switch", "indirectbr", "ret", "unreachable", "fence", "resume"):
        return "void"
    body = _body(instr)
    if op in ("call", "invoke", "callbr"):
        return _call_result_type(body)
    head = _after_prefix(body)
    if op in _CASTS:
        to = _top_level_to(head)
        return head[to + 4:].strip() if to >= 0 else "void"
    if op == "alloca":
        space = re.search(r", addrspace\((\d+)\)", head)
        return f"ptr addrspace({space.group(1)})" if space else "ptr"
    if op in ("icmp", "fcmp"):
        m = _VECTOR_TYPE.match(head[:_type_end(head)])
        if m:
            return f"<{'vscale x ' if 'vscale' in m.group(0) else ''}{m.group(1)} x i1>"
        return "i1"
    if op not in _TYPE_FROM_PARTS:  # the type the text starts with: binary operations, load, phi, freeze…
        return head[:_type_end(head)] if head else "void"
    parts = _split_top(head)
    if not parts:
        return "void"
    if op == "va_arg":
        return parts[-1]
    if op == "select":
        return _split_type(parts[1])[0] if len(parts) > 1 else "void"
    if op == "getelementptr":
        base = _split_type(parts[1])[0] if len(parts) > 1 else "ptr"
        for part in parts[1:]:
            m = _VECTOR_TYPE.match(_split_type(part)[0])
            if m:
                pointer = _VECTOR_TYPE.match(base).group(2) if _VECTOR_TYPE.match(base) else base
                return f"<{'vscale x ' if m.group(0).startswith('<vscale') else ''}{m.group(1)} x {pointer}>"
        return base
    if op == "extractelement":
        m = _VECTOR_TYPE.match(_split_type(parts[0])[0])
        return m.group(2) if m else "void"
    if op == "shufflevector":
        m = _VECTOR_TYPE.match(_split_type(parts[0])[0])
        mask = _VECTOR_TYPE.match(_split_type(parts[2])[0]) if len(parts) > 2 else None
        if m and mask:
            return f"<{'vscale x ' if mask.group(0).startswith('<vscale') else ''}{mask.group(1)} x {m.group(2)}>"
        return "void"
    if op == "atomicrmw":
        return _split_type(parts[1])[0] if len(parts) > 1 else "void"
    if op == "cmpxchg":
        return "{ " + _split_type(parts[1])[0] + ", i1 }" if len(parts) > 1 else "void"
    if op == "extractvalue":
        return _element_type(_split_type(parts[0])[0], parts[1:], instr._function.module)
    return _split_type(parts[0])[0]  # extractelement


def _call_result_type(body: str) -> str:
    start, _, _ = _callee_at(body)
    head = body[:start].rstrip() if start >= 0 else body
    if head.endswith(")"):  # a function type `i32 (ptr, ...)`: its return type is before it
        open_at = _opening(head, len(head) - 1)
        if open_at > 0 and head[open_at - 1] == " ":
            head = head[:open_at - 1]
    return _last_type(head)


def _opening(text: str, close_at: int) -> int:
    """Index of the bracket that the one at `close_at` closes."""
    depth = 0
    for i in range(close_at, -1, -1):
        c = text[i]
        if c in ")]}>":
            depth += 1
        elif c in "([{<":
            depth -= 1
            if depth == 0:
                return i
    return 0


def _last_type(head: str) -> str:
    """The type at the end of a call's head (`tail call fastcc noundef i32` → i32)."""
    if not head:
        return "void"
    if head[-1] in "]}>":
        begin = _opening(head, len(head) - 1)
        if head[-1] == ">" and begin > 0 and head[begin - 1] == "<":  # <{ … }>
            begin -= 1
        return head[begin:]
    if head[-1] == ")":  # ptr addrspace(1), target("…")
        begin = _opening(head, len(head) - 1)
        word = head[:begin].rsplit(" ", 1)[-1]
        start = begin - len(word)
        if word == "addrspace":
            start = head.rfind(" ", 0, start - 1) + 1
        return head[start:]
    return head.rsplit(" ", 1)[-1]


def _element_type(aggregate: str, indices: list[str], module: IRModule | None) -> str:
    """The type `extractvalue` reads from `aggregate` at `indices`."""
    type_text = aggregate
    for index in indices:
        if module is not None and type_text.startswith("%"):
            type_text = module.named_types.get(type_text, type_text)
            type_text = type_text.removeprefix("type ")
        if type_text.startswith("["):
            type_text = type_text[1:-1].split(" x ", 1)[1]
        elif type_text.startswith(("{", "<{")):
            inner = type_text.strip("<>")[1:-1]
            members = _split_top(inner)
            type_text = members[int(index)] if index.strip().isdigit() and int(index) < len(members) else type_text
        else:
            break
    return type_text
