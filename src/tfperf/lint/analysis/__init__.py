"""Questions rules ask about code, one module per question, built on the semantic model.

The semantic model (:mod:`tfperf.lint.semantic`) says what names refer to and what
TensorFlow traces; the modules here answer the larger questions several rules share:

- :mod:`.syntax` — a call's keywords, an attribute chain's root, the nodes a body runs;
- :mod:`.imports` — what the module imports and mentions (cheap once-per-module gates);
- :mod:`.assignments` — where a value comes from, statement order within a block;
- :mod:`.loops` — loops and what they iterate; loops that walk a tensor element by element;
- :mod:`.dependence` — data flow through a loop body: loop-carried names, reductions,
  recurrences (what cannot be vectorised), values read again by the next iteration;
- :mod:`.varying` — values that change per iteration: Python numbers, per-iteration data;
- :mod:`.host` — host conversions (``.numpy()``, ``np.array``, ``float``) of tensors;
- :mod:`.traced` — code TensorFlow traces, and what runs eagerly inside it;
- :mod:`.tensors` — what is surely a tensor; where ``tf.Variable`` objects are made;
- :mod:`.callers` — who calls a function, and whether once per loop iteration;
- :mod:`.tf_functions` — ``tf.function`` objects, their options and their calls;
- :mod:`.keras_models` — whether a value is a Keras model;
- :mod:`.transposes` — transposes with literal permutations, and which undo each other;
- :mod:`.pipelines` — ``tf.data`` pipelines followed back to their source;
- :mod:`.precision` — the mixed-precision policy a module sets, and where it is in effect;
- :mod:`.sessions` — TF1 session runs (fetches, feeds) and the calls that add graph ops.

A helper that two rules need goes in the module whose question it answers (a new module
when no question fits); a helper only one rule needs stays in that rule's module. Facts
computed once per module are cached with ``ctx.cached(key, compute)``.
"""
