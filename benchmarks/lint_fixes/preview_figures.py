"""Figures of the judged preview-rule findings (candidates_judged_judge-preview.csv).

    python benchmarks/lint_fixes/preview_figures.py [--relint]

Per rule and set: judged, true, minor, false, true-or-minor and strictly-true shares, for
user-style sets together (dev, heldout1-3, rare, candidates) and for library apart. With
``--relint`` the sets are linted again with today's rules (folders /tmp/tfperf-<set>, the dev
set in /tmp/tfperf-corpus) and only the judged findings still reported are counted: the
figures after a rule change, from verdicts recorded before it.
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
LEDGER = HERE / "candidates_judged_judge-preview.csv"
RULES = ("TFP106", "TFP107", "TFP205", "TFP307", "TFP308")
USER_SETS = ("dev", "heldout1", "heldout2", "heldout3", "rare", "candidates")
FOLDERS = {"dev": "corpus"}


def still_reported(sets: set[str]) -> set[tuple[str, str, int, str]]:
    """(set, '<owner>+<name>/<path>', line, code) of today's findings of the rules."""
    out = set()
    for s in sorted(sets):
        root = Path(f"/tmp/tfperf-{FOLDERS.get(s, s)}")
        if not root.is_dir():
            sys.exit(f"{root} is missing: materialise it with corpus.py --csv <set>.csv")
        run = subprocess.run(
            [sys.executable, "-m", "tfperf", "lint", str(root), "--select", ",".join(RULES),
             "--preview", "--format", "json", "--no-cache"], capture_output=True, text=True)
        for f in json.loads(run.stdout or "[]"):
            rel = str(Path(f["path"]).relative_to(root))
            out.add((s, rel, int(f["line"]), f["code"]))
    return out


def line(label: str, rows: list[dict[str, str]]) -> str:
    c = Counter(r["verdict"] for r in rows)
    n = len(rows)
    ok = 100 * (c["true"] + c["minor"]) / n
    return (f"{label:22s} {n:4d} {c['true']:4d} {c['minor']:5d} {c['false']:5d} "
            f"{ok:7.1f}% {100 * c['true'] / n:7.1f}%")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--relint", action="store_true",
                    help="count only the judged findings today's rules still report")
    args = ap.parse_args()
    with LEDGER.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    if args.relint:
        kept = still_reported({r["set"] for r in rows})
        rows = [r for r in rows if (r["set"], r["repo"].replace("/", "+", 1) + "/" + r["path"],
                                    int(r["line"]), r["code"]) in kept]
    print(f"{'rule / set':22s} {'n':>4s} {'true':>4s} {'minor':>5s} {'false':>5s} "
          f"{'t-or-m':>8s} {'true':>8s}")
    for code in RULES:
        mine = [r for r in rows if r["code"] == code]
        user = [r for r in mine if r["set"] in USER_SETS]
        if user:
            print(line(f"{code} user-style", user))
        for s in (*USER_SETS, "library"):
            part = [r for r in mine if r["set"] == s]
            if part:
                print(line(f"  {s}", part))


if __name__ == "__main__":
    main()
