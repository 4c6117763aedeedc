"""Cells `tfperf lint` reports as TFP000 vs cells IPython cannot turn into valid Python.

    python benchmarks/lint_fixes/notebook_oracle.py [DIR] [--show 10] [--json out.json]

DIR (default /tmp/tfperf-corpus, made by corpus.py) is searched for .ipynb files. For every
code cell of a notebook whose kernel is Python:
  tfperf   the cell gets TFP000 when tfperf reads the notebook (tfperf.lint.notebook);
  IPython  IPython's InteractiveShell.transform_cell (TransformerManager's static transforms,
           plus the automagic prefilter IPython applies to one-line cells) gives text that
           does not compile (ast.parse), with the installed IPython's dedent and with IPython
           7.0-9.0.1's (the first line's indentation off each line that has it; Colab runs
           7.34): a cell either reads as Python is valid IPython.
Prints both counts and the cells where they disagree. Needs IPython (the `notebook` extra).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path


def ipython_shell():
    """A quiet InteractiveShell (no history file, IPYTHONDIR in a temporary folder)."""
    os.environ.setdefault("IPYTHONDIR", tempfile.mkdtemp(prefix="tfperf-ipython-"))
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    shell.history_manager.enabled = False
    return shell


def first_line_dedent(lines: list[str]) -> list[str]:
    """IPython 7.0 to 9.0.1's ``leading_indent`` cleanup transform (as read in the sources
    of 7.34 and 8.39): the first line's indentation, off each line that starts with it.
    From 9.0.2 on, IPython dedents the cell with ``textwrap.dedent`` instead."""
    if not lines:
        return lines
    margin = re.match(r"[ \t]*", lines[0]).group()
    return [line[len(margin):] if line.startswith(margin) else line for line in lines]


def ipython_valid(shell, source: str) -> bool:
    """Whether the installed IPython, or the same with IPython 7.0-9.0.1's dedent, turns the
    cell into text that compiles."""
    from tfperf.lint.notebook import _parses  # ast.parse with warnings silenced

    manager = shell.input_transformer_manager
    installed = list(manager.cleanup_transforms)
    older = [first_line_dedent if getattr(t, "__name__", "") == "leading_indent" else t
             for t in installed]
    for transforms in (installed, older):
        manager.cleanup_transforms = transforms
        try:
            if _parses(shell.transform_cell(source)):
                return True
        except (SyntaxError, ValueError, IndexError):
            pass
        finally:
            manager.cleanup_transforms = installed
    return False


def cell_text(raw: dict) -> str:
    src = raw.get("source", raw.get("input", ""))
    return "".join(src) if isinstance(src, list) else str(src or "")


def compare(root: Path, shell) -> dict:
    from tfperf.lint.notebook import build_module, read_notebook

    counts = Counter()
    disagree: list[dict] = []
    for path in sorted(root.rglob("*.ipynb")):
        if any(part.startswith(".") for part in path.relative_to(root).parts):
            continue
        counts["notebooks"] += 1
        text = path.read_text(encoding="utf-8", errors="replace")
        _, cells, skip, err = read_notebook(text, str(path))
        if err is not None:
            counts["notebooks_unreadable"] += 1
            continue
        if skip:
            counts["notebooks_other_kernel"] += 1
            continue
        module = build_module(cells, str(path))
        for index, cell in module.cells.items():
            source = cell_text(cells[index - 1])
            if not source.strip():
                continue
            counts["code_cells"] += 1
            tfperf_error = cell.error is not None
            ipy_ok = ipython_valid(shell, source)
            counts["tfperf_TFP000"] += tfperf_error
            counts["ipython_invalid"] += not ipy_ok
            if tfperf_error and not ipy_ok:
                counts["both"] += 1
            elif tfperf_error != (not ipy_ok):
                key = "tfperf_only" if tfperf_error else "ipython_only"
                counts[key] += 1
                disagree.append({"kind": key, "path": str(path.relative_to(root)),
                                 "cell": index,
                                 "message": cell.error.message if cell.error else "",
                                 "source": source[:400]})
    return {"counts": dict(counts), "disagree": disagree}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dir", nargs="?", type=Path, default=Path("/tmp/tfperf-corpus"))
    p.add_argument("--show", type=int, default=5, help="print this many disagreeing cells")
    p.add_argument("--json", type=Path)
    args = p.parse_args()
    if not args.dir.is_dir():
        print(f"{args.dir} is not a directory (run corpus.py first)", file=sys.stderr)
        return 2
    try:
        shell = ipython_shell()
    except ImportError:
        print("IPython is not installed (pip install 'tfperf[notebook]')", file=sys.stderr)
        return 2
    result = compare(args.dir, shell)
    c = result["counts"]
    print(f"notebooks {c.get('notebooks', 0)} ({c.get('notebooks_other_kernel', 0)} other "
          f"kernel, {c.get('notebooks_unreadable', 0)} unreadable), "
          f"code cells {c.get('code_cells', 0)}")
    print(f"cells tfperf reports as TFP000:          {c.get('tfperf_TFP000', 0)}")
    print(f"cells IPython cannot make valid Python:  {c.get('ipython_invalid', 0)}")
    print(f"  both {c.get('both', 0)}, tfperf only {c.get('tfperf_only', 0)}, "
          f"IPython only {c.get('ipython_only', 0)}")
    for d in result["disagree"][: args.show]:
        print(f"\n[{d['kind']}] {d['path']} cell {d['cell']}: {d['message']}")
        print("    " + "\n    ".join(d["source"].splitlines()[:8]))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
