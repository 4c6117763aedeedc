"""Re-lint scored precision rounds and match today's findings to their verdicts.

    python benchmarks/lint_fixes/recheck_rounds.py ROUND_DIR [ROUND_DIR ...] [--show lost]

A round folder holds ``judged.csv`` (set, batch, repo, commit, file, cell, line, rule,
verdict, reason) and ``src/<owner+name>/`` (the repositories' trees, as scored). Each
repository is linted on its own (so its own pin applies), by default and with ``--preview``;
each judged row is matched by (repository, file, cell, line, rule) to the run of its set
(``default`` rows to the default run, ``preview-only`` rows to the preview run). Prints, per
round and set, the verdicts kept and lost, and the findings no row judges (new ones).
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

Key = tuple[str, str, str, str, str]


def lint(repo_dir: Path, preview: bool) -> list[dict]:
    cmd = [sys.executable, "-m", "tfperf", "lint", "--no-cache", "--format", "json",
           str(repo_dir)]
    if preview:
        cmd.insert(4, "--preview")
    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if out.returncode not in (0, 1):
        raise SystemExit(f"lint failed on {repo_dir}: {out.stderr.strip()}")
    return json.loads(out.stdout or "[]")


def found_keys(round_dir: Path, repo: str, preview: bool) -> set[Key]:
    repo_dir = round_dir / "src" / repo.replace("/", "+")
    keys = set()
    for f in lint(repo_dir, preview):
        if f["code"] == "TFP000":
            continue
        rel = str(Path(f["path"]).resolve().relative_to(repo_dir.resolve()))
        keys.add((repo, rel, str(f.get("cell") or ""), str(f.get("line") or ""), f["code"]))
    return keys


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("rounds", nargs="+", type=Path)
    ap.add_argument("--show", choices=("lost", "new", "all"), default="lost")
    args = ap.parse_args()
    for round_dir in args.rounds:
        rows = list(csv.DictReader((round_dir / "judged.csv").open()))
        repos = sorted({p.name.replace("+", "/", 1) for p in (round_dir / "src").iterdir()
                        if p.is_dir()})
        runs = {(r, pv): found_keys(round_dir, r, pv) for r in repos for pv in (False, True)}
        for set_name, preview in (("default", False), ("preview-only", True)):
            kept: Counter[str] = Counter()
            lost: Counter[str] = Counter()
            judged: set[Key] = set()
            for row in rows:
                if row["set"] != set_name:
                    continue
                key = (row["repo"], row["file"], row["cell"], row["line"], row["rule"])
                judged.add(key)
                if key in runs.get((row["repo"], preview), set()):
                    kept[row["verdict"]] += 1
                else:
                    lost[row["verdict"]] += 1
                    if args.show in ("lost", "all"):
                        print(f"  lost {row['verdict']:5} {' '.join(key)}")
            found = set().union(*(k for (r, pv), k in runs.items() if pv == preview))
            if set_name == "preview-only":  # a preview-only row is not in the default run
                found -= set().union(*(k for (r, pv), k in runs.items() if not pv))
            new = sorted(found - judged)
            if args.show in ("new", "all"):
                for key in new:
                    print(f"  new        {' '.join(key)}")
            print(f"{round_dir.name} {set_name}: kept "
                  + " ".join(f"{v}={kept[v]}" for v in ("true", "minor", "false"))
                  + " | removed " + " ".join(f"{v}={lost[v]}" for v in ("true", "minor", "false"))
                  + f" | unjudged new {len(new)}")


if __name__ == "__main__":
    main()
