"""What a change to the linter changes in its findings on the judged sets.

    python benchmarks/lint_fixes/diff_findings.py --base /tmp/base/src [--sets dev,heldout1]
        [--preview] [--select ALL] [--show 40]

Lints every materialised set (``corpus.py --csv NAME.csv --out FOLDER``; the folder given by
``judge.py``'s table, or ``--folder NAME=PATH``) twice, with the sources under ``--base``
and with this tree's (``PYTHONPATH`` decides which ``tfperf`` each child imports), and prints
per set and per rule the findings only one side has, each with its ledger verdict when a
ledger judged it. Moving a rule onto the project model should print nothing; a new rule or
a new reach prints what is new, to be judged (``judge.py pending``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

from corpus import read_corpus
from judge import SETS, _key, set_ledger
from sample import pointer

HERE = Path(__file__).resolve().parent
TREE = HERE.parents[1] / "src"


def lint(folder: Path, src: Path, extra: list[str]) -> list[dict]:
    env = dict(os.environ, PYTHONPATH=str(src))
    out = subprocess.run([sys.executable, "-m", "tfperf", "lint", "--format", "json",
                          "--no-cache", *extra, str(folder)],
                         capture_output=True, text=True, env=env)
    if out.returncode not in (0, 1):
        raise SystemExit(f"tfperf lint failed ({out.returncode}): {out.stderr.strip()[-800:]}")
    return [f for f in json.loads(out.stdout or "[]") if f["code"] != "TFP000"]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--base", type=Path, required=True, help="the other tree's src folder")
    p.add_argument("--sets", default="dev,heldout1,heldout2,heldout3,heldout5,heldout6,"
                                     "heldout7,heldout8,heldout9,heldout10")
    p.add_argument("--folder", action="append", default=[], help="NAME=PATH of a set")
    p.add_argument("--preview", action="store_true")
    p.add_argument("--select", default="")
    p.add_argument("--show", type=int, default=40, help="findings listed per set")
    args = p.parse_args()
    folders = dict(f.split("=", 1) for f in args.folder)
    extra = (["--preview"] if args.preview else []) + \
        (["--select", args.select] if args.select else [])
    total = Counter()
    for name in args.sets.split(","):
        csv_path, _, default = SETS[name]
        folder = Path(folders.get(name, default))
        if not folder.is_dir():
            print(f"{name}: {folder} not materialised, skipped")
            continue
        repos = {r.folder: (r.repo, r.commit) for r in read_corpus(csv_path)}
        ledger = set_ledger(name)
        sides = {}
        for side, src in (("base", args.base), ("new", TREE)):
            found = lint(folder, src, extra)
            sides[side] = {(f["code"], f["path"], f.get("cell"), f.get("line"), f["message"]): f
                           for f in found}
        gone = sides["base"].keys() - sides["new"].keys()
        came = sides["new"].keys() - sides["base"].keys()
        per = Counter((k[0], "-") for k in gone) + Counter((k[0], "+") for k in came)
        total.update(per)
        print(f"== {name}: {len(sides['base'])} → {len(sides['new'])} findings, "
              f"{len(gone)} gone, {len(came)} new "
              + " ".join(f"{c}{s}{n}" for (c, s), n in sorted(per.items())))
        for sign, keys, side in (("-", gone, "base"), ("+", came, "new")):
            for k in sorted(keys, key=lambda k: (k[1], k[2] or 0, k[3] or 0))[:args.show]:
                f = sides[side][k]
                verdict = ledger.get(_key(pointer(dict(f), folder, repos)), {}).get("verdict",
                                                                                 "unjudged")
                where = os.path.relpath(f["path"], folder)
                cell = f" cell {f['cell']}" if f.get("cell") else ""
                print(f"  {sign} {f['code']} {where}{cell}:{f.get('line')} [{verdict}] "
                      f"{f['message'][:110]}")
    print("all sets: " + " ".join(f"{c}{s}{n}" for (c, s), n in sorted(total.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
