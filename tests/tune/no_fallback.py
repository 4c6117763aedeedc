"""The array-writes rewrite with its fall-back loop replaced by an error: a test that the
batched rows answered, not the original loop the handler runs when they cannot."""

from __future__ import annotations

import ast

from tfperf.tune.levers.numpy_writes import CAUGHT


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
