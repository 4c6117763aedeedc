"""TFP117: ``model.predict`` on the same input at every iteration of a loop."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any

from tfperf.analysis.kinds import model_like, uses_keras
from tfperf.core.findings import Finding
from tfperf.lint.analysis.examples import one_input
from tfperf.lint.analysis.keras_models import is_keras_model
from tfperf.lint.analysis.receivers import receiver
from tfperf.lint.analysis.sessions import graph_mode_module
from tfperf.lint.analysis.syntax import is_test_file
from tfperf.lint.analysis.traced import eager_guarded, traced
from tfperf.lint.analysis.trips import FEW_MODEL_CALLS, few_runs_in_all
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context

# Calls that change the model between two predicts (the loop evaluates a model it trains:
# predict over a validation set per epoch is right) or say where its weights come from.
_CHANGES_MODEL = frozenset({"fit", "fit_generator", "train_on_batch", "apply_gradients",
                            "minimize", "gradient", "set_weights", "load_weights", "compile",
                            "assign", "assign_add", "assign_sub", "train_step"})
# Library calls over the input that give the same array for the same operand.
_SAME_VALUE = frozenset({"numpy.expand_dims", "numpy.reshape", "numpy.asarray", "numpy.array",
                         "numpy.transpose", "numpy.float32", "tensorflow.expand_dims",
                         "tensorflow.reshape", "tensorflow.cast", "tensorflow.transpose",
                         "tensorflow.convert_to_tensor", "tensorflow.constant"})
# Names that say the input is a dataset, generator or loader: predict streams it in
# batches, the case predict is built for.
_STREAM_WORDS = ("ds", "dataset", "gen", "generator", "loader", "iterator", "flow", "seq")


def _stored_names(loop: Any) -> set[str]:
    """Names bound anywhere in the loop (its target, body, nested loops)."""
    out: set[str] = set()
    if type(loop) in (ast.For, ast.AsyncFor):
        parts = [loop.target, *loop.body]
    elif type(loop) is ast.While:
        parts = list(loop.body)
    else:  # a comprehension: its targets and what its conditions bind (`:=`)
        parts = [loop]
    for part in parts:
        for n in ast.walk(part):
            if type(n) is ast.Name and type(n.ctx) is ast.Store:
                out.add(n.id)
            elif type(n) in (ast.Attribute, ast.Subscript) and type(n.ctx) is ast.Store:
                root = n
                while type(root) in (ast.Attribute, ast.Subscript):
                    root = root.value
                if type(root) is ast.Name:
                    out.add(root.id)  # `x[i] = ...`, `self.x = ...`: that value changes
    return out


def _same_each_time(ctx: Context, given: Any, loop: Any) -> bool:
    """``given`` is the same value at every iteration of ``loop``: none of its names is
    bound in the loop, and it calls nothing but shape changes of its operands."""
    stored = _stored_names(loop)
    names = 0
    for n in ast.walk(given):
        if type(n) is ast.Call and ctx.call_qualname(n) not in _SAME_VALUE:
            return False  # `next(it)`, `sample()`, a helper: may differ per call
        if type(n) is ast.Name and type(n.ctx) is ast.Load:
            if n.id in stored:
                return False
            names += 1
            if any(w == part for part in n.id.lower().split("_") for w in _STREAM_WORDS):
                return False
    return names > 0  # a literal is a constant the author wrote once


def _refs(given: Any) -> set[str]:
    """What may hold the input's value, as ``ast.dump`` texts: each name or attribute chain
    the input reads (``buf``, ``game.board``, ``self.state``) and the objects holding it
    (``game``, ``self``)."""
    out: set[str] = set()
    for n in ast.walk(given):
        if type(n) is ast.Name or (type(n) is ast.Attribute and type(n.ctx) is ast.Load):
            while type(n) is ast.Attribute:
                out.add(ast.dump(n))
                n = n.value
            if type(n) is ast.Name:
                out.add(ast.dump(n))
    return out


def _mutated_in_loop(given: Any, loop: Any, call: ast.Call) -> bool:
    """A call in the loop may change the input in place: a method of the object holding it
    (``self.advance()``, ``game.move()``, ``buf.fill(0)``) or a call given it or its holder
    (``np.copyto(buf, frame)``, ``cap.read(buf)``)."""
    refs = _refs(given)
    inside = {id(n) for n in ast.walk(given)}
    for n in ast.walk(loop):
        if type(n) is not ast.Call or n is call or id(n) in inside:
            continue
        if type(n.func) is ast.Attribute and ast.dump(n.func.value) in refs:
            return True
        if any(ast.dump(a) in refs for a in [*n.args, *(k.value for k in n.keywords)]):
            return True
    return False


def _model_set(loop: Any, model: ast.expr) -> bool:
    """The loop assigns to a part of the model (``model.layers[-1].temperature = t``):
    each predict runs another model."""
    text = ast.dump(model)
    for n in ast.walk(loop):
        if type(n) in (ast.Attribute, ast.Subscript) and type(n.ctx) is ast.Store:
            part = n.value
            while type(part) in (ast.Attribute, ast.Subscript):
                if ast.dump(part) == text:
                    return True
                part = part.value
            if ast.dump(part) == text:
                return True
    return False


def _model_changes(loop: Any, model_root: str) -> bool:
    """The loop trains, reloads or rebinds the model between predicts."""
    for n in ast.walk(loop):
        if type(n) is ast.Call and type(n.func) is ast.Attribute \
                and n.func.attr in _CHANGES_MODEL:
            return True
        if type(n) is ast.Name and type(n.ctx) is ast.Store and n.id == model_root:
            return True
    return False


# Calls that time what runs: a loop that times predict repeats it on purpose (a benchmark).
_CLOCKS = frozenset({"time.time", "time.perf_counter", "time.process_time", "time.monotonic",
                     "timeit.default_timer"})


def _times_itself(ctx: Context, loop: Any) -> bool:
    return any(type(n) is ast.Call and ctx.call_qualname(n) in _CLOCKS for n in ast.walk(loop))


def _model_touched(loop: Any, model: ast.expr) -> bool:
    """A method of the model's object other than predict runs in the loop (``restore``,
    ``build_ensemble``): each predict may see another model."""
    text = ast.dump(model)
    return any(type(n) is ast.Call and type(n.func) is ast.Attribute
               and n.func.attr != "predict" and ast.dump(n.func.value) == text
               for n in ast.walk(loop))


def _root(expr: Any) -> str:
    while type(expr) in (ast.Attribute, ast.Subscript, ast.Call):
        expr = expr.func if type(expr) is ast.Call else expr.value
    return getattr(expr, "id", "")


class PredictSameInput(Rule):
    code = "TFP117"
    name = "predict-same-input"
    message = ("model.predict on the same input at every iteration of the loop: each call "
               "builds predict's data adapter and loop again for one small input")
    hint = ("call the model directly, model(x, training=False) (a Monte-Carlo sample per "
            "call keeps its stochastic layers), or a tf.function around it; keep predict for "
            "inputs too large for one call")
    claims = ("S13",)
    group = "preview"  # new (stop 40): waits for judged findings
    node_types = (ast.Call,)
    callee_names = frozenset({"predict"})
    docs = """\
## What it does
Finds `model.predict(x)` in an eager Python loop where `x` is the same at every iteration:
no name in it is bound in the loop, and it calls nothing but shape changes
(`np.expand_dims`, `tf.cast`, ...). The usual case is Monte-Carlo sampling of a stochastic
model (variational or dropout layers): `for n in range(n_samples): model.predict(block)`.
The model is a Keras model, or named like one (`model`, `self.net`).

## Why is this bad?
Each `predict` call builds a data adapter over its input, a progress bar and callbacks, and
runs Keras's batching loop: milliseconds a call, far more than a small network's forward
pass on a few examples. Called per sample, that set-up is most of the loop's time; the
model called directly runs only the layers (`rule_claims.py --cases TFP110b`: 20 calls on
one to 64 small images, predict against `model(x)`).

## Example
```python
for j in range(0, n_blocks, batch_size):
    block = features[j:j + batch_size]
    for n in range(n_samples):
        samples.append(model.predict(block, batch_size=1))
```

## Use instead
```python
        samples.append(model(block, training=False).numpy())
```

## Fix safety
No automatic fix: `model(x)` returns a tensor (add `.numpy()`), runs the whole input at once
(predict's `batch_size` bounds the memory of one step), and predict accepts datasets and
generators that `model(x)` does not.

## Known limitations
Not reported where the loop trains, reloads or rebinds the model (`fit`, `train_on_batch`,
`apply_gradients`, `load_weights`, any other method of the model's object such as
`restore`): predict over a validation set per epoch is right; nor in a loop that reads a
clock (a benchmark of predict), in test files, or on an object named like a model in a
module that never imports Keras (a Gaussian process's or another library's `predict`);
nor on a name that says a dataset or generator (`val_ds`, `test_gen`), nor where the code
says predict runs fewer than 16 times in all, nor on TensorFlow 1.x or in TF1 graph code,
where predict runs a prebuilt graph. The size of the input is not known: a repeated predict
over a very large array pays little for its set-up (predict is right there; the finding is
then minor).
"""
    valid = (
        Valid("""
            import numpy as np
            import tensorflow as tf
            model = tf.keras.models.load_model("m.keras")
            def sample(block, n_samples):
                return [model(block, training=False).numpy() for _ in range(n_samples)]
        """, spelling="loop: the model called directly"),
        Valid("""
            import tensorflow as tf
            def train(model, x, y, x_val, epochs):
                for epoch in range(epochs):
                    model.fit(x, y, epochs=1)
                    print(epoch, model.predict(x_val).mean())
        """, spelling="loop: the model trained between predicts"),
        Valid("""
            import numpy as np
            def predict_blocks(model, blocks):
                out = []
                for j in range(0, len(blocks), 8):
                    out.append(model.predict(blocks[j:j + 8]))
                return np.concatenate(out)
        """, spelling="index: a new chunk per iteration"),
        Valid("""
            def evaluate(model, val_ds, rounds):
                for _ in range(rounds):
                    preds = model.predict(val_ds)
        """, spelling="name: a dataset"),
        Valid("""
            from mc import sample
            import numpy as np
            print(sample(np.load("x.npy"), 3))
        """, files={"mc.py": """
            import tensorflow as tf
            model = tf.keras.models.load_model("m.keras")
            def sample(x, n):
                return [model(x, training=False) for _ in range(n)]
        """}, spelling="module"),
        Valid("""
            import numpy as np
            import tensorflow as tf
            model = tf.keras.models.load_model("m.keras")
            # %%
            for i in range(3):
                print(model.predict(x_test[:4]))
        """, notebook=True, spelling="notebook: three looks"),
        Valid("""
            import numpy as np
            def sample(model, block, n_samples):
                return [model.predict(block) for _ in range(n_samples)]
        """, tf_version="1.15", spelling="loop: TF 1.x"),
        # Held-out-style false shapes judged on the mirror (stop 40): a model restored per
        # fold, a timed benchmark of predict, another library's predict.
        Valid("""
            import tensorflow as tf
            def ensemble(seqnn_model, files, seqs):
                preds = []
                for f in files:
                    seqnn_model.restore(f)
                    preds.append(seqnn_model.predict(seqs))
                return preds
        """, spelling="name: the model restored per iteration"),
        Valid("""
            import time
            import tensorflow as tf
            def benchmark(model, x, n):
                total = 0.0
                for _ in range(n):
                    start = time.time()
                    model.predict(x)
                    total += time.time() - start
                return total / n
        """, spelling="loop: a timed benchmark of predict"),
        Valid("""
            import numpy as np
            def plot_samples(model, grid, num_samples):
                return [model.predict(grid) for _ in range(num_samples)]
        """, spelling="index: no Keras in the module"),
    )
    invalid = (
        Invalid("""
            import numpy as np
            import tensorflow as tf
            def predict_array(model, features, batch_size, n_samples):
                means = []
                bar = tf.keras.utils.Progbar(len(features))
                for j in range(0, len(features), batch_size):
                    this_x = features[j:j + batch_size]
                    preds = []
                    for n in range(n_samples):
                        preds.append(model.predict(this_x, batch_size=1, verbose=0))
                    means.append(np.mean(preds, axis=0))
                return means
        """, count=1, lines=(10,), spelling="name: a block bound by the outer loop"),
        Invalid("""
            import tensorflow as tf
            model = tf.keras.models.load_model("m.keras")
            def sample(block, n_samples):
                return [model.predict(block) for _ in range(n_samples)]
        """, count=1, lines=(4,), spelling="loop: a comprehension"),
        Invalid("""
            import numpy as np
            from tensorflow import keras
            def sample(net, images, n):
                k, out = 0, []
                while k < n:
                    out.append(net.predict(np.asarray(images))[0])
                    k += 1
                return out
        """, count=1, lines=(6,), spelling="loop: while, asarray of the input"),
        Invalid("""
            from mc import sample
            import numpy as np
            print(sample(np.load("x.npy"), 30))
        """, files={"mc.py": """
            import tensorflow as tf
            model = tf.keras.models.load_model("m.keras")
            def sample(x, n):
                return [model.predict(x) for _ in range(n)]
        """}, count=1, spelling="module"),
        Invalid("""
            import numpy as np
            import tensorflow as tf
            model = tf.keras.models.load_model("m.keras")
            # %%
            x = np.load("block.npy")
            samples = []
            for i in range(100):
                samples.append(model.predict(x))
        """, count=1, notebook=True, spelling="notebook"),
        Invalid("""
            import keras
            class Uncertainty:
                def __init__(self, model):
                    self.model = model
                def __call__(self, x, n=50):
                    return [self.model.predict(x) for _ in range(n)]
        """, count=1, lines=(6,), spelling="name: x on self.model"),
    )
    valid = (  # type: ignore[assignment]
        *valid,
        # Review 40: a batch of one, the same at every iteration, is TFP110's (predict's
        # set-up per step for one input): one finding per call, TFP110's.
        Valid("""
            import numpy as np
            from tensorflow import keras
            def sample(net, image, n):
                k, out = 0, []
                while k < n:
                    out.append(net.predict(np.expand_dims(image, 0))[0])
                    k += 1
                return out
        """, spelling="loop: while, expand_dims of the input (TFP110's)"),
        Valid("""
            import keras
            class Uncertainty:
                def __init__(self, model):
                    self.model = model
                def __call__(self, x, n=50):
                    return [self.model.predict(x[None]) for _ in range(n)]
        """, spelling="index: x[None] on self.model (TFP110's)"),
    )

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Finding]:
        call: Any = node
        func = call.func
        if type(func) is not ast.Attribute or func.attr != "predict" or not call.args:
            return
        if is_test_file(ctx.path) or not model_like(ctx, func.value):
            return
        if not is_keras_model(ctx, func.value) and not uses_keras(ctx):
            return  # named like a model in a module with no Keras: another library's predict
        if ctx.tf_version < (2, 0) or graph_mode_module(ctx):
            return  # predict runs a prebuilt graph there; model(x) would add ops per call
        loops = ctx.enclosing_loops(call)
        if not loops or traced(ctx, call) or eager_guarded(ctx, call):
            return
        if not _same_each_time(ctx, call.args[0], loops[0]) \
                or _mutated_in_loop(call.args[0], loops[0], call):
            return
        if one_input(ctx, call.args[0]) and receiver(ctx, func.value, "predict") != "own":
            return  # a batch of one per step: TFP110 reports this call (one finding per call)
        model_root = _root(func.value)
        if any(_model_changes(loop, model_root) or _model_touched(loop, func.value)
               or _model_set(loop, func.value)
               or _times_itself(ctx, loop) for loop in loops):
            return
        if few_runs_in_all(ctx, call, FEW_MODEL_CALLS):
            return
        yield self.finding(ctx, call)
