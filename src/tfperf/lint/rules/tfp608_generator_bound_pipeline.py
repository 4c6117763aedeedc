"""TFP608: per-element NumPy work inside the generator of ``Dataset.from_generator``."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any

from tfperf.core.findings import Finding
from tfperf.lint.analysis.callers import resolve_def
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context

_FROM_GENERATOR = frozenset({"tensorflow.data.Dataset.from_generator",
                             "tensorflow.compat.v1.data.Dataset.from_generator"})
# Calls that only wrap or allocate (cheap per element): not the work the rule is about.
_LIGHT = frozenset({"numpy.array", "numpy.asarray", "numpy.float32", "numpy.int32",
                    "numpy.int64", "numpy.float64", "numpy.zeros", "numpy.ones", "numpy.empty",
                    "numpy.arange", "numpy.random.seed", "numpy.random.randint",
                    "numpy.random.choice", "numpy.random.shuffle", "numpy.random.permutation",
                    "numpy.expand_dims", "numpy.reshape", "numpy.squeeze"})
# Host libraries whose per-element work a generator serialises.
_HEAVY_ROOTS = ("cv2.", "PIL.", "scipy.", "skimage.", "librosa.", "imageio.", "soundfile.",
                "keras.preprocessing.image.load_img", "keras.utils.load_img", "h5py.",
                "pandas.read_", "pickle.load", "json.load", "tifffile.", "nibabel.", "pydicom.")
# TF ops called in a generator run eagerly, one element after another, in its Python thread.
_EAGER_TF = ("tensorflow.image.", "tensorflow.io.decode_", "tensorflow.io.read_file",
             "tensorflow.audio.", "tensorflow.signal.")
# A helper's helpers are read this deep for the work above.
_HELPER_DEPTH = 2


def _generator_fn(ctx: Context, expr: Any, depth: int = 0) -> ast.AST | None:
    """The generator function handed to ``from_generator``: a ``def`` (by name or as
    ``self.method``), a ``lambda: gen(...)``, ``functools.partial(gen, ...)``."""
    if depth > 3 or expr is None:
        return None
    if type(expr) is ast.Lambda and type(expr.body) is ast.Call:
        return _generator_fn(ctx, expr.body.func, depth + 1)
    if type(expr) is ast.Call and ctx.qualname(expr.func) == "functools.partial" and expr.args:
        return _generator_fn(ctx, expr.args[0], depth + 1)
    if type(expr) is ast.Call and not expr.args and not expr.keywords:  # from_generator(gen())
        return None
    found = resolve_def(ctx, expr)
    if found is not None and type(found) is not ast.Lambda:
        return found
    if type(expr) is ast.Call:  # from_generator(Loader(paths)): its __call__ or __iter__
        return _instance_generator(ctx, expr)
    if type(expr) is ast.Name:
        b = ctx.binding(expr)
        if b is not None and b.kind == "assign" and b.value is not expr:
            return _generator_fn(ctx, b.value, depth + 1)
    return None


def _instance_generator(ctx: Context, call: ast.Call) -> ast.AST | None:
    """The ``__call__`` (or ``__iter__``) of a class of this module that ``call`` makes."""
    if type(call.func) is not ast.Name:
        return None
    b = ctx.binding(call.func)
    cls: Any = b.value if b is not None and b.kind == "class" else None
    if type(cls) is not ast.ClassDef:
        return None
    for name in ("__call__", "__iter__"):
        for stmt in cls.body:
            if type(stmt) in (ast.FunctionDef, ast.AsyncFunctionDef) and stmt.name == name:
                return stmt
    return None


# Words without which a module's generators do none of the work above (a cheap gate).
# Only the libraries whose per-element work is heavy: a generator module that reads JSON or
# calls TF ops eagerly is left to check() where from_generator is called in it.
_WORK_WORDS = ("numpy", "cv2", "PIL", "scipy", "skimage", "librosa", "imageio", "soundfile",
               "h5py", "tifffile", "nibabel", "pydicom")


# Reading a file per element: on one thread, one element after another.
_LOADS = frozenset({"numpy.load", "numpy.loadtxt", "numpy.fromfile", "numpy.genfromtxt"})


def _attribute_callee(ctx: Context, func: Any) -> str | None:
    """What ``self.attr`` holds when the class sets it from a library function: ``self.f =
    np.load``, or ``self.f = f`` with ``f=np.load`` a default of the method's parameter."""
    if type(func) is not ast.Attribute or type(func.value) is not ast.Name \
            or func.value.id != "self":
        return None
    cls = ctx.enclosing_class(func)
    if cls is None:
        return None
    n: Any
    for n in ast.walk(cls):
        if type(n) is not ast.Assign or len(n.targets) != 1:
            continue
        t: Any = n.targets[0]
        if not (type(t) is ast.Attribute and t.attr == func.attr
                and type(t.value) is ast.Name and t.value.id == "self"):
            continue
        value: Any = n.value
        if type(value) is ast.Name:
            fn = ctx.enclosing_function(n)
            if fn is not None:
                args = fn.args
                params = args.posonlyargs + args.args
                defaults = dict(zip(params[len(params) - len(args.defaults):], args.defaults,
                                    strict=True))
                defaults.update((a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults,
                                                               strict=True) if d)
                value = next((d for a, d in defaults.items() if a.arg == value.id), value)
        q = ctx.qualname(value)
        if q is not None:
            return q
    return None


def _element_loop(fn: Any) -> bool:
    """``fn`` fills an array one element at a time: a Python loop whose body assigns to
    ``a[i]`` / ``a[i, j]`` with a loop variable."""
    n: Any
    for n in ast.walk(fn):
        if type(n) is not ast.For:
            continue
        names = {m.id for m in ast.walk(n.target) if type(m) is ast.Name}
        for m in ast.walk(n):
            if type(m) in (ast.Assign, ast.AugAssign):
                targets = m.targets if type(m) is ast.Assign else [m.target]
                for t in targets:
                    if type(t) is ast.Subscript and any(
                            type(x) is ast.Name and x.id in names for x in ast.walk(t.slice)):
                        return True
    return False


def _call_rank(q: str) -> int:
    """2: a file read or an image/audio library; 1: other NumPy work beyond wrapping,
    allocating and random draws, or a TF image/decode op run eagerly; 0: light."""
    if q in _LOADS or q.startswith(_HEAVY_ROOTS):
        return 2
    if q.startswith("numpy.") and q not in _LIGHT and not q.startswith("numpy.random."):
        return 1
    return 1 if q.startswith(_EAGER_TF) else 0


def _helper_work(ctx: Context, helper: Any, seen: set[int],
                 depth: int) -> tuple[int, str] | None:
    """The costliest work a helper of this module (``load_image(path)``) does, through its
    own helpers ``depth`` deep: a file read or image library (2) or other NumPy work (1)."""
    if depth <= 0 or id(helper) in seen:
        return None
    seen.add(id(helper))
    best: tuple[int, str] | None = None
    n: Any
    for n in ast.walk(helper):
        if type(n) is not ast.Call:
            continue
        q = ctx.qualname(n.func)
        found: tuple[int, str] | None = None
        if q is not None:
            r = _call_rank(q)
            found = (r, q.replace("numpy.", "np.", 1)) if r else None
        else:
            inner: Any = resolve_def(ctx, n.func)
            if inner is not None and type(inner) is not ast.Lambda:
                found = _helper_work(ctx, inner, seen, depth - 1)
        if found is not None and (best is None or found[0] > best[0]):
            best = found
    return best


_KERAS_AUG = frozenset({"keras.preprocessing.image.ImageDataGenerator",
                        "keras.src.legacy.preprocessing.image.ImageDataGenerator"})
# ImageDataGenerator arguments that change no pixel per image.
_NO_AUG = frozenset({"rescale", "dtype", "data_format", "validation_split"})


def _keras_iterator(ctx: Context, expr: Any, depth: int = 0) -> str | None:
    """``expr`` (or what a lambda returns, or a name bound to it) is a Keras
    ``ImageDataGenerator`` iterator that loads or augments images in Python, image by image:
    ``flow_from_directory``/``flow_from_dataframe``, or ``flow`` of a generator given
    augmentation arguments."""
    if expr is None or depth > 3:
        return None
    if type(expr) is ast.Lambda:
        return _keras_iterator(ctx, expr.body, depth + 1)
    if type(expr) is ast.Name:
        b = ctx.binding(expr)
        if b is not None and b.kind == "assign" and b.value is not expr:
            return _keras_iterator(ctx, b.value, depth + 1)
        return None
    if type(expr) is not ast.Call or type(expr.func) is not ast.Attribute:
        return None
    attr = expr.func.attr
    if attr not in ("flow", "flow_from_directory", "flow_from_dataframe"):
        return None
    made: Any = expr.func.value
    if type(made) is ast.Name:
        b = ctx.binding(made)
        made = b.value if b is not None and b.kind == "assign" else None
    is_gen = type(made) is ast.Call and ctx.qualname(made.func) in _KERAS_AUG
    if attr != "flow":
        return f"ImageDataGenerator.{attr} loads (and augments) each image in Python"
    if is_gen and any(k.arg not in _NO_AUG for k in made.keywords):
        return "ImageDataGenerator.flow augments each image in Python"
    return None


def _heavy_work(ctx: Context, fn: Any) -> tuple[ast.Call, str] | None:
    """The costliest call run per yielded element (in a loop that yields, or anywhere in a
    generator whose ``yield`` is in a loop): a helper of this module that fills an array
    element by element in Python, else a file read or an image/audio library call, else any
    other NumPy work beyond wrapping, allocating and drawing random numbers."""
    loops = [n for n in ast.walk(fn) if type(n) in (ast.For, ast.While)
             and any(type(m) in (ast.Yield, ast.YieldFrom) for m in ast.walk(n))]
    best: tuple[int, ast.Call, str] | None = None
    seen: set[int] = set()
    n: Any
    for loop in loops:
        for n in ast.walk(loop):
            if type(n) is not ast.Call or id(n) in seen:
                continue
            seen.add(id(n))
            rank, label = 0, ""
            q = ctx.qualname(n.func) or _attribute_callee(ctx, n.func)
            if q is None:
                helper: Any = resolve_def(ctx, n.func)
                if helper is not None and helper is not fn and type(helper) is not ast.Lambda:
                    if _element_loop(helper):
                        rank, label = 3, f"{helper.name}() fills an array one value at a time"
                    else:
                        inner = _helper_work(ctx, helper, {id(fn)}, _HELPER_DEPTH)
                        if inner is not None:
                            rank, label = inner[0], f"{helper.name}() calls {inner[1]}"
            else:
                rank = _call_rank(q)
                label = q
            if rank and (best is None or rank > best[0]):
                suffix = ", for every element" if rank == 3 else " per element"
                best = (rank, n, label.replace("numpy.", "np.", 1) + suffix)
    return None if best is None else (best[1], best[2])


class GeneratorBoundPipeline(Rule):
    code = "TFP608"
    name = "generator-bound-pipeline"
    message = ("Dataset.from_generator runs its generator in Python, one element at a time: "
               "its NumPy work cannot run in parallel")
    hint = ("yield raw items (paths, indices) and do the work in .map(..., "
            "num_parallel_calls=tf.data.AUTOTUNE) with TF ops, or precompute it once")
    claims = ("S19",)
    group = "perf"  # issue 25: all judged true or minor (docs/lint.md); hits dev fixes
    node_types = (ast.Call,)
    callee_names = frozenset({"from_generator"})
    # Not needs_tf: a generator module of plain NumPy publishes its generators' work for a
    # from_generator call in another module (check() itself needs TF's from_generator).
    needs_tf = False
    docs = """\
## What it does
Finds `tf.data.Dataset.from_generator(gen, ...)` whose generator (a function of this module,
by name, `self.method`, `lambda: gen(...)` or `functools.partial(gen, ...)`) does NumPy work
per yielded element (any `np.*` call beyond wrapping, allocating and drawing random numbers:
`np.fft`, `np.clip`, `np.convolve`, `np.pad`, `np.load`...) or calls an image or audio
library (`cv2`, `PIL`, `scipy`, `skimage`, `librosa`) in the loop that yields, or calls a
helper of the module that fills an array one value at a time in a Python loop. The finding
is on the costliest such call (the helper, then a file load or image/audio library, then
other NumPy); a loader kept on `self` (`self.load = load` with `load=np.load` as the
parameter's default) is seen through.
Stop 39 widened it: a helper of the module called per element (`yield load_image(p)`) is
read two helpers deep for that work; an instance of a class of the module (`Loader(paths)`)
is read through its `__call__` or `__iter__`; Keras image loading (`load_img`), `h5py`,
`pandas.read_*`, `pickle`/`json` loads, medical-image readers and TF image/decode ops (run
eagerly, element by element, in the generator's thread) count; a Keras
`ImageDataGenerator` iterator handed over (`lambda: datagen.flow_from_directory(...)`, or
`flow` of a generator given augmentation arguments) is reported at the call; so is a
generator imported from another module of the project (`from feeders import spectra`),
whose module may be plain NumPy.

## Why is this bad?
tf.data runs a generator in the Python interpreter, under the GIL, strictly one element
after another: `num_parallel_calls`, autotuning and `prefetch` cannot spread that work over
cores, so the input pipeline is as fast as one Python thread (TF's `from_generator`
documentation: "limited portability and scalability ... must run in the same process as
the Python program"; the data-performance guide's advice is to parallelise the
transformation work in `map`). TF ops in a parallel `map` run on every core.

## Example
```python
def gen():
    for path in paths:
        audio = np.load(path)
        yield np.abs(np.fft.rfft(audio))
ds = tf.data.Dataset.from_generator(gen, output_signature=spec)
```

## Use instead
```python
ds = tf.data.Dataset.from_tensor_slices(paths).map(
    lambda p: tf.abs(tf.signal.rfft(load(p))), num_parallel_calls=tf.data.AUTOTUNE)
```

## Fix safety
No automatic fix: the work must be rewritten with TF ops (or wrapped in `tf.numpy_function`
inside a parallel `map`, which still holds the GIL while it runs).

## Known limitations
Generators of this module, or imported from another module of the project (there only
where that module names a heavy library: NumPy, OpenCV, PIL, SciPy...); generators that
yield arrays already in memory
(`yield x[i], y[i]`) or only wrap, allocate or draw random numbers (`np.array`, `np.zeros`,
`np.random.rand(4)`) are not reported: there, the cost per element is small.
"""
    valid = (
        # A partial of a generator that only slices arrays in memory.
        Valid("""
            import functools
            import tensorflow as tf
            def windows(signal, size):
                for start in range(0, len(signal) - size, size):
                    yield signal[start:start + size]
            ds = tf.data.Dataset.from_generator(functools.partial(windows, sig, 512),
                                                output_types=tf.float64)
        """, spelling="index: partial"),
        # Indices in memory, yielded as they are.
        Valid("""
            import numpy as np
            import tensorflow as tf
            def gen():
                for i in range(len(x)):
                    yield x[i], y[i]
            ds = tf.data.Dataset.from_generator(gen, output_types=(tf.float32, tf.int32))
        """, spelling="loop: for"),
        # The work in a parallel map with TF ops.
        Valid("""
            import tensorflow as tf
            def load(p):
                return tf.io.parse_tensor(tf.io.read_file(p), tf.float32)
            ds = tf.data.Dataset.from_tensor_slices(paths).map(
                lambda p: tf.abs(tf.signal.rfft(load(p))), num_parallel_calls=tf.data.AUTOTUNE)
        """, spelling="name"),
        # NumPy work outside the loop: done once.
        Valid("""
            import numpy as np
            import tensorflow as tf
            def gen():
                table = np.fft.rfft(np.ones(1024))
                while True:
                    yield table
            ds = tf.data.Dataset.from_generator(gen, output_types=tf.complex128)
        """, spelling="loop: while"),
        Valid("""
            import tensorflow as tf
            from feeders import Feeder
            feeder = Feeder(items)
            ds = tf.data.Dataset.from_generator(feeder.items, output_types=tf.float32)
        """, files={"feeders.py": """
            import numpy as np
            class Feeder:
                def __init__(self, items):
                    self._items = items
                def items(self):
                    for it in self._items:
                        yield np.asarray(it, dtype=np.float32)
        """}, spelling="module"),
        Valid("""
            import tensorflow as tf
            from feeders import pairs
            ds = tf.data.Dataset.from_generator(pairs, output_types=(tf.float32, tf.int32))
            model.fit(ds.batch(32), epochs=10)
        """, files={"feeders.py": """
            def pairs():
                for i in range(len(x)):
                    yield x[i], y[i]
        """}),
        Valid("""
            import numpy as np
            import tensorflow as tf
            def gen():
                for i in range(100):
                    yield np.array([i])
            # %%
            ds = tf.data.Dataset.from_generator(gen, output_types=tf.int64)
        """, notebook=True, spelling="notebook"),
        # The prior computed with whole-array ops: no per-value Python loop.
        Valid("""
            import numpy as np
            import tensorflow as tf
            def attention_prior(n, m, g=0.2):
                grid = np.arange(m)[None, :] / m - np.arange(n)[:, None] / n
                return 1 - np.exp(-grid ** 2 / (2 * g * g))
            def gen():
                for text, mel in pairs:
                    yield text, mel
            ds = tf.data.Dataset.from_generator(gen, output_types=(tf.int32, tf.float32))
        """, spelling="loop: helper element loop"),
        # The class keeps file names and the loading is a TF map.
        # A helper that only wraps what is in memory.
        Valid("""
            import numpy as np
            import tensorflow as tf
            def as_pair(i):
                return np.asarray(x[i], dtype=np.float32), y[i]
            def gen():
                for i in range(len(x)):
                    yield as_pair(i)
            ds = tf.data.Dataset.from_generator(gen, output_types=(tf.float32, tf.int32))
        """, spelling="name: a light helper"),
        Valid("""
            import tensorflow as tf
            class Pairs:
                def __init__(self, x, y):
                    self.x, self.y = x, y
                def __call__(self):
                    for i in range(len(self.x)):
                        yield self.x[i], self.y[i]
            ds = tf.data.Dataset.from_generator(Pairs(x, y), output_types=(tf.float32, tf.int32))
        """, spelling="index: a class instance"),
        Valid("""
            import tensorflow as tf
            datagen = tf.keras.preprocessing.image.ImageDataGenerator(rescale=1 / 255)
            flow = datagen.flow(x_train, y_train, batch_size=32)
            ds = tf.data.Dataset.from_generator(lambda: flow, output_types=(tf.float32, tf.float32))
        """, spelling="name: a Keras iterator"),
        Valid("""
            import tensorflow as tf
            class MelDataset:
                def __init__(self, files, load_fn=None):
                    self.files = files
                    self.load_fn = load_fn
                def generator(self):
                    for f in self.files:
                        yield f
                def create(self):
                    return tf.data.Dataset.from_generator(self.generator, output_types=tf.string)
        """, spelling="name: loader attribute"),
    )
    invalid = (
        Invalid("""
            import numpy as np
            import tensorflow as tf
            def gen():
                for path in paths:
                    audio = np.load(path)
                    yield np.abs(np.fft.rfft(audio))
            ds = tf.data.Dataset.from_generator(gen, output_types=tf.float32)
        """, count=1, lines=(5,), spelling="loop: for"),
        # A while True generator with a convolution per element.
        Invalid("""
            import numpy as np
            import tensorflow as tf
            def gen():
                while True:
                    x = np.random.normal(size=(4096,))
                    yield np.convolve(x, kernel, mode="same")
            ds = tf.data.Dataset.from_generator(gen, output_types=tf.float64)
        """, count=1, lines=(6,), spelling="loop: while"),
        # A method through a lambda, with OpenCV per image.
        Invalid("""
            import cv2
            import tensorflow as tf
            class Loader:
                def frames(self, paths):
                    for p in paths:
                        yield cv2.resize(cv2.imread(p), (224, 224))
                def dataset(self, paths):
                    return tf.data.Dataset.from_generator(lambda: self.frames(paths),
                                                          output_types=tf.uint8)
        """, count=1, lines=(6,), spelling="name"),
        # functools.partial of a generator.
        Invalid("""
            import functools
            import numpy as np
            import tensorflow as tf
            def windows(signal, size):
                for start in range(0, len(signal) - size, size):
                    yield np.hanning(size) * signal[start:start + size]
            ds = tf.data.Dataset.from_generator(functools.partial(windows, sig, 512),
                                                output_types=tf.float64)
        """, count=1, lines=(6,), spelling="index: partial"),
        Invalid("""
            import tensorflow as tf
            from feeders import make
            ds = make(paths)
        """, files={"feeders.py": """
            import numpy as np
            import tensorflow as tf
            def gen(paths):
                for p in paths:
                    yield np.log1p(np.load(p))
            def make(paths):
                return tf.data.Dataset.from_generator(lambda: gen(paths), output_types=tf.float32)
        """}, count=1, spelling="module"),
        Invalid("""
            import numpy as np
            import tensorflow as tf
            def gen():
                for path in paths:
                    yield np.abs(np.fft.rfft(np.load(path)))
            # %%
            ds = tf.data.Dataset.from_generator(gen, output_types=tf.float32)
        """, count=1, notebook=True, spelling="notebook"),
        # A helper that fills an array value by value, called per element.
        Invalid("""
            import numpy as np
            import tensorflow as tf
            def attention_prior(n, m, g=0.2):
                prior = np.zeros((n, m), dtype=np.float32)
                for i in range(n):
                    for j in range(m):
                        prior[i, j] = 1 - np.exp(-(j / m - i / n) ** 2 / (2 * g * g))
                return prior
            def gen():
                for text, mel in pairs:
                    yield text, mel, attention_prior(len(text), len(mel))
            types = (tf.int32, tf.float32, tf.float32)
            ds = tf.data.Dataset.from_generator(gen, output_types=types)
        """, count=1, lines=(11,), spelling="loop: helper element loop"),
        # A helper of a helper decodes each image with PIL.
        Invalid("""
            import numpy as np
            import tensorflow as tf
            from PIL import Image
            def read(path):
                return np.asarray(Image.open(path).convert("RGB"))
            def load_image(path):
                return read(path) / 255.0
            def gen():
                for path, label in zip(paths, labels):
                    yield load_image(path), label
            ds = tf.data.Dataset.from_generator(gen, output_types=(tf.float32, tf.int32))
        """, count=1, lines=(10,), spelling="name: a light helper"),
        Invalid("""
            import cv2
            import tensorflow as tf
            class Frames:
                def __init__(self, paths):
                    self.paths = paths
                def __call__(self):
                    for i in range(len(self.paths)):
                        yield cv2.resize(cv2.imread(self.paths[i]), (224, 224))
            ds = tf.data.Dataset.from_generator(Frames(paths), output_types=tf.uint8)
        """, count=1, lines=(8,), spelling="index: a class instance"),
        Invalid("""
            import tensorflow as tf
            datagen = tf.keras.preprocessing.image.ImageDataGenerator(rotation_range=20,
                                                                      horizontal_flip=True)
            flow = datagen.flow_from_directory("data/train", target_size=(224, 224))
            ds = tf.data.Dataset.from_generator(lambda: flow, output_types=(tf.float32, tf.float32))
        """, count=1, lines=(5,), spelling="name: a Keras iterator"),
        # The generator imported from another module, handed over here.
        Invalid("""
            import tensorflow as tf
            from feeders import spectra
            ds = tf.data.Dataset.from_generator(spectra, output_types=tf.float32)
            model.fit(ds.batch(32), epochs=10)
        """, files={"feeders.py": """
            import numpy as np
            def spectra():  # plain NumPy: no TensorFlow in this module
                for p in paths:
                    yield np.abs(np.fft.rfft(np.load(p)))
        """}, count=1, lines=(3,)),
        # The loader a class keeps: np.load by default.
        Invalid("""
            import numpy as np
            import tensorflow as tf
            class MelDataset:
                def __init__(self, files, load_fn=np.load):
                    self.files = files
                    self.load_fn = load_fn
                def generator(self):
                    for f in self.files:
                        yield self.load_fn(f)
                def create(self):
                    return tf.data.Dataset.from_generator(self.generator, output_types=tf.float32)
        """, count=1, lines=(9,), spelling="name: loader attribute"),
    )

    def publish(self, ctx: Context) -> list[dict] | None:
        # Cross-module: generators with per-element work (by qualname, with what they do),
        # and from_generator calls handed a generator imported from another module.
        from types import SimpleNamespace

        from tfperf.analysis.summary import callee_ref, position, qualnames

        source = ctx.source
        work_here = "yield" in source and any(w in source for w in _WORK_WORDS)
        if not work_here and "from_generator" not in source:
            return None
        facts: list[dict] = []
        if work_here:
            for fn, qualname in qualnames(ctx).items():
                if type(fn) not in (ast.FunctionDef, ast.AsyncFunctionDef) or not any(
                        type(n) in (ast.Yield, ast.YieldFrom) for n in ast.walk(fn)):
                    continue
                work = _heavy_work(ctx, fn)
                if work is not None:
                    facts.append({"gen": qualname, "label": work[1],
                                  "pos": position(ctx, work[0])})
        for call in ctx.calls:
            if not (type(call.func) is ast.Attribute and call.func.attr == "from_generator") \
                    or ctx.call_qualname(call) not in _FROM_GENERATOR:
                continue
            gen: Any = call.args[0] if call.args else next(
                (k.value for k in call.keywords if k.arg == "generator"), None)
            if type(gen) is ast.Lambda and type(gen.body) is ast.Call:
                gen = gen.body.func
            elif type(gen) is ast.Call and ctx.qualname(gen.func) == "functools.partial" \
                    and gen.args:
                gen = gen.args[0]
            # Where a call of the generator would lead: an imported name or module attribute
            # (a generator of this module is check()'s).
            ref = callee_ref(ctx, SimpleNamespace(func=gen)) if gen is not None else None
            if ref is not None and ref[0] != "":
                facts.append({"from": list(ref), "pos": position(ctx, call)})
        return facts or None

    def check_project(self, project: Any) -> Iterator[Finding]:
        for module in project.modules.values():
            for fact in module.facts.get(self.code, ()):
                ref = fact.get("from")
                if not ref:
                    continue
                hit = project.resolve(module, (ref[0], ref[1]))
                if hit is None:
                    continue
                target, fn = hit
                work = next((f for f in target.facts.get(self.code, ())
                             if f.get("gen") == fn.qualname), None)
                if work is not None:
                    yield self.project_finding(
                        module.path, fact["pos"],
                        f"{self.message} ({fn.qualname}() in {target.path}: {work['label']})")

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Finding]:
        call: Any = node
        if ctx.call_qualname(node) not in _FROM_GENERATOR:
            return
        gen = call.args[0] if call.args else next(
            (k.value for k in call.keywords if k.arg == "generator"), None)
        keras_iter = _keras_iterator(ctx, gen)
        if keras_iter is not None:
            yield self.finding(ctx, node, f"{self.message} ({keras_iter})")
            return
        fn = _generator_fn(ctx, gen)
        if fn is None:
            return
        work = _heavy_work(ctx, fn)
        if work is not None:
            site, label = work
            yield self.finding(ctx, site, f"{self.message} ({label})")
