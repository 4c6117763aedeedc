"""The bundled example: the article's §5 case study, slow and fixed, and the demo's steps."""

from __future__ import annotations

from pathlib import Path

EXAMPLES_DIR = Path(__file__).resolve().parent
SLOW = EXAMPLES_DIR / "case_study_slow.py"
FIXED = EXAMPLES_DIR / "case_study_fixed.py"
BENCH = EXAMPLES_DIR / "case_study_bench.py"

# The demo's steps that run tensors: skipped, with the reason, where TensorFlow is missing.
RUNS_TENSORS = frozenset({"bench", "profile"})

# What a step's exit status 0 says, by command.
_CLEAN = {"doctor": "no failing check", "lint": "no findings",
          "bench": "every variant ran and agrees with the baseline",
          "profile": "nothing to warn about"}
# What exit status 1 says when it is not expected: a real failure.
_FAILED = {"doctor": "the doctor failed a check (see above)",
           "lint": "lint found findings where none were expected",
           "bench": "a variant failed or computes something else (see above)",
           "profile": "the profiled run raised or its advice warns (see above)"}


def demo_steps(no_compute: bool = False,
               verbose: bool = False) -> list[tuple[str, list[str], str | None]]:
    """``tfperf demo``: what to run, in order, as (title, argv, expected) triples;
    ``expected`` says what exit status 1 (findings) means on the example, where finding
    something is the point of the step, and is None where status 1 would be a failure."""
    loud = ["--verbose"] if verbose else []
    doctor = ["doctor"] + (["--no-compute"] if no_compute else [])
    steps: list[tuple[str, list[str], str | None]] = [
        ("1. Is the GPU chain sound on this machine?", doctor, None),
        ("2a. Lint the article's slow code (§5.1)", ["lint", str(SLOW)],
         "lint found findings: expected on the slow example, they are the patterns "
         "§5.2 removes"),
        ("2b. Lint its fixed version (§5.2/§5.3)", ["lint", str(FIXED)], None),
    ]
    if not no_compute:
        steps.append(("3. Bench the variants on this machine",
                      ["bench", str(BENCH), "--quick", *loud], None))
        steps.append(("4. Profile the slow loop: where the time goes, and why",
                      ["profile", f"{BENCH}:loop", "--quick", "--steps", "1", "--no-capture",
                       *loud],
                      "profile gave advice: expected on the slow loop, it says what to "
                      "change"))
    return steps


def demo_outcome(command: str, status: int, expected: str | None) -> tuple[bool, str]:
    """(failed, what a step's exit status means, in words) for ``tfperf demo``."""
    if status == 0:
        return False, f"done: {_CLEAN.get(command, 'ok')}"
    if status == 1 and expected:
        return False, expected
    if status == 1:
        return True, f"FAILED: {_FAILED.get(command, 'exit status 1')}"
    return True, f"FAILED: the step could not run (exit status {status})"
