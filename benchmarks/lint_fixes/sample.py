"""Draw the precision sample: findings `tfperf lint` prints by default on the user corpus.

    python benchmarks/lint_fixes/sample.py [--corpus /tmp/tfperf-corpus] [--n 150]
        [--min-per-rule 5] [--seed 18] [--out benchmarks/lint_fixes/precision.csv]

Runs `python -m tfperf lint --format json --no-cache CORPUS` (the default rule set, no
--select), then draws --n findings at random (fixed seed) in proportion to how often each
code fires (largest remainders), and tops every code up to --min-per-rule (all of its
findings when it has fewer). Writes pointers only (repo, commit, path, line, cell, code,
message) with empty `verdict` and `reason` columns to judge: true, true-but-minor or false.
A file that already holds a verdict is never overwritten (use another --out).
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

from corpus import DEFAULT_OUT as DEFAULT_CORPUS
from corpus import read_corpus
from fixset import HERE

COLUMNS = ["id", "repo", "commit", "path", "line", "cell", "column", "code", "message",
           "verdict", "reason"]


def lint_corpus(corpus: Path, python: str, select: tuple[str, ...] = ()) -> list[dict]:
    """The default rule set's findings on ``corpus`` (or only ``select``'s rules)."""
    extra = ["--select", ",".join(select)] if select else []
    out = subprocess.run([python, "-m", "tfperf", "lint", "--format", "json", "--no-cache",
                          *extra, str(corpus)], capture_output=True, text=True)
    if out.returncode not in (0, 1):
        raise SystemExit(f"tfperf lint failed ({out.returncode}): {out.stderr.strip()[-800:]}")
    return json.loads(out.stdout or "[]")


def allocate(counts: Counter, n: int, minimum: int) -> dict[str, int]:
    """Proportional shares of n (largest remainders), then each code topped up to minimum."""
    total = sum(counts.values())
    if not total:
        return {}
    share = {c: n * k // total for c, k in counts.items()}  # integers: exact, no float ties
    left = n - sum(share.values())
    for c in sorted(counts, key=lambda c: (-(n * counts[c] % total), c))[:left]:
        share[c] += 1
    return {c: min(counts[c], max(share[c], minimum)) for c in sorted(counts)}


def draw(findings: list[dict], n: int, minimum: int, seed: int) -> list[dict]:
    by_code: dict[str, list[dict]] = defaultdict(list)
    key = lambda f: (f["path"], f.get("cell") or 0, f.get("line") or 0,  # noqa: E731
                     f.get("column") or 0, f["code"], f["message"])
    for f in sorted(findings, key=key):
        by_code[f["code"]].append(f)
    shares = allocate(Counter({c: len(v) for c, v in by_code.items()}), n, minimum)
    rng = random.Random(seed)
    picked = []
    for code in sorted(shares):
        picked.extend(rng.sample(by_code[code], shares[code]))
    return sorted(picked, key=key)


def pointer(f: dict, corpus: Path, repos: dict[str, tuple[str, str]]) -> dict:
    rel = Path(f["path"]).resolve().relative_to(corpus.resolve())
    folder, inner = rel.parts[0], Path(*rel.parts[1:]).as_posix()
    repo, commit = repos.get(folder, (folder, ""))
    return {"repo": repo, "commit": commit, "path": inner, "line": f.get("line") or "",
            "cell": f.get("cell") or "", "column": f.get("column") if f.get("column") is not None
            else "", "code": f["code"], "message": f["message"], "verdict": "", "reason": ""}


def has_verdicts(path: Path) -> bool:
    if not path.exists():
        return False
    with path.open(newline="", encoding="utf-8") as fh:
        return any((r.get("verdict") or "").strip() for r in csv.DictReader(fh))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    p.add_argument("--n", type=int, default=150)
    p.add_argument("--min-per-rule", type=int, default=5)
    p.add_argument("--seed", type=int, default=18)
    p.add_argument("--python", default=sys.executable, help="interpreter that has tfperf")
    p.add_argument("--out", type=Path, default=HERE / "precision.csv")
    args = p.parse_args()
    if not args.corpus.is_dir():
        print(f"{args.corpus} is missing: run corpus.py first", file=sys.stderr)
        return 2
    if has_verdicts(args.out):
        print(f"{args.out} already holds verdicts; not overwritten (choose another --out)",
              file=sys.stderr)
        return 2
    repos = {r.folder: (r.repo, r.commit) for r in read_corpus()}
    findings = lint_corpus(args.corpus, args.python)
    counts = Counter(f["code"] for f in findings)
    picked = draw(findings, args.n, args.min_per_rule, args.seed)
    with args.out.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, COLUMNS, lineterminator="\n")
        w.writeheader()
        for i, f in enumerate(picked, start=1):
            w.writerow({"id": f"P{i:03d}", **pointer(f, args.corpus, repos)})
    drawn = Counter(f["code"] for f in picked)
    print(f"{len(findings)} findings by default on {args.corpus}; {len(picked)} drawn "
          f"(seed {args.seed}) into {args.out}")
    print(f"{'code':<8}{'findings':>10}{'drawn':>8}")
    for code in sorted(counts, key=lambda c: (-counts[c], c)):
        print(f"{code:<8}{counts[code]:>10}{drawn[code]:>8}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
