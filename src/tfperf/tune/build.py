"""A candidate's function: the levers' edits applied to the module's source, written to a
copy of the file, and the changed definitions executed in a copy of the module's namespace.

Only what changed runs (plus the tuned function and every ``tf.function``, so that each
candidate starts with empty trace caches): the module's top level is not run again, so its
data, models and other state are the very objects the original function sees.
"""

from __future__ import annotations

import ast
import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tfperf.tune.lever import Lever, LeverContext
from tfperf.tune.levers.lint_fixes import LintFix, apply_fixes
from tfperf.tune.returns import keep_return_types, return_conversion
from tfperf.tune.source import is_tf_function_decorator, parse, tf_alias


@dataclass
class Built:
    fn: Callable[..., Any]
    namespace: dict[str, Any]
    source: str
    path: Path


def apply_levers(ctx: LeverContext, levers: Sequence[Lever],
                 keep_return: bool = True) -> str:
    """The module source with every lever applied: lint fixes first (their positions are in
    the original), then the others by stage; then the user's return types kept
    (:mod:`tfperf.tune.returns`; ``keep_return=False``: the levers' text alone)."""
    text = ctx.target.source
    fixes = [lv for lv in levers if isinstance(lv, LintFix)]
    if fixes:
        text = apply_fixes(text, fixes, ctx)
    for lever in sorted((lv for lv in levers if not isinstance(lv, LintFix)),
                        key=lambda lv: lv.stage):
        text = lever.build(text, ctx)
    conversion = return_conversion(ctx.return_kinds)
    if levers and conversion is not None and keep_return:
        text = keep_return_types(text, ctx.target.name, conversion)
    parse(text)
    return text


def load(ctx: LeverContext, text: str, workdir: Path) -> Built:
    """Write ``text`` beside the others in ``workdir`` and run what changed (see above)."""
    target = ctx.target
    digest = hashlib.sha1(text.encode()).hexdigest()[:10]
    stem = re.sub(r"\W+", "_", target.path.stem).strip("_") or "cell"  # <ipython-input-3-…>
    path = workdir / f"{stem}__tfperf_{digest}.py"
    path.write_text(text, encoding="utf-8")
    tree = parse(text)
    before = {ast.dump(n) for n in parse(target.source).body}
    alias = tf_alias(tree)

    def fresh(node: ast.stmt) -> bool:
        if ast.dump(node) not in before:
            return True
        return isinstance(node, ast.FunctionDef) and (node.name == target.name or any(
            is_tf_function_decorator(d, alias) for d in node.decorator_list))

    chosen = [n for n in tree.body if fresh(n)]
    remade = {n.name for n in chosen if isinstance(n, ast.ClassDef)}
    chosen = [n for n in tree.body if n in chosen or _makes_instance(n, remade)]
    namespace = dict(target.globals)
    namespace["__file__"] = str(path)
    code = compile(ast.Module(body=chosen, type_ignores=[]), str(path), "exec")
    exec(code, namespace)  # the user's own definitions, edited: this is what tune measures
    return Built(namespace[target.name], namespace, text, path)


def _makes_instance(node: ast.stmt, classes: set[str]) -> bool:
    """``LAYER = Cutout()``: a module-level instance of a class the candidate edits is made
    again from the edited class (the old instance would keep running the old methods)."""
    return bool(classes) and isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) \
        and isinstance(node.value.func, ast.Name) and node.value.func.id in classes
