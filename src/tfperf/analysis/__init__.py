"""The project model: what the code of a whole project computes, shared by lint and tune.

``tfperf lint`` checks one module at a time through its semantic model
(:mod:`tfperf.lint.semantic`). Many real costs cross modules: a training step defined in one
file and called every step from another, a ``tf.function`` whose callers elsewhere pass
Python numbers, a method that rebuilds a ``tf.function`` and is called from a training loop.
This package answers those questions, in layers:

- :mod:`.kinds` — the kind of a value (tensor, list of tensors, Python number, NumPy array,
  dataset, Keras model...), followed through assignments, ``self`` attributes, returns and
  default arguments; Python numbers that change per iteration; tensors whose leading size
  changes per iteration;
- :mod:`.loops` — the loop model: every loop of a module (``for``, ``while`` with a counter,
  comprehensions, ``tf.map_fn``/``tf.vectorized_map``, ``tf.while_loop``...), what it
  iterates (a range sized by a tensor's axis, a tensor's rows, a list of tensors cut from one
  tensor, a dataset...), how its body indexes arrays with the iteration (``x[i]``,
  ``x[i, j]``, ``x[:, i]``), and whether its iterations are independent (a map), an
  associative accumulation (a reduction) or carried (a recurrence);
- :mod:`.summary` — a module's summary: plain, JSON-able data (its functions: parameters,
  defaults, whether traced, what they return; its calls into the project's functions with
  the kinds of the values passed; facts rules publish for their cross-module checks),
  extracted once per module, cached with the module's findings by content hash;
- :mod:`.project` — the project: summaries joined by the import graph resolved among the
  linted files, calls resolved to functions in other modules, functions that run once per
  iteration of an eager loop somewhere (through any chain of calls).

A summary depends on its module's bytes alone; everything that crosses modules is resolved
when the project is built, every run, from the summaries of that run's files, so a warm run
after a callee changed elsewhere gives what a cold run gives. Nothing here imports or runs
the analysed code, nor TensorFlow.
"""
