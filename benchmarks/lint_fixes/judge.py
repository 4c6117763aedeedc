"""Judge what `tfperf lint` prints by default on the user corpus, and sum it per rule.

    python benchmarks/lint_fixes/judge.py pending [--set dev|heldout2] [--corpus DIR]
        [--context 4] [--code TFP101]
    python benchmarks/lint_fixes/judge.py score [--set dev|heldout2] [--corpus DIR] [--write]
    python benchmarks/lint_fixes/judge.py sample [--n 150] [--seed 18]   # → precision.csv

The ledger ``judged.csv`` holds one verdict per finding ever judged, keyed by where it is
(repo, path, cell, line, column, code) at the corpus's pinned commits, with the flagged line's text
to catch a moved line: true (the pattern is there and, when the code runs, costs what the
message says), minor (true but minor: one-off setup, a 3-iteration loop, a teaching demo) or
false, and a one-line reason. Rules change; the ledger does not need to: a finding that
disappears drops out of the figures, a new one shows up in ``pending`` to be judged.

``pending`` prints each unjudged default finding with its surrounding lines (append the
verdicts to judged.csv, one row per place, the flagged line's text in ``text``).
``score`` joins today's default output with the ledger: per rule,
judged true/minor/false and unjudged; every finding is judged (a census, not a sample, while
the default output is this small; sample.py draws a sample when it is not). ``--write``
stores the per-rule figures in the package (src/tfperf/lint/precision.json), which
``tfperf rule CODE`` shows and docs/lint.md quotes. TFP000 (a cell or file Python cannot
parse) is scored by notebook_oracle.py, not here.

``--set`` picks the code judged: ``dev`` (corpus.csv, ledger judged.csv; the rules were tuned
on it), ``heldout1`` (heldout1.csv, ledger heldout_judged.csv) or ``heldout2`` (heldout2.csv,
ledger heldout2_judged.csv): code judged before any rule was changed for it; materialise one
with ``corpus.py --csv heldout2.csv --out /tmp/tfperf-heldout2``. ``library``, ``rare``
(rare.csv: user-style code searched out for the default rules that had fired at most once),
``rare2`` (rare2.csv: the same for the default rules still under 5 judged findings, and
TFP308), ``rare3`` (rare3.csv: TF1 code for the preview rules TFP706 and TFP707),
``rare4`` (rare4.csv: the preview rules TFP206, TFP601, TFP308) and ``rare5`` (rare5.csv:
fresh TF1 queue pipelines, heavy and light, for the narrowed TFP706) are linted only with
the rules they were gathered for and stored apart. ``score`` on a held-out set prints
today's figures (findings a fix removed drop out) and the as-judged ones.
``score --write`` (with the dev set) stores per rule the development figures and, apart, the
held-out ones as judged, so ``tfperf rule CODE`` can show both.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path

import preview_figures
from corpus import DEFAULT_OUT as DEFAULT_CORPUS
from corpus import read_corpus
from fixset import HERE
from sample import lint_corpus, pointer

LEDGER = HERE / "judged.csv"
HELDOUT1 = HERE / "heldout_judged.csv"  # round 1 (heldout1.csv pins its four repositories)


def _pinned_set(name: str) -> tuple[Path, Path, Path]:
    """A set declared the usual way: ``NAME.csv``, its ledger ``NAME_judged.csv``, and the
    folder ``corpus.py --csv NAME.csv`` writes to, ``/tmp/tfperf-NAME``."""
    return HERE / f"{name}.csv", HERE / f"{name}_judged.csv", Path(f"/tmp/tfperf-{name}")


SETS = {  # name -> (corpus csv, ledger, default folder)
    "dev": (HERE / "corpus.csv", LEDGER, DEFAULT_CORPUS),
    "heldout1": (HERE / "heldout1.csv", HELDOUT1, Path("/tmp/tfperf-heldout1")),
    **{name: _pinned_set(name)
       for name in ("heldout2", "heldout3", "heldout5", "heldout6", "heldout7", "heldout8",
                    "heldout9", "heldout10")},
    # Library code, linted only with the rules that never fired on user code (--select):
    # evidence for those rules, kept out of the user-style figures.
    "library": _pinned_set("library"),
    # User-style code picked because it holds the shapes of the default rules that had fired
    # at most once on the 61 repositories above, linted only with those rules (RARE_RULES):
    # evidence for them, kept out of the figures on code drawn without looking at the rules.
    "rare": _pinned_set("rare"),
    # Round 2 of the same (RARE2_RULES: default rules still under 5 judged findings on user
    # code, and TFP308). Its ledger also holds, with a `set` column, the findings of those
    # rules on the rare and candidates sets that no other ledger judged.
    "rare2": _pinned_set("rare2"),
    # Round 3: TF1 code picked for the two preview rules with no judged finding on user code
    # (RARE3_RULES); its ledger also holds their findings on every other set (`set` column).
    "rare3": _pinned_set("rare3"),
    # Round 4: the preview rules TFP206, TFP601 and TFP308 (RARE4_RULES); its ledger also
    # holds their unjudged findings on heldout8 and candidates (`set` column).
    "rare4": _pinned_set("rare4"),
    # Round 5: fresh TF1 queue pipelines (heavy and light, picked before linting) for TFP706
    # as narrowed after round 3: code the narrowing was not fitted to.
    "rare5": _pinned_set("rare5"),
}
LIBRARY_RULES = ("TFP105", "TFP301", "TFP302", "TFP305", "TFP402", "TFP403", "TFP404",
                 "TFP406", "TFP702")
RARE_RULES = ("TFP105", "TFP301", "TFP305", "TFP402", "TFP404", "TFP702")
RARE2_RULES = ("TFP102", "TFP205", "TFP301", "TFP307", "TFP308", "TFP403", "TFP406", "TFP407",
               "TFP606")
RARE3_RULES = ("TFP706", "TFP707")
RARE4_RULES = ("TFP206", "TFP601", "TFP308")
RARE5_RULES = ("TFP706",)
PICKED_RULES = {"library": LIBRARY_RULES, "rare": RARE_RULES, "rare2": RARE2_RULES,
                "rare3": RARE3_RULES, "rare4": RARE4_RULES, "rare5": RARE5_RULES}
PACKAGE_DATA = HERE.parents[1] / "src" / "tfperf" / "lint" / "precision.json"
COLUMNS = ["repo", "path", "cell", "line", "column", "code", "text", "verdict", "reason"]
VERDICTS = ("true", "minor", "false")


def _key(row: dict) -> tuple[str, ...]:
    return (row["repo"], row["path"], str(row.get("cell") or ""), str(row["line"]),
            str(row.get("column", "")), row["code"])


def read_ledger(path: Path = LEDGER) -> dict[tuple, dict]:
    if not path.exists():
        return {}
    with path.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    bad = [r for r in rows if r["verdict"] not in VERDICTS]
    if bad:
        raise SystemExit(f"{path}: verdict must be one of {VERDICTS}: {bad[0]}")
    return {_key(r): r for r in rows}


def set_ledger(name: str) -> dict[tuple, dict]:
    """The verdicts on set ``name``'s findings: its own ledger, and the rows of the picked
    rounds' ledgers whose ``set`` column names it (rare3 judged TFP706's findings on the
    development and held-out sets while the rule was in preview)."""
    ledger = read_ledger(SETS[name][1])
    for other in PICKED_RULES:
        if other == name:
            continue
        for key, row in read_ledger(SETS[other][1]).items():
            if row.get("set") == name:
                ledger.setdefault(key, row)
    return ledger


def _source_lines(corpus: Path, f: dict) -> list[str]:
    """The lines the finding's position counts in: the file, or the notebook cell."""
    path = Path(f["path"])
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix != ".ipynb":
        return text.splitlines()
    cells = json.loads(text).get("cells", [])
    cell = cells[int(f["cell"]) - 1] if f.get("cell") else {"source": ""}
    src = cell.get("source", "")
    return ("".join(src) if isinstance(src, list) else src).splitlines()


def _findings(corpus: Path, python: str, csv_path: Path = SETS["dev"][0],
              rules: tuple[str, ...] = ()) -> list[tuple[dict, dict, list[str]]]:
    repos = {r.folder: (r.repo, r.commit) for r in read_corpus(csv_path)}
    select = rules or {SETS[name][0]: rules for name, rules in PICKED_RULES.items()}.get(
        csv_path, ())
    out = []
    for f in lint_corpus(corpus, python, select):
        if f["code"] == "TFP000":
            continue
        p = pointer(f, corpus, repos)
        lines = _source_lines(corpus, f)
        line = int(f.get("line") or 0)
        p["text"] = lines[line - 1].strip() if 0 < line <= len(lines) else ""
        out.append((f, p, lines))
    return out


def _set(args: argparse.Namespace) -> tuple[Path, Path, Path]:
    csv_path, ledger, folder = SETS[args.set]
    return csv_path, ledger, args.corpus or folder


def pending(args: argparse.Namespace) -> int:
    csv_path, _, corpus = _set(args)
    ledger = set_ledger(args.set)
    rules = tuple(args.rules.split(",")) if args.rules else ()
    todo = [(f, p, lines) for f, p, lines in _findings(corpus, args.python, csv_path, rules)
            if _key(p) not in ledger and (not args.code or p["code"] in args.code)]
    for f, p, lines in todo:
        line = int(p["line"] or 0)
        where = f"{p['repo']} {p['path']}" + (f" cell {p['cell']}" if p["cell"] else "")
        print(f"=== {p['code']} {where}:{line}:{p['column']}  {f['message']}")
        lo, hi = max(1, line - args.context), min(len(lines), line + args.context)
        for i in range(lo, hi + 1):
            print(f"{'>' if i == line else ' '}{i:5d} {lines[i - 1]}")
    print(f"{len(todo)} unjudged", file=sys.stderr)
    return 0


def tally(corpus: Path, csv_path: Path, ledger: dict[tuple, dict], python: str,
          moved: list | None = None) -> dict[str, Counter]:
    """Today's default output on ``corpus`` joined with ``ledger`` (:func:`set_ledger`): per
    rule, the verdicts of the findings still printed, and how many are unjudged."""
    per: dict[str, Counter] = defaultdict(Counter)
    for _f, p, _lines in _findings(corpus, python, csv_path):
        row = ledger.get(_key(p))
        if row is None:
            per[p["code"]]["unjudged"] += 1
            continue
        if moved is not None and row.get("text", p["text"]) != p["text"]:
            moved.append(p)
        per[p["code"]][row["verdict"]] += 1
    return per


PICKED_FOLDERS = {"candidates": _pinned_set("candidates")[::2]}  # (csv, folder): no ledger


def picked_now(name: str, python: str, user_only: bool = False) -> dict[str, Counter] | None:
    """The verdicts in set ``name``'s ledger (``rare2``) of the findings its rules still print
    today, on every set its ``set`` column names (rare2 itself, rare, candidates); ``None``
    when one of those folders is not materialised. ``user_only``: library rows left out."""
    ledger_path = SETS[name][1]
    ledger = read_ledger(ledger_path)
    keys: set[tuple] = set()
    if user_only:
        ledger = {k: r for k, r in ledger.items() if r.get("set") != "library"}
    for where in sorted({r.get("set") or name for r in ledger.values()}):
        where_csv, folder = SETS[where][::2] if where in SETS else PICKED_FOLDERS[where]
        if not folder.is_dir():
            return None
        repos = {r.folder: (r.repo, r.commit) for r in read_corpus(where_csv)}
        for f in lint_corpus(folder, python, PICKED_RULES[name]):
            if f["code"] != "TFP000":
                keys.add(_key(pointer(f, folder, repos)))
    per: dict[str, Counter] = defaultdict(Counter)
    for key, row in ledger.items():
        if key in keys:
            per[row["code"]][row["verdict"]] += 1
    return per


def as_judged(ledger_path: Path, user_only: bool = False) -> dict[str, Counter]:
    """Per rule, every verdict in a ledger, whether or not the rule still prints it
    (``user_only``: rows whose ``set`` is library left out, their figures kept apart)."""
    per: dict[str, Counter] = defaultdict(Counter)
    for row in read_ledger(ledger_path).values():
        if user_only and row.get("set") == "library":
            continue
        per[row["code"]][row["verdict"]] += 1
    return per


def print_table(per: dict[str, Counter], title: str) -> Counter:
    print(title)
    total: Counter = Counter()
    print(f"{'code':<8}{'printed':>8}{'true':>6}{'minor':>6}{'false':>6}{'unjudged':>9}"
          f"{'precision':>11}")
    for code in sorted(per):
        c = per[code]
        total.update(c)
        n = c["true"] + c["minor"] + c["false"]
        prec = f"{(c['true'] + c['minor']) / n:.0%}" if n else "-"
        print(f"{code:<8}{sum(c.values()):>8}{c['true']:>6}{c['minor']:>6}{c['false']:>6}"
              f"{c['unjudged']:>9}{prec:>11}")
    n = total["true"] + total["minor"] + total["false"]
    if n:
        print(f"{'all':<8}{sum(total.values()):>8}{total['true']:>6}{total['minor']:>6}"
              f"{total['false']:>6}{total['unjudged']:>9}"
              f"{(total['true'] + total['minor']) / n:>11.1%}"
              f"   strictly true {total['true'] / n:.1%}")
    return total


def _counts(per: dict[str, Counter]) -> dict[str, dict[str, int]]:
    return {code: {k: per[code][k] for k in VERDICTS} for code in sorted(per)
            if sum(per[code][k] for k in VERDICTS)}


def score(args: argparse.Namespace) -> int:
    csv_path, ledger_path, corpus = _set(args)
    moved: list = []
    per = tally(corpus, csv_path, set_ledger(args.set), args.python, moved)
    rules = PICKED_RULES.get(args.set)
    what = ("only " + ",".join(rules) if rules else "today's default output")
    total = print_table(per, f"{args.set}: {what}, joined with {ledger_path.name}")
    for p in moved:
        print(f"warning: the flagged line changed since it was judged: {_key(p)}",
              file=sys.stderr)
    if args.set != "dev":
        print_table(as_judged(ledger_path), f"\n{args.set}: as judged (before its fixes)")
    if args.write:
        if args.set != "dev":
            raise SystemExit("--write needs --set dev (it reads every held-out set itself)")
        write_package_data(per, args.python)
    return 1 if total["unjudged"] else 0


def _kept_if_missing(old: dict, key: str, compute: Callable[[], dict]) -> dict:
    """A section of precision.json computed anew; where the picked sets it relints are not
    materialised here, what the file held (its "now" figures too), with a note."""
    try:
        new = compute()
    except SystemExit as exc:  # a folder missing
        print(f"{key}: kept as it was ({exc})", file=sys.stderr)
        return old.get(key, {})
    if "now" in old.get(key, {}) and "now" not in new:
        print(f"{key}: its folders are not materialised: 'now' kept as it was",
              file=sys.stderr)
        new["now"] = old[key]["now"]
    return new


def _picked_section(name: str, what: str, rest: str, python: str,
                    user_only: bool = False) -> dict:
    """precision.json's section for a picked round: its corpus in words, every verdict of its
    ledger, and (when its folders are materialised) those of findings its rules still print."""
    now = picked_now(name, python, user_only)
    return {"corpus": f"{what} ({len(read_corpus(SETS[name][0]))} repositories: {name}.csv)"
                      f"{rest}",
            "judged": _counts(as_judged(SETS[name][1], user_only=user_only)),
            **({"now": _counts(now)} if now is not None else {})}


def write_package_data(dev: dict[str, Counter], python: str) -> None:
    """precision.json: per rule, the development figures (today's output on the corpus the
    rules were tuned on) and the held-out ones, both as judged before any rule was changed
    for that code and today (findings a fix removed drop out), summed over the held-out
    sets. Every set must be materialised (corpus.py --csv ... --out ...)."""
    held = [name for name in SETS if name.startswith("heldout")]  # not library/rare: picked code
    old = json.loads(PACKAGE_DATA.read_text(encoding="utf-8")) if PACKAGE_DATA.exists() else {}
    before: dict[str, Counter] = defaultdict(Counter)
    now: dict[str, Counter] = defaultdict(Counter)
    repos = 0
    for name in held:
        csv_path, ledger_path, folder = SETS[name]
        if not folder.is_dir():
            raise SystemExit(f"{folder} is missing: corpus.py --csv {csv_path.name} "
                             f"--out {folder}")
        repos += len(read_corpus(csv_path))
        for code, c in as_judged(ledger_path).items():
            before[code].update(c)
        for code, c in tally(folder, csv_path, set_ledger(name), python).items():
            now[code].update(c)
    data = {"corpus": f"the user-style corpus ({len(read_corpus())} repositories, "
                      "benchmarks/lint_fixes/corpus.csv)",
            "method": "every finding of the default rule set judged (judge.py)",
            "rules": _counts(dev),
            "heldout": {
                "corpus": f"held-out code ({repos} repositories: "
                          + ", ".join(SETS[n][0].name for n in held) + ")",
                "method": "every default finding judged before any rule was changed for "
                          "that code; 'now': the findings today's rules still print",
                "judged": _counts(before),
                "now": _counts(now)},
            "library": {
                "corpus": f"library code ({len(read_corpus(SETS['library'][0]))} "
                          "repositories: library.csv), linted only with the rules that never "
                          "fired on user code",
                "judged": _counts(as_judged(SETS["library"][1]))},
            "rare": {
                "corpus": f"user-style code picked for the rarely firing default rules "
                          f"({len(read_corpus(SETS['rare'][0]))} repositories: rare.csv), "
                          "linted only with those rules",
                "judged": _counts(as_judged(SETS["rare"][1]))},
            "rare2": _kept_if_missing(old, "rare2", lambda: _picked_section(
                "rare2", "user-style code picked for the default rules still under 5 judged "
                "findings", " and the rare and candidates sets, linted only with those rules",
                python)),
            "rare3": _kept_if_missing(old, "rare3", lambda: _picked_section(
                "rare3", "TF1 user-style code picked for TFP706 and TFP707",
                " and their findings on every other set, linted only with those rules",
                python, user_only=True)),
            "rare4": _kept_if_missing(old, "rare4", lambda: _picked_section(
                "rare4", "user-style code picked for the preview rules TFP206, TFP601 and "
                "TFP308", " and their unjudged findings on heldout8 and candidates, linted only "
                "with those rules", python)),
            "rare5": _kept_if_missing(old, "rare5", lambda: _picked_section(
                "rare5", "fresh TF1 user-style queue pipelines, heavy and light, picked before "
                "linting", ", linted only with TFP706 as narrowed after round 3", python,
                user_only=True)),
            "alone": _kept_if_missing(old, "alone",
                                      lambda: preview_figures.package_figures(python))}
    PACKAGE_DATA.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n",
                            encoding="utf-8")
    print(f"wrote {PACKAGE_DATA}")


USER_SETS = ("dev", *(name for name in SETS if name.startswith("heldout")))
SAMPLE = HERE / "precision.csv"
SAMPLE_COLUMNS = ["id", "set", "repo", "commit", "path", "cell", "line", "column", "code",
                  "text", "verdict", "reason"]


def sample(args: argparse.Namespace) -> int:
    """precision.csv: issue 18's sample, drawn from today's default output on the
    user-style sets (development and held-out), ``--n`` at random in proportion to how
    often each rule fires, every rule topped up to 5 (all of its findings when it has
    fewer), each with the verdict and reason its set's ledger holds. Every default finding
    is judged (a census), so the sample's figures are a draw from it, seeded."""
    from sample import draw

    pool: list[dict] = []
    for name in USER_SETS:
        csv_path, _, folder = SETS[name]
        if not folder.is_dir():
            print(f"{folder} is missing: corpus.py --csv {csv_path.name} --out {folder}",
                  file=sys.stderr)
            return 2
        ledger = set_ledger(name)
        for f, p, _ in _findings(folder, args.python, csv_path):
            row = ledger.get(_key(p))
            if row is None:
                print(f"unjudged: {name} {p['repo']} {p['path']}:{p['line']} {p['code']} "
                      f"(judge.py pending --set {name})", file=sys.stderr)
                return 1
            pool.append({**f, "_row": {**p, "set": name, "verdict": row["verdict"],
                                       "reason": row["reason"]}})
    picked = draw(pool, args.n, 5, args.seed)
    with SAMPLE.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, SAMPLE_COLUMNS, extrasaction="ignore", lineterminator="\n")
        w.writeheader()
        for i, f in enumerate(picked, start=1):
            w.writerow({"id": f"P{i:03d}", **f["_row"]})
    per: dict[str, Counter] = defaultdict(Counter)
    for f in picked:
        per[f["code"]][f["_row"]["verdict"]] += 1
    print(f"{len(pool)} default findings on {', '.join(USER_SETS)}; {len(picked)} drawn "
          f"(seed {args.seed}) into {SAMPLE.name}")
    print_table(per, "the sample, as judged")
    return 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("what", choices=["pending", "score", "sample"])
    p.add_argument("--n", type=int, default=150, help="sample: findings drawn in proportion")
    p.add_argument("--seed", type=int, default=18, help="sample: the draw's seed")
    p.add_argument("--set", choices=sorted(SETS), default="dev")
    p.add_argument("--corpus", type=Path, help="the materialised set (default per --set)")
    p.add_argument("--python", default=sys.executable, help="interpreter that has tfperf")
    p.add_argument("--context", type=int, default=4)
    p.add_argument("--code", action="append", help="only this rule (repeatable)")
    p.add_argument("--rules", default="", help="pending: lint with only these codes "
                   "(comma-separated; exact codes reach preview rules) instead of the default")
    p.add_argument("--write", action="store_true", help="write the package's precision.json")
    args = p.parse_args()
    if args.what == "sample":
        return sample(args)
    corpus = _set(args)[2]
    if not corpus.is_dir():
        print(f"{corpus} is missing: run corpus.py first", file=sys.stderr)
        return 2
    return pending(args) if args.what == "pending" else score(args)


if __name__ == "__main__":
    sys.exit(main())
