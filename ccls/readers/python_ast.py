"""One syntax tree per module text for the Python readers that each walk it (the bytecode
reader's class families, array names, decorators, enums and lists; the call reader's protocol
sites, objects, command line and definitions): nine `ast.parse` calls of the same text were a
third of reading a stdlib module. The readers only read the tree."""
from __future__ import annotations

import ast
import functools


@functools.lru_cache(maxsize=2)  # the module's text as the two readers join it
def syntax_tree(text: str) -> ast.Module:
    """`ast.parse(text)` (raising what it raises), made once per text."""
    return ast.parse(text)
