"""One side of a ``--try-fixes`` trial, in a process of its own:
``python -m tfperf.profile.trial_child SPEC.json``.

Runs the script's code (the original, or a patched copy) as ``python SCRIPT.py`` would — the
original's ``__file__``, folder on ``sys.path`` and arguments — with the same seeds on every
side, its step loop marked; after ``steps`` steps it stops. Writes, as JSON to the spec's
``out``: each step's time, each step's loss (the loop's ``loss`` name, or what the step
function returned) as flat float lists, a sample of the trainable weights after the steps (what
a step that returns nothing changes), the step function's trace count, and the error if the
script raised before its steps were done. The script's own output is discarded.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import sys
import time
import traceback
from pathlib import Path
from typing import Any

SEED = 0


def _flat(value: Any) -> list[float] | None:
    """A step's loss or result as a flat list of floats; None for what is not numbers."""
    import numpy as np

    if value is None:
        return None
    try:
        import tensorflow as tf

        leaves = tf.nest.flatten(value)
    except Exception:
        leaves = [value]
    out: list[float] = []
    for leaf in leaves:
        try:
            arr = np.asarray(leaf, dtype=float)
        except (TypeError, ValueError):
            return None
        out.extend(float(v) for v in arr.reshape(-1))
    return out


WEIGHTS_PER_VARIABLE = 512  # values kept of each trainable variable, evenly strided


class _Trainable:
    """Records each trainable variable the script creates (``tf.variable_creator_scope``),
    in creation order, so that what a step changes can be compared when it returns nothing
    (a step that updates its weights in place and returns None)."""

    def __init__(self) -> None:
        self.made: list[Any] = []

    def __call__(self, next_creator: Any, **kwargs: Any) -> Any:
        import weakref

        variable = next_creator(**kwargs)
        if kwargs.get("trainable") is not False:
            with contextlib.suppress(TypeError):  # an object without weak references
                self.made.append(weakref.ref(variable))
        return variable

    def sample(self) -> list[float] | None:
        """Up to ``WEIGHTS_PER_VARIABLE`` values of each live variable, flat; None if none."""
        import numpy as np

        out: list[float] = []
        for ref in self.made:
            variable = ref()
            if variable is None:
                continue
            try:
                flat = np.asarray(variable.numpy(), dtype=float).reshape(-1)
            except Exception:  # a variable of strings, or one not initialised
                continue
            stride = max(1, flat.size // WEIGHTS_PER_VARIABLE)
            out.extend(float(v) for v in flat[::stride][:WEIGHTS_PER_VARIABLE])
        return out or None


def _seed() -> None:
    random.seed(SEED)
    try:
        import numpy as np

        np.random.seed(SEED)
    except ImportError:
        pass
    import tensorflow as tf

    tf.random.set_seed(SEED)  # the script's own seeds, set after, win


def run(spec: dict[str, Any]) -> dict[str, Any]:
    from tfperf.profile.script_exec import (
        RESULT,
        STEP,
        StepClock,
        StepsDone,
        compile_marked,
        exec_as_main,
        main_module,
    )
    from tfperf.profile.step_import import StepModuleFinder, marking_imports
    from tfperf.profile.training_step import find_steps

    script = Path(spec["script"])
    code_path = Path(spec["code"])
    source = code_path.read_text(encoding="utf-8")
    steps = find_steps(source, str(code_path))
    loss = spec.get("loss") or (steps[0].loss if steps else None)
    code = compile_marked(source, code_path, steps, results=True) if steps else None
    if code is None:
        code = compile(source, str(code_path), "exec", dont_inherit=True)
    clock = StepClock(limit=spec["steps"], loss=loss)
    _seed()
    sys.argv = [str(script), *spec.get("argv", [])]
    sys.path.insert(0, str(script.resolve().parent))
    module = main_module(script, {STEP: clock, RESULT: clock.result})
    out: dict[str, Any] = {"durations": [], "losses": [], "traces": None, "error": None}
    finder = StepModuleFinder(script.resolve().parent, {STEP: clock, RESULT: clock.result},
                              results=True, overrides=spec.get("overrides"))
    devnull = open(os.devnull, "w")  # noqa: SIM115 (kept open while the script runs)
    import tensorflow as tf

    trainable = _Trainable()
    t0 = time.perf_counter()
    try:
        with contextlib.redirect_stdout(devnull), marking_imports(finder), \
                tf.variable_creator_scope(trainable):
            exec_as_main(code, module)
    except StepsDone:
        pass
    except SystemExit as exc:
        if exc.code not in (0, None):
            out["error"] = f"SystemExit: {exc.code}"
    except BaseException as exc:  # the script's own error: reported by the parent
        out["error"] = f"{type(exc).__name__}: {exc}"
        out["traceback"] = traceback.format_exc(limit=8)
    finally:
        devnull.close()
    elapsed = time.perf_counter() - t0
    # No step loop, here or in a module of the script's folder: the whole run is timed
    unit = "step" if clock.durations else "run"
    out["unit"] = unit
    out["durations"] = clock.durations if unit == "step" else [elapsed]
    values = clock.losses if loss is not None and any(v is not None for v in clock.losses) \
        else clock.results
    out["losses"] = [_flat(v) for v in values]
    out["weights"] = trainable.sample() if unit == "step" else None
    fn = spec.get("function")
    owners = [module, *(sys.modules[n] for n in finder.loaded if n in sys.modules)]
    counter = next((getattr(m.__dict__.get(fn), "experimental_get_tracing_count", None)
                    for m in owners if fn and fn in m.__dict__), None)
    out["traces"] = counter() if callable(counter) else None
    return out


def main(argv: list[str]) -> int:
    spec = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    from tfperf.core.tensorflow_logs import quiet_child_startup

    quiet_child_startup()
    result = run(spec)
    Path(spec["out"]).write_text(json.dumps(result), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
