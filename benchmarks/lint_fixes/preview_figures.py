"""Figures of the rules judged alone (preview_judged.csv): each linted with ``--select CODE``
on the user-style sets and on library code, every finding (or a seeded sample where a rule
fires often) judged before the rule was changed for it.

    python benchmarks/lint_fixes/preview_figures.py [--relint]

Per rule and set: judged, true, minor, false, true-or-minor and strictly-true shares, for
user-style sets together (dev, heldout1-3, rare, candidates) and for library apart. With
``--relint`` the sets are linted again with today's rules (folders /tmp/tfperf-<set>, the dev
set in /tmp/tfperf-corpus) and only the judged findings still reported are counted: the
figures after a rule change, from verdicts recorded before it. ``judge.py score --write``
stores both in the package's precision.json (``alone``), which ``tfperf rule CODE`` shows.
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
LEDGER = HERE / "preview_judged.csv"
USER_SETS = ("dev", "heldout1", "heldout2", "heldout3", "rare", "candidates")
FOLDERS = {"dev": "corpus"}
VERDICTS = ("true", "minor", "false")


def read_rows() -> list[dict[str, str]]:
    with LEDGER.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    bad = [r for r in rows if r["verdict"] not in VERDICTS]
    if bad:
        raise SystemExit(f"{LEDGER}: verdict must be one of {VERDICTS}: {bad[0]}")
    return rows


def rules_of(rows: list[dict[str, str]]) -> list[str]:
    return sorted({r["code"] for r in rows})


def still_reported(sets: set[str], rules: list[str],
                   python: str = sys.executable) -> set[tuple[str, str, int, str]]:
    """(set, '<owner>+<name>/<path>', line, code) of today's findings of ``rules``."""
    out = set()
    for s in sorted(sets):
        root = Path(f"/tmp/tfperf-{FOLDERS.get(s, s)}")
        if not root.is_dir():
            sys.exit(f"{root} is missing: materialise it with corpus.py --csv <set>.csv")
        run = subprocess.run(
            [python, "-m", "tfperf", "lint", str(root), "--select", ",".join(rules),
             "--preview", "--format", "json", "--no-cache"], capture_output=True, text=True)
        for f in json.loads(run.stdout or "[]"):
            rel = str(Path(f["path"]).relative_to(root))
            out.add((s, rel, int(f["line"]), f["code"]))
    return out


def kept(rows: list[dict[str, str]], python: str = sys.executable) -> list[dict[str, str]]:
    """The judged findings today's rules still report."""
    today = still_reported({r["set"] for r in rows}, rules_of(rows), python)
    return [r for r in rows if (r["set"], r["repo"].replace("/", "+", 1) + "/" + r["path"],
                                int(r["line"]), r["code"]) in today]


def counts(rows: list[dict[str, str]]) -> dict[str, int]:
    c = Counter(r["verdict"] for r in rows)
    return {v: c[v] for v in VERDICTS}


def package_figures(python: str = sys.executable) -> dict:
    """precision.json's ``alone`` section: per rule, user-style figures as judged and today,
    and library code apart."""
    rows = read_rows()
    now = kept(rows, python)

    def per(part: list[dict[str, str]], sets: tuple[str, ...]) -> dict[str, dict[str, int]]:
        return {code: counts(mine) for code in rules_of(rows)
                if (mine := [r for r in part if r["code"] == code and r["set"] in sets])}

    return {"corpus": "user-style code, each rule linted alone (dev, held-out, rare and the "
                      "candidates.csv repositories; preview_judged.csv)",
            "judged": per(rows, USER_SETS), "now": per(now, USER_SETS),
            "library": per(rows, ("library",))}


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
    ap.add_argument("--code", action="append", help="only this rule (repeatable)")
    args = ap.parse_args()
    rows = read_rows()
    if args.relint:
        rows = kept(rows)
    print(f"{'rule / set':22s} {'n':>4s} {'true':>4s} {'minor':>5s} {'false':>5s} "
          f"{'t-or-m':>8s} {'true':>8s}")
    for code in rules_of(rows):
        if args.code and code not in args.code:
            continue
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
