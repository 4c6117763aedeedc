"""``--try-fixes``: each automatic fix applied to a copy of the script and measured on the
user's own run, as the article's loop says: profile, change one thing, profile again.

For each :class:`~tfperf.profile.fixes.Patch`, the script (before) and the patched copy
(after) each run their first ``steps`` steps in child processes (``trial_child.py``), with
the same seeds, in rounds ordered before-after, after-before... so that load drifting during
the trial hits both sides alike. Per step: the median time of the steady steps (the first
``WARMUP`` left out: tracing, first allocations) on each side, their ratio with a bootstrap
interval (``bench.significance``), and the first step's time apart (what tracing costs once).
The losses (or step results) of the steps are compared with bench's equivalence rule; the
baseline is compared with itself across rounds first, so that a script whose own results
vary from run to run is said to.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib.util import decode_source
from pathlib import Path
from typing import Any

from tfperf.profile.fixes import Patch

DEFAULT_STEPS = 20
DEFAULT_ROUNDS = 2
WARMUP = 2  # steps left out of the steady-state figures: tracing, first allocations
CONFIDENCE = 0.95
CHILD_TIMEOUT_S = 900.0
# traces of a compiled step that are normal: a first call that creates variables (an
# optimizer's slots) traces twice; more means the inputs' shapes vary
RETRACES_OK = 2
DRIFT_STEPS = 3  # leading steps that must agree before a later gap is read as float drift


@dataclass
class SideRun:
    """One child's run of one side."""

    durations: list[float] = field(default_factory=list)
    losses: list[list[float] | None] = field(default_factory=list)
    traces: int | None = None
    error: str | None = None
    unit: str = "step"  # "run": no step loop, the whole script was timed
    weights: list[float] | None = None  # a sample of the trainable weights after the steps

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SideRun:
        return cls(list(d.get("durations") or []), list(d.get("losses") or []),
                   d.get("traces"), d.get("error"), d.get("unit") or "step",
                   d.get("weights"))


@dataclass
class Trial:
    """One fix, measured."""

    patch: Patch
    copy: str | None = None  # the patched copy of the script
    steps: int = 0
    before: list[SideRun] = field(default_factory=list)
    after: list[SideRun] = field(default_factory=list)
    before_step_s: float | None = None
    after_step_s: float | None = None
    speedup: float | None = None  # before / after, steady steps
    low: float | None = None  # its interval at CONFIDENCE
    high: float | None = None
    first_before_s: float | None = None
    first_after_s: float | None = None
    results: str = "not compared"  # "equal", "differ", "not conclusive", "not compared"
    results_detail: str = ""
    traces: int | None = None
    error: str | None = None

    @property
    def unit(self) -> str:
        """"step", or "run" when the script has no step loop and was timed whole."""
        runs = self.before + self.after
        return "run" if runs and all(r.unit == "run" for r in runs) else "step"

    @property
    def steps_run(self) -> int:
        """The steps each side's runs reached (the fewest): a script with fewer steps than
        asked ends there, and "over 20 steps" was said of a script that has 16 (stop 45)."""
        runs = self.before + self.after
        if not runs or any(r.error for r in runs):
            return self.steps
        return min(self.steps, *(len(r.durations) for r in runs))

    @property
    def saved_s(self) -> float | None:
        if self.before_step_s is None or self.after_step_s is None:
            return None
        return self.before_step_s - self.after_step_s

    @property
    def within_noise(self) -> bool:
        """Whether the speed-up's interval holds 1×: the rounds cannot tell the fix from
        the original, whatever the medians say."""
        return self.low is not None and self.high is not None and self.low <= 1.0 <= self.high

    def to_dict(self) -> dict[str, Any]:
        return {"fix": self.patch.name, "description": self.patch.description,
                "applied": self.patch.source is not None, "reason": self.patch.reason or None,
                "copy": self.copy, "steps": self.steps, "steps_run": self.steps_run,
                "before_step_s": self.before_step_s, "after_step_s": self.after_step_s,
                "saved_s": self.saved_s, "speedup": self.speedup,
                "interval": [self.low, self.high] if self.low is not None else None,
                "confidence": CONFIDENCE,
                "first_step_s": {"before": self.first_before_s, "after": self.first_after_s},
                "results": self.results, "results_detail": self.results_detail,
                "traces": self.traces, "error": self.error,
                "rounds": len(self.before), "unit": self.unit}

    def summary(self) -> str:
        """One line: the gain per step with its interval, and whether results agree."""
        if self.patch.source is None:
            return f"not applied: {self.patch.reason}"
        if self.error:
            return f"not measured: {self.error}"
        if self.speedup is None or self.before_step_s is None or self.after_step_s is None:
            return "not measured: too few steps ran"
        interval = (f", {int(CONFIDENCE * 100)} % interval {self.low:.2f}–{self.high:.2f}×"
                    if self.low is not None else "")
        first = ""
        if self.unit == "step" and self.first_after_s is not None \
                and self.first_before_s is not None:
            first = (f"; first step {_secs(self.first_after_s)} against "
                     f"{_secs(self.first_before_s)}")
        saved = self.saved_s or 0.0
        verb = "saves" if saved >= 0 else "costs"
        ran = self.steps_run
        short = f" (all the script ran of the {self.steps} asked)" if ran < self.steps else ""
        over = (f"{ran} steps × {len(self.before)} rounds{short}" if self.unit == "step" else
                f"{len(self.before)} whole runs a side (no step loop)")
        retraced = ""
        if self.traces is not None and self.traces > RETRACES_OK:
            retraced = (f"; traced {self.traces} times: its inputs' shapes vary, add "
                        f"reduce_retracing=True (or an input_signature with None)")
        head = (f"{verb} {_secs(abs(saved))} a {self.unit} ({_secs(self.before_step_s)} → "
                f"{_secs(self.after_step_s)}, {self.speedup:.2f}×{interval})")
        if self.within_noise:  # the interval holds 1×: no gain or loss the rounds can tell
            head = (f"no gain beyond the noise: {_secs(self.before_step_s)} → "
                    f"{_secs(self.after_step_s)} a {self.unit} ({self.speedup:.2f}×{interval}, "
                    f"which holds 1×)")
        return (f"{head} over "
                f"{over}{first}{retraced}; results: "
                f"{self.results}" + (f" ({self.results_detail})" if self.results_detail else ""))


def _secs(s: float) -> str:
    if s >= 1:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.1f} ms"
    return f"{s * 1e6:.0f} µs"


# -- running the sides ----------------------------------------------------------------------

Runner = Callable[[dict[str, Any]], dict[str, Any]]


def run_child(spec: dict[str, Any]) -> dict[str, Any]:
    """Run one side in a fresh Python process; its result, or an error."""
    folder = Path(spec["out"]).parent
    spec_path = folder / (Path(spec["out"]).stem + ".spec.json")
    spec_path.write_text(json.dumps(spec), encoding="utf-8")
    env = dict(os.environ, PYTHONHASHSEED="0")
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "tfperf.profile.trial_child", str(spec_path)],
            capture_output=True, text=True, env=env, timeout=spec.get("timeout", CHILD_TIMEOUT_S),
            check=False)
    except subprocess.TimeoutExpired:
        return {"error": f"did not finish in {spec.get('timeout', CHILD_TIMEOUT_S):.0f} s"}
    out = Path(spec["out"])
    if proc.returncode != 0 or not out.is_file():
        from tfperf.core.tensorflow_logs import last_line_worth_showing

        why = last_line_worth_showing(proc.stderr) or f"exit status {proc.returncode}"
        return {"error": f"the child process failed: {why}"}
    result: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return result


def try_fix(script: Path, argv: Sequence[str], source: str, patch: Patch, *,
            steps: int = DEFAULT_STEPS, rounds: int = DEFAULT_ROUNDS,
            workdir: Path | None = None, random_ops: Sequence[str] = (),
            runner: Runner = run_child, timeout: float = CHILD_TIMEOUT_S,
            loss: str | None = None, module: Path | None = None) -> Trial:
    """Measure one fix: ``rounds`` rounds of before and after, ``steps`` steps each.
    ``module``: the file the patch is of, when not the script (a module it imports)."""
    trial = Trial(patch, steps=steps)
    if patch.source is None:
        return trial
    folder = workdir or Path(tempfile.mkdtemp(prefix="tfperf-fixes-"))
    folder.mkdir(parents=True, exist_ok=True)
    slug = "".join(c if c.isalnum() else "-" for c in patch.name).strip("-")
    patched = module or script
    patched_source = source if module is None else module.read_text(encoding="utf-8")
    copy = folder / f"{patched.stem}.{slug}.py"
    copy.write_text(patch.source, encoding="utf-8")
    (folder / f"{patched.stem}.{slug}.diff").write_text(
        patch.diff(patched_source, patched.name), encoding="utf-8")
    original = folder / f"{script.stem}.original.py"
    original.write_text(source, encoding="utf-8")
    trial.copy = str(copy)
    for r in range(rounds):
        order = ("before", "after") if r % 2 == 0 else ("after", "before")
        for side in order:
            after = side == "after"
            spec = {"script": str(script.resolve()), "argv": list(argv), "steps": steps,
                    "code": str(copy if after and module is None else original),
                    "overrides": {str(module): str(copy)} if after and module else {},
                    "function": patch.function if after else None,
                    "out": str(folder / f"{slug}.{side}.{r}.json"), "timeout": timeout,
                    "loss": loss}
            run = SideRun.from_dict(runner(spec))
            (trial.before if side == "before" else trial.after).append(run)
    _judge(trial, random_ops)
    return trial


# -- judging ----------------------------------------------------------------------------------


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return text
    head = lines[0].split(":", 1)[0]  # "TypeError: in user code:" … "TypeError: the reason"
    return lines[-1] if lines[-1].startswith(head) or len(lines) == 1 else \
        f"{head}: {lines[-1]}"


def _steady(runs: list[SideRun]) -> list[float]:
    return [t for run in runs
            for t in (run.durations if run.unit == "run" else run.durations[WARMUP:])]


def _first(runs: list[SideRun]) -> float | None:
    firsts = [run.durations[0] for run in runs if run.durations]
    return statistics.median(firsts) if firsts else None


def _judge(trial: Trial, random_ops: Sequence[str]) -> None:
    # the error's last line (a traced error is a page of "in user code" frames); the fixed
    # copy's failure said as such, not as a measurement that could not be made
    errors = [f"{what}: {_last_line(run.error)}"
              for what, runs in (("the original failed", trial.before),
                                 ("the patched copy failed", trial.after))
              for run in runs if run.error]
    if errors:
        trial.error = errors[0]
        return
    before, after = _steady(trial.before), _steady(trial.after)
    trial.first_before_s, trial.first_after_s = _first(trial.before), _first(trial.after)
    traces = [run.traces for run in trial.after if run.traces is not None]
    trial.traces = max(traces) if traces else None
    if len(before) >= 2 and len(after) >= 2:
        from tfperf.bench.significance import bootstrap_ratio

        trial.before_step_s = statistics.median(before)
        trial.after_step_s = statistics.median(after)
        ratio = bootstrap_ratio(before, after, confidence=CONFIDENCE)  # after / before
        trial.speedup = 1.0 / ratio.ratio
        trial.low, trial.high = 1.0 / ratio.high, 1.0 / ratio.low
    trial.results, trial.results_detail = compare_results(trial.before, trial.after,
                                                          random_ops)


def _array(losses: list[list[float] | None]) -> Any:
    import numpy as np

    rows = [row for row in losses if row is not None]
    if not rows or len(rows) != len(losses) or len({len(r) for r in rows}) != 1:
        return None
    return np.asarray(rows, dtype=np.float32)


def compare_results(before: list[SideRun], after: list[SideRun],
                    random_ops: Sequence[str] = ()) -> tuple[str, str]:
    """("equal" | "differ" | "not conclusive" | "not compared", why) for the steps' losses,
    side by side, judged against the original's own run-to-run spread where it has one."""
    from tfperf.bench.equivalence import compare_outputs

    if not before or not after:
        return "not compared", "no run"
    n = min(len(run.losses) for run in (*before, *after))
    if n == 0 and all(run.unit == "run" for run in (*before, *after)):
        return "not compared", "no step loop, so no loss per step to compare"
    ref = _array(before[0].losses[:n]) if n else None
    got = _array(after[0].losses[:n]) if n else None
    what = f"{n} steps' losses"
    rows = [run.losses[:n] for run in before[1:]]
    if ref is None or got is None:  # no loss to compare: what the steps changed instead
        weights = [run.weights for run in (*before, *after)]
        if any(w is None for w in weights) or len({len(w or ()) for w in weights}) != 1:
            if n == 0:
                return "not compared", ("no loss or step result was seen (the step returns "
                                        "nothing), and no trainable weights to compare")
            return "not compared", "the steps' losses are not numbers of one shape"
        ref, got = _array([before[0].weights]), _array([after[0].weights])
        steps = min(len(run.durations) for run in (*before, *after))
        what = f"the trainable weights after {steps} steps"
        rows = [[run.weights] for run in before[1:]]
    spread = ""
    own_err: float | None = None  # how far the original's reruns (same seeds) are apart
    again_first: Any = None
    for row in rows:
        again = _array(row)
        if again is not None:
            own = compare_outputs(ref, again)
            if own.equivalent is False and own.max_rel_err is not None:
                own_err = max(own_err or 0.0, own.max_rel_err)
                again_first = again[:1]
                spread = (f"; the script's own results vary from run to run by "
                          f"{_rel(own_err)}")
    verdict = compare_outputs(ref, got)
    if verdict.equivalent:
        return "equal", f"{what} within {verdict.tolerance}{spread}"
    if verdict.equivalent is None:
        return "not compared", verdict.reason
    why = f"{what} differ by up to {_rel(verdict.max_rel_err)}"
    drift = _drift(ref, got) if not random_ops and what.endswith("losses") else None
    if drift is not None:
        return "equal", (f"{drift} steps' losses equal within {verdict.tolerance}, then "
                         f"drift apart, up to {_rel(verdict.max_rel_err)} by step {len(ref)}: "
                         f"float rounding of the compiled ops, which training amplifies step "
                         f"by step, not another computation{spread}")
    if own_err is not None and verdict.max_rel_err is not None:
        # the original does not reproduce itself with the same seeds: judge the gap by that
        if verdict.max_rel_err <= own_err:
            return "equal", (f"{what} within the original's own run-to-run spread: they "
                             f"differ by up to {_rel(verdict.max_rel_err)}, the original's "
                             f"reruns with the same seeds by {_rel(own_err)}")
        if what.endswith("losses") and again_first is not None:
            gap = compare_outputs(ref[:1], got[:1]).max_rel_err or 0.0
            first_own = compare_outputs(ref[:1], again_first).max_rel_err or 0.0
            if gap <= first_own:
                return "not conclusive", (
                    f"the original does not reproduce itself with the same seeds (its reruns "
                    f"differ by up to {_rel(own_err)}); at the first step, before the runs "
                    f"part, the fix is within that spread ({_rel(gap)} against the "
                    f"original's own {_rel(first_own)}), later up to "
                    f"{_rel(verdict.max_rel_err)}: compare the loss curves over a longer run")
    if random_ops:
        why += (f": the step draws random numbers ({', '.join(sorted(set(random_ops))[:3])}),"
                f" and tf.function draws another stream than eager ops do, so they cannot match "
                f"exactly; check the loss curve over a longer run")
    return "differ", why + spread


def _drift(ref: Any, got: Any) -> int | None:
    """How many leading steps agree, when at least :data:`DRIFT_STEPS` do and a later one does
    not: float drift (a step that computed something else, a value frozen at trace time, say,
    differs from the second step on, once the first update has run)."""
    from tfperf.bench.equivalence import compare_outputs

    agree = 0
    for k in range(len(ref)):
        if not compare_outputs(ref[k:k + 1], got[k:k + 1]).equivalent:
            break
        agree += 1
    return agree if DRIFT_STEPS <= agree < len(ref) else None


def _rel(x: float | None) -> str:
    return "?" if x is None else f"{100 * x:.3g} %"


# -- every automatic fix of a report's causes ---------------------------------------------------


def try_fixes(causes: Sequence[Any], script: Path, argv: Sequence[str], *,
              steps: int = DEFAULT_STEPS, rounds: int = DEFAULT_ROUNDS,
              random_ops: Sequence[str] = (), runner: Runner = run_child,
              workdir: Path | None = None) -> list[Trial]:
    """Measure the automatic fix of each cause (``causes.Cause``) that has one, on copies of
    ``script``; each trial is attached to its cause (``cause.trial``)."""
    import os

    from tfperf.core.findings import Applicability
    from tfperf.profile import fixes

    source = decode_source(script.read_bytes())
    real = os.path.realpath(script)
    folder = workdir or Path(tempfile.mkdtemp(prefix="tfperf-fixes-"))
    out = []
    for cause in causes:
        patch = None
        target = None  # the module patched, when the step lives in one the script imports
        if cause.kind == "eager-training-step" and cause.step is not None:
            step_path = os.path.realpath(cause.step.path)
            if step_path == real:
                patch = fixes.tf_function_on_step(source, str(script), cause.step)
            elif step_path.startswith(os.path.dirname(real) + os.sep):
                target = Path(step_path)
                patch = fixes.tf_function_on_step(decode_source(target.read_bytes()),
                                                  step_path, cause.step)
            else:
                patch = Patch("tf.function on the training step", "", None,
                              f"the step is in {cause.step.path}, outside the script's folder")
        elif cause.kind == "keras-eager":
            patch = fixes.keras_compiled(source, str(script))
            cause.automatic = patch.name if patch.source is not None else None
        elif cause.kind != "discarded-op-result":
            codes = {f.code for f in cause.lint if f.fix is not None
                     and f.fix.applicability is Applicability.SAFE
                     and f.location is not None and f.location.path is not None
                     and os.path.realpath(f.location.path) == real}
            if codes:
                patch = fixes.lint_safe_fixes(source, str(script), codes)
                cause.automatic = patch.name
        if patch is None:
            continue
        trial = try_fix(script, argv, source, patch, steps=steps, rounds=rounds,
                        workdir=folder, random_ops=random_ops, runner=runner,
                        loss=cause.step.loss if cause.step is not None else None,
                        module=target)
        cause.trial = trial
        out.append(trial)
    return out
