"""Score `tfperf lint` on the development set of real fixes (fixes.csv).

    python benchmarks/lint_fixes/score.py [--mirror /work/.mirror] [--out /tmp/tfperf-fixes]
        [--json results.json] [--rows] [--context 0]

Runs the CLI (`python -m tfperf lint --format json --no-cache FILES...`) three times over every
materialised before/after file: with the default rule set, with `--select ALL`, and with
`--select ALL --preview` (what the rules still in preview would add).
Each file is linted at the TensorFlow its code targeted (`--tf-version`): the row's
`tf_version` (its `after_tf_version` for the after file when the fix changed the pin), one
invocation per version. Where the row's `tf_version_source` names an open requirement
(`setup.py: tensorflow>=2.1.0`), the file is linted at that range (`--tf-version '>=2.1.0'`), as
`tfperf lint` reads the project's pin: its oldest release first, and what newer releases do
for the rules that ask (TFP403: a solve that broadcasts from 2.2). The materialised files carry
no pin of their own, so without it every row would be linted at the installed TF;
`--tf-version X.Y` lints every row at X.Y instead.
For each row:
  * hit       a rule code has a finding inside the changed lines of the before file and no
              finding inside the changed lines of the after file (a finding is inside when its
              line..end_line overlaps a changed range, widened by --context lines);
  * flagged   the row expects the after file to be clean there (after_expect = clean) and
              some code still fires inside its changed lines.
TFP000 (file or cell not parsed) never counts; rows whose files do not parse are reported.
Prints recall per kind and overall, and the share of clean after-files flagged.

`--mode project` (or `both`) lints each row's changed files inside their repository at both
commits (tfperf models them with the modules they import and that import them;
`--whole-tree`: the whole repository linted) and credits a finding on the changed lines of
any file of the fix's diff (project_score.py): a cause that only a caller reveals; and a
finding at a use of a function the fix changed, in any file that spells its name, whose
message names that function and which the fix made go (printed apart as "credited only at a
caller"; file mode is unchanged).
`--src DIR` lints with the tfperf under DIR (another tree's `src`), put first on the
subprocess's PYTHONPATH; the subprocess runs in a scratch folder so neither this tree nor
the linted code can shadow it. The output's first line names the tfperf used.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from fixset import DEFAULT_MIRROR, FIXES_CSV, FixRow, Span, parse_ranges, read_fixes
from materialize import DEFAULT_OUT, materialize, missing_repos
from project_score import MAX_BYTES, MAX_FILES, ProjectRowScore, score_project

RULE_SETS = {"default": [], "ALL": ["--select", "ALL"],
             "ALL+preview": ["--select", "ALL", "--preview"]}
PARSE_ERROR = "TFP000"


@dataclass
class Side:
    codes: set[str] = field(default_factory=set)
    parse_error: bool = False


@dataclass
class RowScore:
    row: FixRow
    before: Side
    after: Side

    @property
    def hit_codes(self) -> list[str]:
        return sorted(self.before.codes - self.after.codes)

    @property
    def hit(self) -> bool:
        return bool(self.hit_codes)

    @property
    def flagged(self) -> bool:
        return self.row.expect_clean and bool(self.after.codes)


# The tfperf the lint subprocess imports: --src puts a tree's src first on PYTHONPATH.
LINT_ENV: dict[str, str] = dict(os.environ)
SCRATCH = Path(tempfile.gettempdir())


def use_src(src: Path) -> None:
    if not (src / "tfperf" / "__init__.py").is_file():
        raise SystemExit(f"--src {src}: no tfperf package there (want a tree's src folder)")
    path = [str(src.resolve()), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    LINT_ENV["PYTHONPATH"] = os.pathsep.join(path)


def tfperf_used(python: str) -> str:
    out = subprocess.run([python, "-c", "import tfperf; print(tfperf.__file__)"],
                         capture_output=True, text=True, env=LINT_ENV, cwd=SCRATCH)
    return out.stdout.strip() or f"none ({out.stderr.strip()[-200:]})"


def run_lint(files: list[Path], extra: list[str], python: str,
             tf_version: str = "") -> list[dict]:
    target = ["--tf-version", tf_version] if tf_version else []
    cmd = [python, "-m", "tfperf", "lint", "--format", "json", "--no-cache", *extra, *target,
           *(str(f.resolve()) for f in files)]
    out = subprocess.run(cmd, capture_output=True, text=True, env=LINT_ENV, cwd=SCRATCH)
    if out.returncode not in (0, 1):
        raise SystemExit(f"tfperf lint failed ({out.returncode}): {out.stderr.strip()[-800:]}")
    return json.loads(out.stdout or "[]")


def _overlaps(spans: list[Span], cell: int | None, line: int, end: int, context: int) -> bool:
    return any((c or 0) == (cell or 0) and line <= b + context and end >= a - context
               for c, a, b in spans)


def side_score(findings: list[dict], spans: list[Span], context: int) -> Side:
    side = Side()
    for f in findings:
        if f["code"] == PARSE_ERROR:
            side.parse_error = True
            continue
        line = f.get("line")
        if line is None:
            continue
        end = f.get("end_line") or line
        if _overlaps(spans, f.get("cell"), line, end, context):
            side.codes.add(f["code"])
    return side


# `tensorflow>=2.1.0`, `TensorFlow >= 1.6`, `tensorflow>=2.0.0, <2.1.0` at the head of a
# row's tf_version_source (before any parenthesis, which names other evidence).
_PIN_SPEC = re.compile(r"tensorflow[-\w]*\s*((?:(?:==|~=|>=|<=|<|>)\s*[\w.*-]+\s*,?\s*)+)",
                       re.IGNORECASE)
_OPEN = re.compile(r"(~=|>=|>)\s*(\d+)\.(\d+)")


def target_setting(row: FixRow, side: str) -> str:
    """The ``--tf-version`` for ``side``: the row's X.Y, or the range its source names when
    that is an open requirement whose lowest release is the row's (``>=2.1.0``)."""
    v = row.target(side)
    if not v or (side == "after" and row.after_tf_version):
        return v
    head = row.tf_version_source.split(":", 1)[-1].split("(", 1)[0]
    m = _PIN_SPEC.search(head)
    if m is None:
        return v
    spec = re.sub(r"\s+", "", m.group(1)).rstrip(",")
    lows = [(int(a), int(b)) for _, a, b in _OPEN.findall(spec)]
    if not lows or "==" in spec or f"{min(lows)[0]}.{min(lows)[1]}" != v:
        return v
    return spec


def files_by_version(rows: list[FixRow], out: Path, manifest: dict,
                     tf_version: str | None = None) -> dict[str, list[Path]]:
    """The materialised files grouped by the TF version each is linted at: the row's target
    for that side (:meth:`FixRow.target`), or ``tf_version`` for every file when given ("" =
    no ``--tf-version``: the linter's own resolution, the installed TF here)."""
    version_of: dict[Path, str] = {}
    for r in rows:
        for side in ("before", "after"):
            path = out / manifest[r.id][side]
            v = target_setting(r, side) if tf_version is None else tf_version
            if version_of.setdefault(path, v) != v:
                raise ValueError(f"{path}: linted at both {version_of[path]} and {v}")
    groups: dict[str, list[Path]] = defaultdict(list)
    for path, v in sorted(version_of.items()):
        groups[v].append(path)
    return dict(groups)


def score(rows: list[FixRow], out: Path, manifest: dict, extra: list[str], python: str,
          context: int, tf_version: str | None = None) -> list[RowScore]:
    by_file: dict[Path, list[dict]] = defaultdict(list)
    for version, files in sorted(files_by_version(rows, out, manifest, tf_version).items()):
        for f in run_lint(files, extra, python, version):
            by_file[Path(f["path"]).resolve()].append(f)
    scores = []
    for r in rows:
        b = side_score(by_file[(out / manifest[r.id]["before"]).resolve()],
                       parse_ranges(r.before_lines), context)
        a = side_score(by_file[(out / manifest[r.id]["after"]).resolve()],
                       parse_ranges(r.after_lines), context)
        scores.append(RowScore(r, b, a))
    return scores


def _pct(n: int, d: int) -> str:
    return f"{n}/{d} ({100 * n / d:.0f} %)" if d else "-"


def summarise(results: Mapping[str, Sequence[RowScore | ProjectRowScore]]) -> dict:
    summary: dict = {}
    for name, scores in results.items():
        kinds: dict[str, list[RowScore | ProjectRowScore]] = defaultdict(list)
        for s in scores:
            kinds[s.row.kind].append(s)
        clean = [s for s in scores if s.row.expect_clean]
        summary[name] = {
            "rows": len(scores),
            "hits": sum(s.hit for s in scores),
            "recall": round(sum(s.hit for s in scores) / len(scores), 4) if scores else None,
            "rows_claim_not_in_doubt": sum(not s.row.claim_in_doubt for s in scores),
            "hits_claim_not_in_doubt": sum(s.hit for s in scores if not s.row.claim_in_doubt),
            "clean_after": len(clean),
            "clean_after_flagged": sum(s.flagged for s in clean),
            "parse_errors": sorted(s.row.id for s in scores
                                   if s.before.parse_error or s.after.parse_error),
            "per_kind": {k: {"rows": len(v), "hits": sum(s.hit for s in v)}
                         for k, v in sorted(kinds.items())},
            "per_row": {s.row.id: {"kind": s.row.kind, "tf_version": s.row.tf_version,
                                   "hit": s.hit, "hit_codes": s.hit_codes,
                                   "before_codes": sorted(s.before.codes),
                                   "after_codes": sorted(s.after.codes),
                                   "flagged": s.flagged}
                        for s in scores},
        }
    return summary


def print_table(summary: dict, show_rows: bool) -> None:
    names = list(summary)
    kinds = sorted({k for n in names for k in summary[n]["per_kind"]})
    width = max(len(k) for k in [*kinds, "overall"]) + 2
    print(f"{'kind':<{width}}" + "".join(f"{n:>16}" for n in names))
    for k in kinds:
        cells = []
        for n in names:
            pk = summary[n]["per_kind"].get(k, {"rows": 0, "hits": 0})
            cells.append(f"{pk['hits']}/{pk['rows']}".rjust(16))
        print(f"{k:<{width}}" + "".join(cells))
    print(f"{'overall recall':<{width}}"
          + "".join(_pct(summary[n]["hits"], summary[n]["rows"]).rjust(16) for n in names))
    print(f"{'claim not in doubt':<{width}}"
          + "".join(_pct(summary[n]["hits_claim_not_in_doubt"],
                         summary[n]["rows_claim_not_in_doubt"]).rjust(16) for n in names))
    print(f"{'clean after flagged':<{width}}"
          + "".join(_pct(summary[n]["clean_after_flagged"], summary[n]["clean_after"]).rjust(16)
                    for n in names))
    errs = sorted({i for n in names for i in summary[n]["parse_errors"]})
    if errs:
        print(f"rows with a file tfperf could not parse (TFP000): {', '.join(errs)}")
    if show_rows:
        print()
        for rid, info in summary[names[-1]]["per_row"].items():
            marks = " ".join(f"{n}:{'HIT' if summary[n]['per_row'][rid]['hit'] else '-'}"
                             for n in names)
            print(f"{rid} {info['kind']:<30} TF {info['tf_version'] or '?':<5} {marks:<22} "
                  f"before={','.join(info['before_codes'])}"
                  f" after={','.join(info['after_codes'])}"
                  + (" FLAGGED" if info["flagged"] else ""))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mirror", type=Path, default=DEFAULT_MIRROR)
    p.add_argument("--out", type=Path, default=DEFAULT_OUT)
    p.add_argument("--csv", type=Path, default=FIXES_CSV)
    p.add_argument("--python", default=sys.executable, help="interpreter that has tfperf")
    p.add_argument("--context", type=int, default=0,
                   help="widen every changed range by N lines (default 0: the hunk itself)")
    p.add_argument("--json", type=Path, help="also write the figures here")
    p.add_argument("--rows", action="store_true", help="print every row's codes")
    p.add_argument("--preview", action="store_true",
                   help="also score --select ALL --preview (the rules still in preview)")
    p.add_argument("--mode", choices=("file", "project", "both"), default="file",
                   help="file: each changed file linted alone (default); project: the diff's "
                        "files linted inside the repository's Python files at each commit "
                        f"(over {MAX_FILES} .py files or {MAX_BYTES >> 20} MiB: the changed "
                        "files alone); both: print each")
    p.add_argument("--whole-tree", action="store_true",
                   help="project mode lints the whole repository, not only the diff's files "
                        "with their project context (slow on large libraries)")
    p.add_argument("--sets", default=",".join(RULE_SETS),
                   help="rule sets to score, comma-separated (default: %(default)s)")
    p.add_argument("--src", type=Path,
                   help="lint with the tfperf in this folder (another tree's src)")
    p.add_argument("--tf-version", metavar="X.Y",
                   help="lint every row at this TF (default: each row's tf_version, the TF "
                        "its code targeted; 'installed': no --tf-version, the installed TF)")
    args = p.parse_args()
    rows = read_fixes(args.csv)
    missing = missing_repos(rows, args.mirror)
    if missing:
        print("not fetched: " + ", ".join(missing) + " (run materialize.py for the fetch list)",
              file=sys.stderr)
        return 2
    if args.src:
        use_src(args.src)
    all_sets = {**RULE_SETS, "preview": [*RULE_SETS["ALL"], "--preview"]}
    names = [n.strip() for n in args.sets.split(",") if n.strip()]
    if args.preview and "preview" not in names:
        names.append("preview")
    unknown = [n for n in names if n not in all_sets]
    if unknown or not names:
        print(f"--sets: unknown {unknown} (know {', '.join(all_sets)})", file=sys.stderr)
        return 2
    sets = {n: all_sets[n] for n in names}
    forced = None if args.tf_version is None else (
        "" if args.tf_version == "installed" else args.tf_version)
    print(f"tfperf: {tfperf_used(args.python)}")
    print("linted at: " + ("each row's tf_version (a range if the pin is open)" if forced is None
                           else f"TF {forced}" if forced else "the installed TF"))
    report: dict = {"context": args.context, "tf_version": args.tf_version or "per row"}
    if args.mode in ("file", "both"):
        manifest = materialize(rows, args.mirror, args.out)
        results = {name: score(rows, args.out, manifest, extra, args.python, args.context,
                               forced) for name, extra in sets.items()}
        summary = summarise(results)
        print("mode: file (each changed file linted alone)")
        print_table(summary, args.rows)
        report.update(summary)
    if args.mode in ("project", "both"):
        failed: list[str] = []

        def lint_paths(paths: list[Path], extra: list[str], version: str) -> list[dict]:
            try:
                return run_lint(paths, extra, args.python, version)
            except SystemExit as exc:  # one tree tfperf cannot lint: said, the rest scored
                failed.append(f"{paths[0]}: {exc}")
                print(f"lint failed, scored as no finding: {paths[0]}: {exc}", file=sys.stderr)
                return []

        def version_of(row: FixRow, side: str) -> str:
            return target_setting(row, side) if forced is None else forced

        presults = score_project(rows, args.mirror, sets, lint_paths, args.context,
                                 version_of, log=lambda m: print(m, file=sys.stderr),
                                 whole=args.whole_tree)
        psummary = summarise(presults)
        for name, scores in presults.items():
            psummary[name]["too_big"] = sorted(s.row.id for s in scores if s.too_big)
            psummary[name]["not_written"] = sorted(s.row.id for s in scores if s.failed)
            # what the call-site credit adds over the changed-lines credit alone
            psummary[name]["call_only"] = sorted(s.row.id for s in scores if s.call_only)
            for s in scores:  # which file of the diff each code landed in
                psummary[name]["per_row"][s.row.id].update(
                    before_by_file={f: sorted(c) for f, c in s.before.by_file.items() if c},
                    after_by_file={f: sorted(c) for f, c in s.after.by_file.items() if c},
                    call_codes=sorted(s.call_codes),
                    before_calls=sorted(f"{c}:{n}:{f}" for c, n, f in s.before.calls),
                    after_calls=sorted(f"{c}:{n}:{f}" for c, n, f in s.after.calls))
        if args.mode == "both":
            print()
        print("mode: project (" + ("each repository linted whole" if args.whole_tree else
                                   "the diff's files linted inside their repository")
              + "; a finding on the changed lines of any file of the fix's diff, or at a "
              "use of a function the fix changed that names it)")
        print_table(psummary, args.rows)
        for name in psummary:
            only = psummary[name]["call_only"]
            print(f"{name}: credited only at a caller of a changed function: {len(only)}"
                  + (f" ({', '.join(only)})" if only else ""))
        big = sorted({i for n in psummary for i in psummary[n]["too_big"]})
        if big:
            print(f"too big, linted as their changed files alone: {', '.join(big)}")
        lost = sorted({i for n in psummary for i in psummary[n]["not_written"]})
        if lost:
            print(f"trees not written (a commit or path not in the snapshot), scored as no "
                  f"finding: {', '.join(lost)}")
        report["project_mode"] = "whole tree" if args.whole_tree else "diff's files in context"
        if failed:
            print(f"{len(failed)} lint runs failed (scored as no finding): see stderr")
            report["project_lint_failed"] = failed
        report["project"] = psummary
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
