"""The semantic model: what names refer to, and the context a node runs in."""

from __future__ import annotations

import ast

import pytest

from tfperf.lint.semantic import Context


def ctx_for(source: str) -> Context:
    return Context(ast.parse(source), source, "t.py")


def last_call(ctx: Context) -> ast.Call:
    calls = [n for n in ast.walk(ctx.tree) if isinstance(n, ast.Call)]
    return max(calls, key=lambda c: (c.lineno, c.col_offset))


@pytest.mark.parametrize(("source", "expected"), [
    ("import tensorflow as tf\ntf.transpose(x)", "tensorflow.transpose"),
    ("import tensorflow\ntensorflow.transpose(x)", "tensorflow.transpose"),
    ("import tensorflow.compat.v1 as tf\ntf.placeholder(x)", "tensorflow.compat.v1.placeholder"),
    ("import tensorflow.compat.v2 as tf\ntf.transpose(x)", "tensorflow.transpose"),
    ("from tensorflow import keras\nkeras.layers.Dense(3)", "keras.layers.Dense"),
    ("from tensorflow.keras import layers\nlayers.Dense(3)", "keras.layers.Dense"),
    ("import tensorflow as tf\ntf.keras.layers.Dense(3)", "keras.layers.Dense"),
    ("import keras\nkeras.layers.Dense(3)", "keras.layers.Dense"),
    ("import tf_keras as k\nk.Model()", "keras.Model"),
    ("import numpy as np\nnp.array(x)", "numpy.array"),
    ("from tensorflow import transpose as T\nT(x)", "tensorflow.transpose"),
    ("import tensorflow as tf\nT = tf.transpose\nT(x)", "tensorflow.transpose"),
    ("import tensorflow.keras.layers\ntensorflow.keras.layers.Dense(3)", "keras.layers.Dense"),
    # Re-bindings: the name no longer refers to TensorFlow.
    ("import tensorflow as tf\ntf = object()\ntf.transpose(x)", None),
    ("import tensorflow as tf\ndef f(tf):\n    return tf.transpose(x)", None),
    ("import tensorflow as tf\nfor tf in []:\n    pass\ntf.transpose(x)", None),
    # ...and binding order matters.
    ("tf = object()\nimport tensorflow as tf\ntf.transpose(x)", "tensorflow.transpose"),
    ("transpose(x)", None),
    ("from . import tensorflow as tf\ntf.transpose(x)", None),
    # `tf` from a star import (`from train import *`, train.py importing TensorFlow as tf):
    # nothing else can bind it. Any other binding of `tf` anywhere wins; only `tf` is guessed.
    ("from train import *\ntf.transpose(x)", "tensorflow.transpose"),
    ("from .common import *\ntf.transpose(x)", "tensorflow.transpose"),
    ("from train import *\ndef f(tf):\n    return tf.transpose(x)", None),
    ("from train import *\ntf = object()\ntf.transpose(x)", None),
    ("from train import *\nnp.array(x)", None),
    ("tf.transpose(x)", None),
])
def test_qualname_resolves_what_a_name_refers_to(source, expected):
    ctx = ctx_for(source)
    assert ctx.call_qualname(last_call(ctx)) == expected


@pytest.mark.parametrize(("source", "expected"), [
    # A notebook's kernel may hold a `tf` no saved cell binds: read as TensorFlow...
    ("tf.transpose(x)", "tensorflow.transpose"),
    # ...unless something in the notebook binds the name.
    ("tf = object()\ntf.transpose(x)", None),
    ("def f(tf):\n    return tf.transpose(x)", None),
    ("np.array(x)", None),
])
def test_a_notebook_reads_an_unbound_tf_as_tensorflow(source, expected):
    ctx = Context(ast.parse(source), source, "n.ipynb")
    assert ctx.call_qualname(last_call(ctx)) == expected
    assert ctx.imports_tf == (expected is not None)
    assert ("tensorflow" in ctx.imported_roots) == (expected is not None)


def test_function_local_import_and_global_declaration():
    ctx = ctx_for("def f():\n    import tensorflow as tf\n    return tf.zeros(3)\n"
                  "def g():\n    return tf.zeros(3)\n")
    calls = sorted((n for n in ast.walk(ctx.tree) if isinstance(n, ast.Call)),
                   key=lambda c: c.lineno)
    assert ctx.call_qualname(calls[0]) == "tensorflow.zeros"
    assert ctx.call_qualname(calls[1]) is None  # the import is local to f
    ctx = ctx_for("def setup():\n    global tf\n    import tensorflow as tf\n"
                  "def g():\n    return tf.zeros(3)\n")
    assert ctx.call_qualname(last_call(ctx)) == "tensorflow.zeros"


def node_at(ctx: Context, line: int, typ=ast.Call) -> ast.AST:
    return next(n for n in ast.walk(ctx.tree) if isinstance(n, typ) and n.lineno == line)


TF_FUNCTION_CASES = [
    ("import tensorflow as tf\n@tf.function\ndef f(x):\n    return tf.abs(x)\n", True),
    ("import tensorflow as tf\n@tf.function(jit_compile=True)\ndef f(x):\n"
     "    return tf.abs(x)\n", True),
    ("from tensorflow import function\n@function\ndef f(x):\n    return g(x)\n", True),
    ("import tensorflow as tf\ndef f(x):\n    return tf.abs(x)\nf2 = tf.function(f)\n", True),
    ("import tensorflow as tf\nclass M(tf.keras.Model):\n    def call(self, x):\n"
     "        return tf.abs(x)\n", True),
    ("import keras\nclass B(keras.layers.Layer):\n    pass\nclass M(B):\n"
     "    def train_step(self, data):\n        return g(data)\n", True),
    # tf.function under another name still wraps what it is given.
    ("from tensorflow import function as compile_fn\ndef g(x):\n    return abs(x)\n"
     "h = compile_fn(g)\n", True),
    ("import tensorflow as tf\nfn = tf.function\ndef g(x):\n    return abs(x)\n"
     "h = fn(g)\n", True),
    ("import functools as compile_fn\ndef g(x):\n    return abs(x)\n"
     "h = compile_fn.partial(g)\n", False),
    ("import tensorflow as tf\ndef f(x):\n    return tf.abs(x)\n", False),
    ("class M:\n    def call(self, x):\n        return g(x)\n", False),
    ("import functools\n@functools.lru_cache\ndef f(x):\n    return g(x)\n", False),
]


@pytest.mark.parametrize(("source", "expected"), TF_FUNCTION_CASES)
def test_in_tf_function(source, expected):
    ctx = ctx_for(source)
    line = next(i for i, t in enumerate(source.splitlines(), 1) if "return" in t)
    assert ctx.in_tf_function(node_at(ctx, line)) is expected


def test_enclosing_loops_and_comprehensions():
    src = ("for i in range(3):\n"       # 1
           "    a(i)\n"                  # 2
           "    [b(j) for j in c(i)]\n"  # 3
           "    def inner():\n"          # 4
           "        d()\n"               # 5
           "while e():\n"                # 6
           "    pass\n"
           "else:\n"
           "    g()\n")                  # 9
    ctx = ctx_for(src)
    assert [type(n) for n in ctx.enclosing_loops(node_at(ctx, 2))] == [ast.For]
    b = next(n for n in ast.walk(ctx.tree) if isinstance(n, ast.Call)
             and getattr(n.func, "id", "") == "b")
    c = next(n for n in ast.walk(ctx.tree) if isinstance(n, ast.Call)
             and getattr(n.func, "id", "") == "c")
    assert [type(n) for n in ctx.enclosing_loops(b)] == [ast.ListComp, ast.For]
    assert [type(n) for n in ctx.enclosing_loops(c)] == [ast.For]  # first iterable: once
    assert ctx.enclosing_loops(node_at(ctx, 5)) == []  # a def body does not run per loop
    assert [type(n) for n in ctx.enclosing_loops(node_at(ctx, 6))] == [ast.While]  # the test
    assert ctx.enclosing_loops(node_at(ctx, 9)) == []  # else runs once
    assert ctx.enclosing_loops(node_at(ctx, 1)) == []  # range(3) is evaluated once


def test_dataset_map_fn_and_gradient_tape():
    src = ("import tensorflow as tf\n"
           "def parse(x):\n"
           "    return tf.io.parse_tensor(x, tf.float32)\n"   # 3
           "def other(x):\n"
           "    return tf.abs(x)\n"                           # 5
           "ds = tf.data.TFRecordDataset(['a']).map(parse)\n"
           "ds2 = ds.filter(lambda x: tf.reduce_all(x > 0))\n"  # 7
           "names = {'a': 1}\n"
           "m = map(other, [1])\n"
           "with tf.GradientTape() as tape:\n"
           "    y = tf.square(3.0)\n"                         # 11
           "z = tf.square(2.0)\n")                            # 12
    ctx = ctx_for(src)
    assert ctx.in_dataset_map_fn(node_at(ctx, 3))
    assert not ctx.in_dataset_map_fn(node_at(ctx, 5))
    reduce_all = next(n for n in ast.walk(ctx.tree) if isinstance(n, ast.Call)
                      and getattr(n.func, "attr", "") == "reduce_all")
    assert ctx.in_dataset_map_fn(reduce_all)
    assert ctx.in_graph(node_at(ctx, 3))
    assert ctx.under_gradient_tape(node_at(ctx, 11))
    assert not ctx.under_gradient_tape(node_at(ctx, 12))
    ds_name = next(n for n in ast.walk(ctx.tree) if isinstance(n, ast.Name) and n.id == "ds"
                   and isinstance(n.ctx, ast.Load))
    assert ctx.is_dataset(ds_name)


def _name(ctx: Context, ident: str, line: int) -> ast.Name:
    return next(n for n in ast.walk(ctx.tree) if isinstance(n, ast.Name) and n.id == ident
                and n.lineno == line and isinstance(n.ctx, ast.Load))


def test_is_tensor_like_is_conservative():
    src = ("import tensorflow as tf\n"
           "import numpy as np\n"
           "a = tf.zeros([3])\n"
           "b = a * 2 + 1\n"
           "c = np.zeros(3)\n"
           "d = a.numpy()\n"
           "e = tf.data.Dataset.range(3)\n"
           "@tf.function\n"
           "def f(x, training=False):\n"
           "    return x, training\n"
           "def g(t: tf.Tensor, u):\n"
           "    return t, u\n"
           "print(a, b, c, d, e)\n")
    ctx = ctx_for(src)
    expect = {"a": True, "b": True, "c": False, "d": False, "e": False}
    for ident, want in expect.items():
        assert ctx.is_tensor_like(_name(ctx, ident, 13)) is want, ident
    assert ctx.is_tensor_like(_name(ctx, "x", 10))
    assert not ctx.is_tensor_like(_name(ctx, "training", 10))
    assert ctx.is_tensor_like(_name(ctx, "t", 12))
    assert not ctx.is_tensor_like(_name(ctx, "u", 12))


def test_positions_and_source_of_handle_non_ascii():
    src = "import tensorflow as tf\nx = 'é'; y = tf.zeros([2])\n"
    ctx = ctx_for(src)
    call = last_call(ctx)
    assert call.col_offset == 14  # bytes: 'é' is two
    assert ctx.span(call)[1] == 13  # characters
    assert ctx.source_of(call) == "tf.zeros([2])"


SCOPE_SOURCE = '''\
import tensorflow as tf
x = [y for y in range(3)]
@deco(a)
def f(p=default, *, q=kwdefault) -> ret:
    z = [w + v for w in outer for v in w if v]
    g = (k for k in z)
    return lambda m: m + z
class C(Base, metaclass=Meta):
    attr = [n for n in attr_src]
    def method(self):
        return {i: j for i, j in items}
'''


def _scope_by_walking_up(ctx: Context, node: ast.AST) -> ast.AST:
    """Python's scoping rules, spelled out as a plain walk up the parents: the reference
    that the memoised ``Context.scope_of`` must agree with on every node."""
    child, path = node, [node]
    p = ctx.parent(node)
    while p is not None:
        if isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            outside = (child in p.decorator_list or child is getattr(p, "returns", None)
                       or child in getattr(p, "bases", ()) or child in getattr(p, "keywords", ()))
            if not outside:
                return p
        elif isinstance(p, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            first = p.generators[0]
            if not (child is first and first.iter in path):
                return p
        elif isinstance(p, (ast.Lambda, ast.Module)):
            return p
        child = p
        path.append(p)
        p = ctx.parent(p)
    return ctx.tree


@pytest.mark.parametrize("order", ["top_down", "bottom_up"])
def test_scope_of_agrees_with_python_scoping_on_every_node(order):
    ctx = ctx_for(SCOPE_SOURCE)
    nodes = list(ast.walk(ctx.tree))
    if order == "bottom_up":  # the memo is filled from the leaves first
        nodes.reverse()
    for node in nodes:
        assert ctx.scope_of(node) is _scope_by_walking_up(ctx, node), ast.dump(node)[:80]
    named = {n.id: ctx.scope_of(n) for n in ast.walk(ctx.tree) if isinstance(n, ast.Name)}
    comp_f = ctx.scope_of(node_at(ctx, 5, ast.BinOp))
    assert isinstance(comp_f, ast.ListComp)
    f = node_at(ctx, 4, ast.FunctionDef)
    assert named["outer"] is f  # a comprehension's first iterable: the enclosing scope
    assert named["v"] is comp_f and named["w"] is comp_f
    assert named["deco"] is ctx.tree and named["a"] is ctx.tree and named["ret"] is ctx.tree
    assert named["Base"] is ctx.tree and named["Meta"] is ctx.tree
    assert named["items"] is node_at(ctx, 10, ast.FunctionDef)


def test_module_alias_is_the_first_module_level_import_in_walk_order():
    ctx = ctx_for("try:\n    import tensorflow as tf2\nexcept ImportError:\n    pass\n"
                  "def f():\n    import tensorflow as tf1\n"
                  "import tensorflow as tf3\nimport tensorflow as tf1\n")
    assert ctx.module_alias("tensorflow") == "tf3"  # module level, walked first
    ctx = ctx_for("import tensorflow as tf\ntf = None\nimport tensorflow as tff\n")
    assert ctx.module_alias("tensorflow") == "tff"  # `tf` is rebound
    ctx = ctx_for("import numpy as np\n")
    assert ctx.module_alias("tensorflow") is None


def test_a_name_bound_twice_by_one_import_and_names_bound_nowhere():
    ctx = ctx_for("import numpy as x, tensorflow as x\nx.zeros(3)\nlen(x)\n")
    assert ctx.call_qualname(node_at(ctx, 2)) == "tensorflow.zeros"
    assert ctx.call_qualname(node_at(ctx, 3)) is None  # a builtin: bound nowhere here
    assert ctx.binding(node_at(ctx, 3).func) is None


@pytest.mark.parametrize("path, expected", [
    # Keras 2's own sources import their backend relatively: resolved inside a keras tree.
    ("repo/keras/layers/pooling.py", "keras.backend.repeat"),
    ("src/tensorflow/python/keras/layers/pooling.py", "keras.backend.repeat"),
    # Anywhere else the package's root is unknown: a relative import stays unresolved.
    ("repo/mylib/layers/pooling.py", None),
    ("pooling.py", None),
])
def test_relative_imports_of_the_backend_resolve_only_in_a_keras_tree(path, expected):
    source = "from .. import backend as K\nK.repeat(m, 3)\n"
    ctx = Context(ast.parse(source), source, path)
    assert ctx.call_qualname(last_call(ctx)) == expected
    assert ctx.imports_tf is (expected is not None)
    assert ("keras" in ctx.imported_roots) is (expected is not None)


def test_a_package_of_ones_own_named_keras_is_not_keras():
    # trieste/models/keras: `.utils` is trieste's module, not keras.utils.
    source = "from .utils import sample\nfrom ..interface import Model\nsample(x)\n"
    ctx = Context(ast.parse(source), source, "trieste/models/keras/models.py")
    assert ctx.call_qualname(last_call(ctx)) is None
    assert not ctx.imports_tf
    # Keras' own tree: the backend by a submodule path resolves too.
    source = "from ..backend import floatx\nfloatx()\n"
    ctx = Context(ast.parse(source), source, "keras/layers/core.py")
    assert ctx.call_qualname(last_call(ctx)) == "keras.backend.floatx"


@pytest.mark.parametrize("source", [
    "a = 1\nb = 2\n", "a = 1\r\nb = 2", "a = 1\rb = 2\r\n\n", "", "\n",
    # Characters `str.splitlines` breaks at and Python's tokenizer does not: inside a
    # string or a comment, and a form feed as whitespace at the start of a line.
    "s = 'a\x0cb'\n\x0cx = 1\n", "# \u2028 \x85 \x1c\ny = 2\n", "t = '\x0b'\r\n",
])
def test_split_lines_numbers_lines_as_ast_does(source: str) -> None:
    from tfperf.lint.semantic import split_lines

    lines = split_lines(source)
    assert "".join(lines) == source
    assert all(line.endswith(("\n", "\r")) for line in lines[:-1])
    # Line N is the line ast numbers N: each statement starts where ast says.
    for stmt in ast.parse(source).body:
        first = (ast.get_source_segment(source, stmt) or "").split("=")[0]
        assert lines[stmt.lineno - 1][stmt.col_offset:].startswith(first)
