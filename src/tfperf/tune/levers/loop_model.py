"""Levers derived from the loop model (:mod:`tfperf.analysis.loops`, read by
:mod:`tfperf.tune.iterations`): whatever the spelling of a loop of independent iterations
(``range``, ``tf.unstack``, ``enumerate``, ``zip``, a counter-driven ``while``, a
comprehension; values appended and stacked, written to ``out[i]`` or a ``TensorArray``,
concatenated, added up):

- ``loops→vectorized_map``: each such loop, innermost first, becomes ``tf.vectorized_map``
  of one iteration over ``tf.range(n)``: pfor takes the index in any position (``s[i, j]``,
  ``x[:, i]``, ``table[ids[i]]``), nested loops become maps of maps, an accumulation becomes
  ``tf.reduce_sum`` of the map of its terms;
- ``loops→batched ops``: where the body's ops take a batch as they take one example (the
  index only ever the first subscript), the body runs once on the whole batch (``x[i]`` →
  ``x``, ``table[ids[i]]`` → ``tf.gather(table, ids)``); its "per-example axes" variant also
  turns reductions of one example (``tf.norm(r)``, ``tf.reduce_sum(r * r)``) into reductions
  over the last axis, shifts explicit axes past the batch axis, and lines a per-example
  scalar (``scale[i]``) up against the result's per-example axes.

Shapes are only known by running: a variant that does not fit raises, disagrees or changes
the function's contract, and is rejected like every candidate.
"""

from __future__ import annotations

import ast
import contextlib
import copy
from typing import Any

from tfperf.tune.iterations import (
    JOIN_HELPER,
    JOIN_SOURCE,
    Iteration,
    function_loops,
    map_fn_parts,
    read,
    rows_of,
    text_of,
)
from tfperf.tune.lever import Lever, LeverContext
from tfperf.tune.levers.host_lists import host_lists
from tfperf.tune.levers.split_sums import split_sums
from tfperf.tune.map_bodies import inline_calls, mapped_side_effects
from tfperf.tune.map_calls import maps_as_comprehensions
from tfperf.tune.prefix_slices import (
    bound_once,
    cumulative,
    exclusive_of,
    prefix_reduction,
    prefix_uppers,
)
from tfperf.tune.source import (
    SourceEditError,
    ensure_tf,
    find_function,
    indent_of,
    is_within,
    parse,
    replace_nodes,
    stmt_text,
    sum_of,
    tf_alias,
)
from tfperf.tune.unstacked_axes import unstacks_as_indexes

HELPER = "_tfperf_iteration"
#: At most this many loops rewritten in one function (a guard against a loop that keeps
#: matching after its own rewrite).
MAX_REWRITES = 12
REDUCTIONS = {"norm", "reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod",
              "reduce_logsumexp", "reduce_std", "reduce_variance", "reduce_all", "reduce_any",
              "count_nonzero", "argmax", "argmin", "softmax", "log_softmax", "l2_normalize",
              "cumsum", "cumprod", "reduce_euclidean_norm"}
#: Array methods that reduce (``x.max()``): of one example, not of the batch.
REDUCTION_METHODS = {"max", "min", "sum", "mean", "prod", "std", "var", "argmax", "argmin",
                     "any", "all", "ptp", "cumsum", "cumprod"}
#: Reductions of a whole tensor when given no axis (of one example: every axis but the batch's).
WHOLE_REDUCTIONS = {"reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod",
                    "reduce_logsumexp", "reduce_std", "reduce_variance", "reduce_all",
                    "reduce_any", "reduce_euclidean_norm", "count_nonzero"}
#: Array methods that reduce the whole array when given no axis (``argmax`` flattens instead).
WHOLE_METHODS = {"max", "min", "sum", "mean", "prod", "std", "var", "any", "all", "ptp"}
ROWS_HELPER = "_tfperf_rows_into"
ROWS_SOURCE = '''

def _tfperf_rows_into(batch, shape, dtype):
    """tfperf tune: the batch of a loop's rows as the NumPy buffer of ``shape`` it filled,
    each row broadcast as NumPy's ``out[i] = row`` does (a scalar per row fills its row)."""
    rows = NP.asarray(batch, dtype=dtype)
    shape = tuple(shape)
    if rows.shape == shape:
        return rows
    extra = len(shape) - rows.ndim
    if extra < 0:  # a row of more axes than the buffer's (leading ones of size 1)
        rows = rows.reshape(rows.shape[:1] + rows.shape[1 - extra:])
        extra = 0
    out = NP.empty(shape, dtype=dtype)
    out[...] = rows.reshape(rows.shape[:1] + (1,) * extra + rows.shape[1:])
    return out
'''
WHOLE_HELPER = "_tfperf_per_example"
WHOLE_SOURCE = '''

def _tfperf_per_example(reduce, x, **kwargs):
    """tfperf tune: `reduce` of each example of the batch x (axis 0) over its every axis,
    never over the batch axis."""
    return reduce(x, axis=list(range(1, len(x.shape))), **kwargs)
'''
#: TensorFlow ops of one example that take an axis (or a permutation, multiples): where
#: it is (the positional argument's place), and the default axis when none is given (None:
#: the text must give it; ``squeeze`` without one squeezes the batch axis of size 1 too).
AXIS_OPS: dict[str, tuple[int, int | None]] = {
    "stack": (1, 0), "concat": (1, None), "reverse": (1, None), "expand_dims": (1, None),
    "squeeze": (1, None), "roll": (2, None), "transpose": (1, None), "tile": (1, None)}
AXIS_HELPER = "_tfperf_past_batch"
AXIS_SOURCE = '''

def _tfperf_past_batch(axis, rank=None):
    """tfperf tune: one example's axis (an int, or a list or tuple of them) on the batch: a
    non-negative axis moves past the batch axis, one counted from the end stays; None (every
    axis of the example) is every axis after the batch axis of the batch of ``rank``."""
    if axis is None:
        if rank is None:
            raise ValueError("tfperf tune: axis=None on one example needs the batch's rank")
        return list(range(1, rank))
    if isinstance(axis, (list, tuple)):
        return type(axis)(a + 1 if a >= 0 else a for a in axis)
    return axis + 1 if axis >= 0 else axis
'''
TRUE_INDEX_HELPER = "_tfperf_true_index"
TRUE_INDEX_SOURCE = '''

def _tfperf_true_index(reduce, m, k, empty):
    """tfperf tune: `reduce` (reduce_min/max) of each example's where(m)[:, k] for the batch
    m (axis 0): its True elements' indices along the example's axis k, without the shape set
    by the data; `empty` (the empty reduction's value) for an example with no True."""
    m = {tf}.cast(m, {tf}.bool)
    n = {tf}.shape(m, out_type={tf}.int64)[k + 1]
    index = {tf}.reshape({tf}.range(n), [-1] + [1] * (len(m.shape) - k - 2))
    picked = {tf}.where(m, index, {tf}.constant(empty, {tf}.int64))
    return reduce(picked, axis=list(range(1, len(m.shape))))
'''
FOLD_HELPER = "_tfperf_folded"
FOLD_SOURCE = '''

def _tfperf_folded(op, images, *args, **kwargs):
    """tfperf tune: an image op that takes one image or a batch of them ([h, w, c] or
    [n, h, w, c]) on images of more leading axes (one example's batch, for every example):
    the leading axes folded into one batch, the op once, unfolded again."""
    images = {tf}.convert_to_tensor(images)
    rank = images.shape.rank
    if rank is None or rank <= 4:
        return op(images, *args, **kwargs)
    lead = images.shape[:-3]
    lead = lead.as_list() if lead.is_fully_defined() else {tf}.shape(images)[:-3]
    inner = images.shape[-3:]
    inner = inner.as_list() if inner.is_fully_defined() else {tf}.shape(images)[-3:]
    out = op({tf}.reshape(images, {tf}.concat([[-1], inner], 0)), *args, **kwargs)
    rest = out.shape[1:]
    rest = rest.as_list() if rest.is_fully_defined() else {tf}.shape(out)[1:]
    return {tf}.reshape(out, {tf}.concat([lead, rest], 0))
'''
#: tf.image ops that take one image or a batch ([h, w, c] or [n, h, w, c]) and no more axes:
#: given a batch of examples that are batches of images, the leading axes are folded
#: (held-out round 11's c10: a map of tf.image.resize over the time axis of a 5-D video).
#: One tensor out only: ``image_gradients`` returns a pair that one reshape cannot unfold.
FOLDED_IMAGE_OPS = {"resize", "resize_with_pad", "resize_with_crop_or_pad", "central_crop",
                    "flip_left_right", "flip_up_down", "rot90", "transpose",
                    "crop_to_bounding_box", "pad_to_bounding_box", "total_variation",
                    "sobel_edges", "extract_patches"}
#: Module names whose attributes are functions, not array methods (``np.max(x)``).
MODULES = {"tf", "np", "numpy", "tensorflow", "tnp", "math"}
#: Calls whose arguments after the first are indices (not lined up with values).
GATHERS = {"gather", "embedding_lookup", "gather_nd", "one_hot"}


def _context(text: str, name: str) -> tuple[Any, ast.FunctionDef]:
    from tfperf.lint.semantic import Context

    tree = parse(text)
    return Context(tree, text, "<tune>"), find_function(tree, name)


def iterations(text: str, name: str, tensors: frozenset[str] = frozenset()) -> list[Iteration]:
    ctx, fn = _context(text, name)
    out = []
    for model in function_loops(ctx, fn):
        it = read(ctx, fn, text, model, tensors)
        if it is not None:
            out.append(it)
    return out


def helper_name(text: str) -> str:
    k = 1
    while f"{HELPER}{k}" in text:
        k += 1
    return f"{HELPER}{k}"


def _joined(it: Iteration, text: str, value: str, tf: str) -> list[tuple[ast.AST, str]]:
    """The consumer's edit: the joined values as ``value`` (a name or an expression)."""
    if it.consumer is None or (it.shared and it.join == "stack"):
        return []
    if it.join == "stack":
        return [(it.consumer, value)]
    if it.join == "concat":
        return [(it.consumer, f"{tf}.reshape({value}, {tf}.concat([[-1], "
                              f"{tf}.shape({value})[2:]], 0))")]
    if it.join.startswith("stack:"):
        return [(it.consumer, f"{tf}.experimental.numpy.moveaxis({value}, 0, "
                              f"{it.join.split(':')[1]})")]
    if it.join.startswith("concat:"):
        return [(it.consumer, f"{JOIN_HELPER}({value}, {it.join.split(':')[1]})")]
    if it.join.startswith("array:"):  # a NumPy buffer filled row by row: its dtype kept
        dtype = it.join.split(":", 2)[2]
        return [(it.consumer, f"{ROWS_HELPER}({value}, {_buffer_shape(it, text)}, {dtype})")]
    if it.join == "add_n":
        return [(it.consumer, f"{tf}.reduce_sum({value}, axis=0)")]
    if it.join == "list":
        assert isinstance(it.consumer, ast.Call)
        return [(it.consumer.args[0], value)]
    return []


def _buffer_shape(it: Iteration, text: str) -> str:
    """The shape of the NumPy buffer ``it`` fills, as its creation gives it (``x.shape``, a
    tuple; ``x.shape`` for ``np.zeros_like(x)``): a value of another shape per row is
    broadcast into it, as the loop's ``out[i] = value`` does (review 40)."""
    assert isinstance(it.init, ast.Assign) and isinstance(it.init.value, ast.Call)
    first = it.init.value.args[0]
    if isinstance(first, ast.Name):
        return f"{first.id}.shape"
    return text_of(text, first)


def rewrite_one(text: str, it: Iteration, tf: str, body_lines: list[str], result: str,
                 expression: str | None) -> str:
    """Replace the loop of ``it``: a statement loop by ``body_lines`` (at its indentation),
    its collector's creation dropped and its consumer given ``result``; a comprehension's
    consumer by ``expression``."""
    if it.join.startswith("concat:") and f"def {JOIN_HELPER}(" not in text:
        text = text.rstrip("\n") + "\n" + JOIN_SOURCE.replace("TF.", f"{tf}.")
    if it.join.startswith("array:") and f"def {ROWS_HELPER}(" not in text:
        text = text.rstrip("\n") + "\n" + ROWS_SOURCE.replace(
            "NP.", it.join.split(":", 2)[1] + ".")
    if expression is not None and it.name:  # rows = [...] ... tf.stack(rows)
        return replace_nodes(text, [(it.node, expression), *_joined(it, text, it.name, tf)])
    if expression is not None:
        return replace_nodes(text, _joined(it, text, expression, tf))
    loop = it.node
    pad = indent_of(text, loop.lineno)
    block = "\n".join(pad + r if r.strip() else r for r in body_lines)
    text = replace_nodes(text, _joined(it, text, result, tf))  # after the loop: first
    rows = text.splitlines(keepends=True)
    rows[loop.lineno - 1:loop.end_lineno] = [block + "\n"]
    if it.init is not None:  # before the loop: last
        del rows[it.init.lineno - 1:it.init.end_lineno]
    return "".join(rows)


def vectorized(text: str, it: Iteration, tf: str) -> str:
    """``it`` as ``tf.vectorized_map`` of one iteration over ``tf.range(n)``."""
    if it.consumer is None and it.join != "sum":
        raise SourceEditError("no consumer")
    if it.running:
        raise SourceEditError("a running sum carries from one iteration to the next")
    ranged = f"{tf}.range({it.stop})"
    if isinstance(it.node, ast.Call):  # tf.map_fn(fn, elems) → tf.vectorized_map(fn, elems)
        parts = map_fn_parts(it.node)
        if parts is None:
            raise SourceEditError("a tf.map_fn keyword changes its iterations")
        why = mapped_side_effects(text, parts[0])
        if why:  # pfor runs the function's Python once, the map once per element
            raise SourceEditError(why)
        fn, elems = (text_of(text, a) for a in parts)
        return replace_nodes(text, [(it.node, f"{tf}.vectorized_map({fn}, {elems})")])
    if isinstance(it.node, (ast.ListComp, ast.GeneratorExp)):
        elt = text_of(text, it.value)
        if it.binds:
            names = ", ".join(b[0] for b in it.binds)
            picks = ", ".join(b[1] for b in it.binds)
            elt = f"(lambda {names}: {elt})({picks})"
        expr = f"{tf}.vectorized_map(lambda {it.index}: {elt}, {ranged})"
        return rewrite_one(text, it, tf, [], "", expr)
    helper = helper_name(text)
    lines = [f"def {helper}({it.index}):"]
    lines += [f"    {name} = {pick}" for name, pick, _ in it.binds]
    for s in it.stmts:
        lines += ["    " + r for r in stmt_text(text, s).splitlines()]
    lines.append(f"    return {text_of(text, it.value)}")
    mapped = f"{tf}.vectorized_map({helper}, {ranged})"
    if it.join == "sum":
        lines.append(f"{it.name} = {it.name} + {tf}.reduce_sum({mapped}, axis=0)")
        return rewrite_one(text, it, tf, lines, "", None)
    lines.append(f"{it.name} = {mapped}")
    return rewrite_one(text, it, tf, lines, it.name, None)


#: Element-wise functions of two tensors that broadcast them (tf.multiply(c[i], u[i])).
ELEMENTWISE_PAIRS = frozenset({"multiply", "add", "subtract", "divide", "truediv",
                               "maximum", "minimum", "pow", "squared_difference"})


def one_wide_slice(p: ast.AST, index: str) -> bool:
    """``i:i + 1`` (or ``i:1 + i``) of the loop's index ``i``, no step."""
    if not (isinstance(p, ast.Slice) and p.step is None and isinstance(p.lower, ast.Name)
            and p.lower.id == index and isinstance(p.upper, ast.BinOp)
            and isinstance(p.upper.op, ast.Add)):
        return False
    sides = [p.upper.left, p.upper.right]
    return any(isinstance(a, ast.Name) and a.id == index for a in sides) \
        and any(isinstance(b, ast.Constant) and b.value == 1
                and not isinstance(b.value, bool) for b in sides)


class _Batch(ast.NodeTransformer):
    """One iteration's code on the whole batch: ``x[i]`` → ``x``, ``x[i, k]`` → ``x[:, k]``,
    an item → its tensor, ``t[<batched>]`` → ``tf.gather(t, <batched>)``; with ``axes``,
    reductions of one example over its last axis and explicit axes shifted past the batch
    axis; ``expand``: per-example scalars of rank-1 arrays lined up against that many
    per-example axes."""

    def __init__(self, it: Iteration, tf: str, axes: bool, expand: int,
                 scalars: set[str], depth: int = 0, index_value: str = "",
                 reducing: frozenset[str] = frozenset()) -> None:
        self.reducing = reducing  # the module's functions that reduce what they are given
        self.bound: dict[str, str] = {}  # names the function binds once (n = x.shape[0])
        self.ranks: dict[str, int] = {}  # the tuned function's arguments' ranks in the run
        self.index_value = index_value  # the batch of indices, where the index is a value
        self.it, self.tf, self.axes, self.expand, self.scalars = it, tf, axes, expand, scalars
        self.depth = depth  # batch axes of inner loops already batched, after this one's
        self.items = {name: whole for name, _, whole in it.binds}
        self.index = it.index
        self.failed = ""
        self.in_gather = 0
        self.made: set[int] = set()  # nodes the rewrite made (batches)
        self.locals: set[str] = set()  # the body's names bound to batches
        self.wholes: set[int] = set()  # reductions of a whole example (one value each)
        self.whole_names: dict[str, ast.Call] = {}  # body names bound to one of them

    def visit(self, node: ast.AST) -> Any:
        new = super().visit(node)
        if new is not node and isinstance(new, ast.AST):
            self.made.add(id(new))
        return new

    def touched(self, node: ast.AST) -> bool:
        """``node`` (already rewritten) holds a batch: it reads what the rewrite put in."""
        return any(id(n) in self.made for n in ast.walk(node))

    def batched(self, node: ast.AST) -> bool:
        return any(isinstance(n, ast.Name) and (n.id == self.index or n.id in self.items)
                   for n in ast.walk(node))

    def _scalar(self, node: ast.expr, name: str) -> ast.expr:
        if self.expand and not self.in_gather and name in self.scalars:
            shape = "[-1]" + " + [1]" * self.expand
            return ast.parse(f"{self.tf}.reshape({ast.unparse(node)}, {shape})",
                             mode="eval").body
        return node

    def _whole_example(self, node: ast.Call, method: bool) -> ast.expr | None:
        """A reduction of one whole example (``im.max()``, ``tf.reduce_max(im)``) of any
        rank, on the batch: over every axis after the batch axis (``axis=tuple(range(1,
        im.ndim))``), the batch axis never reduced; None where that is not written here (an
        operand that is not a plain name or subscript is not read twice; loops inside it
        batched already put their axes after this one's)."""
        value = node.func.value if method else node.args[0]  # type: ignore[attr-defined]
        if method and (node.args or node.keywords):
            return None
        if method and node.func.attr not in WHOLE_METHODS:  # type: ignore[attr-defined]
            return None
        if self.depth:
            return None
        new = self.visit(copy.deepcopy(value))
        if not self.touched(new) or (method and not _plain(new)):
            return None
        text = ast.unparse(new)
        if not _plain(new):  # computed once, by the helper written into the module
            call = ast.parse(f"{WHOLE_HELPER}({ast.unparse(node.func)}, _)", mode="eval").body
            assert isinstance(call, ast.Call)
            call.args[1] = new
            call.keywords = [self.visit(k) for k in node.keywords]
            self.made.add(id(call))
            self.wholes.add(id(call))
            return call
        axes = f"tuple(range(1, {text}.ndim))" if method \
            else f"list(range(1, len({text}.shape)))"
        call = copy.deepcopy(node)
        if method:
            call.func.value = new  # type: ignore[attr-defined]
        else:
            call.args = [new]
            call.keywords = [self.visit(k) for k in call.keywords]
        call.keywords.append(ast.keyword("axis", ast.parse(axes, mode="eval").body))
        self.made.add(id(call))
        self.wholes.add(id(call))
        return call

    def example_rank(self, node: ast.expr) -> int | None:
        """The rank of one example of ``node``, where ``node`` is one example of an argument
        (``x[i]``, or the item ``x`` of ``for x in xs``); None for anything else."""
        if self.depth:
            return None
        name = None
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) \
                and isinstance(node.slice, ast.Name) \
                and (node.slice.id == self.index or node.slice.id in self.items):
            name = node.value.id
        elif isinstance(node, ast.Name) and node.id in self.items:
            name = self.items[node.id]
        rank = self.ranks.get(name or "")
        return rank - 1 if rank else None

    def line_up(self, before: tuple[ast.expr, ast.expr],
                after: tuple[ast.expr, ast.expr]) -> tuple[ast.expr, ast.expr]:
        """Two operands of an element-wise op, batched: ``c[i] * u[i]`` with ``c[i]`` of
        rank 2 and ``u[i]`` of rank 1 broadcasts ``u[i]`` against ``c[i]``'s last axes; on
        the batch, ``u``'s example axes go after the batch axis (``u[:, None, :]``), not
        against ``c``'s batch axis (held-out round 10's c04m)."""
        r0, r1 = self.example_rank(before[0]), self.example_rank(before[1])
        if r0 is None or r1 is None or r0 == r1:
            return after
        low = 0 if r0 < r1 else 1
        side = after[low]
        lined = ast.Subscript(side, ast.Tuple([ast.Slice()] + [ast.Constant(None)]
                                              * abs(r0 - r1), ast.Load()), ast.Load())
        self.made.add(id(lined))
        return (lined, after[1]) if low == 0 else (after[0], lined)

    def masked_reduction(self, node: ast.Call, last: str) -> ast.expr | None:
        """``reduce_min(boolean_mask(x, m))`` of one example: on the batch, the reduction of
        ``where(m, x, identity)`` over every example axis (held-out round 10's c01: a row's
        closest negative); an empty mask gives the identity, as the empty reduction does."""
        from tfperf.tune.map_bodies import MASKED_IDENTITY, masked_reductions

        if last not in MASKED_IDENTITY or id(node.args[0] if node.args else None) not in \
                masked_reductions(node):
            return None
        mask_call = node.args[0]
        assert isinstance(mask_call, ast.Call)
        x, m = (self.visit(copy.deepcopy(a)) for a in mask_call.args)
        if not (self.touched(x) and self.touched(m)) or not _plain(x):
            return None
        xs, tf = ast.unparse(x), self.tf
        text = (f"{ast.unparse(node.func)}({tf}.where({ast.unparse(m)}, {xs}, "
                f"{tf}.cast({MASKED_IDENTITY[last]}, {xs}.dtype)), "
                f"axis={tf}.range(1, {tf}.rank({xs})))")
        new = ast.parse(text, mode="eval").body
        self.made.add(id(new))
        return new

    def axis_op(self, node: ast.Call, last: str) -> ast.Call:
        """An op of one example that takes an axis (``tf.stack([a, b])``, ``tf.reverse(r,
        [0])``, ``tf.concat``, ``expand_dims``, ``squeeze``, ``roll``) or a permutation
        (``transpose``, ``tile``'s multiples), on the batch: its axes past the batch axis
        (they were left as written: round 10's spellings stacked a row's first and last
        index along the batch axis). Where the text does not give them, the rewrite fails."""
        at, default = AXIS_OPS[last]
        given = next((k for k in node.keywords if k.arg in ("axis", "perm", "multiples")),
                     None)
        if given is not None:
            value = given.value
        elif len(node.args) > at:
            value = node.args[at]
        elif default is not None:
            node.keywords.append(ast.keyword("axis", ast.Constant(default + 1)))
            return node
        else:
            self.failed = f"{last} of one example without its axes"
            return node
        if last in ("transpose", "tile"):
            try:
                listed = ast.literal_eval(value)
            except ValueError:
                listed = None
            if not isinstance(listed, (list, tuple)):
                self.failed = f"{last} of one example with axes the text does not list"
                return node
            new = [0] + [p + 1 for p in listed] if last == "transpose" else [1, *listed]
            value_new: ast.expr = ast.parse(repr(new), mode="eval").body
        else:
            value_new = _shifted(value)
        if given is not None:
            given.value = value_new
        else:
            node.args[at] = value_new
        return node

    def true_index(self, node: ast.Call, last: str) -> ast.expr | None:
        """``reduce_min(tf.where(m)[:, k])`` of one example (its first True index along axis
        ``k``; ``reduce_max``: the last): on the batch, the reduction of ``where(m, index,
        extreme)`` over every example axis, ``index`` counting along axis ``k`` + 1; a row
        with no True gets the dtype's extreme, as the empty reduction does (held-out round
        10's c06: a bounding box from a mask)."""
        from tfperf.tune.map_bodies import TRUE_INDEX_EMPTY, true_index

        found = true_index(node)
        if found is None:
            return None
        m = self.visit(copy.deepcopy(found[0]))
        if not self.touched(m):
            return None
        text = (f"{TRUE_INDEX_HELPER}({self.tf}.{last}, {ast.unparse(m)}, {found[1]}, "
                f"{self.tf}.int64.{TRUE_INDEX_EMPTY[last]})")
        new = ast.parse(text, mode="eval").body
        self.made.add(id(new))
        return new

    def per_example_scalar(self, node: ast.expr) -> bool:
        """``node`` (not yet rewritten) is one scalar per example by what it reads: the bare
        index (``tf.cast(i, ...)``) or elements ``t[i]`` of rank-1 arguments, nothing else
        of the batch; False where that is not known."""
        inside: set[int] = set()
        ranks: list[int | None] = []
        for n in ast.walk(node):
            if isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Name) \
                    and n.slice.id == self.index:
                inside.add(id(n.slice))
                ranks.append(self.example_rank(n))
            elif isinstance(n, ast.Subscript) and self.batched(n.slice):
                return False
        for n in ast.walk(node):
            if isinstance(n, ast.Name) and n.id == self.index and id(n) not in inside:
                ranks.append(0)
            elif isinstance(n, ast.Name) and n.id in self.items:
                ranks.append(self.example_rank(n))
        return bool(ranks) and all(r == 0 for r in ranks)

    def visit_Compare(self, node: ast.Compare) -> Any:
        if len(node.comparators) != 1:
            return self.generic_visit(node)
        # s[i] > t[i] (a row against its own threshold): lined up as a BinOp's operands
        before = (node.left, node.comparators[0])
        node.left, right = self.line_up(before, (self.visit(node.left),
                                                 self.visit(node.comparators[0])))
        node.comparators = [right]
        return node

    def visit_BinOp(self, node: ast.BinOp) -> Any:
        before = (node.left, node.right)
        scalar = {id(node.left): self.per_example_scalar(node.left),
                  id(node.right): self.per_example_scalar(node.right)}
        node.left, node.right = self.line_up(before, (self.visit(node.left),
                                                      self.visit(node.right)))
        scalar = {id(node.left): scalar[id(before[0])], id(node.right): scalar[id(before[1])]} \
            if len({id(node.left), id(node.right)}) == 2 else {}
        if isinstance(node.op, ast.Sub) and isinstance(node.left, ast.Call) \
                and self.touched(node.right):
            # sum(x[:i + 1]) - x[i] of every step is sum(x[:i]): the exclusive cumsum
            # (one op, not a cumsum and a subtraction)
            excl = exclusive_of(node.left, node.right, self.tf)
            if excl is not None:
                return ast.parse(excl, mode="eval").body
        if self.touched(node.left) and self.touched(node.right):
            # one example's reduced scalar against one example's tensor (im / im.max(), or
            # m = im.max() and im / m): the batch of scalars keeps its reduced axes, so that
            # it lines up per example
            for side, other in ((node.left, node.right), (node.right, node.left)):
                if scalar.get(id(other)):  # against one scalar per example: as it is
                    continue              # (keepdims made (n, 1) * (n,) an (n, n))
                call = self.whole_names.get(side.id) if isinstance(side, ast.Name) \
                    else side if id(side) in self.wholes else None
                if isinstance(call, ast.Call) and not any(k.arg == "keepdims"
                                                          for k in call.keywords):
                    call.keywords.append(ast.keyword("keepdims", ast.Constant(True)))
        return node

    def visit_Assign(self, node: ast.Assign) -> Any:
        node.value = self.visit(node.value)
        if id(node.value) in self.wholes and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name):
            assert isinstance(node.value, ast.Call)
            self.whole_names[node.targets[0].id] = node.value
        if self.touched(node.value):  # the names it binds hold batches from here on
            self.locals |= {n.id for t in node.targets for n in ast.walk(t)
                            if isinstance(n, ast.Name)}
        return node

    def visit_Name(self, node: ast.Name) -> Any:
        if node.id in self.locals and isinstance(node.ctx, ast.Load):
            self.made.add(id(node))
            return node
        if node.id == self.index:
            if self.index_value and isinstance(node.ctx, ast.Load):  # every index at once
                return ast.parse(self.index_value, mode="eval").body
            self.failed = f"the index {self.index!r} is used other than as a subscript"
            return node
        if node.id in self.items and isinstance(node.ctx, ast.Load):
            whole = ast.parse(self.items[node.id], mode="eval").body
            if self.depth:  # inner loops' batch axes come after this one's
                return ast.Subscript(whole, ast.Tuple([ast.Slice()] + [ast.Constant(None)]
                                                      * self.depth, ast.Load()), ast.Load())
            return self._scalar(whole, node.id)
        return node

    def _one_wide(self, p: ast.AST) -> bool:
        return one_wide_slice(p, self.index)

    def _rows_stop(self, value: ast.expr, axis: int = 0) -> ast.expr | None:
        """The loop's count as a slice bound for the tensor ``value`` whose axis ``axis``
        the index reads, where that count is not provably that axis's length (``range(k)``
        on a tensor of more rows: its batch is the first ``k`` rows, not every row); None
        where it is (``range(x.shape[0])``, ``n = len(x)``: no slice)."""
        stop = self.it.stop.replace(" ", "")
        stop = self.bound.get(stop, stop).replace(" ", "")
        whole = ast.unparse(value).replace(" ", "")
        spellings = rows_of(whole) if axis == 0 \
            else {f"{whole}.shape[{axis}]", f"tf.shape({whole})[{axis}]"}
        if stop in spellings:
            return None
        return ast.parse(self.it.stop, mode="eval").body

    def _first_rows(self, value: ast.expr) -> ast.expr:
        """``value[:stop]`` where :meth:`_rows_stop` gives a bound, else ``value``."""
        stop = self._rows_stop(value)
        if stop is None:
            return value
        return ast.Subscript(value, ast.Slice(upper=stop), ast.Load())

    def visit_Subscript(self, node: ast.Subscript) -> Any:
        sl = node.slice
        parts = list(sl.elts) if isinstance(sl, ast.Tuple) else [sl]
        if isinstance(node.ctx, ast.Load):
            # x[:, i:i + 1]: one element's axis kept, as x[:, i, None] (i within the axis,
            # the loop's index: the same value); then the index's forms below apply.
            parts = [q for p in parts for q in (
                [ast.Name(self.index, ast.Load()), ast.Constant(None)] if self._one_wide(p)
                else [p])]
        at = [k for k, p in enumerate(parts) if isinstance(p, ast.Name) and p.id == self.index]
        if at:
            if len(at) == 1 and at[0] > 0 and not self.depth and isinstance(node.ctx, ast.Load) \
                    and all(_whole(p) for p in parts[:at[0]]):
                # x[:, i, ...]: the batch is that axis moved first (the axis kept).
                moved = ast.parse(f"{self.tf}.experimental.numpy.moveaxis(_, {at[0]}, 0)",
                                  mode="eval").body
                assert isinstance(moved, ast.Call)
                moved.args[0] = self.visit(node.value)
                stop = self._rows_stop(node.value, at[0])
                rest = [self.visit(p) for p in parts[at[0] + 1:]]
                if stop is not None:  # (a count below that axis's length: its first ones)
                    moved = ast.Subscript(moved, ast.Slice(upper=stop), ast.Load())
                if not rest:
                    return moved
                return ast.Subscript(moved, ast.Tuple([ast.Slice()] * (at[0] + 1) + rest,
                                                      ast.Load()), node.ctx)
            if len(at) == 1 and at[0] == 1 and _ellipsis(parts[0]) and not self.depth \
                    and isinstance(node.ctx, ast.Load) and all(_whole(p) for p in parts[2:]):
                # x[..., i] (x[..., i, :]): the axis counted from the end, moved first; the
                # axes after it are whole, so the moved tensor is the batch as it is.
                axis = -(len(parts) - 1)
                moved = ast.parse(f"{self.tf}.experimental.numpy.moveaxis(_, {axis}, 0)",
                                  mode="eval").body
                assert isinstance(moved, ast.Call)
                moved.args[0] = self.visit(node.value)
                stop = self._rows_stop(node.value, axis)
                return moved if stop is None else ast.Subscript(moved, ast.Slice(upper=stop),
                                                                ast.Load())
            # The index's axis is the first one left: every part before it picks one element.
            if len(at) > 1 or any(isinstance(p, ast.Slice) or _ellipsis(p)
                                  for p in parts[:at[0]]):
                self.failed = "the index's axis is not the first one left"
                return node
            value = self.visit(node.value)
            load = isinstance(node.ctx, ast.Load)
            if len(parts) == 1 and not self.depth:
                name = node.value.id if isinstance(node.value, ast.Name) else ""
                return self._scalar(self._first_rows(value) if load else value, name)
            if at[0] == 0 and len(parts) == 2 and not self.depth and self.batched(parts[1]) \
                    and isinstance(node.ctx, ast.Load):
                # x[i, ids[i]]: each example's own element of its row (a per-example
                # lookup), not every example's ids in every row.
                self.in_gather += 1
                index = self.visit(parts[1])
                self.in_gather -= 1
                call = ast.parse(f"{self.tf}.gather(_, _, axis=1, batch_dims=1)",
                                 mode="eval").body
                assert isinstance(call, ast.Call)
                call.args = [self._first_rows(value), index]
                return call
            # x[i, k] -> x[:, k]; x[i, k] over range(k0) of fewer rows -> x[:k0, k]
            stop = self._rows_stop(node.value, at[0]) if load else None
            new = [self.visit(p) for p in parts[:at[0]]] + [ast.Slice(upper=stop)] \
                + [ast.Constant(None)] * self.depth + [self.visit(p) for p in parts[at[0] + 1:]]
            return ast.Subscript(value, ast.Tuple(new, ast.Load()), node.ctx)
        if isinstance(node.value, ast.Name) and node.value.id in self.items \
                and isinstance(node.ctx, ast.Load):  # one item's subscript: past the batch
            whole = ast.parse(self.items[node.value.id], mode="eval").body
            new = [ast.Slice()] + [ast.Constant(None)] * self.depth \
                + [self.visit(p) for p in parts]
            return ast.Subscript(whole, ast.Tuple(new, ast.Load()), node.ctx)
        if not isinstance(sl, (ast.Tuple, ast.Slice)) and self.batched(sl):
            self.in_gather += 1
            index = self.visit(sl)
            self.in_gather -= 1
            value = self.visit(node.value)
            return ast.Call(ast.parse(f"{self.tf}.gather", mode="eval").body, [value, index], [])
        if isinstance(node.ctx, ast.Load) and not self.batched(sl):
            value = self.visit(node.value)
            if self.touched(value):
                # x[i][:3], (x[i] * 2)[..., 0]: one example's subscript, on the batch past
                # the batch axis (it sliced the batch axis before)
                if self.depth:
                    self.failed = "a subscript of one example inside batched loops"
                    return node
                new_sub = ast.Subscript(value, ast.Tuple([ast.Slice(), *parts], ast.Load()),
                                        ast.Load())
                self.made.add(id(new_sub))
                return new_sub
            node.value = value
            return node
        return self.generic_visit(node)

    def stop_of(self, node: ast.expr) -> str | None:
        """The iteration count, where ``node`` is the iteration's index (the loop's, or a
        map's item over ``tf.range(n)``); None for anything else."""
        if not isinstance(node, ast.Name):
            return None
        if node.id == self.index:
            return self.it.stop
        whole = self.items.get(node.id)
        if whole is None:
            return None
        call = ast.parse(whole, mode="eval").body
        if not isinstance(call, ast.Call) or not ast.unparse(call.func).endswith("range") \
                or call.keywords:
            return None
        if len(call.args) == 1:
            return ast.unparse(call.args[0])
        if len(call.args) == 2 and isinstance(call.args[0], ast.Constant) \
                and call.args[0].value == 0:
            return ast.unparse(call.args[1])
        return None

    def visit_Call(self, node: ast.Call) -> Any:
        func = ast.unparse(node.func)
        last = func.rsplit(".", 1)[-1]
        masked = None if self.depth else self.masked_reduction(node, last)
        if masked is not None:
            return masked
        first = None if self.depth or not self.axes else self.true_index(node, last)
        if first is not None:
            return first
        if last in ELEMENTWISE_PAIRS and len(node.args) == 2 \
                and all(k.arg == "name" for k in node.keywords):  # (a name changes no shape)
            before = (node.args[0], node.args[1])
            node.args = list(self.line_up(before, (self.visit(node.args[0]),
                                                   self.visit(node.args[1]))))
            return node
        pre = None if self.depth else prefix_reduction(node, self.stop_of, self.bound)
        if pre is not None:  # reduce_sum(x[:i]) of every step: one cumulative op of x
            rank_one = isinstance(pre.base, ast.Name) and pre.base.id in self.scalars
            return ast.parse(cumulative(pre, self.tf, rank_one, WHOLE_HELPER, self.bound),
                             mode="eval").body
        if isinstance(node.func, ast.Attribute) and last in REDUCTION_METHODS \
                and self.touched(self.visit(copy.deepcopy(node.func.value))):
            # an array method of one example's value (held-out round 6's c02: im / im.max()
            # per image), not a module's function (tf.argmax): over every axis but the
            # batch's, never over the batch
            whole = self._whole_example(node, method=True)
            if whole is not None:
                return whole
            self.failed = (f"a reduction method of one example (.{last}()) would reduce "
                           "the whole batch")
            return node
        if last in WHOLE_REDUCTIONS and self.axes and len(node.args) == 1 \
                and not any(k.arg in ("axis", "reduction_indices") for k in node.keywords):
            whole = self._whole_example(node, method=False)
            if whole is not None:
                return whole
        if func in self.reducing and any(self.touched(self.visit(copy.deepcopy(a)))
                                         for a in [*node.args, *node.keywords]):
            # a function of the module given one example's value reduces it: given the
            # batch, its reduction would take the batch (round 6's c02 in a helper)
            self.failed = f"{func}() reduces one example: given the batch it would reduce it"
            return node
        if func == "float" and len(node.args) == 1 and not node.keywords:
            arg = self.visit(node.args[0])
            if self.touched(arg):  # float() of one example's value: the batch as it is
                return arg
            node.args = [arg]
            return node
        if last == "matvec" and len(node.args) == 2 and not self.batched(node.args[0]) \
                and self.batched(node.args[1]) and all(
                    k.arg in ("transpose_a",) and isinstance(k.value, ast.Constant)
                    for k in node.keywords):
            # One example's matrix-vector product, on the batch: one matrix product (a
            # broadcast matvec would run one small product per example).
            flip = not any(k.value.value for k in node.keywords  # type: ignore[attr-defined]
                           if k.arg == "transpose_a")
            prefix = func[:-len("linalg.matvec")] if func.endswith("linalg.matvec") \
                else f"{self.tf}."
            call = ast.parse(f"{prefix}matmul(_, _{', transpose_b=True' if flip else ''})",
                             mode="eval").body
            assert isinstance(call, ast.Call)
            call.args = [self.visit(node.args[1]), self.visit(node.args[0])]
            return call
        if last == "tensordot" and len(node.args) >= 2 and not self.depth \
                and not self.batched(node.args[0]) and self.batched(node.args[1]) \
                and _axes_one(node):
            # dot(a, v) of one example's vector v: a's last axis against v's, for the batch
            # of v's the batch axis first (a tensordot with the batch as its second operand
            # would contract the batch axis); a matrix a (rank 2, seen in the run) against
            # vectors: one matmul with transpose_b (the tensordot runs a transposed copy).
            a, v = node.args[0], node.args[1]
            matrix = isinstance(a, ast.Name) and self.ranks.get(a.id) == 2 \
                and isinstance(v, ast.Name) and v.id in self.items \
                and self.ranks.get(self.items[v.id]) == 2
            call = ast.parse(f"{self.tf}.matmul(_, _, transpose_b=True)" if matrix
                             else f"{func}(_, _, axes=[[-1], [-1]])", mode="eval").body
            assert isinstance(call, ast.Call)
            call.args = [self.visit(node.args[1]), self.visit(node.args[0])]
            return call
        if last == "einsum" and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str) and "->" in node.args[0].value \
                and "..." not in node.args[0].value and not node.keywords and not self.depth:
            spec = node.args[0].value.replace(" ", "")
            ins, out = spec.split("->")
            parts = ins.split(",")
            letter = next(c for c in "zyxwvutsrqponmlkjihgfedcba" if c not in spec)
            args = [self.visit(a) for a in node.args[1:]]
            batched = [self.batched(a) for a in node.args[1:]]
            product = _matrix_vector(parts, out, batched)
            if product is not None and len(args) == 2:
                # A shared matrix times one example's vector ("kd,d->k"): for the batch,
                # one matrix product (an einsum of the batch runs no faster than a transposed
                # copy and a GEMM; MatMul with transpose_b is one oneDNN call).
                mi, vi, flip = product
                call = ast.parse(f"{self.tf}.matmul(_, _{', transpose_b=True' if flip else ''})",
                                 mode="eval").body
                assert isinstance(call, ast.Call)
                call.args = [args[vi], args[mi]]
                return call
            if len(parts) == len(args) and any(batched):  # the batch axis gets its letter
                parts = [letter + p if b else p for p, b in zip(parts, batched, strict=True)]
                node.args = [ast.Constant(",".join(parts) + "->" + letter + out), *args]
                return node
        if last in GATHERS:  # indices are not lined up against the values' axes
            node.func = self.visit(node.func)
            node.args[:1] = [self.visit(a) for a in node.args[:1]]
            self.in_gather += 1
            node.args[1:] = [self.visit(a) for a in node.args[1:]]
            node.keywords = [self.visit(k) for k in node.keywords]
            self.in_gather -= 1
        else:
            self.generic_visit(node)
        if last == "bincount" and node.args and self.touched(node.args[0]) \
                and not any(k.arg == "axis" for k in node.keywords):
            # One example's counts, for each example: its values as one row, counted per row
            # (a bincount of the batch would count every example's values together).
            rows = ast.parse(f"{self.tf}.reshape(_, [{self.tf}.shape(_)[0], -1])",
                             mode="eval").body
            assert isinstance(rows, ast.Call)
            first = rows.args[1].elts[0]  # type: ignore[attr-defined]
            first.value.args[0] = copy.deepcopy(node.args[0])
            rows.args[0] = node.args[0]  # the batch the rewrite made: still "touched"
            self.made.add(id(rows))
            node.args[0] = rows
            node.keywords.append(ast.keyword("axis", ast.Constant(-1)))
            return node
        if last in FOLDED_IMAGE_OPS and func == f"{self.tf}.image.{last}" and node.args \
                and self.touched(node.args[0]) and not any(isinstance(a, ast.Starred)
                                                           for a in node.args):
            # one example's image (or batch of images), for the batch: the leading axes
            # folded into one batch when there are more than the op takes
            folded = ast.parse(f"{FOLD_HELPER}({func})", mode="eval").body
            assert isinstance(folded, ast.Call)
            folded.args += node.args
            folded.keywords = node.keywords
            self.made.add(id(folded))
            return folded
        if not self.axes or not node.args or not self.touched(node.args[0]):
            return node
        if last in AXIS_OPS and func.startswith(f"{self.tf}."):
            return self.axis_op(node, last)
        if last not in REDUCTIONS:
            return node
        axis = next((k for k in node.keywords if k.arg == "axis"), None)
        # an axis that may be None when it runs: every axis past the batch's (by its rank)
        rank = ast.parse(f"len({ast.unparse(node.args[0])}.shape)", mode="eval").body \
            if _plain(node.args[0]) else None
        if axis is None and len(node.args) > 1 and last.startswith("reduce_"):
            node.args[1] = _shifted(node.args[1], rank)
        elif axis is None:
            node.keywords.append(ast.keyword("axis", ast.Constant(-1)))
        else:
            axis.value = _shifted(axis.value, rank)
        return node


def reducing_functions(text: str) -> frozenset[str]:
    """Names of the module's functions (top level or nested) that call a reduction: given a
    batch where they were given one example, they would reduce across it."""
    out = set()
    for fn in ast.walk(parse(text)):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                isinstance(n, ast.Call) and ast.unparse(n.func).rsplit(".", 1)[-1]
                in REDUCTIONS | WHOLE_REDUCTIONS | REDUCTION_METHODS for n in ast.walk(fn)):
            out.add(fn.name)
    return frozenset(out)


def reduces_the_batch(stmts: list[ast.stmt], text: str) -> str:
    """Why one example's statements, given the whole batch as it is (``x[i]`` → ``x``, no
    axis moved), would reduce across the batch: a reduction without an axis counted from
    the end (``tf.reduce_max(im)``, ``axis=0``), a reduction method (``im.max()``), a module
    function that reduces; "" where none does. Inputs whose examples agree (every image's
    maximum 255) cannot tell such a rewrite apart, so it is refused, not measured."""
    reducing = reducing_functions(text)
    for n in (n for s in stmts for n in ast.walk(s)):
        if not isinstance(n, ast.Call):
            continue
        func = ast.unparse(n.func)
        last = func.rsplit(".", 1)[-1]
        if func in reducing:
            return f"{func}() reduces one example: given the batch it would reduce it"
        method = isinstance(n.func, ast.Attribute) and not (
            isinstance(n.func.value, ast.Name) and n.func.value.id in MODULES)
        if method and last in REDUCTION_METHODS:
            axis = next((k.value for k in n.keywords if k.arg == "axis"),
                        n.args[0] if n.args else None)
            if axis is None or not _from_the_end(axis):
                return f"a reduction method of one example (.{last}()) would reduce the batch"
        elif not method and last in (REDUCTIONS | WHOLE_REDUCTIONS | REDUCTION_METHODS) \
                - {"softmax", "log_softmax"}:  # (their default axis is the last)
            axis = next((k.value for k in n.keywords if k.arg == "axis"),
                        n.args[1] if len(n.args) > 1 else None)
            if axis is None or not _from_the_end(axis):
                return (f"{last} of one example without an axis counted from the end would "
                        "reduce across the batch")
    return ""


def _from_the_end(node: ast.expr) -> bool:
    """A constant negative axis, or a list of them."""
    try:
        value = ast.literal_eval(node)
    except ValueError:
        return False
    values = value if isinstance(value, (list, tuple)) else [value]
    return bool(values) and all(isinstance(v, int) and v < 0 for v in values)


def _plain(node: ast.AST) -> bool:
    """A name, attribute or subscript by names and constants: cheap to read twice."""
    return all(isinstance(n, (ast.Name, ast.Attribute, ast.Subscript, ast.Constant, ast.Slice,
                              ast.Tuple, ast.Load, ast.UnaryOp, ast.USub))
               for n in ast.walk(node))


def _matrix_vector(parts: list[str], out: str, batched: list[bool],
                   ) -> tuple[int, int, bool] | None:
    """(the matrix's operand, the vector's, whether the matrix is transposed) of an einsum
    of a shared matrix and one example's vector contracted over the vector's one axis
    (``"kd,d->k"``: transposed; ``"dk,d->k"``, ``"d,dk->k"``: not); None otherwise."""
    if len(parts) != 2 or batched.count(True) != 1:
        return None
    v = batched.index(True)
    m = 1 - v
    vec, mat = parts[v], parts[m]
    if len(vec) != 1 or len(mat) != 2 or len(set(mat)) != 2 or vec not in mat \
            or out != mat.replace(vec, ""):
        return None
    return m, v, mat[1] == vec


def _axes_one(call: ast.Call) -> bool:
    """``axes=1`` (a keyword or the third argument) of a tensordot, and nothing else."""
    axes = next((k.value for k in call.keywords if k.arg == "axes"), None)
    if axes is None and len(call.args) == 3:
        axes = call.args[2]
    others = [k for k in call.keywords if k.arg != "axes"]
    return isinstance(axes, ast.Constant) and axes.value == 1 and not others


def _whole(node: ast.AST) -> bool:
    """``:`` (a whole axis)."""
    return isinstance(node, ast.Slice) and node.lower is None and node.upper is None \
        and node.step is None


def _ellipsis(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is Ellipsis


def _shifted(node: ast.expr, rank: ast.expr | None = None) -> ast.expr:
    """An explicit axis past the new batch axis: a non-negative constant + 1, a negative one
    as it is; an axis the text does not fix (``axis=[k]``, a parameter) shifted when it runs
    (it was left as written: the batch reduced over the wrong axis)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int) \
            and not isinstance(node.value, bool):
        return ast.Constant(node.value + 1) if node.value >= 0 else node
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) \
            and isinstance(node.operand, ast.Constant):
        return node
    if isinstance(node, (ast.List, ast.Tuple)):
        return type(node)([_shifted(e) for e in node.elts], ast.Load())
    if isinstance(node, ast.Constant):  # (axis=None: every axis, left to the caller)
        return node
    return ast.Call(ast.Name(AXIS_HELPER, ast.Load()), [node] + ([rank] if rank else []), [])


def batched(text: str, it: Iteration, tf: str, axes: bool, expand: int,
            scalars: set[str], depth: int = 0, dtype: str = "",
            ranks: dict[str, int] | None = None) -> str:
    """``it``'s body run once on the whole batch (``depth``: the batch axes of loops inside
    it, already batched, which come after its own); a running sum read each iteration
    becomes a ``tf.cumsum`` of its terms; with ``dtype``, a bare index becomes the batch of
    indices in that dtype, lined up against ``expand`` per-example axes."""
    uses_index = it.uses_index and _bare_index(it)
    if it.nested or it.join == "map_fn" or (uses_index and not dtype):
        raise SourceEditError("the body is not one example's ops")
    if uses_index and _index_sets_a_position(it):
        raise SourceEditError("the index sets a position or a shape (tf.slice's begin, a "
                              "pad): the batch of indices is not one value per example")
    if it.consumer is None and it.join != "sum":
        raise SourceEditError("no consumer")
    if _conditional_on_the_example(it):
        raise SourceEditError("a statement runs only for some examples (an if on the index "
                              "or the item): not one op on the batch")
    if depth and it.join == "sum":
        raise SourceEditError("an accumulation around batched loops")
    index_value = ""
    if uses_index:
        if _index_in_a_reduction(it):
            raise SourceEditError("the index as a value inside a reduction's operand: its "
                                  "batch would be lined up against the output's axes")
        if not axes:  # (its batch, lined up against no axis, meets a step's last axis)
            raise SourceEditError("the index as a value is lined up against each step's "
                                  "axes in the per-example-axes variant only")
        # ``expand`` is the output's per-example rank; a concat or a sum of the steps has
        # each step's rank: one axis more to line up (x[:, j:j + 1] * j joined by concat).
        steps = expand + (it.join.split(":")[0] in ("concat", "add_n", "sum"))
        index_value = (f"{tf}.reshape({tf}.range({it.stop}, dtype={tf}.{dtype}), [-1]"
                       + " + [1]" * steps + ")")
    fix = _Batch(it, tf, axes, expand, scalars, depth, index_value, reducing_functions(text))
    fix.bound = _bound_around(text, it.node)
    fix.ranks = ranks or {}
    stmts = []
    for s in it.stmts:
        update = it.running.get(id(s))
        if update is None:  # (a plain function called per example: its body, inlined)
            stmts.append(fix.visit(inline_calls(text, it.node, copy.deepcopy(s))))
            continue
        term = fix.visit(copy.deepcopy(update.term))
        if not fix.touched(term):  # the same term each step: the step count times it
            term = ast.parse(f"{tf}.reshape({tf}.range(1, {it.stop} + 1, dtype={tf}."
                             f"{dtype or 'float32'}), [-1]{' + [1]' * expand}) * "
                             f"({ast.unparse(term)})", mode="eval").body
            total = term
        else:
            total = ast.parse(f"{tf}.cumsum(_, axis=0)", mode="eval").body
            assert isinstance(total, ast.Call)
            total.args[0] = term
        new = ast.parse(f"{update.name} = {update.name} + _").body[0]
        assert isinstance(new, ast.Assign) and isinstance(new.value, ast.BinOp)
        new.value.right = total
        stmts.append(new)
        fix.locals.add(update.name)
    value = fix.visit(inline_calls(text, it.node, copy.deepcopy(it.value)))
    if fix.failed:
        raise SourceEditError(fix.failed)
    value_text = ast.unparse(value)
    if isinstance(it.node, (ast.ListComp, ast.GeneratorExp, ast.Call)):
        return rewrite_one(text, it, tf, [], "", value_text)
    lines = [r for s in stmts for r in ast.unparse(s).splitlines()]
    if it.join == "sum":
        lines.append(f"{it.name} = {it.name} + {tf}.reduce_sum({value_text}, axis=0)")
        return rewrite_one(text, it, tf, lines, "", None)
    lines.append(f"{it.name} = {value_text}")
    return rewrite_one(text, it, tf, lines, it.name, None)


def _conditional_on_the_example(it: Iteration) -> bool:
    """An ``if`` statement of the body whose test reads the index or an item (``if i % 2 ==
    0: hi.append(...)``, review 40: written as an ``if`` on the batch of indices)."""
    names = {it.index} | {b[0] for b in it.binds}
    return any(isinstance(n, ast.If) and any(isinstance(m, ast.Name) and m.id in names
                                             for m in ast.walk(n.test))
               for s in it.stmts for n in ast.walk(s))


def _bound_around(text: str, node: ast.AST) -> dict[str, str]:
    """Names the innermost function around ``node`` binds once (:func:`bound_once`)."""
    line = getattr(node, "lineno", 0)
    around = [f for f in ast.walk(parse(text)) if isinstance(f, ast.FunctionDef)
              and f.lineno <= line <= (f.end_lineno or f.lineno)]
    return bound_once(max(around, key=lambda f: f.lineno)) if around else {}


#: Ops whose arguments after the first (all of them: the ``*``) are positions or shapes,
#: not values: a batch of indices there is no per-example value (held-out round 10's c11:
#: ``tf.slice(t, [0, i, 0, 0], ...)`` was batched with a float range as its begin).
POSITIONS = {"slice": 1, "strided_slice": 1, "pad": 1, "reshape": 1, "tile": 1,
             "broadcast_to": 1, "roll": 1, "range": 0, "fill": 0, "zeros": 0, "ones": 0,
             "eye": 0, "one_hot": 1, "split": 1}


def _index_sets_a_position(it: Iteration) -> bool:
    """The bare index inside an argument of :data:`POSITIONS` that is a position or shape."""
    nodes = [n for s in it.stmts for n in ast.walk(s)] + list(ast.walk(it.value))
    for n in nodes:
        if not isinstance(n, ast.Call):
            continue
        first = POSITIONS.get(ast.unparse(n.func).rsplit(".", 1)[-1])
        if first is None:
            continue
        args = list(n.args[first:]) + [k.value for k in n.keywords]
        if any(isinstance(m, ast.Name) and m.id == it.index for a in args for m in ast.walk(a)):
            return True
    return False


def _bare_index_nodes(it: Iteration) -> set[int]:
    """The index's reads as a value, other than as a subscript or the bound of a prefix
    reduction (``tf.reduce_sum(x[:i])``, batched as one cumulative op)."""
    nodes = [n for s in it.stmts for n in ast.walk(s)] + list(ast.walk(it.value))
    skip = prefix_uppers(nodes, lambda n: it.stop if isinstance(n, ast.Name)
                         and n.id == it.index else None)
    for sub, k in it.subscripts:
        parts = list(sub.slice.elts) if isinstance(sub.slice, ast.Tuple) else [sub.slice]
        skip.add(id(parts[k]))
    for p in nodes:  # x[i:i + 1]: a subscript too (read as x[i, None])
        if one_wide_slice(p, it.index):
            skip |= {id(n) for n in ast.walk(p)}
    return {id(n) for n in nodes
            if isinstance(n, ast.Name) and n.id == it.index and id(n) not in skip}


def _bare_index(it: Iteration) -> bool:
    """The index is used as a value (see :func:`_bare_index_nodes`)."""
    return bool(_bare_index_nodes(it))


#: Reductions whose value keeps its operand's rank.
_RANK_KEEPING = frozenset({"softmax", "log_softmax", "l2_normalize", "cumsum", "cumprod"})


def _index_in_a_reduction(it: Iteration) -> bool:
    """The index read as a value inside a reduction's operand (``tf.reduce_sum(x[i] * i,
    axis=-1)``): its batch is lined up against the output's per-example axes, not the
    operand's (more of them): another value, or a raise (review 43)."""
    # (a read inside a subscript picks positions, as a slice's bound: no operand met)
    bare = _bare_index_nodes(it) - {id(m) for n in [*it.stmts, it.value] for s in ast.walk(n)
                                    if isinstance(s, ast.Subscript) for m in ast.walk(s.slice)}
    for call in [n for s in [*it.stmts, it.value] for n in ast.walk(s)]:
        if not isinstance(call, ast.Call):
            continue
        f = call.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) \
            else ""
        reducing = name in REDUCTIONS or (isinstance(f, ast.Attribute)
                                          and name in REDUCTION_METHODS)
        kept = name in _RANK_KEEPING or any(
            k.arg == "keepdims" and isinstance(k.value, ast.Constant) and k.value.value is True
            for k in call.keywords)
        if reducing and not kept and any(id(n) in bare for n in ast.walk(call)):
            return True
    return False


def batched_parts(it: Iteration, tf: str, parts: list[ast.expr], text: str,
                  ) -> tuple[list[str], list[str | None]]:
    """The body's statements of ``it`` run once on the whole batch, and each of ``parts``
    (expressions of one iteration) on the batch: None for a part that does not depend on
    the iteration (the same value each time); ``text``: the module (its functions that
    reduce are not given the batch)."""
    if it.nested or it.join == "map_fn" or it.running:
        raise SourceEditError("the body is not one example's ops")
    index_value = f"{tf}.range({it.stop})" if it.uses_index else ""
    fix = _Batch(it, tf, True, 0, set(), 0, index_value, reducing_functions(text))
    stmts = [fix.visit(copy.deepcopy(s)) for s in it.stmts]
    out: list[str | None] = []
    for part in parts:
        new = fix.visit(copy.deepcopy(part))
        out.append(ast.unparse(new) if fix.touched(new) else None)
    if fix.failed:
        raise SourceEditError(fix.failed)
    return [r for s in stmts for r in ast.unparse(s).splitlines()], out


def tensor_names(ctx: LeverContext) -> frozenset[str]:
    """The tuned function's parameters that hold tensors or arrays in the run."""
    return frozenset(tensor_ranks(ctx))


def tensor_ranks(ctx: LeverContext) -> dict[str, int]:
    """The rank of each of the tuned function's parameters that holds a tensor or an array in
    the run (passed by position or by keyword)."""
    ranks: dict[str, int] = {}
    try:
        fn = find_function(parse(ctx.target.source), ctx.target.name)
    except SourceEditError:
        return ranks
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
    given = list(zip(params, ctx.target.args, strict=False))
    given += [(k, v) for k, v in ctx.target.kwargs.items()
              if k in params or k in {a.arg for a in fn.args.kwonlyargs}]
    for name, value in given:
        shape = getattr(value, "shape", None)
        if shape is not None:
            ranks[name] = len(shape)
    return ranks


def stacked_lists(ctx: LeverContext) -> dict[str, int]:
    """The tuned function's parameters that hold a list or tuple of two or more tensors or
    arrays of one shape and dtype (a model's outputs, one per stage: held-out round 8's c09),
    with the rank of their stack: a loop over one is a loop over the rows of that stack."""
    out: dict[str, int] = {}
    try:
        fn = find_function(parse(ctx.target.source), ctx.target.name)
    except SourceEditError:
        return out
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
    given = list(zip(params, ctx.target.args, strict=False))
    given += [(k, v) for k, v in ctx.target.kwargs.items() if k in params]
    for name, value in given:
        if not isinstance(value, (list, tuple)) or len(value) < 2:
            continue
        kinds = {(tuple(getattr(v, "shape", ()) or ()), str(getattr(v, "dtype", "")))
                 if hasattr(v, "shape") and hasattr(v, "dtype") else None for v in value}
        if len(kinds) == 1 and None not in kinds:
            out[name] = len(next(iter(kinds))[0]) + 1  # type: ignore[index]
    return out


def stack_lists_first(text: str, name: str, lists: list[str], tf: str) -> str:
    """``name = tf.stack(name)`` for each list of ``lists`` the function ``name`` reads,
    as its first statements (after a docstring): the batch its loops were rewritten over."""
    fn = find_function(parse(text), name)
    body = fn.body
    first = body[1] if len(body) > 1 and isinstance(body[0], ast.Expr) \
        and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str) \
        else body[0]
    used = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)}
    lines = text.splitlines(keepends=True)
    pad = lines[first.lineno - 1][:first.col_offset]
    if pad.strip():  # ``def f(xs): return …``: an insert there would copy the ``def``
        raise SourceEditError(f"{name}'s first statement shares a line with its def")
    new = "".join(f"{pad}{n} = {tf}.stack({n})\n" for n in lists if n in used)
    lines.insert(first.lineno - 1, new)
    return "".join(lines)


def float_dtype(ctx: LeverContext) -> str:
    """The float dtype of the function's first output (what an index used as a value is
    cast to), "" when it returns none."""
    returns = ctx.returns or []
    first: Any = returns[0] if returns else None
    while isinstance(first, (list, tuple)) and first:
        first = first[0]
    kind = getattr(getattr(first, "dtype", None), "name", "")
    return kind if kind in ("float16", "bfloat16", "float32", "float64") else ""


def _ranks(ctx: LeverContext) -> tuple[dict[str, int], int]:
    """The rank of each argument of the tuned function (by parameter name), and the
    per-example rank of its first output (its rank less the batch axis)."""
    import numpy as np

    ranks = {**stacked_lists(ctx), **tensor_ranks(ctx)}
    out = 0
    returns = ctx.returns or []
    if returns:
        first = returns[0]
        while isinstance(first, (list, tuple)) and first:
            first = first[0]
        out = max(0, int(np.ndim(first)) - 1) if hasattr(first, "shape") else 0
    return ranks, out


def _first_term(loop: ast.For, stmt: ast.stmt) -> tuple[str, ast.expr] | None:
    """``if i == 0: acc = t`` ``else: acc = acc + t`` (or ``acc = t if i == 0 else acc + t``,
    ``if acc is None: ...``): a sum whose first term is its start, as (acc, t)."""
    def first(test: ast.expr, acc: str) -> bool:
        if not isinstance(test, ast.Compare) or len(test.ops) != 1:
            return False
        sides = [test.left, test.comparators[0]]
        names = [x.id for x in sides if isinstance(x, ast.Name)]
        consts = [x.value for x in sides if isinstance(x, ast.Constant)]
        index = loop.target.id if isinstance(loop.target, ast.Name) else None
        if isinstance(test.ops[0], ast.Eq):
            return consts == [0] and names == [index] and index is not None
        return isinstance(test.ops[0], ast.Is) and consts == [None] and names == [acc]

    def later(value: ast.expr, acc: str) -> ast.expr | None:
        if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
            for own, term in ((value.left, value.right), (value.right, value.left)):
                if isinstance(own, ast.Name) and own.id == acc:
                    return term
        return None

    def assigned(s: ast.stmt) -> tuple[str, ast.expr] | None:
        if isinstance(s, ast.Assign) and len(s.targets) == 1 \
                and isinstance(s.targets[0], ast.Name):
            return s.targets[0].id, s.value
        if isinstance(s, ast.AugAssign) and isinstance(s.op, ast.Add) \
                and isinstance(s.target, ast.Name):
            return s.target.id, ast.BinOp(ast.Name(s.target.id, ast.Load()), ast.Add(), s.value)
        return None

    if isinstance(stmt, ast.If) and len(stmt.body) == 1 and len(stmt.orelse) == 1:
        a, b = assigned(stmt.body[0]), assigned(stmt.orelse[0])
        if a is None or b is None or a[0] != b[0] or not first(stmt.test, a[0]):
            return None
        term = later(b[1], a[0])
        if term is not None and ast.unparse(term) == ast.unparse(a[1]):
            return a[0], a[1]
        return None
    got = assigned(stmt)
    if got is not None and isinstance(got[1], ast.IfExp) and first(got[1].test, got[0]):
        term = later(got[1].orelse, got[0])
        if term is not None and ast.unparse(term) == ast.unparse(got[1].body):
            return got[0], got[1].body
    return None


def first_term_sums(text: str, name: str) -> str:
    """Each loop's sum started by its first term (``if i == 0: total = loss else: total =
    total + loss``) as a sum from 0 (``total = 0`` before the loop, ``total = total +
    (loss)`` in it): the loop model's plain accumulation, which the loop levers take."""
    for _ in range(MAX_REWRITES):
        fn = find_function(parse(text), name)
        hit = next(((loop, stmt, got) for loop in ast.walk(fn) if isinstance(loop, ast.For)
                    for stmt in loop.body
                    for got in [_first_term(loop, stmt)] if got is not None), None)
        if hit is None:
            return text
        loop, stmt, (acc, term) = hit
        seg = ast.get_source_segment(text, term) or ast.unparse(term)
        text = replace_nodes(text, [(stmt, f"{acc} = {acc} + ({seg})")])
        rows = text.splitlines(keepends=True)
        rows.insert(loop.lineno - 1, f"{indent_of(text, loop.lineno)}{acc} = 0\n")
        text = "".join(rows)
    return text


def _exclusive_sum(loop: ast.For) -> tuple[ast.stmt, str, ast.expr] | None:
    """(the update, the accumulator, its term) of a sum the body reads before it adds the
    step's term (``out.append(acc); acc = acc + x[i]``): an exclusive prefix sum."""
    body = loop.body
    for k, u in enumerate(body[1:], start=1):
        update = sum_of(u)
        if update is None:
            continue
        acc, term = update
        if isinstance(term, ast.Constant) or acc in names_of(term):  # (a counter; no sum)
            continue
        before, after = body[:k], body[k + 1:]
        loads = {n.id for s in before for n in ast.walk(s)
                 if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        stores = {n.id for s in body for n in ast.walk(s)
                  if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and s is not u}
        if acc not in loads or acc in stores or any(acc in names_of(s) for s in after) \
                or stores & names_of(term):
            continue
        return u, acc, term
    return None


def names_of(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def exclusive_sums(text: str, name: str) -> str:
    """Each loop's sum read before its update (an exclusive prefix sum) as one read after
    it: the update moved first, each earlier read ``acc`` → ``(acc - (term))``; the loop
    model's running sum then (a ``tf.cumsum`` of the terms, less each step's own term)."""
    for _ in range(MAX_REWRITES):
        fn = find_function(parse(text), name)
        hit = next(((loop, got) for loop in ast.walk(fn) if isinstance(loop, ast.For)
                    for got in [_exclusive_sum(loop)] if got is not None), None)
        if hit is None:
            return text
        loop, (update, acc, term) = hit
        seg = ast.get_source_segment(text, term) or ast.unparse(term)
        k = loop.body.index(update)
        reads = [(n, f"({acc} - ({seg}))") for s in loop.body[:k] for n in ast.walk(s)
                 if isinstance(n, ast.Name) and n.id == acc and isinstance(n.ctx, ast.Load)]
        moved = stmt_text(text, update).strip()
        first = loop.body[0].lineno
        text = replace_nodes(text, [*reads, (update, "")])
        rows = text.splitlines(keepends=True)
        if not rows[update.lineno - 1].strip():  # the update's own line, emptied
            del rows[update.lineno - 1]
        rows.insert(first - 1, f"{indent_of(text, first)}{moved}\n")
        text = "".join(rows)
    return text


def counted_sums(text: str, name: str, tf: str) -> str:
    """Each counter in a loop, ``if cond: n += 1`` (an int added when a test holds, no
    ``else``), as the sum it is, ``n += 1 * tf.cast(cond, tf.int32)``: the loop model's plain
    accumulation, which the loop levers take (a Python ``if`` on a tensor runs one
    host round trip per element)."""
    fn = find_function(parse(text), name)
    edits: list[tuple[ast.AST, str]] = []
    for loop in ast.walk(fn):
        if not isinstance(loop, ast.For):
            continue
        for stmt in loop.body:
            if not isinstance(stmt, ast.If) or stmt.orelse or len(stmt.body) != 1:
                continue
            add = stmt.body[0]
            if isinstance(add, ast.AugAssign) and isinstance(add.op, ast.Add) \
                    and isinstance(add.target, ast.Name) and isinstance(add.value, ast.Constant) \
                    and type(add.value.value) is int:
                edits.append((stmt, f"{add.target.id} += {add.value.value} * "
                                    f"{tf}.cast({text_of(text, stmt.test)}, {tf}.int32)"))
    return replace_nodes(text, edits) if edits else text


def _range_stop(node: ast.expr) -> ast.expr | None:
    """``n`` of ``range(n)``."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
            and node.func.id == "range" and len(node.args) == 1 and not node.keywords:
        return node.args[0]
    return None


def split_list_inits(text: str, name: str) -> str:
    """``lo, hi = [], []`` (empty lists, or ``[None] * n``, made in one tuple assignment) as
    one assignment each, so that each list is a loop's collector the loop model reads (the
    mask_extents spellings); any other tuple assignment is left as written."""
    fn = find_function(parse(text), name)
    edits: list[tuple[ast.AST, str]] = []
    for node in ast.walk(fn):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Tuple) and isinstance(node.value, ast.Tuple)
                and len(node.targets[0].elts) == len(node.value.elts) >= 2):
            continue
        names = [t for t in node.targets[0].elts if isinstance(t, ast.Name)]
        values = node.value.elts
        if len(names) != len(values) or len({t.id for t in names}) != len(names) \
                or not all(_new_list(v) for v in values):
            continue
        pad = "\n" + " " * node.col_offset
        edits.append((node, pad.join(f"{text_of(text, t)} = {text_of(text, v)}"
                                     for t, v in zip(names, values, strict=True))))
    return replace_nodes(text, edits) if edits else text


def _new_list(node: ast.expr) -> bool:
    """``[]`` or ``[None] * n``: a fresh list a loop fills (no name read twice)."""
    if isinstance(node, ast.List):
        return not node.elts
    return isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult) \
        and isinstance(node.left, ast.List) and len(node.left.elts) == 1 \
        and isinstance(node.left.elts[0], ast.Constant)


def flat_counters(text: str, name: str) -> str:
    """A double loop over ``range(a)`` and ``range(b)`` whose inner body ends by stepping a
    counter (``idx = 0`` before the loops, ``idx += 1`` last) that it uses only as the place
    it writes (``ta = ta.write(idx, v)``, held-out round 5's GNN layer), as one loop over the
    counter, ``for idx in range(a * b)`` with ``i = idx // b; j = idx % b``: the loop model's
    loop whose values leave it at its index, which the loop levers take."""
    fn = find_function(parse(text), name)
    rows = text.splitlines(keepends=True)
    for outer in ast.walk(fn):
        if not isinstance(outer, ast.For) or outer.orelse or len(outer.body) != 1:
            continue
        inner = outer.body[0]
        if not isinstance(inner, ast.For) or inner.orelse or len(inner.body) < 2:
            continue
        a, b = _range_stop(outer.iter), _range_stop(inner.iter)
        step = inner.body[-1]
        if a is None or b is None or not isinstance(outer.target, ast.Name) \
                or not isinstance(inner.target, ast.Name) \
                or not isinstance(step, ast.AugAssign) or not isinstance(step.op, ast.Add) \
                or not isinstance(step.target, ast.Name) \
                or not (isinstance(step.value, ast.Constant) and step.value.value == 1):
            continue
        counter = step.target.id
        if outer.target.id in {n.id for n in ast.walk(b) if isinstance(n, ast.Name)}:
            continue
        block = next((b for n in ast.walk(fn) for b in (getattr(n, "body", None),)
                      if isinstance(b, list) and outer in b), [])
        before = block[:block.index(outer)] if outer in block else []
        init = next((x for x in reversed(before) if isinstance(x, ast.Assign)
                     and [text_of(text, t) for t in x.targets] == [counter]), None)
        if init is None or not (isinstance(init.value, ast.Constant)
                                and init.value.value == 0):
            continue
        writes = [n for n in ast.walk(inner) if isinstance(n, ast.Call)
                  and isinstance(n.func, ast.Attribute) and n.func.attr == "write"
                  and n.args and isinstance(n.args[0], ast.Name) and n.args[0].id == counter]
        uses = [n for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == counter]
        if len(writes) != 1 or len(uses) != 3:  # the creation, the write, the step
            continue
        pad = indent_of(text, outer.lineno)
        head = [f"{pad}for {counter} in range(({text_of(text, a)}) * ({text_of(text, b)})):\n",
                f"{pad}    {outer.target.id} = {counter} // ({text_of(text, b)})\n",
                f"{pad}    {inner.target.id} = {counter} % ({text_of(text, b)})\n"]
        body = []
        for stmt in inner.body[:-1]:
            body += [f"{pad}    {r}\n" for r in stmt_text(text, stmt).splitlines()]
        rows[outer.lineno - 1:outer.end_lineno] = head + body
        return "".join(rows)
    return text


def masks_as_gathers(text: str, name: str, tf: str) -> str:
    """Each "every row but one" mask ``x[tf.range(n) != i]`` as the gather of those rows,
    ``tf.gather(x, tf.range(n - 1) + tf.cast(tf.range(n - 1) >= i, tf.int32))``: the same
    rows for an ``i`` in ``[0, n)`` (another ``i`` changes the shape: the check says so),
    and ops pfor vectorises, where a boolean mask is a ``Where`` it runs in a while_loop."""
    fn = find_function(parse(text), name)
    edits: list[tuple[ast.AST, str]] = []
    for node in ast.walk(fn):
        if not isinstance(node, ast.Subscript) or not isinstance(node.slice, ast.Compare):
            continue
        cmp = node.slice
        if len(cmp.ops) != 1 or not isinstance(cmp.ops[0], ast.NotEq):
            continue
        sides = [cmp.left, cmp.comparators[0]]
        ranges = [x for x in sides if isinstance(x, ast.Call) and len(x.args) == 1
                  and not x.keywords and text_of(text, x.func) == f"{tf}.range"]
        if len(ranges) != 1:
            continue
        (rng,) = ranges
        other = sides[1] if sides[0] is rng else sides[0]
        n, i = text_of(text, rng.args[0]), text_of(text, other)
        rows = f"{tf}.range(({n}) - 1)"
        edits.append((node, f"{tf}.gather({text_of(text, node.value)}, {rows} + "
                            f"{tf}.cast({rows} >= {tf}.cast({i}, {tf}.int32), {tf}.int32))"))
    return replace_nodes(text, edits) if edits else text


def conds_as_wheres(text: str, name: str, tf: str) -> str:
    """``tf.cond(p, lambda: a, lambda: b)`` inside a loop or a lambda (a per-example body:
    held-out round 8's c01, a ``tf.map_fn`` whose ``tf.cond`` returns 1 or 0) as
    ``tf.where(p, a, b)``: both branches computed, the one ``p`` picks kept — the same value
    when the branches are plain expressions of one shape (another shape broadcasts or
    raises: the check says so), and an op the loop levers batch, where a cond is not.

    Both branches run, so only *total* branches are taken (:func:`total_branch`): a guarded
    ``log``/``sqrt``/division gives NaN or Inf on the side the guard excludes, and through
    ``tf.where`` its gradient is NaN (0 · Inf) where the cond's was finite; a user function
    may assign or draw, and would then run on both sides."""
    fn = find_function(parse(text), name)
    inside = [n for n in ast.walk(fn) if isinstance(
        n, (ast.For, ast.While, ast.ListComp, ast.GeneratorExp, ast.Lambda))]
    seen: set[int] = set()
    edits: list[tuple[ast.AST, str]] = []
    for outer in inside:
        for node in ast.walk(outer):
            if id(node) in seen or not isinstance(node, ast.Call) \
                    or text_of(text, node.func) != f"{tf}.cond" or node.keywords \
                    or len(node.args) != 3:
                continue
            branches = node.args[1:]
            if not all(isinstance(b, ast.Lambda) and not b.args.args and not b.args.vararg
                       and total_branch(b.body, text, tf) for b in branches):
                continue
            seen.add(id(node))
            a, b = (text_of(text, br.body) for br in branches)  # type: ignore[attr-defined]
            edits.append((node, f"{tf}.where({text_of(text, node.args[0])}, {a}, {b})"))
    edits = [e for e in edits if not any(o is not e[0] and is_within(e[0], o)
                                         for o, _ in edits)]
    return replace_nodes(text, edits) if edits else text


#: TensorFlow ops (after the module alias) finite on every finite input, with finite
#: gradients there, and without side effects: what a branch run on the other side's inputs
#: may call. ``exp``, ``log``, ``sqrt``, ``pow``, divisions, ``gather``, random draws,
#: assignments and every user function are missing on purpose, and so are the ops that
#: check shapes (``reshape``, ``concat``, ``stack``, ``matmul``, ``einsum``, ``fill``):
#: a guard on a size or rank excludes the inputs they raise on (review 38b item 4).
TOTAL_OPS = frozenset({
    "constant", "cast", "identity", "stop_gradient", "zeros_like", "ones_like", "zeros",
    "ones", "shape", "size", "rank", "transpose",
    "squeeze", "expand_dims", "abs", "math.abs", "negative", "math.negative", "square",
    "math.square", "maximum", "math.maximum", "minimum", "math.minimum", "add",
    "math.add", "subtract", "math.subtract", "multiply", "math.multiply", "reduce_sum",
    "math.reduce_sum", "reduce_mean", "math.reduce_mean", "reduce_max", "math.reduce_max",
    "reduce_min", "math.reduce_min", "tanh", "math.tanh", "sigmoid", "math.sigmoid",
    "nn.relu", "nn.sigmoid", "nn.tanh", "clip_by_value", "sign", "math.sign", "greater",
    "math.greater", "less", "math.less", "equal", "math.equal", "logical_and",
    "math.logical_and", "logical_or", "math.logical_or", "logical_not", "math.logical_not",
})


def total_branch(expr: ast.AST, text: str, tf: str) -> bool:
    """An expression that computes a finite value with a finite gradient on any finite
    input and changes nothing: names, constants, slices with constant bounds (``x[1:]``,
    ``x[:, 0:2]``: a short input gives a short slice, not an error), an index into a literal
    tuple or list, ``+ - *``, comparisons, a division by a non-zero number, and
    :data:`TOTAL_OPS` calls — judged by what a call targets (its qualified name), never by
    words in it. ``t[3]`` is not total: the guard (``tf.size(t) > 3``) may be what keeps it
    in range."""
    for node in ast.walk(expr):
        if isinstance(node, ast.Call):
            target = text_of(text, node.func)
            if not target.startswith(f"{tf}.") or target[len(tf) + 1:] not in TOTAL_OPS:
                return False
        elif isinstance(node, ast.BinOp):
            if isinstance(node.op, (ast.Div, ast.FloorDiv, ast.Mod)):
                d = node.right
                if not (isinstance(d, ast.Constant) and isinstance(d.value, (int, float))
                        and not isinstance(d.value, bool) and d.value != 0):
                    return False
            elif not isinstance(node.op, (ast.Add, ast.Sub, ast.Mult)):
                return False  # ``**`` (a negative base...), ``@`` (checks shapes)
        elif isinstance(node, ast.Subscript) and not _total_subscript(node):
            return False  # an index may be out of range on the side the guard excludes
        elif isinstance(node, (ast.Lambda, ast.NamedExpr, ast.Await, ast.Yield,
                               ast.YieldFrom)):
            return False
    return True


def _total_subscript(node: ast.Subscript) -> bool:
    """A slice (or slices) with constant bounds, or any constant index into a literal
    tuple or list (its length is in the source)."""
    if isinstance(node.value, (ast.Tuple, ast.List)):
        k = node.slice
        if isinstance(k, ast.Constant) and isinstance(k.value, int):
            return -len(node.value.elts) <= k.value < len(node.value.elts)
        parts = [k]
    else:
        parts = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
        if not all(isinstance(p, ast.Slice) for p in parts):
            return False
    return all(isinstance(n, (ast.Constant, ast.Slice, ast.Tuple, ast.UnaryOp, ast.USub,
                              ast.expr_context)) for p in parts for n in ast.walk(p))


def called_functions(text: str, name: str) -> list[str]:
    """``name`` and the module-level functions it reaches by name (calls, and the decorators
    of those it calls, which run around them), in the order found: a loop in a helper the
    tuned function calls is the tuned function's loop too (held-out round 6's c09: the
    frames are sliced in ``stft``, which the tuned function calls)."""
    tree = parse(text)
    defs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    out, todo = [], [name]
    while todo:
        current = todo.pop(0)
        if current in out or current not in defs:
            continue
        out.append(current)
        fn = defs[current]
        for n in [*ast.walk(fn), *fn.decorator_list]:
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name):
                todo.append(n.func.id)
            elif isinstance(n, ast.Name) and n in fn.decorator_list:
                todo.append(n.id)
    return out


def _loop_texts(text: str, name: str) -> list[str]:
    """The module as written and after each of the passes that give the loop levers their
    loops, for the function ``name``."""
    texts = [text]
    for spelled in (maps_as_comprehensions, unstacks_as_indexes):  # loops spelled otherwise
        with contextlib.suppress(SourceEditError):
            text = spelled(text, name)
            texts.append(text)
    for make in (lambda: first_term_sums(text, name),
                 lambda: exclusive_sums(text, name),
                 lambda: counted_sums(ensure_tf(text)[0], name, ensure_tf(text)[1]),
                 lambda: flat_counters(text, name),
                 lambda: split_list_inits(text, name),
                 lambda: host_lists(ensure_tf(text)[0], name, ensure_tf(text)[1]),
                 lambda: split_sums(text, name)):
        with contextlib.suppress(SourceEditError):
            changed = make()
            if changed != text:
                texts.append(changed)
    return texts


def found_loops(ctx: LeverContext) -> list[Iteration]:
    """The loops of the tuned function (and of the module's functions it calls), as written
    or once its NumPy round trips are TF ops (an earlier rung: ``for r in x.numpy()`` is a
    loop over a tensor's rows then)."""
    from tfperf.tune.levers.numpy_round_trip import rewrite

    out: list[Iteration] = []
    source, name = ctx.target.source, ctx.target.name
    texts = _loop_texts(source, name)
    with contextlib.suppress(SourceEditError):
        texts.insert(1, rewrite(source, name))
    with contextlib.suppress(SourceEditError):  # a cond in a body is a where to the levers
        wheres = conds_as_wheres(source, name, tf_alias(parse(source)) or "tf")
        if wheres != source:
            texts.append(wheres)
    for text in texts:
        try:
            out += iterations(text, name, tensor_names(ctx) | frozenset(stacked_lists(ctx)))
        except SourceEditError:
            continue
    with contextlib.suppress(SourceEditError):
        for helper in called_functions(source, name)[1:]:
            for text in _loop_texts(source, helper):
                with contextlib.suppress(SourceEditError):
                    out += iterations(text, helper, frozenset())
    return out


class LoopsVectorizedMap(Lever):
    # pfor traces one iteration (not the loop unrolled), so no trace-length guard applies.
    name, slot, stage, traces = "loops→vectorized_map", "vectorize", 20, False
    description = ("each loop of independent iterations (any spelling) becomes tf.vectorized_map"
                   " of one iteration over its index; nested loops, maps of maps")
    rejections = ("pfor falls back to a tf.while_loop (TensorFlow's warning)",
                  "an op of the body cannot be vectorised (raises)", "disagrees")

    def applies(self, ctx: LeverContext) -> str | None:
        found = found_loops(ctx)
        return None if found else ("no loop of independent iterations whose values leave it "
                                   "one per iteration (the loop model)")

    def build(self, text: str, ctx: LeverContext) -> str:
        return every_loop(text, ctx, lambda t, it, tf, depth: vectorized(t, it, tf))


class LoopsBatched(Lever):
    slot, stage, traces = "vectorize", 20, False
    rejections = ("an op needs one example's shape (raises)",
                  "an op reduces or mixes across the batch axis (disagrees)")

    def __init__(self, axes: bool) -> None:
        self.axes = axes
        self.name = "loops→batched ops" + (" (per-example axes)" if axes else "")
        self.description = ("a loop's body (any spelling) run once on the whole batch"
                            + ("; reductions of one example over its last axis" if axes
                               else ""))

    def applies(self, ctx: LeverContext) -> str | None:
        found = found_loops(ctx)
        if not any(not it.nested and it.join != "map_fn" for it in found):
            return "no loop whose body is one example's ops indexed by the loop's index"
        return None

    def build(self, text: str, ctx: LeverContext) -> str:
        ranks, per_example = _ranks(ctx)
        scalars = {n for n, r in ranks.items() if r == 1}

        dtype = float_dtype(ctx)

        def one(t: str, it: Iteration, tf: str, depth: int) -> str:
            # Per-example scalars are lined up only in the variant that knows the axes.
            return batched(t, it, tf, self.axes, per_example if self.axes else 0, scalars
                           | {b[0] for b in it.binds if ranks.get(b[2], 0) == 1}, depth,
                           dtype, ranks)
        return every_loop(text, ctx, one)


def _scans(text: str, name: str) -> list[tuple[ast.Call, str, str]]:
    """``tf.scan(lambda a, x: a + x, elems[, initializer=z])`` calls of the function: the
    loop model's "scan" whose step is a running sum (call, elems, initializer or "")."""
    from tfperf.analysis.loops import loop_of

    ctx, fn = _context(text, name)
    out = []
    for n in ast.walk(fn):
        if not isinstance(n, ast.Call):
            continue
        model = loop_of(ctx, n)
        if model is None or model.form != "scan" or len(n.args) != 2:
            continue
        step, elems = n.args
        init = next((k.value for k in n.keywords if k.arg == "initializer"), None)
        if any(k.arg != "initializer" for k in n.keywords) or not isinstance(step, ast.Lambda) \
                or len(step.args.args) != 2 or not isinstance(step.body, ast.BinOp) \
                or not isinstance(step.body.op, ast.Add):
            continue
        names = {a.arg for a in step.args.args}
        sides = [step.body.left, step.body.right]
        if all(isinstance(x, ast.Name) for x in sides) \
                and {x.id for x in sides if isinstance(x, ast.Name)} == names:
            out.append((n, text_of(text, elems), text_of(text, init) if init else ""))
    return out


class ScanToCumsum(Lever):
    name, slot, stage, traces = "tf.scan→tf.cumsum", "scan", 20, False
    description = "a tf.scan whose step adds each element to the running value is tf.cumsum"
    rejections = ("disagrees with the baseline",)

    def applies(self, ctx: LeverContext) -> str | None:
        try:
            found = _scans(ctx.target.source, ctx.target.name)
        except SourceEditError as exc:
            return str(exc)
        return None if found else "no tf.scan of a running sum"

    def build(self, text: str, ctx: LeverContext) -> str:
        text, tf = ensure_tf(text)
        edits: list[tuple[ast.AST, str]] = []
        for call, elems, init in _scans(text, ctx.target.name):
            total = f"{tf}.cumsum({elems}, axis=0)"
            edits.append((call, f"({init} + {total})" if init else total))
        if not edits:
            raise SourceEditError("the tf.scan is gone after the other edits")
        return replace_nodes(text, edits)


def every_loop(text: str, ctx: LeverContext, rewrite: Any) -> str:
    """Every loop ``rewrite`` can take, innermost first, the model rebuilt after each, in the
    tuned function and in the module's functions it calls; ``rewrite(text, iteration, tf,
    depth)`` gets the number of loop levels inside the loop that were already rewritten
    (their batch axes come after its own)."""
    text, tf = ensure_tf(text)
    done = 0
    lists = stacked_lists(ctx)
    for name in called_functions(text, ctx.target.name):
        tensors = tensor_names(ctx) | frozenset(lists) if name == ctx.target.name \
            else frozenset()
        with contextlib.suppress(SourceEditError):  # all of the function's edits, or none
            rewritten, count = _every_loop_of(text, name, tensors, tf, rewrite)
            if count and name == ctx.target.name and lists:
                rewritten = stack_lists_first(rewritten, name, list(lists), tf)
            text = rewritten
            done += count
    if not done:
        raise SourceEditError("no loop of the loop model fits this rewrite")
    if f"{WHOLE_HELPER}(" in text and f"def {WHOLE_HELPER}(" not in text:
        text = text.rstrip("\n") + "\n" + WHOLE_SOURCE
    if f"{TRUE_INDEX_HELPER}(" in text and f"def {TRUE_INDEX_HELPER}(" not in text:
        text = text.rstrip("\n") + "\n" + TRUE_INDEX_SOURCE.replace("{tf}", tf)
    if f"{AXIS_HELPER}(" in text and f"def {AXIS_HELPER}(" not in text:
        text = text.rstrip("\n") + "\n" + AXIS_SOURCE
    if f"{FOLD_HELPER}(" in text and f"def {FOLD_HELPER}(" not in text:
        text = text.rstrip("\n") + "\n" + FOLD_SOURCE.replace("{tf}", tf)
    return text


def _every_loop_of(text: str, name: str, tensors: frozenset[str], tf: str,
                   rewrite: Any) -> tuple[str, int]:
    """``every_loop`` in the function ``name``: the module and the loops rewritten (the
    module as it was where none is)."""
    before = text
    for spelled in (maps_as_comprehensions, unstacks_as_indexes):
        with contextlib.suppress(SourceEditError):
            text = spelled(text, name)
    text = first_term_sums(text, name)
    text = exclusive_sums(text, name)
    text = masks_as_gathers(text, name, tf)
    text = conds_as_wheres(text, name, tf)
    text = counted_sums(text, name, tf)
    text = flat_counters(text, name)
    text = split_list_inits(text, name)
    text = host_lists(text, name, tf)
    text = split_sums(text, name)
    done = 0
    levels: dict[tuple[int, int], int] = {}  # loop start → levels rewritten inside it
    for _ in range(MAX_REWRITES):
        for it in iterations(text, name, tensors):
            node = it.node
            key = (node.lineno, node.col_offset)
            try:
                new = rewrite(text, it, tf, levels.get(key, 0))
                parse(new)
            except SourceEditError:
                continue
            ctx_fn = _context(text, name)[1]
            # A sum, an add_n, a reduction of the list leave no batch axis behind.
            added = 0 if it.join in ("sum", "add_n", "list") else 1
            for outer in _enclosing(ctx_fn, node):
                okey = (outer.lineno, outer.col_offset)  # type: ignore[attr-defined]
                levels[okey] = max(levels.get(okey, 0), levels.get(key, 0) + added)
            text = new
            done += 1
            break
        else:
            break
    return (text, done) if done else (before, 0)


def _enclosing(fn: ast.AST, node: ast.AST) -> list[ast.AST]:
    """The loops and comprehensions of ``fn`` that contain ``node`` (by position)."""
    start = (node.lineno, node.col_offset)  # type: ignore[attr-defined]
    end = (node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]
    out: list[ast.AST] = []
    for n in ast.walk(fn):
        if not isinstance(n, (ast.For, ast.While, ast.ListComp, ast.GeneratorExp)):
            continue
        span = ((n.lineno, n.col_offset), (n.end_lineno, n.end_col_offset))
        if span != (start, end) and span[0] <= start and end <= span[1]:
            out.append(n)
    return out


def levers(ctx: LeverContext) -> list[Lever]:
    # The plain batching (no axis changes) fitted no spelling the per-example axes did not.
    return [LoopsVectorizedMap(), LoopsBatched(True), ScanToCumsum()]
