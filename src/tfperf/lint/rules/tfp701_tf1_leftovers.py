"""TFP701: TF1 graph-mode APIs (placeholder, Session, feed_dict, contrib) in TF2 code."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from tfperf.core.findings import Finding
from tfperf.lint.analysis.imports import from_imports_tf
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context

# TF1 graph-mode APIs, by their path under `tensorflow.` or `tensorflow.compat.v1.`.
TF1_APIS = frozenset({
    "placeholder", "placeholder_with_default", "sparse_placeholder", "Session",
    "InteractiveSession", "get_variable", "global_variables_initializer",
    "local_variables_initializer", "initialize_all_variables", "variables_initializer",
    "tables_initializer", "variable_scope", "get_variable_scope", "reset_default_graph",
    "get_collection", "add_to_collection", "train.Saver", "train.GradientDescentOptimizer",
    "train.AdamOptimizer", "train.MomentumOptimizer", "train.RMSPropOptimizer",
    "train.AdagradOptimizer", "train.get_or_create_global_step", "summary.FileWriter",
    "layers.dense", "layers.conv2d", "layers.dropout", "layers.batch_normalization",
    "Print", "to_float", "to_int32", "to_int64",
})
_QUALNAMES = frozenset({f"tensorflow.{a}" for a in TF1_APIS}
                       | {f"tensorflow.compat.v1.{a}" for a in TF1_APIS})
_LAST_PARTS = frozenset(a.rsplit(".", 1)[-1] for a in TF1_APIS)
OPT_INS = frozenset({"tensorflow.compat.v1.disable_v2_behavior",
                     "tensorflow.compat.v1.disable_eager_execution"})
# Session/Tensor methods that take feed_dict.
_FEED_METHODS = frozenset({"run", "eval", "partial_run", "partial_run_setup"})

_ADVICE = {
    "placeholder": "pass tensors as arguments to a function (a tf.function for speed)",
    "Session": "call functions directly (eager), compile hot ones with tf.function",
    "get_variable": "create a tf.Variable (or a Keras layer weight) once",
    "global_variables_initializer": "tf.Variable is initialised when created: delete it",
    "variable_scope": "use Python objects (tf.Module, Keras layers) to group variables",
}


def _opted_into_tf1(ctx: Context) -> bool:
    """The module switches TF 2 behaviour off (cached on the context)."""
    return ctx.cached("tfp701_opted_into_tf1", lambda: (
        "disable_v2_behavior" in ctx.source or "disable_eager_execution" in ctx.source)
        and any(ctx.qualname(n.func) in OPT_INS for n in ctx.calls))


# Packages of TensorFlow's own implementation (not its public API).
_TF_INTERNALS = frozenset({"python", "core", "compiler", "lite", "dtensor", "tsl", "tools",
                           "security", "include", "_api"})


def _public_tf_user(ctx: Context) -> bool:
    """The module imports TensorFlow's public API (``tensorflow``, ``tensorflow.compat.v1``),
    not only its internals (``tensorflow.python.*``): user code, not TF's own TF1 machinery,
    which necessarily passes ``feed_dict`` around (cached on the context)."""
    return ctx.cached("tfp701_public_tf_user", lambda: _imports_public_tf(ctx))


def _imports_public_tf(ctx: Context) -> bool:
    for n in ctx.nodes_of(ast.Import, ast.ImportFrom):
        if type(n) is ast.Import:
            mods = [a.name for a in n.names]
        elif type(n) is ast.ImportFrom and not n.level and n.module:
            mods = [n.module]
        else:
            continue
        if any(m.split(".")[0] == "tensorflow" and "python" not in m.split(".")
               and [*m.split("."), ""][1] not in _TF_INTERNALS for m in mods):
            return True
    return False


def _optional_import(ctx: Context, node: ast.AST) -> bool:
    """``try: import ... except ImportError:``: a compatibility shim, not a dependency."""
    p = ctx.parent(node)
    if type(p) is not ast.Try or node not in p.body:
        return False
    for h in p.handlers:
        names = h.type.elts if type(h.type) is ast.Tuple else [h.type]
        if h.type is None or any(getattr(n, "id", None) in (
                "ImportError", "ModuleNotFoundError", "Exception") for n in names):
            return True
    return False


def _in_explicit_graph(ctx: Context, node: ast.AST) -> bool:
    """Inside ``with <graph>.as_default():``: graph construction on purpose."""
    for p in ctx.ancestors(node):
        if type(p) in (ast.With, ast.AsyncWith):
            for item in p.items:
                e = item.context_expr
                if type(e) is ast.Call and type(e.func) is ast.Attribute \
                        and e.func.attr == "as_default":
                    return True
    return False


def _api_of(qualname: str | None) -> str | None:
    if qualname is None:
        return None
    for prefix in ("tensorflow.compat.v1.", "tensorflow."):
        if qualname.startswith(prefix) and qualname in _QUALNAMES:
            return qualname[len(prefix):]
    return None


class Tf1Leftovers(Rule):
    code = "TFP701"
    name = "tf1-leftovers"
    message = "TF1 graph-mode API in TF2 code"
    hint = ("write TF2 style: eager tensors and functions, tf.function for speed, tf.Variable "
            "for state (TF's migration guide)")
    claims = ("S9",)
    group = "migration"
    requires_imports = frozenset({"tensorflow"})  # every finding needs a TF API
    docs = """\
## What it does
Finds TF1 graph-mode APIs in code that runs under TF 2: `tf.placeholder`, `tf.Session`,
`sess.run(..., feed_dict=...)`, `tf.get_variable`, `tf.global_variables_initializer`,
`tf.variable_scope`, TF1 optimizers (`tf.train.AdamOptimizer`), `tf.contrib`, in their
`tf.` spelling (gone in TF 2: `AttributeError`) and their `tf.compat.v1.` spelling.

## Why is this bad?
The article (claim S9) notes that `tf.placeholder` "belongs to TF1 and breaks in TF2". Under
TF 2 these APIs either no longer exist, or (through `tf.compat.v1`) need graph mode: code
mixing them with eager tensors fails, and code kept on the TF1 path misses what TF 2 makes
fast and simple (`tf.function` tracing, XLA via `jit_compile`, Keras, `tf.data` iteration).
`tf.contrib` was removed in TF 2.0.

## Example
```python
x = tf.compat.v1.placeholder(tf.float32, [None, 3])
y = tf.reduce_sum(x * 2.0)
with tf.compat.v1.Session() as sess:
    print(sess.run(y, feed_dict={x: data}))
```

## Use instead
```python
@tf.function
def f(x):
    return tf.reduce_sum(x * 2.0)

print(f(tf.constant(data)))
```

## Fix safety
No automatic fix: moving from graphs and sessions to functions restructures the program.

## Known limitations
Not reported: modules that opt into TF1 behaviour explicitly with
`tf.compat.v1.disable_v2_behavior()` or `tf.compat.v1.disable_eager_execution()` (there the
TF1 APIs are the right ones, and a rewrite is a migration project, not a slip; TensorFlow's
own sources do this), code inside `with graph.as_default():` (graph construction on purpose,
e.g. for export), `feed_dict=` in modules that use only TensorFlow's internals (TF's own
session machinery), `tf.contrib` imports guarded by `except ImportError`, and lookalikes
(`requests.Session`, a `feed_dict=` argument of a function that is not `run`/`eval`).
"""
    valid = (
        # TF 2 style.
        Valid("""
            import tensorflow as tf
            @tf.function
            def f(x):
                return tf.reduce_sum(x * 2.0)
            print(f(tf.ones([4, 3])))
        """),
        # The module opts into TF1 graph mode explicitly.
        Valid("""
            import tensorflow as tf
            tf.compat.v1.disable_eager_execution()
            x = tf.compat.v1.placeholder(tf.float32, [None, 3])
            with tf.compat.v1.Session() as sess:
                sess.run(x * 2, feed_dict={x: [[1.0, 2.0, 3.0]]})
        """),
        # The compat.v1 module spelled as `tf`, opting in too.
        Valid("""
            import tensorflow.compat.v1 as tf
            tf.disable_v2_behavior()
            x = tf.placeholder(tf.float32)
        """),
        # Explicit graph construction.
        Valid("""
            import tensorflow as tf
            g = tf.Graph()
            with g.as_default():
                x = tf.compat.v1.placeholder(tf.float32, [None])
        """),
        # Lookalikes: an HTTP session, a user's own feed_dict argument.
        Valid("""
            import tensorflow as tf
            import requests
            s = requests.Session()
            def render(template, feed_dict):
                return template.format(**feed_dict)
            render('{a}', feed_dict={'a': 1})
        """),
        # TensorFlow's own session machinery (internal modules only).
        Valid("""
            from tensorflow.python.client import session
            def run(sess, fetches, feeds):
                return sess.run(fetches, feed_dict=feeds)
        """),
        # An optional import, guarded for TF versions without contrib.
        Valid("""
            import tensorflow as tf
            try:
                from tensorflow.contrib import tensorrt
            except ImportError:
                tensorrt = None
        """),
        # TF 2 APIs that live in compat.v1 too but are not graph-mode leftovers.
        Valid("""
            import tensorflow as tf
            tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.ERROR)
            v = tf.Variable(1.0)
        """),
    )
    invalid = (
        Invalid("""
            import tensorflow as tf
            x = tf.placeholder(tf.float32, [None, 3])
            y = tf.reduce_sum(x)
            sess = tf.Session()
            print(sess.run(y, feed_dict={x: [[1.0, 2.0, 3.0]]}))
        """, count=3, lines=(2, 4, 5)),
        Invalid("""
            import tensorflow.compat.v1 as tf1
            w = tf1.get_variable('w', [3])
            init = tf1.global_variables_initializer()
        """, count=2, lines=(2, 3)),
        Invalid("""
            import tensorflow as tf
            from tensorflow.contrib import slim
            net = tf.contrib.layers.flatten(tf.ones([2, 2]))
        """, count=2, lines=(2, 3)),
        # Module alias and a from-import of compat.v1.
        Invalid("""
            import tensorflow as tensorflow_alias
            from tensorflow.compat.v1 import placeholder
            x = placeholder(tensorflow_alias.float32)
            with tensorflow_alias.compat.v1.Session() as s:
                pass
        """, count=2, lines=(3, 4)),
        # A TF1 optimizer and variable scope.
        Invalid("""
            import tensorflow as tf
            with tf.compat.v1.variable_scope('enc'):
                opt = tf.compat.v1.train.AdamOptimizer(1e-3)
        """, count=2, lines=(2, 3)),
    )

    def check_module(self, ctx: Context) -> Iterator[Finding]:
        # The calls by callee name and the `.contrib` attributes that can be TF1 APIs, in
        # tight loops instead of a dispatch per call and per attribute of the module.
        by_attr, by_name = ctx.call_groups()
        for name, calls in by_attr.items():
            if name in _FEED_METHODS or name in _LAST_PARTS:
                for node in calls:
                    yield from self._call(node, ctx)
        any_bare = from_imports_tf(ctx)  # a bare name may be an alias (`import ... as ph`)
        for name, calls in by_name.items():
            if any_bare or name in _FEED_METHODS or name in _LAST_PARTS:
                for node in calls:
                    yield from self._call(node, ctx)
        if ctx.imports_tf:
            for node in ctx.nodes_of(ast.Attribute):  # type: ignore[assignment]
                if node.attr == "contrib":
                    yield from self._node(node, ctx)
        for node in ctx.nodes_of(ast.Import, ast.ImportFrom):  # type: ignore[assignment]
            yield from self._node(node, ctx)

    def _node(self, node: ast.AST, ctx: Context) -> Iterator[Finding]:
        t = type(node)
        if t is ast.Attribute:
            if node.attr != "contrib" or not ctx.imports_tf:
                return
            if ctx.qualname(node) in ("tensorflow.contrib", "tensorflow.compat.v1.contrib") \
                    and not _opted_into_tf1(ctx):
                yield self.finding(ctx, node, "tf.contrib was removed in TF 2.0")
        else:
            names = [a.name for a in node.names] if t is ast.Import \
                else [node.module or ""]
            if t is ast.ImportFrom and node.level:
                return
            if any(n == "tensorflow.contrib" or n.startswith("tensorflow.contrib.")
                   for n in names) and not _opted_into_tf1(ctx) \
                    and not _optional_import(ctx, node):
                yield self.finding(ctx, node, "tf.contrib was removed in TF 2.0")

    def _call(self, node: ast.Call, ctx: Context) -> Iterator[Finding]:
        func = node.func
        if type(func) is ast.Attribute:
            last = func.attr
        elif type(func) is ast.Name:
            last = func.id
        else:
            return
        if last in _FEED_METHODS:
            for k in node.keywords:
                if k.arg == "feed_dict" and ctx.imports_tf and _public_tf_user(ctx) \
                        and not _opted_into_tf1(ctx) and not _in_explicit_graph(ctx, node):
                    yield self.finding(ctx, k, "feed_dict is the TF1 Session API",
                                       hint="call a function with tensors instead of feeding "
                                            "placeholders")
            return
        if last not in _LAST_PARTS and (type(func) is ast.Attribute
                                        or not from_imports_tf(ctx)):
            return  # cheap test first; a bare name may be an alias (`import ... as ph`)
        if not ctx.imports_tf:
            return
        api = _api_of(ctx.qualname(func))
        if api is None or _opted_into_tf1(ctx) or _in_explicit_graph(ctx, node):
            return
        short = api.rsplit(".", 1)[-1]
        advice = _ADVICE.get(short)
        yield self.finding(ctx, node, f"tf.{api} is a TF1 graph-mode API", hint=advice)
