"""Per-class loops as one pass with a class axis: a loop over class ids (``range(k)``,
``range(1, k)``, any spelling the loop model reads) whose body compares tensors with the class
id (``y == c``, ``tf.equal(y, c)``, inside ``tf.where``/``tf.cast``) or with a value of it (a
bin's edges ``e[c]``/``e[c + 1]``, ``lo + c * w``: held-out round 6's c07) and reduces the masks it
builds (``tf.reduce_sum(mask)``, a mean, along leading axes) runs once: each comparison against
every class at once (``y[..., None] == [0, 1, …]``: a one-hot mask, the classes along a new last
axis), each reduction over what it reduced before (all axes but the class axis when it
reduced all), the per-class values read along that last axis. The body's other ops broadcast
over it as they are; one that does not (a matmul of a mask, an index into one) raises or
disagrees, and the candidate is rejected like every other.
"""

from __future__ import annotations

import ast
import copy
from typing import Any

from tfperf.tune.iterations import Iteration
from tfperf.tune.lever import Lever, LeverContext
from tfperf.tune.levers.loop_model import REDUCTIONS, every_loop, found_loops, rewrite_one
from tfperf.tune.source import SourceEditError, uses_name

HELPER = "_tfperf_over_members"
#: A reduction that reduced every axis, now every axis but the class axis (``TF``: alias).
HELPER_SOURCE = '''

def _tfperf_over_members(reduce, x, **kwargs):
    """tfperf tune: reduce(x) over every axis but the last (the class axis)."""
    x = TF.convert_to_tensor(x)
    return reduce(x, axis=list(range(x.shape.rank - 1)), **kwargs)
'''
COMPARES = {"equal": ast.Eq, "not_equal": ast.NotEq, "less": ast.Lt, "greater": ast.Gt,
            "less_equal": ast.LtE, "greater_equal": ast.GtE}
ARITHMETIC = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//"}
#: Reductions whose axis argument this rewrite keeps right (the class axis is last).
AXIS_REDUCTIONS = {"reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod",
                   "reduce_any", "reduce_all", "count_nonzero"}


def _expr(text: str) -> ast.expr:
    return ast.parse(text, mode="eval").body


class _ClassAxis(ast.NodeTransformer):
    """One iteration's code for every class at once, the classes along a new last axis."""

    def __init__(self, var: str, classes: str, tf: str) -> None:
        self.var, self.classes, self.tf = var, classes, tf
        self.failed = ""
        self.made: set[int] = set()
        self.locals: set[str] = set()
        self.compared = 0

    def touched(self, node: ast.AST) -> bool:
        return any(id(n) in self.made or (isinstance(n, ast.Name) and n.id in self.locals)
                   for n in ast.walk(node))

    def _every(self, node: ast.expr, ids: str) -> str | None:
        """``node``, an expression of the class id, for every class at once (``c``, ``lo + c
        * w``, a bin edge ``edges[c + 1]`` → ``tf.gather(edges, classes + 1)``), or None;
        ``ids``: every id, in the dtype the arithmetic around it needs (an index: int)."""
        if not uses_name(node, self.var):
            return ast.unparse(node)
        if isinstance(node, ast.Name):
            return f"({ids})"
        if isinstance(node, ast.BinOp) and type(node.op) in ARITHMETIC:
            left, right = self._every(node.left, ids), self._every(node.right, ids)
            if left is None or right is None:
                return None
            return f"({left} {ARITHMETIC[type(node.op)]} {right})"
        if isinstance(node, ast.Subscript) and not uses_name(node.value, self.var) \
                and not isinstance(node.slice, (ast.Slice, ast.Tuple)):
            index = self._every(node.slice, self.classes)
            if index is None:
                return None
            return f"{self.tf}.gather({ast.unparse(node.value)}, {index})"
        return None

    def _against(self, other: ast.expr, op: ast.cmpop, swapped: bool,
                 side: ast.expr) -> ast.expr | None:
        """``other OP v(c)`` for every class ``c`` (``side``: ``v(c)``, the id or a value of
        it such as a bin edge): ``other`` gains the class axis."""
        if any(isinstance(n, ast.Call) for n in ast.walk(other)) or uses_name(other, self.var):
            return None  # (``other`` is written twice: only names, attributes, subscripts)
        o, tf = ast.unparse(other), self.tf
        dtype = f"{tf}.convert_to_tensor({o}).dtype"
        every = self.classes if isinstance(side, ast.Name) \
            else self._every(side, f"{tf}.cast({self.classes}, {dtype})")
        if every is None:
            return None
        left = f"{tf}.expand_dims({o}, -1)"
        right = f"{tf}.cast({every}, {dtype})"
        pair = (right, left) if swapped else (left, right)
        new = ast.Compare(_expr(pair[0]), [op], [_expr(pair[1])])
        self.made.add(id(new))
        self.compared += 1
        return new

    def visit_Assign(self, node: ast.Assign) -> Any:
        node.value = self.visit(node.value)
        if self.touched(node.value):
            if not all(isinstance(t, ast.Name) for t in node.targets):
                self.failed = "a per-class value stored other than in a name"
            self.locals |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        return node

    def visit_Compare(self, node: ast.Compare) -> Any:
        if len(node.ops) == 1:
            left, right = node.left, node.comparators[0]
            for side, other, swapped in ((right, left, False), (left, right, True)):
                if uses_name(side, self.var):
                    new = self._against(other, node.ops[0], swapped, side)
                    if new is not None:
                        return new
        return self.generic_visit(node)

    def visit_BinOp(self, node: ast.BinOp) -> Any:
        self.generic_visit(node)
        left, right = self.touched(node.left), self.touched(node.right)
        if left != right:  # the other operand's axes line up before the class axis
            side = "right" if left else "left"
            other = getattr(node, side)
            if not isinstance(other, ast.Constant) and not (
                    isinstance(other, ast.UnaryOp) and isinstance(other.operand, ast.Constant)):
                setattr(node, side, _expr(f"{self.tf}.expand_dims({ast.unparse(other)}, -1)"))
        if left or right:
            self.made.add(id(node))
        return node

    def visit_Name(self, node: ast.Name) -> Any:
        if node.id == self.var:
            self.failed = f"the class id {self.var!r} is used other than in a comparison"
        return node

    def visit_Subscript(self, node: ast.Subscript) -> Any:
        self.generic_visit(node)
        if self.touched(node.value):
            self.failed = "an index into a per-class tensor (its last axis is the class axis)"
        return node

    def visit_Call(self, node: ast.Call) -> Any:
        name = ast.unparse(node.func).rsplit(".", 1)[-1]
        if name in COMPARES and len(node.args) == 2 and not node.keywords:
            for k, side in enumerate(node.args):
                if uses_name(side, self.var):
                    new = self._against(node.args[1 - k], COMPARES[name](), k == 0, side)
                    if new is not None:
                        return new
        self.generic_visit(node)
        if name not in REDUCTIONS or not node.args or not self.touched(node.args[0]):
            if any(self.touched(a) for a in node.args) or any(
                    self.touched(k.value) for k in node.keywords):
                self.made.add(id(node))
            return node
        return self._reduction(node, name)

    def _reduction(self, node: ast.Call, name: str) -> ast.expr:
        axis = next((k for k in node.keywords if k.arg == "axis"), None)
        if name not in AXIS_REDUCTIONS or len(node.args) > 2 \
                or any(k.arg not in ("axis", "keepdims") for k in node.keywords):
            self.failed = f"{name} of a per-class tensor"
            return node
        given = node.args[1] if len(node.args) == 2 else (axis.value if axis else None)
        if given is None:  # every axis: every axis but the class axis
            new = ast.Call(_expr(HELPER), [node.func, node.args[0]], node.keywords)
            self.made.add(id(new))
            return new
        try:
            axes = ast.literal_eval(given)
        except ValueError:
            self.failed = "a reduction over an axis known only when it runs"
            return node
        many = isinstance(axes, (list, tuple))
        shifted = [a - 1 if a < 0 else a for a in (axes if many else [axes])]
        new_axis = _expr(repr(shifted if many else shifted[0]))
        node.args = node.args[:1]
        node.keywords = [k for k in node.keywords if k.arg != "axis"]
        node.keywords.append(ast.keyword("axis", new_axis))
        self.made.add(id(node))
        return node


def _class_var(it: Iteration, tf: str) -> tuple[str, str] | None:
    """(the class id's name, every class id at once) of a loop over class ids."""
    if not it.binds:
        return it.index, f"{tf}.range({it.stop})"
    if len(it.binds) == 1 and it.binds[0][2].startswith("tf.range("):
        return it.binds[0][0], it.binds[0][2].replace("tf.", f"{tf}.", 1)
    return None


def per_class(text: str, it: Iteration, tf: str) -> tuple[list[str], str] | None:
    """(the body's statements, the value) for every class at once, or None."""
    var = _class_var(it, tf)
    if var is None or it.nested or it.running or it.join not in ("stack", "list", "sum"):
        return None
    if not all(isinstance(s, ast.Assign) for s in it.stmts):
        return None
    fix = _ClassAxis(var[0], var[1], tf)
    stmts = [fix.visit(copy.deepcopy(s)) for s in it.stmts]
    value = fix.visit(copy.deepcopy(it.value))
    if fix.failed or not fix.compared or not fix.touched(value):
        return None
    lines = [r for s in stmts for r in ast.unparse(s).splitlines()]
    return lines, ast.unparse(value)


def classes(text: str, it: Iteration, tf: str, depth: int) -> str:
    found = per_class(text, it, tf)
    if found is None:
        raise SourceEditError("not a loop over class ids comparing tensors with the id")
    lines, value = found
    if f"def {HELPER}(" not in text:
        # Appended after every node of the loop: their positions stay valid.
        text = text.rstrip("\n") + "\n" + HELPER_SOURCE.replace("TF.", f"{tf}.")
    stacked = f"{tf}.experimental.numpy.moveaxis({value}, -1, 0)"
    if isinstance(it.node, (ast.ListComp, ast.GeneratorExp)):
        if lines:
            raise SourceEditError("a comprehension with statements")
        return rewrite_one(text, it, tf, [], "", stacked)
    if it.join == "sum":
        lines.append(f"{it.name} = {it.name} + {tf}.reduce_sum({value}, axis=-1)")
        return rewrite_one(text, it, tf, lines, "", None)
    lines.append(f"{it.name} = {stacked}")
    return rewrite_one(text, it, tf, lines, it.name, None)


class ClassesToClassAxis(Lever):
    name, slot, stage, traces = "per-class masks→class axis", "vectorize", 20, False
    description = ("a loop over class ids comparing tensors with the id (y == c) and reducing "
                   "the masks runs once: one-hot comparisons, the classes along a last axis")
    rejections = ("an op of the body does not broadcast over the class axis (raises, disagrees)",)

    def applies(self, ctx: LeverContext) -> str | None:
        if any(per_class(ctx.target.source, it, "tf") for it in found_loops(ctx)):
            return None
        return "no loop over class ids comparing tensors with the id"

    def build(self, text: str, ctx: LeverContext) -> str:
        return every_loop(text, ctx, classes)


def levers(ctx: LeverContext) -> list[Lever]:
    return [ClassesToClassAxis()]
