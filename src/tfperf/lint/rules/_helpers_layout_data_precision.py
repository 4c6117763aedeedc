"""Shared analysis for the layout (TFP40x), data/precision (TFP50x) and tf.data (TFP60x) rules.

Candidates for ``tfperf.lint.semantic`` later: transpose permutations, dataset pipelines
followed through assignments, the function a ``Dataset.map`` runs, the mixed-precision policy.
Modules starting with ``_`` are helpers, not rules; the registry skips them.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from operator import attrgetter

from tfperf.lint.semantic import DATASET_METHODS, DATASET_SOURCES, Context

# ---------------------------------------------------------------------------- transposes

TRANSPOSE_CALLS = frozenset({"tensorflow.transpose", "tensorflow.compat.v1.transpose",
                             "keras.ops.transpose"})
REVERSE = ()  # a transpose without ``perm``: reverses the axes, whatever the rank


@dataclass(frozen=True)
class Transpose:
    """A ``tf.transpose(operand, perm)`` call with a literal (or absent) permutation.
    ``perm`` is ``REVERSE`` (empty) when absent."""

    call: ast.Call
    operand: ast.expr
    perm: tuple[int, ...]


def _int_list(node: ast.AST | None) -> tuple[int, ...] | None:
    if type(node) not in (ast.List, ast.Tuple):
        return None
    out = []
    for e in node.elts:  # type: ignore[attr-defined]
        if type(e) is not ast.Constant or type(e.value) is not int:
            return None
        out.append(e.value)
    if sorted(out) != list(range(len(out))):
        return None  # not a permutation: tf.transpose would raise; not our business
    return tuple(out)


def transpose_of(ctx: Context, node: ast.AST | None) -> Transpose | None:
    """``node`` as a transpose with a literal permutation, else ``None`` (also for calls
    with ``conjugate=`` or other arguments we cannot reason about)."""
    if type(node) is not ast.Call or ctx.qualname(node.func) not in TRANSPOSE_CALLS:  # type: ignore[attr-defined]
        return None
    args = list(node.args)  # type: ignore[attr-defined]
    perm_node: ast.AST | None = args[1] if len(args) > 1 else None
    if len(args) > 2 or (not args and not node.keywords):  # type: ignore[attr-defined]
        return None
    operand: ast.expr | None = args[0] if args else None
    for k in node.keywords:  # type: ignore[attr-defined]
        if k.arg in ("perm", "axes"):
            perm_node = k.value
        elif k.arg in ("a", "x") and operand is None:
            operand = k.value
        elif k.arg != "name":
            return None
    if operand is None:
        return None
    if perm_node is None or (type(perm_node) is ast.Constant and perm_node.value is None):
        return Transpose(node, operand, REVERSE)  # type: ignore[arg-type]
    perm = _int_list(perm_node)
    return Transpose(node, operand, perm) if perm is not None else None  # type: ignore[arg-type]


def inverse(perm: tuple[int, ...]) -> tuple[int, ...]:
    out = [0] * len(perm)
    for i, p in enumerate(perm):
        out[p] = i
    return tuple(out)


def undoes(first: tuple[int, ...], second: tuple[int, ...]) -> bool:
    """Whether transposing by ``first`` then by ``second`` is the identity."""
    if first == REVERSE or second == REVERSE:
        return first == second == REVERSE
    return len(first) == len(second) and inverse(first) == second


def assigned_value(ctx: Context, expr: ast.AST) -> ast.expr | None:
    """The value a plain name was last assigned (``y = <value>``), or ``None``."""
    if type(expr) is not ast.Name:
        return None
    b = ctx.binding(expr)  # type: ignore[arg-type]
    if b is None or b.kind != "assign":
        return None
    parent = ctx.parent(b.value)
    # Only `y = value` with one plain target; not tuple unpacking or chained targets.
    if type(parent) is ast.Assign and (len(parent.targets) != 1  # type: ignore[attr-defined]
                                       or type(parent.targets[0]) is not ast.Name):  # type: ignore[attr-defined]
        return None
    if isinstance(parent, ast.stmt) and not precedes(ctx, parent, expr):
        return None
    return b.value


def precedes(ctx: Context, stmt: ast.stmt, use: ast.AST) -> bool:
    """``stmt`` surely ran before ``use``: it comes earlier in the same block as one of
    ``use``'s enclosing statements. An assignment in a sibling ``if``/``elif`` branch, or
    later in a loop body (a previous iteration), does not count."""
    holder = ctx.parent(stmt)
    block = next((getattr(holder, f) for f in ("body", "orelse", "finalbody", "handlers")
                  if stmt in (getattr(holder, f, None) or ())), None)
    if block is None:
        return False
    index = block.index(stmt)
    for a in ctx.ancestors(use):
        if ctx.parent(a) is holder and a in block:
            return block.index(a) > index
    return False


def loads_bound_by(ctx: Context, scope: ast.AST, name: str, value: ast.AST) -> list[ast.Name]:
    """Every read of ``name`` in ``scope`` that refers to the assignment of ``value``."""
    out = []
    for n in ast.walk(scope):
        if type(n) is ast.Name and n.id == name and type(n.ctx) is ast.Load:
            b = ctx.binding(n)
            if b is not None and b.kind == "assign" and b.value is value:
                out.append(n)
    return out


# ---------------------------------------------------------------------------- tf.data pipelines

# Keras utilities that build a dataset and already end it with prefetch(AUTOTUNE).
PREFETCHING_SOURCES = frozenset(q for q in DATASET_SOURCES if q.startswith("keras."))


@dataclass
class Pipeline:
    """A dataset followed back to where it is built: ``source`` (the source call, or the
    expression we could not see past), ``steps``: the method calls applied, in order, and
    ``known``: whether ``source`` is a recognised tf.data source call."""

    source: ast.AST
    steps: list[ast.Call]
    known: bool

    def methods(self) -> list[str]:
        return [s.func.attr for s in self.steps]  # type: ignore[attr-defined]

    def last(self) -> ast.Call | None:
        return self.steps[-1] if self.steps else None


def pipeline(ctx: Context, expr: ast.AST, _depth: int = 0) -> Pipeline:
    """Follow ``expr`` (a method chain, or a name assigned one, through ``ds = ds.map(f)``
    re-assignments) back to its source."""
    steps: list[ast.Call] = []
    node: ast.AST = expr
    while _depth < 50:
        _depth += 1
        if type(node) is ast.Call:
            func = node.func  # type: ignore[attr-defined]
            q = ctx.qualname(func)
            if q is not None:
                steps.reverse()
                return Pipeline(node, steps, q in DATASET_SOURCES)
            if type(func) is ast.Attribute and func.attr in DATASET_METHODS:
                steps.append(node)  # type: ignore[arg-type]
                node = func.value
                continue
            break
        if type(node) is ast.Name:
            value = assigned_value(ctx, node)
            if value is None:
                break
            node = value
            continue
        break
    steps.reverse()
    return Pipeline(node, steps, False)


def is_tf_dataset(ctx: Context, expr: ast.AST) -> bool:
    """Stricter than ``ctx.is_dataset``: the pipeline starts at a tf.data source built here,
    or at a name the semantic model takes for a dataset (a parameter annotated
    ``tf.data.Dataset`` or named ``ds``/``dataset``). Attributes such as ``self._dataset``
    are not enough: other libraries (Grain, PyTorch) have datasets with ``map`` too."""
    pipe = pipeline(ctx, expr)
    if pipe.known:
        return True
    return type(pipe.source) is ast.Name and ctx.is_dataset(pipe.source)


def method_call(call: ast.AST, *names: str) -> bool:
    return type(call) is ast.Call and type(call.func) is ast.Attribute \
        and call.func.attr in names  # type: ignore[attr-defined]


def map_function(ctx: Context, call: ast.Call) -> ast.AST | None:
    """The lambda or module-level/local ``def`` that ``ds.map(fn)`` runs, if visible."""
    fn: ast.AST | None = call.args[0] if call.args else None
    for k in call.keywords:
        if k.arg == "map_func":
            fn = k.value
    if type(fn) is ast.Lambda:
        return fn
    if type(fn) is ast.Name:
        b = ctx.binding(fn)  # type: ignore[arg-type]
        if b is not None and b.kind == "def":
            return b.value
    return None


def body_nodes(fn: ast.AST) -> Iterator[ast.AST]:
    """Every node run when ``fn`` is called (its body, not its defaults or decorators)."""
    if type(fn) is ast.Lambda:
        yield from ast.walk(fn.body)  # type: ignore[attr-defined]
    else:
        for stmt in fn.body:  # type: ignore[attr-defined]
            yield from ast.walk(stmt)


def called_qualnames(ctx: Context, fn: ast.AST) -> list[str | None]:
    """What each call in ``fn``'s body calls (``None`` where it is not an imported API)."""
    return [ctx.qualname(n.func) for n in body_nodes(fn) if type(n) is ast.Call]  # type: ignore[attr-defined]


PY_FUNCTIONS = frozenset({"tensorflow.py_function", "tensorflow.numpy_function",
                          "tensorflow.compat.v1.py_func", "tensorflow.compat.v1.py_function",
                          "tensorflow.compat.v1.numpy_function"})


def is_random_op(qualname: str | None) -> bool:
    """A stateful random op (fresh values per call): ``tf.random.uniform``,
    ``tf.image.random_flip_left_right``, Keras ``Random*`` layers. Stateless ops, which repeat
    for a given seed, are not."""
    if not qualname:
        return False
    last = qualname.rsplit(".", 1)[-1]
    if "stateless" in qualname:
        return False
    if qualname.startswith(("tensorflow.random.", "tensorflow.compat.v1.random.")):
        return last not in ("set_seed", "Generator", "get_global_generator", "create_rng_state",
                            "all_candidate_sampler", "experimental")
    if qualname.startswith("tensorflow.image.random_"):
        return True
    if qualname in ("tensorflow.random_uniform", "tensorflow.random_normal",
                    "tensorflow.compat.v1.random_uniform", "tensorflow.compat.v1.random_normal"):
        return True
    return qualname.startswith("keras.layers.Random")


def keyword(call: ast.Call, name: str) -> ast.expr | None:
    for k in call.keywords:
        if k.arg == name:
            return k.value
    return None


# ---------------------------------------------------------------------------- mixed precision

POLICY_SETTERS = frozenset({
    "keras.mixed_precision.set_global_policy", "keras.mixed_precision.experimental.set_policy",
    "keras.mixed_precision.set_dtype_policy", "keras.config.set_dtype_policy",
    "keras.dtype_policies.set_dtype_policy",
})
POLICY_CLASSES = frozenset({
    "keras.mixed_precision.Policy", "keras.mixed_precision.experimental.Policy",
    "keras.mixed_precision.DTypePolicy", "keras.DTypePolicy", "keras.dtype_policies.DTypePolicy",
})


def _names_mixed_float16(ctx: Context, expr: ast.AST | None, depth: int = 0) -> bool:
    if expr is None or depth > 5:
        return False
    if type(expr) is ast.Constant:
        return expr.value == "mixed_float16"  # type: ignore[attr-defined]
    if type(expr) is ast.Call and ctx.qualname(expr.func) in POLICY_CLASSES:  # type: ignore[attr-defined]
        arg = expr.args[0] if expr.args else keyword(expr, "name")  # type: ignore[arg-type,attr-defined]
        return _names_mixed_float16(ctx, arg, depth + 1)
    value = assigned_value(ctx, expr)
    return _names_mixed_float16(ctx, value, depth + 1) if value is not None else False


_VALUE = attrgetter("value")


def mixed_float16_policy(ctx: Context) -> ast.Call | None:
    """The call that sets the global policy to ``mixed_float16`` in this module, if any."""
    if not ctx.imports_tf:
        return None
    memo = ctx.memo
    if "mixed_float16_policy" in memo:
        return memo["mixed_float16_policy"]
    found = None
    # Every match ends at the string constant "mixed_float16": without one, no call needs
    # resolving (the scan is much cheaper than resolving every call's callee).
    if "mixed_float16" not in map(_VALUE, ctx.nodes_of(ast.Constant)):  # a scan in C
        memo["mixed_float16_policy"] = None
        return None
    for call in ctx.calls:
        if ctx.qualname(call.func) in POLICY_SETTERS:
            arg = call.args[0] if call.args else keyword(call, "policy")
            if _names_mixed_float16(ctx, arg):
                found = call
                break
    memo["mixed_float16_policy"] = found
    return found
