"""tf.data: ``num_parallel_calls=tf.data.AUTOTUNE`` on ``map`` and a final
``prefetch(tf.data.AUTOTUNE)``, measured rather than assumed.

Lint reports these (TFP601/TFP602) only where the targeted TensorFlow does not do the work
itself: from 2.12 tf.data prefetches at the end of a pipeline and, from 2.6, runs stateless
maps in parallel (``inject_prefetch``, ``map_parallelization``). Whether the explicit settings
still pay on this machine, for this pipeline, is a measurement: so tune tries them whatever
lint says, and keeps them only when they win, with the same elements in the same order
(``num_parallel_calls`` keeps the order unless ``deterministic=False``)."""

from __future__ import annotations

import ast

from tfperf.tune.lever import Lever, LeverContext
from tfperf.tune.source import SourceEditError, ensure_tf, find_function, parse, replace_nodes


def _dotted(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def _chain_root(node: ast.AST) -> ast.AST:
    """The start of a method chain ``a.b(...).c(...)``: what the first call is made on."""
    while True:
        if isinstance(node, ast.Call):
            node = node.func
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Call):
            node = node.value
        else:
            return node


def _dataset_names(fn: ast.FunctionDef) -> set[str]:
    """Names this function binds to a tf.data chain (``ds = tf.data.Dataset...``,
    ``ds = ds.map(...)``), found to a fixed point."""
    names: set[str] = set()
    changed = True
    while changed:
        changed = False
        for node in ast.walk(fn):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                    and isinstance(node.targets[0], ast.Name) \
                    and node.targets[0].id not in names and _is_pipeline(node.value, names):
                names.add(node.targets[0].id)
                changed = True
    return names


def _is_pipeline(node: ast.AST, names: set[str]) -> bool:
    root = _chain_root(node)
    text = _dotted(root)
    return ".data." in f".{text}." or text.startswith("Dataset") \
        or (isinstance(root, ast.Name) and root.id in names)


def _maps(fn: ast.FunctionDef) -> list[ast.Call]:
    """``.map(f)`` calls of tf.data chains without ``num_parallel_calls``."""
    names = _dataset_names(fn)
    out = []
    for node in ast.walk(fn):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr == "map" and node.args \
                and not any(k.arg == "num_parallel_calls" for k in node.keywords) \
                and _is_pipeline(node.func.value, names):
            out.append(node)
    return out


def _consumed_ends(fn: ast.FunctionDef) -> list[ast.expr]:
    """The pipelines the function iterates (``for b in ds:`` / ``for b in chain:``): the
    chain expression whose end a final ``prefetch`` goes on (the last assignment of the name
    before the loop). None when the function already prefetches somewhere."""
    if any(isinstance(n, ast.Attribute) and n.attr == "prefetch" for n in ast.walk(fn)):
        return []
    names = _dataset_names(fn)
    ends: list[ast.expr] = []
    for loop in ast.walk(fn):
        if not isinstance(loop, ast.For):
            continue
        it = loop.iter
        if isinstance(it, ast.Name) and it.id in names:
            before = [node for node in ast.walk(fn)
                      if isinstance(node, ast.Assign) and len(node.targets) == 1
                      and isinstance(node.targets[0], ast.Name)
                      and node.targets[0].id == it.id and node.lineno < loop.lineno]
            last = max(before, key=lambda node: node.lineno, default=None)
            if last is not None and last.value not in ends:
                ends.append(last.value)
        elif isinstance(it, ast.Call) and _is_pipeline(it, names):
            ends.append(it)
    return ends


class ParallelMap(Lever):
    name, slot, stage = "map num_parallel_calls=AUTOTUNE", "data-parallel", 5
    description = "tf.data .map(f) → .map(f, num_parallel_calls=tf.data.AUTOTUNE)"
    rejections = ("the map is stateful and its order of calls matters (disagrees)",
                  "not faster than TensorFlow's own map_parallelization")

    def applies(self, ctx: LeverContext) -> str | None:
        try:
            found = _maps(find_function(parse(ctx.target.source), ctx.target.name))
        except SourceEditError as exc:
            return str(exc)
        return None if found else "no tf.data .map(f) without num_parallel_calls"

    def build(self, text: str, ctx: LeverContext) -> str:
        text, tf = ensure_tf(text)
        found = _maps(find_function(parse(text), ctx.target.name))
        if not found:
            raise SourceEditError("no tf.data .map(f) left after the other edits")
        edits: list[tuple[ast.AST, str]] = []
        for call in found:
            segment = ast.get_source_segment(text, call) or ""
            if not segment.endswith(")"):
                raise SourceEditError("cannot place num_parallel_calls in the map call")
            edits.append((call, f"{segment[:-1]}, num_parallel_calls={tf}.data.AUTOTUNE)"))
        return replace_nodes(text, edits)


class FinalPrefetch(Lever):
    name, slot, stage = "prefetch(AUTOTUNE)", "data-prefetch", 5
    description = "a final .prefetch(tf.data.AUTOTUNE) on each pipeline the function iterates"
    rejections = ("not faster than TensorFlow's own inject_prefetch",)

    def applies(self, ctx: LeverContext) -> str | None:
        try:
            found = _consumed_ends(find_function(parse(ctx.target.source), ctx.target.name))
        except SourceEditError as exc:
            return str(exc)
        return None if found else "no iterated tf.data pipeline without prefetch"

    def build(self, text: str, ctx: LeverContext) -> str:
        text, tf = ensure_tf(text)
        found = _consumed_ends(find_function(parse(text), ctx.target.name))
        if not found:
            raise SourceEditError("no pipeline left to prefetch after the other edits")
        edits: list[tuple[ast.AST, str]] = [
            (end, f"{ast.get_source_segment(text, end)}.prefetch({tf}.data.AUTOTUNE)")
            for end in found]
        return replace_nodes(text, edits)


def levers(ctx: LeverContext) -> list[Lever]:
    return [ParallelMap(), FinalPrefetch()]
