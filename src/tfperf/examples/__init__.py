"""The bundled example: the article's §5 case study, slow and fixed, and the demo's steps."""

from __future__ import annotations

from pathlib import Path

EXAMPLES_DIR = Path(__file__).resolve().parent
SLOW = EXAMPLES_DIR / "case_study_slow.py"
FIXED = EXAMPLES_DIR / "case_study_fixed.py"
BENCH = EXAMPLES_DIR / "case_study_bench.py"


def demo_steps(no_compute: bool = False, verbose: bool = False) -> list[tuple[str, list[str]]]:
    """``tfperf demo``: what to run, in order, as (title, argv) pairs."""
    loud = ["--verbose"] if verbose else []
    doctor = ["doctor"] + (["--no-compute"] if no_compute else [])
    steps = [
        ("1. Is the GPU chain sound on this machine?", doctor),
        ("2a. Lint the article's slow code (§5.1)", ["lint", str(SLOW)]),
        ("2b. Lint its fixed version (§5.2/§5.3)", ["lint", str(FIXED)]),
    ]
    if not no_compute:
        steps.append(("3. Bench the variants on this machine",
                      ["bench", str(BENCH), "--quick", *loud]))
        steps.append(("4. Profile the slow loop: where the time goes, and why",
                      ["profile", f"{BENCH}:loop", "--quick", "--steps", "1", "--no-capture",
                       *loud]))
    return steps
