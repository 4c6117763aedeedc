"""The array-writes rewrite with its fall-back loop replaced by an error: a test that the
batched rows answered, not the original loop the handler runs when they cannot."""

from __future__ import annotations

import ast
import copy

import numpy as np
import pytest

from tfperf.tune.levers import numpy_writes
from tfperf.tune.levers.numpy_writes import CAUGHT

HEAD = "import numpy as np\n\n\n"


def is_fallback(node: ast.AST) -> bool:
    """The handler the rewrite puts around its batched rows (it runs the original loop)."""
    return isinstance(node, ast.ExceptHandler) and node.type is not None \
        and ast.unparse(node.type) == ast.unparse(ast.parse(CAUGHT, mode="eval").body)


class _NoFallBack(ast.NodeTransformer):
    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> ast.ExceptHandler:
        if is_fallback(node):
            node.body = ast.parse("raise AssertionError('fell back to the loop')").body
        return node


def no_fallback(new: str) -> str:
    return ast.unparse(_NoFallBack().visit(ast.parse(new)))


def load(text: str, name: str = "<rewrite>"):
    ns: dict = {}
    exec(compile(text, name, "exec"), ns)
    return ns["f"]


def agrees(text: str, *args, batched: bool = True) -> str:
    """The rewrite of ``f`` in ``text`` (after HEAD) equal to the loop in type, dtype, shape and
    values; with the fall-back replaced by an error, the batched rows answer (``batched``) or
    the loop was needed."""
    new = numpy_writes.rewrite(HEAD + text, "f")
    want = load(HEAD + text)(*copy.deepcopy(args))
    got = load(new)(*copy.deepcopy(args))
    assert type(got) is type(want) and got.dtype == want.dtype and got.shape == want.shape, new
    np.testing.assert_array_equal(got, want)
    strict = load(no_fallback(new))
    if batched:
        np.testing.assert_array_equal(strict(*copy.deepcopy(args)), want)
    else:
        with pytest.raises(AssertionError, match="fell back"):
            strict(*copy.deepcopy(args))
    return new
