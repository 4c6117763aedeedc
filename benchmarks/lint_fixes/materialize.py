"""Write the before/after files of fixes.csv from fetched snapshots (no network).

    python benchmarks/lint_fixes/materialize.py [--mirror /work/.mirror] [--out /tmp/tfperf-fixes]

Layout: ``OUT/<id>/before/<path>`` and ``OUT/<id>/after/<path>``, plus ``OUT/manifest.json``.
A repository missing from the mirror is listed as the `fetch` source to bring it (exit 2), or
skipped with ``--skip-missing``. OUT is replaced only if an earlier run made it.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

from fixset import (
    DEFAULT_MIRROR,
    FIXES_CSV,
    FixRow,
    MissingSnapshot,
    fetch_source,
    git_dir,
    read_fixes,
    show,
)

MARKER = ".tfperf-fixes"
DEFAULT_OUT = Path("/tmp/tfperf-fixes")


def missing_repos(rows: list[FixRow], mirror: Path) -> list[str]:
    out = []
    for repo in sorted({r.repo for r in rows}):
        try:
            git_dir(mirror, repo)
        except MissingSnapshot:
            out.append(repo)
    return out


def prepare_out(out: Path) -> None:
    if out.exists():
        if not (out / MARKER).exists():
            raise SystemExit(f"{out} exists and was not made by this script; choose another --out")
        shutil.rmtree(out)
    out.mkdir(parents=True)
    (out / MARKER).write_text("made by benchmarks/lint_fixes/materialize.py\n")


def materialize(rows: list[FixRow], mirror: Path, out: Path) -> dict:
    prepare_out(out)
    manifest: dict[str, dict] = {}
    for r in rows:
        gdir = git_dir(mirror, r.repo)
        entry = {}
        for side, rev, path in (("before", r.before, r.path), ("after", r.after, r.path_after)):
            dest = out / r.id / side / path
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(show(gdir, rev, path))
            entry[side] = str(dest.relative_to(out))
        manifest[r.id] = entry
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return manifest


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mirror", type=Path, default=DEFAULT_MIRROR)
    p.add_argument("--out", type=Path, default=DEFAULT_OUT)
    p.add_argument("--csv", type=Path, default=FIXES_CSV)
    p.add_argument("--skip-missing", action="store_true",
                   help="leave out rows whose repository is not fetched")
    args = p.parse_args()
    rows = read_fixes(args.csv)
    missing = missing_repos(rows, args.mirror)
    if missing:
        print(f"{len(missing)} repositories are not in {args.mirror}; fetch them with:",
              file=sys.stderr)
        for repo in missing:
            print(f"  fetch {fetch_source(repo)}", file=sys.stderr)
        if not args.skip_missing:
            return 2
        rows = [r for r in rows if r.repo not in missing]
    try:
        manifest = materialize(rows, args.mirror, args.out)
    except MissingSnapshot as exc:
        print(f"missing: {exc}", file=sys.stderr)
        return 2
    print(f"{len(manifest)} fixes ({2 * len(manifest)} files) written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
