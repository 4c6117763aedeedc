"""Materialise the user-style corpus (corpus.csv) from fetched snapshots, outside the repo.

    python benchmarks/lint_fixes/corpus.py [--mirror /work/.mirror] [--out /tmp/tfperf-corpus]

Each repository is written, at its pinned commit, to ``OUT/<owner>+<name>/``: its ``.py`` and
``.ipynb`` files plus the files that say which TensorFlow a project targets (pyproject.toml,
setup.cfg, setup.py, requirements*.txt) and its .gitignore files. Nothing else (no data, no
binaries). A repository missing from the mirror is listed as the `fetch` source to bring it
(exit 2). OUT is replaced only if an earlier run made it. Deterministic; no network.
"""

from __future__ import annotations

import argparse
import csv
import fnmatch
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from fixset import CORPUS_CSV, DEFAULT_MIRROR, MissingSnapshot, fetch_source, git_dir

DEFAULT_OUT = Path("/tmp/tfperf-corpus")
MARKER = ".tfperf-corpus"
KEEP = ("*.py", "*.ipynb", "pyproject.toml", "setup.cfg", "setup.py", "requirements*.txt",
        ".gitignore")


@dataclass(frozen=True)
class CorpusRepo:
    repo: str
    commit: str
    kind: str
    why: str

    @property
    def folder(self) -> str:
        return self.repo.replace("/", "+")


def read_corpus(path: Path = CORPUS_CSV) -> list[CorpusRepo]:
    with path.open(newline="", encoding="utf-8") as fh:
        return [CorpusRepo(r["repo"], r["commit"], r["kind"], r["why"])
                for r in csv.DictReader(fh)]


def _kept(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return any(fnmatch.fnmatch(name, pat) for pat in KEEP)


def write_repo(gdir: Path, commit: str, dest: Path) -> tuple[int, int]:
    """Write the kept files of ``commit`` under ``dest``; → (files, bytes)."""
    ls = subprocess.run(["git", "-C", str(gdir), "ls-tree", "-r", "-z", commit],
                        capture_output=True)
    if ls.returncode:
        raise MissingSnapshot(str(gdir), f"commit {commit} not in the snapshot")
    entries = []
    for item in ls.stdout.split(b"\0"):
        if not item:
            continue
        meta, path = item.split(b"\t", 1)
        mode, kind, sha = meta.split()
        name = path.decode("utf-8", "replace")
        if kind == b"blob" and mode != b"120000" and _kept(name):
            entries.append((sha.decode(), name))
    entries.sort(key=lambda e: e[1])
    cat = subprocess.Popen(["git", "-C", str(gdir), "cat-file", "--batch"],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    total = 0
    assert cat.stdin and cat.stdout
    for sha, name in entries:
        cat.stdin.write(sha.encode() + b"\n")
        cat.stdin.flush()
        header = cat.stdout.readline().split()
        if len(header) < 3:  # "<sha> missing": a file the snapshot lacks (over 4 MiB)
            continue
        size = int(header[2])
        data = cat.stdout.read(size)
        cat.stdout.read(1)
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        total += size
    cat.stdin.close()
    cat.wait()
    return len(entries), total


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mirror", type=Path, default=DEFAULT_MIRROR)
    p.add_argument("--out", type=Path, default=DEFAULT_OUT)
    p.add_argument("--csv", type=Path, default=CORPUS_CSV)
    args = p.parse_args()
    repos = read_corpus(args.csv)
    missing = []
    for r in repos:
        try:
            git_dir(args.mirror, r.repo)
        except MissingSnapshot:
            missing.append(r.repo)
    if missing:
        print(f"{len(missing)} repositories are not in {args.mirror}; fetch them with:",
              file=sys.stderr)
        for repo in missing:
            print(f"  fetch {fetch_source(repo)}", file=sys.stderr)
        return 2
    if args.out.exists():
        if not (args.out / MARKER).exists():
            print(f"{args.out} exists and was not made by this script", file=sys.stderr)
            return 2
        shutil.rmtree(args.out)
    args.out.mkdir(parents=True)
    (args.out / MARKER).write_text("made by benchmarks/lint_fixes/corpus.py\n")
    files = size = 0
    for r in repos:
        n, b = write_repo(git_dir(args.mirror, r.repo), r.commit, args.out / r.folder)
        print(f"{r.repo:<48} {r.commit[:10]}  {n:5d} files  {b / 1e6:7.1f} MB")
        files, size = files + n, size + b
    print(f"{len(repos)} repositories, {files} files, {size / 1e6:.1f} MB in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
