"""TFP312: ``tf.config.run_functions_eagerly(True)`` left in code that trains or serves."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from tfperf.core.findings import Finding
from tfperf.lint.analysis.syntax import is_test_file
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
_NAMES = frozenset({"run_functions_eagerly", "experimental_run_functions_eagerly"})
_QUALNAMES = frozenset({f"tensorflow.{ns}.{n}" for n in _NAMES
                        for ns in ("config", "config.experimental", "compat.v1.config",
                                   "compat.v2.config")})


def _argument(call: ast.Call) -> ast.AST | None:
    if call.args:
        return call.args[0]
    for k in call.keywords:
        if k.arg == "run_eagerly":
            return k.value
    return None


def _true_names(ctx: Context) -> frozenset[str]:
    """Module names every assignment of which binds ``True`` (``DEBUG = True``): a flag
    no code path sets to anything else."""
    def compute() -> frozenset[str]:
        seen: dict[str, bool] = {}
        for n in ast.walk(ctx.tree):
            targets: list[ast.AST] = []
            value: ast.AST | None = None
            if type(n) is ast.Assign:
                targets, value = list(n.targets), n.value
            elif type(n) in (ast.AnnAssign, ast.AugAssign):
                targets, value = [n.target], getattr(n, "value", None)
            elif type(n) in (ast.For, ast.AsyncFor, ast.NamedExpr, ast.withitem,
                             ast.comprehension):
                # Bound to whatever runs: a loop target, `with ... as`, a walrus.
                bound = getattr(n, "target", None) or getattr(n, "optional_vars", None)
                for t in ast.walk(bound) if bound is not None else ():
                    if type(t) is ast.Name:
                        seen[t.id] = False
                continue
            elif type(n) is ast.arg:
                seen[n.arg] = False
                continue
            true = type(value) is ast.Constant and value.value is True \
                and type(n) is not ast.AugAssign
            for t in targets:
                for name in ast.walk(t):
                    if type(name) is ast.Name:
                        seen[name.id] = seen.get(name.id, True) and true \
                            and type(t) is ast.Name
        return frozenset(k for k, v in seen.items() if v)
    return ctx.cached("tfp312_true_names", compute)


def _forces_true(ctx: Context, arg: ast.AST | None) -> bool:
    """``arg`` is ``True`` whatever runs: a literal, or a name bound only to ``True``
    (a parameter, an attribute such as ``args.eager`` or a flag is a choice made at run
    time: quiet)."""
    if type(arg) is ast.Constant:
        return arg.value is True
    if type(arg) is ast.Name:
        b = ctx.binding(arg)
        return b is not None and b.kind == "assign" and arg.id in _true_names(ctx)
    return False


# Parts of the words of a test that asks which TensorFlow (or backend) is there: a word
# of the test names TensorFlow or a backend, and one asks whether it is importable or which
# version it is (round 10's F009: `if _tf_available:` ... `else:` of a version check, at
# import of a library). Whole parts of snake_case words, not substrings: `tpu_available`
# or `args.version` alone are no TensorFlow check (review 40).
_TF_PARTS = frozenset({"tf", "tf1", "tf2", "tensorflow", "keras", "backend", "torch", "jax"})
_STATE_PARTS = frozenset({"available", "installed", "version", "ok", "is", "has", "use",
                          "found", "importable", "imported", "find", "spec"})
# Words that make it a choice all the same: `if tf_version_ok and args.debug:`.
_CHOICE_WORDS = ("debug", "eager", "verbose", "test", "profil", "args", "flag", "opt",
                 "config", "mode", "dev")


def _words(test: ast.AST) -> list[str]:
    out: list[str] = []
    for n in ast.walk(test):
        if type(n) is ast.Name:
            out.append(n.id.lower())
        elif type(n) is ast.Attribute:
            out.append(n.attr.lower())
        elif type(n) is ast.Constant and type(n.value) is str:
            out.append(n.value.lower())
    return out


def _setup_test(test: ast.AST) -> bool:
    """A test asking whether (or which) TensorFlow is importable, or whether the module runs
    as a script, and naming no flag or debug choice."""
    words = _words(test)
    if any(w in word for word in words for w in _CHOICE_WORDS):
        return False
    if "__main__" in words:
        return True
    parts = {p for word in words for p in re.split(r"[^a-z0-9]+", word) if p}
    return bool(parts & _TF_PARTS) and bool(parts & _STATE_PARTS)


def _guarded(ctx: Context, call: ast.Call) -> bool:
    """Under an ``if`` (a debug flag), a conditional expression or an ``except``; an ``if``
    that checks TensorFlow is importable, or runs the script, guards nothing."""
    return any(type(p) in (ast.IfExp, ast.ExceptHandler, ast.Match)
               or (type(p) is ast.If and not _setup_test(p.test))
               for p in ctx.ancestors(call))


def _reset_after(ctx: Context, call: ast.Call) -> bool:
    """The same scope sets eager functions back (any argument other than ``True``) later
    on, or anywhere in the loop or function that runs the call: a bracket around one
    debugging or comparison step (in a loop or a function called again, the next run's
    ``False`` follows this ``True``)."""
    scope = ctx.scope_of(call)
    end = (call.lineno, call.col_offset)
    loops = ctx.enclosing_loops(call)
    for other in ctx.calls:
        if other is call:
            continue
        if (other.lineno, other.col_offset) <= end and type(scope) not in _DEFS \
                and not any(lp in ctx.ancestors(other) for lp in loops):
            continue
        if not _callee_matches(ctx, other) or ctx.scope_of(other) is not scope:
            continue
        if not _forces_true(ctx, _argument(other)):
            return True
    return False


def _callee_matches(ctx: Context, call: ast.Call) -> bool:
    f = call.func
    last = f.attr if type(f) is ast.Attribute else f.id if type(f) is ast.Name else None
    return last in _NAMES and ctx.call_qualname(call) in _QUALNAMES


class FunctionsForcedEager(Rule):
    code = "TFP312"
    name = "functions-forced-eager"
    message = "tf.config.run_functions_eagerly(True): every tf.function runs op by op in Python"
    hint = "remove it, or guard it by a debug flag (`if args.debug:`)"
    claims = ("S13",)
    group = "preview"  # judged on the development corpus: too few findings (docs/lint.md)
    node_types = (ast.Call,)
    callee_names = _NAMES
    needs_tf = True
    docs = """\
## What it does
Finds `tf.config.run_functions_eagerly(True)` and its older name
`tf.config.experimental_run_functions_eagerly(True)` (TF 2.0 to 2.x; the first from 2.3),
in any import spelling (`from tensorflow import config`, an alias), called with `True` or a
name bound only to `True`, unguarded, in code that is not a test.

## Why is this bad?
The switch is global: every `tf.function` in the process, Keras' `fit` step included, then
runs its Python body op by op instead of as one traced graph (claim S13; TF's guide calls it
a debugging aid). Left in a training or serving script it silently costs what
`tf.function` was there to save: a small traced train step (4 dense layers, batch 64) ran
9.5-18x slower forced eager on TF 2.21 CPU, three runs
(`benchmarks/lint_fixes/rule_claims.py --cases TFP312`).

## Example
```python
import tensorflow as tf
tf.config.run_functions_eagerly(True)   # left from a debugging session

@tf.function
def train_step(x, y):
    ...
```

## Use instead
```python
if args.debug:
    tf.config.run_functions_eagerly(True)
```

## Fix safety
No fix: removing the call changes what runs (Python side effects and prints in traced
code run once per trace instead of per call), so the edit needs a person.

## Known limitations
Quiet: a call under an `if`/`except` (a debug flag; an `if` that only checks
TensorFlow is importable or of some version, or `if __name__ == "__main__":`, is no
guard: every run of the program goes through it), in test files (`test_*.py`,
`*_test.py`, `conftest.py`), when the same scope sets it back to another value afterwards
(a bracket around one comparison), and an argument that is a parameter, an attribute or a
CLI flag (`args.eager`, `FLAGS.debug`): a choice made at run time. A function, or a loop,
that sets it both ways manages the switch on purpose and is quiet too.

In `preview`: over the 27 snapshots in `/work/.mirror` that spell the call (111 files), it
reports nothing once tests, flags and brackets are left out, so no finding could be judged
(docs/lint.md, "Stop 39: TFP312").
"""
    valid = (
        Valid("""
            import tensorflow as tf
            def main(args):
                if args.debug:
                    tf.config.run_functions_eagerly(True)
                for x in range(10):
                    step(tf.constant(x))
        """, spelling="loop: guarded by a debug flag"),
        Valid("""
            import tensorflow as tf
            def configure(eager):
                tf.config.run_functions_eagerly(eager)
            configure(args.eager)
        """, spelling="index: a parameter"),
        Valid("""
            import tensorflow as tf
            DEBUG = True
            if __name__ == "__main__":
                DEBUG = False
            tf.config.run_functions_eagerly(DEBUG)
        """, spelling="name: a name also bound to False"),
        Valid("""
            import tensorflow as tf
            def compare(step, x):
                tf.config.run_functions_eagerly(True)
                eager = step(x)
                tf.config.run_functions_eagerly(False)
                return eager, step(x)
        """),
        Valid("""
            from setup_tf import configure
            configure(debug=False)
        """, files={"setup_tf.py": """
            import tensorflow as tf
            def configure(debug):
                if debug:
                    tf.config.experimental_run_functions_eagerly(True)
        """}, spelling="module"),
        Valid("""
            import tensorflow as tf
            # %%
            tf.config.run_functions_eagerly(True)
            print(step(tf.constant(1.0)))
            # %%
            tf.config.run_functions_eagerly(False)
        """, notebook=True, spelling="notebook"),
        Valid("""
            import tensorflow as tf
            tf.config.run_functions_eagerly(args.eager)
        """),
        # A function that sets it both ways manages the switch on purpose.
        Valid("""
            import tensorflow as tf
            def timed_matmul(a, b):
                tf.config.run_functions_eagerly(False)
                out = tf.matmul(a, b)
                tf.config.run_functions_eagerly(True)
                return out
        """),
        # Set back at the top of each iteration: a bracket, run in a loop.
        Valid("""
            import tensorflow as tf
            for n in sizes:
                tf.config.experimental_run_functions_eagerly(False)
                timed(tf.matmul, n)
                tf.config.experimental_run_functions_eagerly(True)
        """),
    )
    invalid = (
        Invalid("""
            import tensorflow as tf
            def main(ds):
                tf.config.run_functions_eagerly(True)
                for x in ds:
                    step(x)
        """, count=1, lines=(3,), spelling="loop: left before the training loop"),
        Invalid("""
            from tensorflow import config
            config.experimental_run_functions_eagerly(run_eagerly=True)
        """, count=1, lines=(2,), spelling="index: from tensorflow import config"),
        Invalid("""
            import tensorflow as tf
            EAGER = True
            tf.config.run_functions_eagerly(EAGER)
        """, count=1, lines=(3,), spelling="name: a name bound only to True"),
        Invalid("""
            from setup_tf import configure
            configure()
        """, files={"setup_tf.py": """
            import tensorflow as tf
            def configure():
                tf.config.experimental_run_functions_eagerly(True)
        """}, count=1, spelling="module"),
        Invalid("""
            import tensorflow as tf
            # %%
            tf.config.run_functions_eagerly(True)
            # %%
            model.fit(ds, epochs=10)
        """, count=1, lines=(1,), notebook=True, spelling="notebook"),
        Invalid("""
            import tensorflow as tfx
            tfx.compat.v1.config.experimental_run_functions_eagerly(True)
        """, count=1, lines=(2,)),
        # Stop 40 (round 10's F009): under `if`s that check TensorFlow is there, at import.
        Invalid("""
            import importlib.util
            import logging
            _tf_available = importlib.util.find_spec("tensorflow") is not None
            if _tf_available:
                import tensorflow as tf
                if int(tf.__version__.split(".")[0]) < 2:
                    logging.info("TensorFlow 2 is needed")
                else:
                    tf.config.run_functions_eagerly(True)
        """, count=1, lines=(9,), spelling="name: under an if that TensorFlow is importable"),
        Invalid("""
            import tensorflow as tf
            if __name__ == "__main__":
                tf.config.run_functions_eagerly(True)
                for epoch in range(10):
                    train_epoch(ds)
        """, count=1, lines=(3,), spelling="loop: under the script's main guard"),
    )
    valid = (  # type: ignore[assignment]
        *valid,
        # Their twins: the same checks with a debug choice beside them.
        Valid("""
            import importlib.util
            import os
            _tf_available = importlib.util.find_spec("tensorflow") is not None
            if _tf_available and os.environ.get("MYLIB_DEBUG"):
                import tensorflow as tf
                tf.config.run_functions_eagerly(True)
        """, spelling="name: TensorFlow importable and a debug variable"),
        Valid("""
            import tensorflow as tf
            if __name__ == "__main__":
                if args.eager:
                    tf.config.run_functions_eagerly(True)
                for epoch in range(10):
                    train_epoch(ds)
        """, spelling="loop: a flag under the script's main guard"),
        # Review 40: a test of another device or library is a choice, not a TensorFlow
        # check (words matched whole: `tpu_available` does not ask whether TF imports).
        Valid("""
            import tensorflow as tf
            tpu_available = bool(tf.config.list_logical_devices("TPU"))
            if not tpu_available:
                tf.config.run_functions_eagerly(True)
        """, spelling="name: a device test, not a TensorFlow check"),
    )

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Finding]:
        if type(node) is not ast.Call or not _callee_matches(ctx, node):
            return
        if is_test_file(ctx.path) or not _forces_true(ctx, _argument(node)):
            return
        if _guarded(ctx, node) or _reset_after(ctx, node):
            return
        name = "experimental_run_functions_eagerly" if "experimental" in (
            ctx.call_qualname(node) or "") else "run_functions_eagerly"
        yield self.finding(ctx, node, f"tf.config.{name}(True): every tf.function runs op by "
                                      "op in Python, not as a traced graph")
