"""The context a rule checks a module through: the semantic model plus positions and edits.

:class:`Context` stacks the layers of the model, each in its own module and each answering
one kind of question: :mod:`.index` (the one walk: parents, nodes by type, calls, the
per-module cache), :mod:`.names` (what names refer to, scopes, loops), :mod:`.tensorflow`
(what TensorFlow traces, tensors, datasets). This module adds what findings and fixes need:
character positions, source text and edits.
"""

from __future__ import annotations

import ast

from tfperf.core.findings import Edit, Location
from tfperf.lint.semantic.tensorflow import TensorFlowModel
from tfperf.lint.target import NEWEST_KNOWN


class Context(TensorFlowModel):
    """What a rule may ask about the module it checks. Built by :mod:`tfperf.lint.engine`.

    Attributes: ``path``, ``source``, ``tree``, ``lines`` (with line endings), and
    ``tf_version``, the TensorFlow (major, minor) the code targets (:mod:`tfperf.lint.target`):
    the oldest release it must run on; ``tf_newest``, the newest release its pin admits.
    Facts a rule or helper computes once per module go through :meth:`cached`.
    """

    def __init__(self, tree: ast.Module, source: str, path: str = "<string>",
                 tf_version: tuple[int, int] = NEWEST_KNOWN,
                 tf_newest: tuple[int, int] | None = None) -> None:
        super().__init__(tree, source, path)
        self.tf_version = tf_version
        self.tf_newest = tf_version if tf_newest is None else max(tf_newest, tf_version)
        # No setting or pin chose the version (lint/code_target.py may have): a module it
        # imports may still show that the program runs on TF 1.x (one process, one TF).
        self.tf_unpinned = False

    def char_col(self, line: int, byte_col: int) -> int:
        """``ast`` columns are UTF-8 byte offsets; findings and edits use characters."""
        if line < 1 or line > len(self.lines):
            return byte_col
        text = self.lines[line - 1]
        if text.isascii():
            return byte_col
        return len(text.encode("utf-8")[:byte_col].decode("utf-8", errors="replace"))

    def span(self, node: ast.AST) -> tuple[int, int, int, int]:
        """(line, col, end_line, end_col) of ``node`` in characters."""
        line, end_line = node.lineno, node.end_lineno or node.lineno
        col = self.char_col(line, node.col_offset)
        end_col = self.char_col(end_line, node.end_col_offset or 0)
        return line, col, end_line, end_col

    def location(self, node: ast.AST) -> Location:
        line, col, end_line, end_col = self.span(node)
        return Location(path=self.path, line=line, column=col, end_line=end_line,
                        end_column=end_col)

    def source_of(self, node: ast.AST) -> str:
        """The exact source text of ``node`` (correct for non-ASCII text)."""
        line, col, end_line, end_col = self.span(node)
        if line == end_line:
            return self.lines[line - 1][col:end_col]
        parts = [self.lines[line - 1][col:]]
        parts += self.lines[line:end_line - 1]
        parts.append(self.lines[end_line - 1][:end_col])
        return "".join(parts)

    def indent_of(self, node: ast.AST) -> str:
        """The leading whitespace of the line ``node`` starts on."""
        text = self.lines[node.lineno - 1]
        return text[: len(text) - len(text.lstrip(" \t"))]

    def replace(self, node: ast.AST, content: str) -> Edit:
        """An edit replacing ``node``'s text with ``content``."""
        line, col, end_line, end_col = self.span(node)
        return Edit(line, col, end_line, end_col, content)

    def replace_range(self, first: ast.AST, last: ast.AST, content: str) -> Edit:
        """An edit replacing the text from the start of ``first`` to the end of ``last``."""
        line, col, _, _ = self.span(first)
        _, _, end_line, end_col = self.span(last)
        return Edit(line, col, end_line, end_col, content)

    def insert_before(self, node: ast.AST, content: str) -> Edit:
        line, col, _, _ = self.span(node)
        return Edit(line, col, line, col, content)

    def insert_after(self, node: ast.AST, content: str) -> Edit:
        _, _, end_line, end_col = self.span(node)
        return Edit(end_line, end_col, end_line, end_col, content)
