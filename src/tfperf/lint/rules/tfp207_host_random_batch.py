"""TFP207: a large random batch drawn with NumPy on the host every step."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from tfperf.core.findings import Finding
from tfperf.lint.analysis.traced import traced
from tfperf.lint.analysis.trips import FEW_MODEL_CALLS, few_runs
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context

if TYPE_CHECKING:
    from tfperf.analysis.project import Project

# NumPy's samplers → where the shape is given: "dims" (each positional argument is a
# dimension), or the index of the positional ``size`` argument.
_SAMPLERS: dict[str, str | int] = {
    "numpy.random.rand": "dims", "numpy.random.randn": "dims",
    "numpy.random.random": 0, "numpy.random.random_sample": 0, "numpy.random.ranf": 0,
    "numpy.random.sample": 0, "numpy.random.standard_normal": 0,
    "numpy.random.uniform": 2, "numpy.random.normal": 2, "numpy.random.randint": 2,
}
# A batch this large (elements) takes NumPy's single thread tens of milliseconds to draw.
LARGE = 1 << 20
_DEPTH = 3


def _int(ctx: Context, node: Any, depth: int = 0) -> int | None:
    if type(node) is ast.Constant and type(node.value) is int:
        return int(node.value)
    if type(node) is ast.Name and depth < _DEPTH:
        bindings = ctx.scope_bindings(node)
        if len(bindings) == 1 and bindings[0].kind == "assign":
            return _int(ctx, bindings[0].value, depth + 1)
    return None


def _dims(ctx: Context, call: ast.Call) -> list[Any] | None:
    """The shape's dimensions as written (expressions), or None where no shape is given."""
    where = _SAMPLERS[ctx.call_qualname(call) or ""]
    if where == "dims":
        return list(call.args) if call.args and not call.keywords else None
    size = next((k.value for k in call.keywords if k.arg == "size"), None)
    if size is None and len(call.args) > int(where):
        size = call.args[int(where)]
    for _ in range(_DEPTH):  # `size=shape`, `shape = (32, 224, 224, 3)`
        if type(size) is not ast.Name:
            break
        bindings = ctx.scope_bindings(size)
        if len(bindings) != 1 or bindings[0].kind != "assign":
            return None
        size = bindings[0].value
    if type(size) in (ast.Tuple, ast.List):
        return list(size.elts)
    return [size] if size is not None else None


def large_batch(ctx: Context, call: ast.Call) -> bool:
    """The call draws, by its literal sizes, at least ``LARGE`` values, or a batch of images:
    four dimensions or more, none a literal 1 or 2 (``(n, 1, 1, 1)`` is one value per image,
    broadcast)."""
    dims = _dims(ctx, call)
    if not dims:
        return False
    sizes = [_int(ctx, d) for d in dims]
    total = 1
    for n in sizes:
        total *= n if n is not None else 1
    if total >= LARGE:
        return True
    return len(dims) >= 4 and not any(n is not None and n <= 2 for n in sizes)


_LOOP = """
            import numpy as np
            import tensorflow as tf
            model = tf.keras.applications.ResNet50(weights=None)
            for step in range(steps):
                images = DRAW
                model(images, training=False)
"""


class HostRandomBatch(Rule):
    code = "TFP207"
    name = "host-random-batch"
    message = ("large random batch drawn with NumPy on the host every step: one thread "
               "draws it, then it is copied into a tensor")
    hint = ("draw it with TensorFlow instead (tf.random.uniform(shape) / tf.random.normal, "
            "on the device, many threads), or draw it once before the loop if any batch "
            "will do (synthetic benchmark input)")
    claims = ("S12",)
    group = "preview"  # new (issue 25, round 4's F015 shape): waits for judged findings
    node_types = ()
    docs = """\
## What it does
Finds a NumPy sampler (`np.random.rand`/`randn`/`random`/`uniform`/`normal`/`randint`/
`standard_normal`...) run once per iteration of an eager Python loop, directly or in a
function the loop calls (in any module of the project), that draws a large batch: four
dimensions or more, none a literal 1 or 2 (a batch of images; `(n, 1, 1, 1)` is one value
per image), or at least 2^20 values by its literal sizes (also through names bound once:
`shape = (32, 224, 224, 3)`; `size=shape`).

## Why is this bad?
NumPy draws on one host thread and the batch is then copied into a tensor (and to the
device); TensorFlow's random ops draw with every core, or on the GPU where the model runs.
Measured on TF 2.21 CPU here (2 busy cores, `benchmarks/bench_lint_trip_count.py`): a
`[32, 224, 224, 3]` float32 batch, `np.random.uniform` + conversion 83 ms against
`tf.random.uniform` 42 ms (2.0×); on a GPU the copy is saved too. A small batch (`[64, 100]`
GAN noise) is faster drawn by NumPy (0.03 ms against 0.09 ms): it is not
reported.

## Example
```python
for step in range(steps):
    images = np.random.uniform(-1, 1, size=(32, 224, 224, 3)).astype(np.float32)
    model(images, training=False)
```

## Use instead
```python
for step in range(steps):
    images = tf.random.uniform((32, 224, 224, 3), -1, 1)
    model(images, training=False)
```

## Fix safety
No automatic fix: the random stream changes (seeds, `np.random.seed`), and the dtype of
NumPy's draw (float64) differs from TensorFlow's default (float32).

## Known limitations
Preview: no judged finding yet. Not reported in traced code (TFP202's), in loops the code
says run it fewer than 16 times, in a loop of a module that imports neither TensorFlow
nor Keras (a helper of such a module called per step is reported), on a sampler of a
`Generator` object (`rng.normal`), or
where the sizes are not literal and fewer than four dimensions are given.
"""
    valid = (
        Valid(_LOOP.replace("DRAW", "tf.random.uniform((32, 224, 224, 3), -1, 1)"),
              spelling="loop: for"),
        # GAN noise: small, NumPy is the faster there.
        Valid("""
            import numpy as np
            import tensorflow as tf
            noise_shape = (64, 100)
            while True:
                noise = np.random.normal(0, 1, noise_shape)
                generator(noise, training=False)
        """, spelling="name: a small shape"),
        Valid("""
            import numpy as np
            import tensorflow as tf
            images = np.random.rand(32, 224, 224, 3)
            for step in range(100):
                model(images)
        """, spelling="loop: drawn once, before the loop"),
        # One gamma per image, broadcast: (n, 1, 1, 1) values.
        Valid("""
            import numpy as np
            import tensorflow as tf
            for x, y in batches:
                x = x ** np.random.uniform(0.9, 1.1, (x.shape[0], 1, 1, 1))
                model(x)
        """, spelling="loop: one value per image"),
        Valid("""
            import numpy as np
            import tensorflow as tf
            for i in range(4):
                grid = np.random.rand(8, 64, 64, 3)
                show(model(grid))
        """, spelling="loop: a few literal iterations"),
        Valid("""
            from data import fake_batch
            batch = fake_batch()
            for step in range(1000):
                model(batch)
        """, files={"data.py": """
            import numpy as np
            import tensorflow as tf
            def fake_batch():
                return np.random.uniform(size=(32, 224, 224, 3)).astype("float32")
        """}, spelling="module"),
        Valid("""
            import tensorflow as tf
            model = tf.keras.applications.ResNet50(weights=None)
            # %%
            for step in range(1000):
                model(tf.random.normal([16, 224, 224, 3]))
        """, notebook=True, spelling="notebook"),
    )
    invalid = (
        Invalid(_LOOP.replace("DRAW", "np.random.uniform(-1, 1, size=(32, 224, 224, 3))"),
                count=1, lines=(5,), spelling="loop: for"),
        Invalid("""
            import numpy as np
            import tensorflow as tf
            while not done:
                x = np.random.randn(batch_size, 299, 299, 3).astype(np.float32)
                done = bool(model(x)[0, 0] > 0)
        """, count=1, lines=(4,), spelling="loop: while"),
        Invalid("""
            import numpy as np
            import tensorflow as tf
            shape = (1024, 4096)
            for step in range(steps):
                noise = np.random.normal(0.0, 1.0, shape)
                model(noise)
        """, count=1, lines=(5,), spelling="name: a shape through a name"),
        Invalid("""
            import tensorflow as tf
            from data import fake_batch
            for step in range(1000):
                model(fake_batch(32))
        """, files={"data.py": """
            import numpy as np
            def fake_batch(n):
                return np.random.uniform(size=(n, 224, 224, 3)).astype("float32")
        """}, count=1, spelling="module"),
        Invalid("""
            import numpy as np
            import tensorflow as tf
            model = tf.keras.applications.ResNet50(weights=None)
            # %%
            for step in range(1000):
                model(np.random.rand(16, 224, 224, 3))
        """, count=1, notebook=True, spelling="notebook"),
    )

    def publish(self, ctx: Context) -> list[dict] | None:
        if "random" not in ctx.source or "numpy" not in ctx.source:
            return None  # a helper module may import only NumPy: its callers feed a model
        from tfperf.analysis.summary import enclosing_qualname, position

        facts = []
        for call in ctx.nodes_of(ast.Call):
            if type(call) is not ast.Call:
                continue
            if ctx.call_qualname(call) not in _SAMPLERS or traced(ctx, call) \
                    or not large_batch(ctx, call):
                continue
            loops = ctx.enclosing_loops(call)
            if loops and (few_runs(ctx, call, FEW_MODEL_CALLS) or not ctx.imports_tf):
                continue  # a few draws; or NumPy code of its own (a simulation)
            facts.append({"fn": enclosing_qualname(ctx, call), "pos": position(ctx, call),
                          "loop": bool(loops)})
        return facts

    def check_project(self, project: Project) -> Iterator[Finding]:
        for module in project.modules.values():
            for fact in module.facts.get(self.code, ()):
                if fact["loop"]:
                    yield self.project_finding(module.path, fact["pos"])
                    continue
                site = project.hot_call(module.path, fact["fn"], few=FEW_MODEL_CALLS) \
                    if fact["fn"] else None
                if site is not None:
                    yield self.project_finding(
                        module.path, fact["pos"],
                        f"{self.message} (drawn per step at {project.where(site)})")
