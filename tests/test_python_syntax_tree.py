"""The Python readers share one syntax tree per module text (`readers.python_ast`)."""
from __future__ import annotations

import ast

import pytest

from ccls.readers.python_ast import syntax_tree


def test_one_text_is_parsed_once_and_read_as_ast_parse_reads_it():
    text = "import array\nclass Grid(list):\n    pass\ndef f(n=3):\n    return [0] * n\n"
    tree = syntax_tree(text)
    assert syntax_tree(text) is tree
    assert ast.dump(tree) == ast.dump(ast.parse(text))
    assert syntax_tree(text + "\n") is not tree


def test_a_text_that_does_not_parse_raises_every_time():
    for _ in range(2):
        with pytest.raises(SyntaxError):
            syntax_tree("def f(:\n")
