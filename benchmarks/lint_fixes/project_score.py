"""Project mode of score.py: each row's changed files linted inside their repository.

A fix whose cause sits in a caller (a `tf.function` fed Python numbers by another module, a
step built per call by a trainer) cannot be credited when the changed file is linted alone.
Here each side of a row is the repository's Python files at that commit, written to a temp
folder (with a `.git` folder, so tfperf finds the project's root), and the files of the
fix's diff are linted there: named on the command line, so tfperf models them with their
project (the modules they import and that import them: `lint/context.py`), as a pre-commit
hook or a CI job linting the changed files sees them. `whole=True` (`--whole-tree`) lints
the whole folder instead (every module modelled; minutes per row on a large library).
A finding counts when it lands on a line the fix changed in any file of the fix's diff
(score.py's line rule, per changed file): the row's own file uses its recorded ranges, every
other changed file the difflib blocks of its two versions (`fixset.changed_blocks`).
  * hit      some code has a finding on the changed lines of a file at the before commit
             and none on the changed lines of that file at the after commit (a file the
             fix deletes is not credited: a deletion removes every finding);
  * flagged  the row expects the after file clean and some code fires on the changed lines
             of any after file.
A repository over the cap (MAX_FILES Python files or MAX_BYTES) is written as its changed
files alone (no callers) and named in the output.

A cause is often reported where the slow function is *called* (TFP301: "scale passed to
train_step of steps.py") while the fix changes the function itself. So the functions whose
body (decorators included) the fix's before side touches are named (`changed_functions`,
dunders left out), the tree's other Python files that spell one of those names are linted
too (at most MAX_CALLERS, the same paths on both sides), and a finding anywhere in the
linted files counts as a *call-site* credit when its message names a changed function and
its own lines spell that name (it is reported at a use of it, not merely near one):
  * call hit  a (code, function) pair found so in the before tree and not in the after tree
             (the fix made the caller's finding go): added to the row's hit codes.
File mode, and the changed-lines credit above, are unchanged.
"""

from __future__ import annotations

import ast
import io
import re
import shutil
import subprocess
import tarfile
import tempfile
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from fixset import FixRow, MissingSnapshot, Span, changed_blocks, git_dir, parse_ranges

MAX_FILES = 2500
MAX_BYTES = 40 * 1024 * 1024
LINTED = (".py",)
PARSE_ERROR = "TFP000"
MAX_CALLERS = 40  # files outside the diff linted because they spell a changed function


@dataclass(frozen=True)
class Changed:
    """One file of a fix's diff: its path on each side ("" where added or deleted) and the
    changed lines there."""
    before_path: str
    after_path: str
    before_spans: list[Span]
    after_spans: list[Span]


@dataclass
class ProjectSide:
    """The codes found on the changed lines, per changed file (keyed by its before path, or
    its after path where the file was added)."""
    by_file: dict[str, set[str]] = field(default_factory=dict)
    parse_error: bool = False
    # (code, changed function, file) of each finding at a use of a function the fix changed
    calls: set[tuple[str, str, str]] = field(default_factory=set)
    # the changed functions the linted files still spell (a renamed or removed one is not)
    spelled: set[str] = field(default_factory=set)

    @property
    def codes(self) -> set[str]:
        return set().union(*self.by_file.values()) if self.by_file else set()


@dataclass
class ProjectRowScore:
    row: FixRow
    before: ProjectSide
    after: ProjectSide
    too_big: bool = False
    failed: str = ""  # why its trees could not be written (scored as no finding)

    @property
    def line_codes(self) -> set[str]:
        """Codes credited on the changed lines of the diff's files."""
        out: set[str] = set()
        for key, codes in self.before.by_file.items():
            if key not in self.after.by_file:
                continue  # deleted by the fix: every finding goes, whatever the rule saw
            out |= codes - self.after.by_file[key]
        return out

    @property
    def call_codes(self) -> set[str]:
        """Codes credited at a use of a function the fix changed, gone after the fix while the
        function is still spelled there (renamed or removed: no sign the rule saw the fix,
        as with a deleted file)."""
        return {code for code, name, _ in self.before.calls - self.after.calls
                if name in self.after.spelled}

    @property
    def hit_codes(self) -> list[str]:
        return sorted(self.line_codes | self.call_codes)

    @property
    def call_only(self) -> bool:
        """Credited only by a finding at a caller (what the call-site credit adds)."""
        return bool(self.call_codes) and not self.line_codes

    @property
    def hit(self) -> bool:
        return bool(self.hit_codes)

    @property
    def flagged(self) -> bool:
        return self.row.expect_clean and bool(self.after.codes)


def _git(gdir: Path, *args: str) -> bytes:
    # Literal pathspecs: a file named `a[1].py` or `:x.py` is that file, not a pattern.
    out = subprocess.run(["git", "--literal-pathspecs", "--git-dir", str(gdir), *args],
                         capture_output=True)
    if out.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)}: {out.stderr.decode(errors='replace')[:300]}")
    return out.stdout


def _blob(gdir: Path, rev: str, path: str) -> bytes:
    return _git(gdir, "show", f"{rev}:{path}") if path else b""


def diff_files(gdir: Path, row: FixRow) -> list[Changed]:
    """The Python files and notebooks the fix changed (renames followed), the row's own file
    with its recorded ranges."""
    out = [Changed(row.path, row.path_after, parse_ranges(row.before_lines),
                   parse_ranges(row.after_lines))]
    seen = {row.path, row.path_after}
    raw = _git(gdir, "diff", "--name-status", "-M", row.before, row.after).decode(
        "utf-8", errors="replace")
    for line in raw.splitlines():
        parts = line.split("\t")
        status = parts[0][:1]
        if status == "R" and len(parts) == 3:
            old, new = parts[1], parts[2]
        elif status in "AMDT" and len(parts) == 2:
            old = "" if status == "A" else parts[1]
            new = "" if status == "D" else parts[1]
        else:
            continue
        name = new or old
        if not name.endswith((".py", ".ipynb")) or old in seen or new in seen:
            continue
        spans_b: list[Span] = []
        spans_a: list[Span] = []
        try:
            for b, a in changed_blocks(_blob(gdir, row.before, old), _blob(gdir, row.after, new),
                                       old or new, new or old):
                spans_b += b
                spans_a += a
        except ValueError:  # a notebook that is not JSON: tfperf reports TFP000 there
            continue
        if not old:
            spans_b = []
        if not new:
            spans_a = []
        out.append(Changed(old, new, spans_b, spans_a))
    return out


def _defs_touched(tree: ast.AST, spans: list[Span]) -> set[str]:
    """Names of the functions (every enclosing one too) whose lines, decorators included,
    overlap a changed span of this file."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        last = node.end_lineno or node.lineno
        if any(a <= last and b >= first for _, a, b in spans):
            names.add(node.name)
    return {n for n in names if not (n.startswith("__") and n.endswith("__"))}


def changed_functions(gdir: Path, row: FixRow, changed: list[Changed]) -> set[str]:
    """The functions and methods the fix changed, by name, read from the before side's
    Python files (a notebook's cells are left out: a function there has no importer)."""
    names: set[str] = set()
    for ch in changed:
        if not ch.before_path.endswith(".py") or not ch.before_spans:
            continue
        try:
            tree = ast.parse(_blob(gdir, row.before, ch.before_path))
        except (SyntaxError, ValueError, RuntimeError):
            continue  # a Python 2 file or a path the snapshot lacks: no names from it
        names |= _defs_touched(tree, ch.before_spans)
    return names


def _spelling(names: set[str]) -> re.Pattern[str] | None:
    if not names:
        return None
    return re.compile(r"(?<![\w])(?:" + "|".join(map(re.escape, sorted(names))) + r")(?![\w])")


def caller_files(root: Path, names: set[str], skip: set[str]) -> tuple[list[str], int]:
    """The tree's Python files outside ``skip`` that spell a changed function's name, sorted,
    at most MAX_CALLERS; and how many spelled one."""
    pattern = _spelling(names)
    if pattern is None:
        return [], 0
    found = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel in skip or not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if pattern.search(text):
            found.append(rel)
    return found[:MAX_CALLERS], len(found)


def spelled_names(root: Path, paths: list[str], names: set[str]) -> set[str]:
    """Which of ``names`` the files ``paths`` under ``root`` spell."""
    pattern = _spelling(names)
    out: set[str] = set()
    for rel in paths if pattern is not None else []:
        try:
            out |= set(pattern.findall((root / rel).read_text(encoding="utf-8",
                                                              errors="replace")))
        except OSError:
            continue
    return out


def named_as_code(message: str, names: set[str]) -> set[str]:
    """The ``names`` a message spells as code: `name`, name(...) or "name of module.py"; a
    plain word is prose (a function named `dataset` or `train` is not named by "the dataset
    is re-read" or "train step")."""
    out: set[str] = set()
    for n in names:
        e = re.escape(n)
        if re.search(rf"`{e}`|(?<!\w){e}\(|(?<!\w){e} of [\w./-]+\.py\b", message):
            out.add(n)
    return out


def call_findings(findings: list[dict], names: set[str], root: Path
                  ) -> set[tuple[str, str, str]]:
    """(code, name, file) for each finding whose message names a changed function and whose
    own lines in its file spell that name: a finding reported at a use of the function. By
    file: another module's finding about a namesake (every agent's `learn`) is another's."""
    pattern = _spelling(names)
    out: set[tuple[str, str, str]] = set()
    if pattern is None:
        return out
    lines_of: dict[str, list[str]] = {}
    for f in findings:
        line = f.get("line")
        if f["code"] == PARSE_ERROR or line is None or f.get("cell"):
            continue
        named = named_as_code(f.get("message", ""), names)
        if not named:
            continue
        rel = Path(f["path"]).as_posix()
        if rel not in lines_of:
            try:
                lines_of[rel] = (root / rel).read_text(encoding="utf-8",
                                                       errors="replace").splitlines()
            except OSError:
                lines_of[rel] = []
        text = "\n".join(lines_of[rel][line - 1:(f.get("end_line") or line)])
        out |= {(f["code"], n, rel) for n in named & set(pattern.findall(text))}
    return out


def _tree_files(gdir: Path, rev: str) -> list[tuple[str, int]]:
    listing = _git(gdir, "ls-tree", "-r", "-l", "-z", rev).decode("utf-8", errors="replace")
    files = []
    for entry in filter(None, listing.split("\0")):
        meta, _, path = entry.partition("\t")
        parts = meta.split()
        if len(parts) == 4 and parts[1] == "blob" and path.endswith(LINTED):
            files.append((path, int(parts[3]) if parts[3].isdigit() else 0))
    return files


def write_tree(gdir: Path, rev: str, dest: Path, extra: list[str]) -> bool:
    """Write the commit's Python files (and ``extra`` paths, the diff's notebooks) under
    ``dest``, with an empty ``.git`` folder marking the project's root; over the cap, only
    ``extra``. Returns whether the tree was over the cap."""
    files = _tree_files(gdir, rev)
    too_big = len(files) > MAX_FILES or sum(s for _, s in files) > MAX_BYTES
    paths = sorted({*([] if too_big else [p for p, _ in files]), *filter(None, extra)})
    dest.mkdir(parents=True, exist_ok=True)
    (dest / ".git").mkdir(exist_ok=True)
    for start in range(0, len(paths), 500):  # one `git archive` per 500 paths
        tar = _git(gdir, "archive", "--format=tar", rev, "--", *paths[start:start + 500])
        with tarfile.open(fileobj=io.BytesIO(tar)) as archive:
            for member in archive.getmembers():
                if not member.isfile():
                    continue  # symlinks and folders: a real file per path only
                target = dest / member.name
                if not target.resolve().is_relative_to(dest.resolve()):
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                handle = archive.extractfile(member)
                if handle is not None:
                    target.write_bytes(handle.read())
    return too_big


# lint(paths, extra CLI arguments, tf_version) -> the JSON findings of `tfperf lint PATHS`
LintFn = Callable[[list[Path], list[str], str], list[dict]]


def _side(findings: list[dict], changed: list[Changed], side: str,
          context: int) -> ProjectSide:
    """``findings`` carry paths relative to the tree's root."""
    by_path: dict[str, list[dict]] = defaultdict(list)
    for f in findings:
        by_path[Path(f["path"]).as_posix()].append(f)
    out = ProjectSide()
    for ch in changed:
        path = ch.before_path if side == "before" else ch.after_path
        spans = ch.before_spans if side == "before" else ch.after_spans
        if not path:
            continue
        codes: set[str] = set()
        for f in by_path.get(path, []):
            if f["code"] == PARSE_ERROR:
                out.parse_error = True  # any file of the diff, renamed or not
                continue
            line = f.get("line")
            if line is None:
                continue
            end = f.get("end_line") or line
            if any((c or 0) == (f.get("cell") or 0) and line <= b + context
                   and end >= a - context for c, a, b in spans):
                codes.add(f["code"])
        out.by_file[ch.before_path or ch.after_path] = codes
    return out


def score_project(rows: list[FixRow], mirror: Path, sets: dict[str, list[str]], lint: LintFn,
                  context: int, version_of: Callable[[FixRow, str], str],
                  work: Path | None = None, log: Callable[[str], None] = print,
                  whole: bool = False) -> dict[str, list[ProjectRowScore]]:
    """Score every row in project mode under each rule set (name -> extra CLI arguments).
    Each side's tree is written to a temp folder (``work``), linted once per rule set (the
    diff's files named, or the folder when ``whole``) and removed after its row."""
    base = Path(tempfile.mkdtemp(prefix="tfperf-project-", dir=work))
    results: dict[str, list[ProjectRowScore]] = {name: [] for name in sets}
    cache: dict[tuple, list[dict]] = {}
    try:
        for i, r in enumerate(rows):
            row_dir = base / f"row{i}"  # by position: a row's id is data, never a path
            try:
                sides, big = _score_row(r, mirror, row_dir, sets, lint, context, version_of,
                                        whole, cache, log)
            except (RuntimeError, MissingSnapshot) as exc:  # a commit or path not in the
                # snapshot: said and scored as no finding, not the end of a long run
                log(f"{r.id} {r.repo}: trees not written, scored as no finding: {exc}")
                for name in sets:
                    results[name].append(ProjectRowScore(r, ProjectSide(), ProjectSide(),
                                                         failed=str(exc)[:300]))
                continue
            finally:
                shutil.rmtree(row_dir, ignore_errors=True)
            if big:
                log(f"{r.id} {r.repo}: over {MAX_FILES} Python files or {MAX_BYTES >> 20} MiB; "
                    "written as its changed files alone")
            for name in sets:
                results[name].append(ProjectRowScore(r, sides[name]["before"],
                                                     sides[name]["after"], big))
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return results


def _score_row(r: FixRow, mirror: Path, row_dir: Path, sets: dict[str, list[str]],
               lint: LintFn, context: int, version_of: Callable[[FixRow, str], str],
               whole: bool, cache: dict[tuple, list[dict]], log: Callable[[str], None]
               ) -> tuple[dict[str, dict[str, ProjectSide]], bool]:
    """Both sides of one row: each set's codes per changed file, and whether a tree was over
    the cap. RuntimeError/MissingSnapshot where a commit or path is not in the snapshot."""
    gdir = git_dir(mirror, r.repo)
    changed = diff_files(gdir, r)
    functions = changed_functions(gdir, r, changed)
    sides: dict[str, dict[str, ProjectSide]] = defaultdict(dict)
    big = False
    callers: list[str] = []
    found_at: dict[tuple[str, str], list[dict]] = {}
    for side, rev in (("before", r.before), ("after", r.after)):
        dest = row_dir / side
        paths = [c.before_path if side == "before" else c.after_path for c in changed]
        big = write_tree(gdir, rev, dest, [p for p in paths if p]) or big
        if side == "before":  # the same callers are linted (and spelled) on both sides
            callers, spelled = caller_files(dest, functions, set(filter(None, paths)))
            if spelled > len(callers):
                log(f"{r.id} {r.repo}: {spelled} files spell a changed function; "
                    f"the first {len(callers)} linted")
        linted = sorted({*filter(None, paths), *callers})
        for name, extra in sets.items():
            key = (r.repo, rev, tuple(linted), name, version_of(r, side), whole)
            named = [dest] if whole else [dest / p for p in linted if (dest / p).is_file()]
            if key not in cache:
                found = lint(named, extra, version_of(r, side)) if named else []
                cache[key] = [{**f, "path": str(Path(f["path"]).resolve()
                                                .relative_to(dest.resolve()))}
                              for f in found if _under(f["path"], dest)]
            sides[name][side] = _side(cache[key], changed, side, context)
            found_at[(name, side)] = cache[key]
            sides[name][side].spelled = spelled_names(dest, linted, functions)
    # Call-site findings only in files on both sides under one path: a file the fix deletes
    # or renames loses its findings whatever the rule saw.
    for (name, side), found in found_at.items():
        sides[name][side].calls = call_findings(
            [f for f in found if on_both_sides(row_dir, f["path"])], functions, row_dir / side)
    return sides, big


def on_both_sides(row_dir: Path, rel: str) -> bool:
    """Whether the file is under one path in both written trees of a row."""
    return all((row_dir / side / rel).is_file() for side in ("before", "after"))


def _under(path: str, root: Path) -> bool:
    try:
        Path(path).resolve().relative_to(root.resolve())
    except ValueError:
        return False
    return True
