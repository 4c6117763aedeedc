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


def same(got, want) -> None:
    """Equal in type, and for arrays in dtype, shape and every value (bit for bit; NaN equal
    to NaN); tuples and lists item by item."""
    assert type(got) is type(want), (type(got), type(want))
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want), (got, want)
        for g, w in zip(got, want, strict=True):
            same(g, w)
    elif isinstance(want, (np.ndarray, np.generic)):
        assert got.dtype == want.dtype and got.shape == want.shape, (got, want)
        np.testing.assert_array_equal(got, want)
    else:
        assert got == want or (got != got and want != want), (got, want)


def agrees(text: str, *args, batched: bool | None = True) -> str:
    """The rewrite of ``f`` in ``text`` (after HEAD) equal to the loop (``same``); with the
    fall-back replaced by an error, the batched rows answer (``batched``), or the loop was
    needed (False), or either (None: only the answer is checked)."""
    new = numpy_writes.rewrite(HEAD + text, "f")
    want = load(HEAD + text)(*copy.deepcopy(args))
    same(load(new)(*copy.deepcopy(args)), want)
    if batched is None:
        return new
    strict = load(no_fallback(new))
    if batched:
        same(strict(*copy.deepcopy(args)), want)
    else:
        with pytest.raises(AssertionError, match="fell back"):
            strict(*copy.deepcopy(args))
    return new
