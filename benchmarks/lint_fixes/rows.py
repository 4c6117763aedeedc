"""Maintain fixes.csv: add a row with its changed line ranges computed from the snapshots,
show a row's changed lines, or check that every row still resolves.

    python benchmarks/lint_fixes/rows.py add --repo owner/name --after SHA --path P \\
        --kind "loop accumulation" --style tf1 --form library --why "..." [--keep 1,3]
    python benchmarks/lint_fixes/rows.py show F007
    python benchmarks/lint_fixes/rows.py check

`--keep` keeps only the numbered changed blocks (1-based, as `add --dry-run` lists them), for
commits that also change unrelated lines. Nothing here touches the network.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from fixset import (
    DEFAULT_MIRROR,
    FIXES_CSV,
    FixRow,
    MissingSnapshot,
    Span,
    changed_blocks,
    fetch_source,
    format_ranges,
    git_dir,
    parse_ranges,
    read_fixes,
    show,
    source_lines,
    write_fixes,
)


def _rev(gdir: Path, rev: str) -> str:
    out = subprocess.run(["git", "-C", str(gdir), "rev-parse", "--verify", f"{rev}^{{commit}}"],
                         capture_output=True, text=True)
    if out.returncode:
        raise MissingSnapshot(str(gdir), f"no commit {rev}")
    return out.stdout.strip()


def _excerpt(data: bytes, path: str, spans: list[Span], limit: int = 12) -> list[str]:
    lines = {(c, n): t for c, n, t in source_lines(data, path)}
    out = []
    for c, a, b in spans:
        for n in range(a, min(b, a + limit - 1) + 1):
            tag = f"c{c}:{n}" if c else str(n)
            out.append(f"    {tag:>8} | {lines.get((c, n), '')[:110]}")
        if b - a + 1 > limit:
            out.append(f"    {'':>8} | ... ({b - a + 1} lines)")
    return out


def cmd_add(args: argparse.Namespace) -> int:
    gdir = git_dir(args.mirror, args.repo)
    after = _rev(gdir, args.after)
    before = _rev(gdir, args.before or f"{after}^")
    path_after = args.after_path or args.path
    a, b = show(gdir, before, args.path), show(gdir, after, path_after)
    blocks = changed_blocks(a, b, args.path, path_after)
    keep = {int(k) for k in args.keep.split(",")} if args.keep else set(range(1, len(blocks) + 1))
    for i, (sa, sb) in enumerate(blocks, start=1):
        mark = "*" if i in keep else " "
        print(f"{mark}[{i}] before {format_ranges(sa) or '-'}  after {format_ranges(sb) or '-'}")
        if args.dry_run or args.verbose:
            print("\n".join([*_excerpt(a, args.path, sa), "    ---", *_excerpt(b, path_after, sb)]))
    sa = [s for i, (x, _) in enumerate(blocks, 1) if i in keep for s in x]
    sb = [s for i, (_, y) in enumerate(blocks, 1) if i in keep for s in y]
    if args.before_lines is not None:
        sa = parse_ranges(args.before_lines)
    if args.after_lines is not None:
        sb = parse_ranges(args.after_lines)
    if args.dry_run:
        return 0
    rows = read_fixes(args.csv) if args.csv.exists() else []
    if any(r.repo == args.repo and r.after == after and r.path == args.path for r in rows):
        print("already in the set", file=sys.stderr)
        return 1
    if sum(r.repo == args.repo for r in rows) >= 5:
        print(f"{args.repo} already has 5 rows", file=sys.stderr)
        return 1
    num = max((int(r.id[1:]) for r in rows), default=0) + 1
    rows.append(FixRow(id=f"F{num:03d}", repo=args.repo, before=before, after=after,
                       path=args.path, after_path=args.after_path or "",
                       before_lines=format_ranges(sa), after_lines=format_ranges(sb),
                       kind=args.kind, style=args.style, form=args.form, why=args.why,
                       after_expect=args.expect, tf_version=args.tf_version,
                       tf_version_source=args.tf_version_source,
                       after_tf_version=args.after_tf_version))
    write_fixes(rows, args.csv)
    print(f"added F{num:03d}")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    row = next((r for r in read_fixes(args.csv) if r.id == args.id), None)
    if row is None:
        print(f"no row {args.id}", file=sys.stderr)
        return 2
    gdir = git_dir(args.mirror, row.repo)
    print(f"{row.id} {row.repo} {row.kind}: {row.why}")
    print("  before " + row.before_lines)
    print("\n".join(_excerpt(show(gdir, row.before, row.path), row.path,
                             parse_ranges(row.before_lines), 40)))
    print("  after " + row.after_lines + f"   ({row.after_expect})")
    print("\n".join(_excerpt(show(gdir, row.after, row.path_after), row.path_after,
                             parse_ranges(row.after_lines), 40)))
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    rows = read_fixes(args.csv)
    bad = 0
    for r in rows:
        try:
            gdir = git_dir(args.mirror, r.repo)
            for rev, path, ranges in ((r.before, r.path, r.before_lines),
                                      (r.after, r.path_after, r.after_lines)):
                have = {(c, n) for c, n, _ in source_lines(show(gdir, rev, path), path)}
                for c, a, b in parse_ranges(ranges):
                    if (c, a) not in have or (c, b) not in have:
                        raise ValueError(f"range {c}:{a}-{b} outside {path}@{rev[:10]}")
            if not r.before_lines:
                raise ValueError("no changed lines on the before side")
        except (MissingSnapshot, ValueError) as exc:
            bad += 1
            print(f"{r.id}: {exc}")
    per_repo: dict[str, int] = {}
    for r in rows:
        per_repo[r.repo] = per_repo.get(r.repo, 0) + 1
    over = {k: v for k, v in per_repo.items() if v > 5}
    print(f"{len(rows)} rows, {len(per_repo)} repositories, {bad} bad"
          + (f", over 5 rows: {over}" if over else ""))
    missing = sorted({r.repo for r in rows
                      if not (args.mirror / r.repo.replace("/", "+")).exists()})
    for m in missing:
        print("fetch", fetch_source(m))
    return 1 if bad or over else 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mirror", type=Path, default=DEFAULT_MIRROR)
    p.add_argument("--csv", type=Path, default=FIXES_CSV)
    sub = p.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("add")
    for name in ("repo", "after", "path", "kind", "style", "form", "why"):
        a.add_argument(f"--{name}", required=True)
    a.add_argument("--before")
    a.add_argument("--after-path")
    a.add_argument("--expect", default="clean")
    a.add_argument("--keep")
    a.add_argument("--before-lines", help="override the computed ranges (12-18;c3:1-4)")
    a.add_argument("--after-lines")
    a.add_argument("--tf-version", default="",
                   help="the TF (X.Y) the code targeted at the before revision")
    a.add_argument("--tf-version-source", default="",
                   help="where that comes from: the repository's pin then, else the newest "
                        "release at the commit's date")
    a.add_argument("--after-tf-version", default="", help="only if the fix changed the pin")
    a.add_argument("--dry-run", action="store_true")
    a.add_argument("--verbose", "-v", action="store_true")
    s = sub.add_parser("show")
    s.add_argument("id")
    sub.add_parser("check")
    args = p.parse_args()
    try:
        return {"add": cmd_add, "show": cmd_show, "check": cmd_check}[args.cmd](args)
    except MissingSnapshot as exc:
        print(f"missing snapshot: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
