"""Why a run was slow, as a short ranked list of causes: the hot lines joined with the code.

A profile says where time went (eager ops, host syncs, traces per line); the code says what
those lines *are*. Each hot line is classified by its source, read with lint's semantic model,
and by lint's own findings for the file it lives in:

* **eager training step** — the line runs inside the steps of a training loop
  (``training_step.py``: a tape and an update in a Python loop, not compiled). The cost is
  the steps' whole time; the fix ``@tf.function`` on the step (automatic: ``--try-fixes``).
* **discarded result** — lint's TFP108: a pure op whose result is thrown away; its time is
  waste, and it is a bug. The fix "use the result" is shown, never applied.
* **Keras predict per item** — ``model.predict`` called in a loop (TFP105's case): call the
  model, or predict the whole batch.
* **input pipeline** — the line's ops are tf.data's iterator ops (a Python loop over a
  dataset), or the capture's input wait is high: tf.data's levers.
* **Python loop over tensors** — an op storm at a line in a loop: vectivise (TFP101...).
* **host syncs** and **retraces** — profile's own advice, above its thresholds.

Ops and syncs that ran inside a library the line called (``optimizer.apply_gradients``:
Keras; ``tape.gradient``: TensorFlow) stay charged to the line and are said to be internal.
Causes under ``CAUSE_MIN_SHARE`` of the run are not listed; a cause inside another (a
discarded op inside the eager step) says so (``within``).
"""

from __future__ import annotations

import ast
import os
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tfperf.core.findings import Finding
from tfperf.profile import remedies
from tfperf.profile.fixes import host_work, tf_function_on_step
from tfperf.profile.observation import LineStats, Observation, StepStats
from tfperf.profile.step_shape import read_shape
from tfperf.profile.training_step import TrainingStep, find_steps, trains

CAUSE_MIN_SHARE = 0.01  # a cause costing less of the run is not listed
ACTIONABLE_SHARE = 0.05  # a cause to change from this share ranks before compiled compute
COMPILED_YIELD = 1 / 3  # ... when it is also this part of the compiled cost, at least
HOT_LINE_SHARE = 0.002  # lines from this share of the run are read and classified
EAGER_OPS_MIN = 100  # eager ops at a line from which they are a storm (advice.py's too)
IN_STEP = 0.5  # a line belongs to the step when this share of its ops ran inside steps
LINT_GROUPS = ("perf", "correctness", "pedantic")
_LIBRARY_NAMES = {"keras": "Keras", "tensorflow": "TensorFlow", "tf_keras": "Keras",
                  "numpy": "NumPy"}
_PREDICT = frozenset({"predict", "predict_on_batch"})
# an update whose ops ran inside a library (an optimizer's minimize/apply), not a model call
_UPDATE = frozenset({"minimize", "apply"})
_PIPELINE_RULES = ("TFP601", "TFP602", "TFP603", "TFP604", "TFP605", "TFP606")
_NOT_LIBRARY_CALLS = frozenset({"append", "extend", "insert", "add", "update", "setdefault",
                                "pop", "format", "join", "print", "len", "float", "int", "list",
                                "zip", "enumerate", "range", "str", "tuple", "dict", "max", "min",
                                "sum", "sorted", "isinstance", "round", "abs"})
_LOOP_RULES = ("TFP101", "TFP102", "TFP103", "TFP104", "TFP105", "TFP106", "TFP107",
               "TFP201", "TFP203")


@dataclass
class HotLine:
    """A user line and what it cost."""

    path: str
    line: int
    seconds: float
    ops: int = 0
    syncs: int = 0
    code: str = ""  # the source line, stripped
    internal: str | None = None  # "inside Keras (optimizer.apply_gradients)"

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "line": self.line, "seconds": self.seconds,
                "ops": self.ops, "syncs": self.syncs, "code": self.code,
                "internal": self.internal}


@dataclass
class Cause:
    """One reason the run was slow, with its cost, its lines, lint's word and the fix."""

    kind: str  # eager-training-step, discarded-op-result, predict-per-item, input-pipeline,
    #            python-loop, eager-ops, host-sync, retrace
    title: str
    seconds: float
    share: float
    fix: str
    lines: list[HotLine] = field(default_factory=list)
    lint: list[Finding] = field(default_factory=list)
    automatic: str | None = None  # the fix --try-fixes applies, by name
    within: str | None = None  # the title of the cause this one is part of
    step: TrainingStep | None = None
    detail: str = ""  # one more line of figures
    trial: Any = None  # trial.Trial, when --try-fixes measured the fix

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "title": self.title, "seconds": self.seconds,
                "share": self.share, "fix": self.fix, "automatic": self.automatic,
                "within": self.within, "detail": self.detail,
                "lines": [h.to_dict() for h in self.lines],
                "lint": [{"code": f.code, "path": f.location.path if f.location else None,
                          "line": f.location.line if f.location else None,
                          "message": f.message} for f in self.lint],
                "step": self.step.to_dict() if self.step else None,
                "measured": self.trial.to_dict() if self.trial is not None else None}


# -- the code of the hot files ----------------------------------------------------------------


@dataclass
class SourceModel:
    """One user file: its lines, tree, semantic model, training steps, lint findings."""

    path: str
    source: str
    lines: list[str]
    tree: ast.Module
    ctx: Any  # tfperf.lint.semantic.Context
    steps: list[TrainingStep]
    findings: list[Finding]

    def statement_at(self, line: int) -> ast.stmt | None:
        """The innermost statement spanning ``line``."""
        best: ast.stmt | None = None
        for node in ast.walk(self.tree):
            if isinstance(node, ast.stmt) and node.lineno <= line <= (node.end_lineno or 0) \
                    and (best is None or (node.lineno >= best.lineno
                         and (node.end_lineno or 0) <= (best.end_lineno or 0))):
                best = node
        return best

    def code(self, line: int) -> str:
        return self.lines[line - 1].strip() if 0 < line <= len(self.lines) else ""

    def findings_at(self, first: int, last: int, codes: Iterable[str] | None = None
                    ) -> list[Finding]:
        wanted = set(codes) if codes is not None else None
        return [f for f in self.findings if f.location and f.location.line is not None
                and first <= f.location.line <= last
                and (wanted is None or f.code in wanted)]


def load_model(path: str) -> SourceModel | None:
    """Read, parse and lint one user file; None when it cannot be read or parsed."""
    from importlib.util import decode_source

    from tfperf.lint.engine import lint_source
    from tfperf.lint.registry import select
    from tfperf.lint.semantic import Context, split_lines

    try:
        source = decode_source(Path(path).read_bytes())
        tree = ast.parse(source, path)
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
        return None
    rules = select(select=list(LINT_GROUPS))
    try:
        findings = lint_source(source, path, rules=rules, tree=tree)
    except Exception:  # lint never raises by contract; a profile must not die of it anyway
        findings = []
    return SourceModel(path, source, split_lines(source), tree, Context(tree, source, path),
                       find_steps(source, path, tree), findings)


# -- hot lines --------------------------------------------------------------------------------


def _library(stats: Iterable[LineStats]) -> tuple[str, int]:
    """The library most of the line's events ran inside, and how many did."""
    counts: dict[str, int] = {}
    for s in stats:
        for pkg, n in s.made_in.items():
            counts[pkg] = counts.get(pkg, 0) + n
    if not counts:
        return "", 0
    pkg = max(counts, key=lambda k: counts[k])
    return pkg, counts[pkg]


def _outer_call(model: SourceModel, stmt: ast.stmt | None, line: int) -> ast.Call | None:
    """The call on ``line`` that is not a plain TF op (``optimizer.apply_gradients``,
    ``tape.gradient``, ``model(x)``): what ran the line's ops inside a library."""
    if stmt is None:
        return None
    from tfperf.lint.semantic.tf_api import returns_tensor

    for node in ast.walk(stmt):
        if type(node) is not ast.Call or node.lineno != line:
            continue
        q = model.ctx.call_qualname(node)
        if q is not None and (returns_tensor(q) or q.startswith("tensorflow.")):
            continue  # a TF op of the line's own (its ops are the line's)
        func = node.func
        name = func.attr if type(func) is ast.Attribute else func.id \
            if type(func) is ast.Name else None
        if name is not None and name not in _NOT_LIBRARY_CALLS:
            return node
    return None


def _internal(model: SourceModel, stmt: ast.stmt | None, line: int,
              eager: LineStats | None, syncs: LineStats | None) -> str | None:
    """"inside Keras (optimizer.apply_gradients)" when the line's events ran in a library."""
    present = [s for s in (eager, syncs) if s is not None]
    total = sum(s.count for s in present)
    pkg, made = _library(present)
    call = _outer_call(model, stmt, line)
    text = model.ctx.source_of(call.func) if call is not None else ""
    if not (pkg and made * 2 >= total) and call is not None \
            and type(call.func) is ast.Attribute:
        pkg = _receiver_library(model, call.func.value)
    if not pkg or (call is None and made * 2 < total):
        return None
    return f"inside {_LIBRARY_NAMES.get(pkg, pkg)}" + (f" ({text})" if text else "")


def _receiver_library(model: SourceModel, receiver: ast.expr) -> str:
    """The library whose object ``receiver`` is: ``tape`` from ``tf.GradientTape()``."""
    if type(receiver) is not ast.Name:
        return ""
    binding = model.ctx.binding(receiver)
    value = getattr(binding, "value", None)
    if type(value) is ast.withitem:
        value = value.context_expr
    if type(value) is ast.With:
        value = next((i.context_expr for i in value.items if type(i.optional_vars) is ast.Name
                      and i.optional_vars.id == receiver.id), None)
    if type(value) is not ast.Call:
        return ""
    q = model.ctx.call_qualname(value) or ""
    return q.split(".", 1)[0] if q.startswith(("tensorflow.", "keras.")) else ""


# -- classification ---------------------------------------------------------------------------


@dataclass
class _Line:
    site: tuple[str, int]
    eager: LineStats | None
    syncs: LineStats | None

    @property
    def seconds(self) -> float:
        return sum(s.total_s for s in (self.eager, self.syncs) if s is not None)

    @property
    def ops(self) -> int:
        return self.eager.count if self.eager is not None else 0


def _hot_lines(obs: Observation) -> list[_Line]:
    wall = obs.wall_s or 0.0
    sites = set(obs.eager_ops) | set(obs.host_syncs)
    out = [_Line(site, obs.eager_ops.get(site), obs.host_syncs.get(site)) for site in sites]
    out = [x for x in out if wall and x.seconds >= HOT_LINE_SHARE * wall]
    return sorted(out, key=lambda x: -x.seconds)


def _pipeline_share(stats: LineStats | None) -> float:
    if stats is None or not stats.count:
        return 0.0
    from tfperf.profile.advice import pipeline_op

    return sum(n for op, n in stats.kinds.items() if pipeline_op(op)) / stats.count


def _hot(model: SourceModel, x: _Line) -> HotLine:
    stmt = model.statement_at(x.site[1])
    return HotLine(x.site[0], x.site[1], x.seconds, x.ops,
                   x.syncs.count if x.syncs is not None else 0, model.code(x.site[1]),
                   _internal(model, stmt, x.site[1], x.eager, x.syncs))


def _in_step(obs: Observation, x: _Line, step: TrainingStep, model: SourceModel) -> bool:
    stats = _stats_of(obs, step)
    if stats is not None:
        inside = stats.eager_ops.get(x.site, 0) + stats.host_syncs.get(x.site, 0)
        total = x.ops + (x.syncs.count if x.syncs is not None else 0)
        return total > 0 and inside >= IN_STEP * total
    return x.site[0] == step.path and step.first_line <= x.site[1] <= step.last_line


def _stats_of(obs: Observation, step: TrainingStep) -> StepStats | None:
    """The run's step figures when they are this step's loop's."""
    stats = obs.steps
    if stats is None or not stats.count or (stats.path, stats.loop_line) != (
            os.path.realpath(step.path), step.loop_line):
        return None
    return stats


def _step_fix(step: TrainingStep, tf: str = "tf") -> str:
    if step.kind == "function":
        head = f"decorate {step.function}() (line {step.first_line}) with @{tf}.function"
    else:
        head = (f"move the step (lines {step.first_line}–{step.last_line}) into a function "
                f"decorated with @{tf}.function, defined once before the loop, and call it per "
                f"batch")
    return (head + "; add reduce_retracing=True (or an input_signature with None) only if "
                   "its input shapes vary")


def explain(obs: Observation, findings: list[Finding], *, capture: Any = None,
            models: dict[str, SourceModel] | None = None) -> list[Cause]:
    """The ranked causes of a watched run. ``findings``: profile's advice (retraces, host
    syncs above their thresholds); ``models``: the user files already read (read here when
    absent)."""
    wall = obs.wall_s or 0.0
    if wall <= 0:
        return []
    hot = _hot_lines(obs)
    models = dict(models or {})
    for x in hot:
        path = x.site[0]
        if path not in models and not path.startswith("<"):
            model = load_model(path)
            if model is not None:
                models[path] = model
    causes: list[Cause] = []
    claimed: set[tuple[str, int]] = set()
    # 1. eager training steps (not compiled), by the lines that ran inside their steps
    for model in models.values():
        for step in model.steps:
            if step.compiled or step.kind == "marked":
                continue
            cause = _step_cause(obs, model, step, hot, wall)
            if cause is not None:
                causes.append(cause)
                claimed.update((h.path, h.line) for h in cause.lines)
    # 2. compiled work: Keras's fit, a tf.function step; its line's eager ops are its own
    compiled = _compiled_causes(obs, models, hot, wall, claimed)
    causes += compiled
    for cause in compiled:
        claimed.update((h.path, h.line) for h in cause.lines)
    # 3. per line: a discarded result (even inside a step), else what the line is
    groups: dict[tuple[str, str, int], Cause] = {}
    quiet: list[tuple[SourceModel, _Line]] = []  # hot lines no cause of their own
    for x in hot:
        model = models.get(x.site[0])
        if model is None:
            continue
        parent = next((c for c in causes if c.kind == "eager-training-step"
                       and any((h.path, h.line) == x.site for h in c.lines)), None)
        stmt = model.statement_at(x.site[1])
        span = _header(stmt) if stmt is not None else (x.site[1], x.site[1])
        dropped = model.findings_at(span[0], span[1], ("TFP108",))
        if dropped:
            causes.append(Cause(
                "discarded-op-result", f"discarded result at {Path(x.site[0]).name}:"
                f"{x.site[1]}", x.seconds, x.seconds / wall, dropped[0].hint or "",
                [_hot(model, x)], dropped, within=parent.title if parent else None))
            continue
        if x.site in claimed:
            continue
        kind, key_line, fix, rules = _classify(model, stmt, x)
        if kind is None:
            quiet.append((model, x))
            continue
        key = (kind, x.site[0], key_line)
        cause = groups.get(key)
        if cause is None:
            where = f"{Path(x.site[0]).name}:{key_line}"
            cause = groups[key] = Cause(kind, _TITLES[kind].format(where=where), 0.0, 0.0, fix)
            fn = _function_at(model, key_line) if kind == "eager-ops" else None
            if fn is not None:
                cause.title, cause.fix = _eager_function_cause(model, fn, where)
            loop_end = _end_of(model, key_line)
            cause.lint = model.findings_at(key_line, loop_end, rules)
            if kind == "input-pipeline":  # the pipeline is defined elsewhere in the file
                if _maps_parallel(model.tree):  # not "give map num_parallel_calls" again
                    cause.fix = remedies.input_pipeline(remedies.tf_version(),
                                                        maps_parallel=True).hint
                cause.lint = model.findings_at(1, len(model.lines), rules)
                fixable = [f for f in cause.lint if f.hint]
                if fixable:
                    cause.fix = f"{fixable[0].hint} (lint {fixable[0].code}); {cause.fix}"
        cause.seconds += x.seconds
        cause.lines.append(_hot(model, x))
        if kind == "keras-eager" and "run_eagerly" in model.source:
            cause.automatic = "Keras steps compiled (run_eagerly off)"
    for (kind, path, key_line), cause in groups.items():
        if kind == "python-loop":  # the loop's cost is all of its lines, not only its storms
            end = _end_of(models[path], key_line)
            for model, x in quiet:
                if x.site[0] == path and key_line <= x.site[1] <= end:
                    cause.seconds += x.seconds
                    cause.lines.append(_hot(model, x))
            cause.lines.sort(key=lambda h: -h.seconds)
        cause.share = cause.seconds / wall
        causes.append(cause)
    causes += _advice_causes(findings, obs, wall, claimed, models)
    causes += _python_in_pipeline(capture, models, causes, wall)
    causes += _input_cause(capture, causes, wall)
    return rank(causes)


def rank(causes: list[Cause]) -> list[Cause]:
    """Causes of at least ``CAUSE_MIN_SHARE``, by share; what to change comes first: compiled
    work (the model's compute, already in a graph) follows every other cause of
    ``ACTIONABLE_SHARE`` or more that is also at least ``COMPILED_YIELD`` of the largest
    compiled cost (a lever that can save 10 % of the run is not named before 57 % of compute)."""
    causes = [c for c in causes if c.share >= CAUSE_MIN_SHARE]
    compiled = max((c.share for c in causes if c.kind in _COMPILED), default=0.0)
    actionable = any(c.kind not in _COMPILED and c.share >= ACTIONABLE_SHARE
                     and c.share >= COMPILED_YIELD * compiled for c in causes)
    return sorted(causes, key=lambda c: (actionable and c.kind in _COMPILED, -c.share,
                                         c.title))


_COMPILED = frozenset({"keras-fit", "compiled-step"})
_KERAS_LOOPS = frozenset({"fit", "evaluate", "fit_generator", "evaluate_generator"})
_KERAS_BATCH = frozenset({"train_on_batch", "test_on_batch"})


def _compiled_causes(obs: Observation, models: dict[str, SourceModel], hot: list[_Line],
                     wall: float, claimed: set[tuple[str, int]]) -> list[Cause]:
    """tf.function calls, by the user line that first called them: Keras's fit (its step
    functions) or a compiled step of the user's. Their time is compute in a graph (plus the
    one-off tracing): what is left to change is said, not "wrap it in tf.function"."""
    by_site: dict[tuple[str, int], list[Any]] = {}
    for fn in obs.functions:
        if fn.first_site is not None and fn.first_site not in claimed and fn.calls:
            by_site.setdefault(fn.first_site, []).append(fn)
    lines = {x.site: x for x in hot}
    out = []
    for site, fns in by_site.items():
        trace = sum(f.trace_s for f in fns)
        run = sum(f.run_s for f in fns)
        calls = sum(f.calls for f in fns)
        x = lines.get(site)
        seconds = trace + run + (x.seconds if x is not None else 0.0)
        if seconds < CAUSE_MIN_SHARE * wall:
            continue
        model = models.get(site[0])
        if model is None and not site[0].startswith("<"):
            model = load_model(site[0])
            if model is not None:
                models[site[0]] = model
        stmt = model.statement_at(site[1]) if model is not None else None
        attrs = {n.func.attr for n in ast.walk(stmt) if type(n) is ast.Call
                 and type(n.func) is ast.Attribute} if stmt is not None else set()
        if attrs & _PREDICT and model is not None and _predict_repeated(model, stmt, x):
            continue  # predict per item: the line's own cause, not compiled computation
        where = f"{Path(site[0]).name}:{site[1]}"
        traces = sum(f.traces for f in fns)
        detail = (f"{calls:,} calls running {_secs(run)} ({_secs(run / max(calls, 1))} a "
                  f"call); {traces} trace(s) took {_secs(trace)}")
        if x is not None and x.ops:
            detail += f"; {x.ops:,} eager ops around the calls ({_secs(x.seconds)})"
        hot_line = [_hot(model, x)] if x is not None and model is not None else \
            [HotLine(site[0], site[1], seconds, 0, 0, model.code(site[1]) if model else "")]
        around = x.seconds if x is not None else 0.0
        bound = _compute_bound(run, calls, around)
        if attrs & _KERAS_LOOPS and around > run and model is not None \
                and _predict_repeated(model, stmt, x):
            # fit called per batch (a replay buffer's 32 rows): its per-call set-up, not its
            # compiled step, is the cost
            name = sorted(attrs & _KERAS_LOOPS)[0]
            out.append(Cause("fit-per-call", f"Keras {name} called again and again at {where}",
                             seconds, seconds / wall, remedies.fit_per_call(name, around, run),
                             hot_line, detail=detail))
        elif attrs & _KERAS_LOOPS:
            fix = remedies.compute_bound(run / max(calls, 1), around / run) if bound \
                else remedies.KERAS_FIT.hint
            out.append(Cause("keras-fit", f"Keras {sorted(attrs & _KERAS_LOOPS)[0]} at {where} "
                             f"(compiled)", seconds, seconds / wall, fix, hot_line,
                             detail=detail))
        else:
            names = ", ".join(sorted({f.name.rsplit(".", 1)[-1] for f in fns}))
            keras = sorted(attrs & _KERAS_BATCH)
            if keras:  # Keras's own step function, run by the user's per-batch call
                names = f"{names} (Keras {keras[0]})"
            fix = remedies.COMPILED_STEP.hint
            if bound:
                fix = remedies.compute_bound(run / max(calls, 1), around / run) + \
                    "; jit_compile=True may fuse its ops (tfperf tune measures it)"
            out.append(Cause("compiled-step", f"compiled {names} called at {where}", seconds,
                             seconds / wall, fix, hot_line, detail=detail))
    return out


COMPUTE_BOUND_CALL_S = 0.02  # a compiled call from this long is the model's computation
COMPUTE_BOUND_AROUND = 0.10  # ... when the eager work around the calls is under this part
#                              of their running time (one-off set-up included)


def _compute_bound(run: float, calls: int, around: float) -> bool:
    """The compiled calls are long and the eager work around them small: the time is the
    model's own computation, not Keras's (or the loop's) Python between the calls."""
    return calls > 0 and run > 0 and run / calls >= COMPUTE_BOUND_CALL_S \
        and around / run < COMPUTE_BOUND_AROUND


_TITLES = {
    "predict-per-item": "Keras predict called in the loop at {where}",  # an item or a batch
    "predict-per-call": "Keras predict called again and again at {where}",
    "eager-update": "eager gradient updates at {where}",
    "model-call-per-item": "model called per item in the loop at {where}",
    "weight-loop": "per-weight Python loop of small ops at {where}",
    "keras-eager": "Keras training run eagerly at {where}",
    "input-pipeline": "input pipeline iterated at {where}",
    "python-loop": "Python loop over tensors at {where}",
    "eager-ops": "eager ops at {where}",
}


def _header(stmt: ast.stmt) -> tuple[int, int]:
    """The lines of a statement itself: a compound statement's header, not its body."""
    body = getattr(stmt, "body", None)
    if isinstance(body, list) and body:
        return stmt.lineno, max(stmt.lineno, body[0].lineno - 1)
    return stmt.lineno, stmt.end_lineno or stmt.lineno


def _function_line(model: SourceModel, stmt: ast.stmt | None, line: int) -> int:
    """The ``def`` line of the function holding ``stmt``: one cause per function."""
    best: ast.AST | None = None
    for node in ast.walk(model.tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                and node.lineno <= line <= (node.end_lineno or 0) \
                and (best is None or node.lineno >= getattr(best, "lineno", 0)):
            best = node
    return getattr(best, "lineno", line) if stmt is not None else line


def _maps_parallel(tree: ast.Module) -> bool:
    """Whether the file has ``.map(...)`` calls and every one passes num_parallel_calls (by
    keyword or as the second argument). Another library's ``map`` without it says no: the
    usual advice stands."""
    maps = [n for n in ast.walk(tree) if type(n) is ast.Call and type(n.func) is ast.Attribute
            and n.func.attr == "map"]

    def parallel(call: ast.Call) -> bool:
        given = [k.value for k in call.keywords if k.arg == "num_parallel_calls"]
        given += call.args[1:2]
        # num_parallel_calls=1 (or None) runs one element at a time: not parallel
        return bool(given) and not (isinstance(given[0], ast.Constant)
                                    and given[0].value in (None, 1))

    return bool(maps) and all(parallel(c) for c in maps)


def _end_of(model: SourceModel, line: int) -> int:
    stmt = model.statement_at(line)
    return (stmt.end_lineno or line) if stmt is not None else line


def _calls_attr(stmt: ast.stmt, attrs: frozenset[str]) -> bool:
    return any(type(n) is ast.Call and type(n.func) is ast.Attribute and n.func.attr in attrs
               for n in ast.walk(stmt))


def _predict_repeated(model: SourceModel, stmt: ast.stmt | None, x: _Line | None) -> bool:
    """A ``predict`` line run many times: in a loop, or in a helper the loop calls (its
    per-call pipeline ops, a storm of eager ops at the line, show the repeated calls). Its
    time is predict's per-call overhead, not the compiled step it runs."""
    if stmt is not None and model.ctx.enclosing_loops(stmt):
        return True
    return x is not None and x.ops >= EAGER_OPS_MIN


def _classify(model: SourceModel, stmt: ast.stmt | None, x: _Line
              ) -> tuple[str | None, int, str, tuple[str, ...]]:
    """(kind, the line the cause is keyed by — its loop's header —, fix, lint rules)."""
    ctx = model.ctx
    line = x.site[1]
    loops = ctx.enclosing_loops(stmt) if stmt is not None else []
    loop_line = loops[-1].lineno if loops else line
    if stmt is not None and _calls_attr(stmt, _PREDICT) and _predict_repeated(model, stmt, x):
        kind = "predict-per-item" if loops else "predict-per-call"
        return kind, loops[0].lineno if loops else line, remedies.PREDICT_PER_ITEM.hint, \
            ("TFP105",)
    if stmt is not None and x.ops >= EAGER_OPS_MIN and _calls_attr(stmt, _KERAS_LOOPS):
        eager = "run_eagerly" in model.source or "run_functions_eagerly" in model.source
        fix = remedies.KERAS_EAGER.hint if eager else remedies.KERAS_EAGER_UNKNOWN.hint
        return "keras-eager", line, fix, ()
    pkg, made = _library([s for s in (x.eager,) if s is not None])
    internal = pkg not in ("", "tensorflow") and made * 2 >= max(x.ops, 1)
    call = _outer_call(model, stmt, line)
    if x.ops >= EAGER_OPS_MIN and stmt is not None and (trains([stmt]) or (
            call is not None and type(call.func) is ast.Attribute
            and call.func.attr in _UPDATE and made * 2 >= x.ops)):
        # an optimizer update, or the gradient of trainable weights, run eagerly again and
        # again (a tape's gradient of an input, a saliency map, is not an update)
        return ("eager-update", loops[0].lineno if loops else _function_line(model, stmt, line),
                remedies.EAGER_UPDATE.hint, ("TFP306",))
    if loops and x.ops >= EAGER_OPS_MIN and stmt is not None and _over_weights(loops) \
            and not _calls_model(stmt):
        return "weight-loop", loops[0].lineno, remedies.WEIGHT_LOOP.hint, ("TFP101",)
    if loops and internal and x.ops >= EAGER_OPS_MIN:
        return ("model-call-per-item", loops[0].lineno, remedies.MODEL_CALL_PER_ITEM.hint,
                ("TFP105", "TFP101"))
    repeated = bool(loops) or isinstance(stmt, (ast.For, ast.AsyncFor, ast.While))
    if _pipeline_share(x.eager) >= 0.5 and repeated:
        return ("input-pipeline", line, remedies.input_pipeline(remedies.tf_version()).hint,
                _PIPELINE_RULES)
    if x.ops < EAGER_OPS_MIN and (x.syncs is None or x.syncs.count < 10):
        return None, line, "", ()
    if loops and x.ops >= EAGER_OPS_MIN:
        return "python-loop", loops[0].lineno, remedies.EAGER_STORM.hint, _LOOP_RULES
    if x.ops >= EAGER_OPS_MIN and not internal:
        # one cause per function: its lines share one fix, @tf.function on it
        fn_line = _function_line(model, stmt, line) if not loops else loop_line
        return "eager-ops", fn_line, remedies.EAGER_SHARE.hint, ("TFP306",)
    return None, line, "", ()


_WEIGHT_LISTS = frozenset({"weights", "trainable_weights", "non_trainable_weights",
                           "variables", "trainable_variables", "get_weights"})


def _over_weights(loops: Sequence[ast.AST]) -> bool:
    """A loop over a model's weights (``for i, w in enumerate(model.weights)``)."""
    return any(type(n) is ast.Attribute and n.attr in _WEIGHT_LISTS
               for loop in loops if isinstance(loop, (ast.For, ast.AsyncFor))
               for n in ast.walk(loop.iter))


def _calls_model(stmt: ast.stmt) -> bool:
    """Any call but a list's append and the usual pure-Python helpers: arithmetic on weights
    calls nothing (its ops run inside Keras's variable operators, not a model call)."""
    return any(type(n) is ast.Call and not (
        (type(n.func) is ast.Attribute and n.func.attr in ("append", "extend"))
        or (type(n.func) is ast.Name and n.func.id in ("len", "range", "enumerate", "zip")))
        for n in ast.walk(stmt))


def _function_at(model: SourceModel, line: int) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    return next((n for n in ast.walk(model.tree)
                 if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.lineno == line),
                None)


def _eager_function_cause(model: SourceModel, fn: ast.FunctionDef | ast.AsyncFunctionDef,
                          where: str) -> tuple[str, str]:
    """(title, fix) of eager ops in one function: the function named, with what keeps it
    from compiling as it is (host work), when something does."""
    tf = model.ctx.module_alias("tensorflow") or "tf"
    fix = (f"decorate {fn.name}() (line {fn.lineno}) with @{tf}.function: its ops now run one "
           f"at a time from Python; add reduce_retracing=True only if its input shapes vary")
    host = host_work(model.ctx, list(fn.body))
    if host is not None:
        fix = f"first move {host} out of {fn.name}() (it needs eager tensors); then {fix}"
    return f"eager ops in {fn.name}() at {where}", fix


def _step_cause(obs: Observation, model: SourceModel, step: TrainingStep, hot: list[_Line],
                wall: float) -> Cause | None:
    inside = [x for x in hot if _in_step(obs, x, step, model)]
    stats = _stats_of(obs, step)
    if stats is not None:
        # the steps' clocks hold tfperf's own bookkeeping, which the run's wall leaves out:
        # a step cause is at most the whole run (p02's read 102.6 %)
        seconds = min(sum(stats.work_s) or sum(stats.durations), wall)
        work = statistics.median(stats.work_s) if stats.work_s else None
        detail = (f"{stats.count} steps, median {_secs(stats.median_s or 0.0)}"
                  + (f", of which the step's own work {_secs(work)}" if work else "") + "; "
                  f"{sum(stats.eager_ops.values()):,} eager ops "
                  f"({sum(stats.eager_ops.values()) // max(stats.count, 1):,} a step)")
        syncs = sum(stats.host_syncs.values())
        if syncs:
            detail += f", {syncs:,} host syncs"
    else:
        seconds = sum(x.seconds for x in inside)
        detail = f"{sum(x.ops for x in inside):,} eager ops at the step's lines"
    if not inside and not seconds:
        return None
    where = f"{Path(step.path).name}:{step.loop_line}"
    what = f"{step.function}()" if step.kind == "function" else \
        f"lines {step.first_line}–{step.last_line}"
    tf = model.ctx.module_alias("tensorflow") or "tf"
    lint = model.findings_at(step.first_line, step.last_line, ("TFP306",)) or \
        model.findings_at(step.loop_line, step.last_line, ("TFP306",))
    fix = _step_fix(step, tf)
    title = f"eager training step ({what}) in the loop at {where}"
    automatic: str | None = "tf.function on the training step"
    shape = read_shape(model.ctx, model.tree, step)
    if shape.update_per_item is not None:
        # an optimizer update per time step: the update count is the cost, not the eager op
        title = (f"one optimizer update per time step ({shape.update_per_item}"
                 + (f", in {shape.update_function}()" if shape.update_function else "")
                 + f"), run eagerly, in the loop at {where}")
        fix, automatic = remedies.update_per_item(shape, tf), None
    elif shape.env is not None:  # the episode steps the environment: it stays Python
        title = f"eager episode loop ({what}, the environment stepped inside) at {where}"
        fix, automatic = remedies.env_in_step(shape, tf), None
    else:
        patch = tf_function_on_step(model.source, model.path, step)
        if patch.source is None:  # compiling it as it is would break it: say what first
            fix, automatic = f"first, {patch.reason}; then {fix}", None
    return Cause("eager-training-step", title, seconds, seconds / wall, fix,
                 [_hot(model, x) for x in inside], lint, automatic=automatic, step=step,
                 detail=detail)


def _advice_causes(findings: list[Finding], obs: Observation, wall: float,
                   claimed: set[tuple[str, int]], models: dict[str, SourceModel]
                   ) -> list[Cause]:
    out = []
    by_name = {f.name: f for f in obs.functions}
    for f in findings:
        loc = f.location
        site = (loc.path, loc.line) if loc is not None and loc.path and loc.line else None
        model = models.get(site[0]) if site else None
        if f.code == "profile.host_sync" and site is not None and site not in claimed:
            stats = obs.host_syncs.get(site)
            if stats is None:
                continue
            lint = model.findings_at(site[1], site[1], ("TFP201", "TFP203")) if model else []
            out.append(Cause("host-sync", f"host syncs at {Path(site[0]).name}:{site[1]}",
                             stats.total_s, stats.total_s / wall, f.hint or "",
                             [HotLine(site[0], site[1], stats.total_s, 0, stats.count,
                                      model.code(site[1]) if model else "")], lint))
        elif f.code == "profile.retrace":
            fn = by_name.get(str(f.data.get("function", "")))
            seconds = fn.trace_s if fn is not None else 0.0
            rule = f.data.get("rule")
            lint = [x for m in models.values() for x in m.findings if x.code == rule] \
                if rule else []
            out.append(Cause("retrace", f"retracing of {f.data.get('function', '?')}",
                             seconds, seconds / wall, f.hint or "", [], lint[:3],
                             detail=f.message))
    return out


_PYTHON_OPS = ("PyFunc", "EagerPyFunc", "PyFuncStateless")
PYTHON_IN_PIPELINE_SHARE = 0.10  # of the run, from which Python in tf.data is a cause


def _python_in_pipeline(capture: Any, models: dict[str, SourceModel], causes: list[Cause],
                        wall: float) -> list[Cause]:
    """tf.data running Python for every element (``from_generator``, ``py_function`` in a
    ``map``): the capture's PyFunc time, where the hot files build such a pipeline. Inside a
    compiled step (Keras's fit) the wait for the next batch is that time, not the model's."""
    if capture is None or any(c.kind == "input-pipeline" and c.share >= PYTHON_IN_PIPELINE_SHARE
                              for c in causes):
        return []
    seconds = sum(capture.by_type.get(op, 0.0) for op in _PYTHON_OPS)
    if seconds < PYTHON_IN_PIPELINE_SHARE * wall:
        return []
    where = [(m, f) for m in models.values() for f in m.findings if f.code == "TFP605"]
    sources = [m for m in models.values() if "from_generator" in m.source]
    if not where and not sources:
        return []
    lint = [f for _, f in where]
    what = "a tf.py_function in Dataset.map" if where else "Dataset.from_generator"
    fix = (f"tf.data runs Python for every element ({what}), one element at a time under "
           f"Python's lock: precompute the data into arrays or TFRecord files, or write the "
           f"per-element work with TF ops; then cache() what does not change")
    return [Cause("input-pipeline", f"Python inside the input pipeline ({what})", seconds,
                  min(seconds / wall, 1.0), fix, lint=lint,
                  detail=f"the capture's Python ops (PyFunc) ran {_secs(seconds)}")]


def _input_cause(capture: Any, causes: list[Cause], wall: float) -> list[Cause]:
    """The capture's input wait, when no line already names the input pipeline."""
    if capture is None or any(c.kind == "input-pipeline" for c in causes):
        return []
    share = capture.input_share
    if share is None or share <= 0.05:
        return []
    seconds = capture.input_s
    return [Cause("input-pipeline", "waiting for input (tf.data)", seconds, seconds / wall,
                  remedies.input_pipeline(remedies.tf_version()).hint,
                  detail=f"{100 * share:.0f} % of step time waits for input")]


def _secs(s: float) -> str:
    if s >= 1:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.1f} ms"
    return f"{s * 1e6:.0f} µs"
