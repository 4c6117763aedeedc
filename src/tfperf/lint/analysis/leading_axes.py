"""Does a function already take a batch in front of its first argument's axes?

``tf.map_fn(lambda m: utils.affine_to_dense_shift(m, shape), matrices)`` runs the helper once
per element in a ``while_loop``; where the helper only reads its argument from the back
(``m[..., :-1]``, ``m.shape[-1]``, ``tf.shape(m)[:-2]``), through ops that take any batch in
front (elementwise ops, ``@``, ``tf.linalg`` matrix ops) and reshapes only to shapes that keep
``tf.shape(m)``'s leading part, one call on the whole batch gives the stacked results. The
test is conservative: any other use of the argument (``m[0]``, ``len(m)``, ``m[:, 1]``, a
reshape to a fixed rank, an unknown call whose result is used) says no."""

from __future__ import annotations

import ast

from tfperf.lint.semantic import Context

# Ops that take any number of batch axes in front of the axes they work on ([..., M, N]).
_BATCHED = frozenset({
    "matmul", "linalg.matmul", "linalg.inv", "linalg.det", "linalg.logdet",
    "linalg.matrix_transpose", "linalg.adjoint", "linalg.cholesky", "linalg.trace",
    "linalg.diag_part", "linalg.solve", "linalg.eigh", "linalg.svd", "linalg.qr",
    "matrix_inverse", "matrix_determinant", "matrix_transpose", "linalg.norm",
})
# Ops that keep the element's axes, value by value (a whole tensor: the same per row).
_ELEMENTWISE = frozenset({
    "cast", "convert_to_tensor", "identity", "abs", "exp", "log", "sqrt", "square", "sin",
    "cos", "tanh", "sigmoid", "add", "subtract", "multiply", "divide", "maximum", "minimum",
    "math.abs", "math.exp", "math.log", "math.sqrt", "math.square", "math.sin", "math.cos",
    "math.tanh", "math.sigmoid", "math.add", "math.subtract", "math.multiply",
    "math.divide", "math.maximum", "math.minimum", "nn.relu", "nn.sigmoid", "nn.tanh",
})
# Questions about the value that give no per-element result.
_QUESTIONS = frozenset({"is_tensor", "tensorflow.is_tensor"})
_ARITH = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.MatMult, ast.Pow, ast.FloorDiv)


def _tf_op(ctx: Context, call: ast.Call) -> str:
    """``tf.linalg.inv(...)`` → "linalg.inv"; "" for what is not TensorFlow's."""
    q = ctx.call_qualname(call) or ""
    for prefix in ("tensorflow.compat.v1.", "tensorflow."):
        if q.startswith(prefix):
            return q[len(prefix):]
    return ""


def _negative(node: ast.AST) -> bool:
    return type(node) is ast.UnaryOp and type(node.op) is ast.USub \
        and type(node.operand) is ast.Constant and type(node.operand.value) is int


def _from_back(sl: ast.AST) -> bool:
    """An index that counts from the back: ``[-1]``, ``[:-2]``, ``[-2:]``."""
    if _negative(sl):
        return True
    if type(sl) is ast.Slice and sl.step is None:
        return (sl.lower is None and sl.upper is not None and _negative(sl.upper)) \
            or (sl.upper is None and sl.lower is not None and _negative(sl.lower))
    return False


class _Reader:
    """Follows the first parameter through the function's statements."""

    def __init__(self, ctx: Context, param: str) -> None:
        self.ctx = ctx
        self.batched = {param}   # names holding a batched value (the batch axes in front)
        self.prefix: set[str] = set()  # names holding a shape that starts with the batch's
        self.evidence = False    # the function does read from the back (not only `x + 1`)

    def batched_expr(self, e: ast.AST) -> bool | None:
        """True: ``e`` is batched like the parameter; False: it does not read it; None:
        it reads it in a way that depends on the leading axes."""
        t = type(e)
        if t is ast.Name:
            return e.id in self.batched
        if t is ast.Constant:
            return False
        if t is ast.Subscript:
            sl = e.slice
            if type(sl) is ast.Tuple and sl.elts and type(sl.elts[0]) is ast.Constant \
                    and sl.elts[0].value is Ellipsis:
                inner = self.batched_expr(e.value)
                if inner:
                    self.evidence = True
                return inner if self._free(sl) else None
            return False if self._free(e) else None
        if t is ast.BinOp and type(e.op) in _ARITH:
            left, right = self.batched_expr(e.left), self.batched_expr(e.right)
            if left is None or right is None:
                return None
            if type(e.op) is ast.MatMult and (left or right):
                self.evidence = True
            return left or right
        if t is ast.UnaryOp:
            return self.batched_expr(e.operand)
        if isinstance(e, ast.Call):
            op = _tf_op(self.ctx, e)
            args = [*e.args, *(k.value for k in e.keywords)]
            if op in _BATCHED or op in _ELEMENTWISE:
                reads = [self.batched_expr(a) for a in args]
                if any(r is None for r in reads):
                    return None
                if any(reads) and op in _BATCHED:
                    self.evidence = True
                return any(reads)
            if op == "reshape" and e.args:
                x = self.batched_expr(e.args[0])
                shape = e.args[1] if len(e.args) > 1 else next(
                    (k.value for k in e.keywords if k.arg == "shape"), None)
                if x is None or shape is None:
                    return None
                if not x:
                    return False if self._free(shape) else None
                return True if self._prefix(shape) else None
            return False if self._free(e) else None
        return False if self._free(e) else None

    def _prefix(self, e: ast.AST) -> bool:
        """``tf.shape(x)[:-2]``, a name holding one, or ``tf.concat((that, ...), 0)``."""
        if type(e) is ast.Name:
            return e.id in self.prefix
        if type(e) is ast.Subscript and type(e.value) is ast.Call \
                and _tf_op(self.ctx, e.value) == "shape" and e.value.args \
                and self.batched_expr(e.value.args[0]) and type(e.slice) is ast.Slice \
                and e.slice.lower is None and e.slice.upper is not None \
                and _negative(e.slice.upper):
            return True
        if type(e) is ast.Call and _tf_op(self.ctx, e) == "concat" and e.args \
                and type(e.args[0]) in (ast.Tuple, ast.List) and e.args[0].elts:
            axis = e.args[1] if len(e.args) > 1 else next(
                (k.value for k in e.keywords if k.arg == "axis"), None)
            return type(axis) is ast.Constant and axis.value == 0 \
                and self._prefix(e.args[0].elts[0]) and all(
                    self._free(x) for x in e.args[0].elts[1:])
        return False

    def _free(self, e: ast.AST) -> bool:
        """``e`` reads no batched name, or reads one only by its trailing axes / dtype."""
        for n in ast.walk(e):
            if type(n) is not ast.Name or n.id not in self.batched:
                continue
            if not self._harmless(n):
                return False
        return True

    def _harmless(self, name: ast.Name) -> bool:
        """``x.dtype``, ``x.shape[-1]``, ``tf.shape(x)[-1]``/``[:-2]``, ``tf.is_tensor(x)``,
        ``isinstance(x, ...)``: no per-element value, no leading axis read."""
        parent = self.ctx.parent(name)
        if type(parent) is ast.Attribute and parent.attr == "dtype":
            return True
        if type(parent) is ast.Attribute and parent.attr == "shape":
            up = self.ctx.parent(parent)
            return type(up) is ast.Subscript and up.value is parent and _from_back(up.slice)
        if type(parent) is ast.Call:
            q = self.ctx.call_qualname(parent) or ""
            if q in _QUESTIONS or (type(parent.func) is ast.Name
                                   and parent.func.id == "isinstance"):
                return True
            if _tf_op(self.ctx, parent) == "shape":
                up = self.ctx.parent(parent)
                return type(up) is ast.Subscript and up.value is parent \
                    and _from_back(up.slice)
        return False

    def statement(self, s: ast.stmt) -> bool:
        """False where the statement reads the batched value by its leading axes."""
        t = type(s)
        if t is ast.Expr:
            # a check whose result is dropped (`validate(x.shape)`): no output axes
            return type(s.value) in (ast.Call, ast.Constant)
        if t is ast.Assign and len(s.targets) == 1 and type(s.targets[0]) is ast.Name:
            name = s.targets[0].id
            prefix = self._prefix(s.value)  # read with the names' old meanings
            read = False if prefix else self.batched_expr(s.value)
            if read is None:
                return False
            self.batched.discard(name)
            self.prefix.discard(name)
            if prefix:
                self.prefix.add(name)
            elif read:
                self.batched.add(name)
            return True
        if t is ast.If:
            if not self._free(s.test):
                return False
            return all(self.statement(b) for b in (*s.body, *s.orelse))
        if t is ast.Raise:
            return True
        if t is ast.Return:
            return s.value is not None and bool(self.batched_expr(s.value))
        if t is ast.Assign:
            return all(self._free(x) for x in ast.walk(s.value) if type(x) is ast.Name)
        return self._free(s)


def batches_first_argument(ctx: Context, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """``fn`` returns, for a batch of its first argument, the batch of what it returns per
    element: the argument read only from the back, through batched ops, with at least one
    read that shows it (``x[..., i]``, ``@``, a ``tf.linalg`` matrix op)."""
    args = fn.args
    params = [a.arg for a in (*args.posonlyargs, *args.args)]
    if not params or params[0] in ("self", "cls"):
        return False
    body = [s for s in fn.body if not (type(s) is ast.Expr and type(s.value) is ast.Constant)]
    if not body or type(body[-1]) is not ast.Return:
        return False
    reader = _Reader(ctx, params[0])
    if not all(reader.statement(s) for s in body):
        return False
    return reader.evidence
