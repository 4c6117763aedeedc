"""Jupyter notebooks: code cells analysed as one module, IPython syntax masked.

Each masked line keeps its place (line numbers map 1:1 back to cells): a magic, shell or
help line becomes ``pass`` at its indentation (a placeholder, so a block whose only statement
was ``%time f()`` still parses), its backslash continuations become blank. Cells whose body
is not Python (``%%bash``, ``%%writefile``, ``%%html``...) are skipped. A cell that still does
not parse is reported as TFP000 with its number and left out; the other cells are analysed.
Positions are reported as (cell, line within cell), cells numbered from 1 over all cells.

What counts as IPython syntax follows IPython itself (``InteractiveShell.transform_cell``):
escapes (``%``, ``!``, ``?``, ``,``, ``;``, ``/``) only where a logical line starts, and
automagic (``ls``, ``pip install x`` typed without ``%``) only in a cell of one line and never
for an assignment (``history = model.fit(`` is Python, whatever line follows). A ``%%time``
cell whose body does not parse is skipped, not reported: IPython accepts the cell as a magic.
"""

from __future__ import annotations

import ast
import copy
import json
import re
import textwrap
import warnings
from dataclasses import dataclass, field, replace
from itertools import repeat
from typing import Any

from tfperf.core.findings import Edit, Finding, Fix, Location
from tfperf.lint.engine import Dispatcher, error_finding, lint_source, syntax_error_finding
from tfperf.lint.fix import apply_edits, wanted
from tfperf.lint.result import FileResult, RunOptions, unified_diff
from tfperf.lint.target import notebook_pin

# Cell magics whose body is Python; any other %%magic makes the cell opaque.
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug", "memit",
                                "mprun", "tensorflow_version", "px", "autoreload",
                                # tfperf's own (tfperf.notebook): their bodies are Python
                                "tftimeit", "tfprofile", "tfcompare", "tflint"})
# Line magics and shell aliases IPython runs without `%` (automagic).
AUTOMAGICS = frozenset({
    "ls", "cd", "pwd", "pip", "conda", "mkdir", "rmdir", "rm", "cp", "mv", "cat", "clear",
    "env", "history", "load_ext", "reload_ext", "matplotlib", "time", "timeit", "run", "who",
    "whos", "reset", "alias", "autoreload", "store", "sx", "sc", "system", "tensorboard",
    "ll", "lf", "lk", "lx", "ldir", "man", "less", "more", "pylab", "precision", "config",
    "pdb", "debug", "prun", "bookmark", "dhist", "pushd", "popd", "dirs", "xmode",
})
_SHELL_ASSIGN = re.compile(r"^\s*[\w.,\s\[\]()*]+?=\s*[!%]")
# IPython's split of a line into the callable and the rest (prefilter's ``ifun``/``the_rest``).
_FIRST_WORD = re.compile(r"^\s*([A-Za-z_][\w.]*)(.*)$")
# Escapes IPython's token transforms recognise at the start of a logical line.
_ESCAPES = "%!?,;/"
MAX_PASSES = 10
# TFP000's hint for a notebook (the engine's speaks of a Python file).
CELL_HINT = ("tfperf reads the notebook's code cells as Python (IPython syntax masked); "
             "fix the cell or exclude the notebook")
JSON_HINT = ("tfperf reads a notebook as nbformat JSON (4, or 3's worksheets); fix or "
             "exclude it")


@dataclass
class Cell:
    index: int            # 1-based over all cells
    source: str           # the cell's text as stored
    masked: str = ""      # Python text, same number of lines
    # Columns IPython's dedent took off each line (empty: none), see _ipython_readings.
    indents: tuple[int, ...] = ()
    skipped: str = ""     # why the cell is not analysed (opaque cell magic)
    error: Finding | None = None
    python2: bool = False  # parsed as Python 2 (the kernel's), on a normalised copy

    def indent(self, line: int | None) -> int:
        """Columns taken off the cell's 1-based ``line`` by the dedent."""
        if not self.indents or line is None or not 1 <= line <= len(self.indents):
            return 0
        return self.indents[line - 1]


@dataclass
class Module:
    text: str
    line_map: list[tuple[int, int]] = field(default_factory=list)  # module line → (cell, line)
    cells: dict[int, Cell] = field(default_factory=dict)
    # The cells' own trees, spliced: each cell is parsed once (its error is its own), so the
    # joined text needs no second parse.
    tree: ast.Module | None = None


def _parses(text: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(text)
        return True
    except (SyntaxError, ValueError):
        return False


def _scan(line: str, depth: int, quote: str | None) -> tuple[int, str | None]:
    """Bracket depth and open triple-quoted string after ``line`` (a light tokenizer)."""
    i, n = 0, len(line)
    while i < n:
        if quote:
            if line.startswith(quote, i):
                i += len(quote)
                quote = None
                continue
            if line[i] == "\\":
                i += 1
            i += 1
            continue
        c = line[i]
        if c == "#":
            break
        if c in "\"'":
            triple = line[i:i + 3]
            if triple in ('"""', "'''"):
                quote = triple
                i += 3
                continue
            j = i + 1
            while j < n and line[j] != c:
                j += 2 if line[j] == "\\" else 1
            i = j + 1
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth = max(0, depth - 1)
        i += 1
    return depth, quote


def _is_magic(stripped: str, one_line_cell: bool) -> bool:
    if not stripped:
        return False
    if stripped[0] in _ESCAPES and not stripped.startswith("?"):
        return True
    if _SHELL_ASSIGN.match(stripped):  # x = !ls, files = %sx ls
        return True
    if stripped.startswith("?") or stripped.endswith("?"):  # help: ?obj, obj?, obj??
        return not _parses(stripped)
    return one_line_cell and _is_automagic(stripped)


def _is_automagic(stripped: str) -> bool:
    """IPython's prefilter for a one-line cell: a magic name typed without ``%``, unless the
    line assigns to that name (``ls = 3``, ``history, x = ...``) or is valid Python."""
    m = _FIRST_WORD.match(stripped)
    if not m or m.group(1) not in AUTOMAGICS:  # a dotted name (time.sleep) is never a magic
        return False
    rest = m.group(2).lstrip()
    if rest[:1] in ("=", ",") and rest[:2] != "==":
        return False
    return not _parses(stripped)


# Lines of spaces and tabs only, as textwrap.dedent empties them.
_BLANK_LINE = re.compile(r"^[ \t]+$", re.MULTILINE)
# A superset of the lines `_is_magic` accepts (an escape first, `?` last, a shell
# assignment), found in a search of the cell's text instead of a test per line. Three
# searches, the last two only where their character occurs: one search of the three
# alternatives tries each of them at every position of the text.
_ESCAPE_FIRST = re.compile(r"^\s*[%!?,;/]", re.MULTILINE)
_HELP_LAST = re.compile(r"\?\s*$", re.MULTILINE)
_SHELL_VALUE = re.compile(r"=\s*[!%]")


def _may_hold_magic(text: str, one_line: bool) -> bool:
    if _ESCAPE_FIRST.search(text) is not None \
            or ("?" in text and _HELP_LAST.search(text) is not None) \
            or (("!" in text or "%" in text) and _SHELL_VALUE.search(text) is not None):
        return True
    return one_line and _is_automagic(text.strip())


def _one_line_cell(lines: list[str]) -> bool:
    """Whether IPython sees a single line (it drops leading blank lines, then counts)."""
    i = 0
    while i < len(lines) and not lines[i].strip():
        i += 1
    rest = lines[i:]
    if rest and rest[-1] == "":  # the text's final newline ends the last line
        rest = rest[:-1]
    return len(rest) == 1


def mask_cell(cell: Cell) -> Cell:
    """Fill ``masked``/``indents``/``skipped`` of a code cell."""
    text = cell.source
    lines = text.split("\n")
    first = next((ln.strip() for ln in lines if ln.strip()), "")
    cell_magic = ""
    if first.startswith("%%"):
        name = first[2:].split(None, 1)[0] if first[2:].strip() else ""
        if name not in PYTHON_CELL_MAGICS:
            cell.skipped = f"%%{name} cell"
            cell.masked = "\n".join("" for _ in lines)
            return cell
        cell_magic = name
    one_line = _one_line_cell(lines)
    if text[:1] not in ("", " ", "\t", "\n"):
        # A first line at column 0 leaves no common margin: all textwrap.dedent would do is
        # empty the lines of spaces and tabs, without its per-line loop (most cells).
        dedented = _BLANK_LINE.sub("", text) if _may_hold_blank_line(text) else text
        if dedented != text:
            lines = dedented.split("\n")
        cell.masked = _mask_lines(lines, one_line, dedented)
    else:
        readings = _ipython_readings(lines)
        # The first reading that parses (IPython 9's, unless only the older one does).
        for lines, cell.indents in readings:
            cell.masked = _mask_lines(lines, one_line)
            if len(readings) == 1 or _parses(cell.masked):
                break
        else:
            lines, cell.indents = readings[0]  # neither: the error as IPython 9 reads it
            cell.masked = _mask_lines(lines, one_line)
    if cell_magic and not _parses(cell.masked):
        # IPython hands the body to the magic as a string: the cell is valid IPython.
        cell.skipped = f"%%{cell_magic} cell whose body is not Python"
        cell.masked = "\n".join("" for _ in lines)
    return cell


_MARGIN = re.compile(r"[ \t]*")


def _ipython_readings(lines: list[str]) -> list[tuple[list[str], tuple[int, ...]]]:
    """The lines of a cell whose text starts with a blank or indented line, as IPython reads
    them, each with the columns taken off each line (``()``: none).

    IPython drops leading blank lines, then takes the indentation off (the
    ``leading_indent`` cleanup transform): from 9.0.2 on, ``textwrap.dedent`` (the margin
    common to every line); from 7.0 to 9.0.1 (Colab runs 7.34) and in the input splitter
    before it, the first line's own indentation, from each line that starts with it. They
    differ only when a later line is less indented than the first (tensorflow/docs'
    ``custom_layers.ipynb`` cell 20: ``" my_seq = tf.keras.Sequential([...,"`` then
    ``"my_seq(...)"``), which IPython up to 9.0.1 ran and 9.0.2 on rejects: both readings are
    returned then, IPython 9's first, and the cell is read as the first that parses."""
    first = next((ln for ln in lines if ln.strip()), "")
    margin = _MARGIN.match(first).group()
    dedented = textwrap.dedent("\n".join(lines)).split("\n")
    if not margin:  # only blank lines emptied: no column moves
        return [(dedented, ())]
    readings = [(dedented, _taken(lines, dedented))]
    if not all(ln.startswith(margin) for ln in lines if ln.strip()):
        older = [ln[len(margin):] if ln.startswith(margin) else ln for ln in lines]
        readings.append((older, _taken(lines, older)))
    return readings


def _taken(lines: list[str], dedented: list[str]) -> tuple[int, ...]:
    return tuple(len(a) - len(b) for a, b in zip(lines, dedented, strict=True))


def _may_hold_blank_line(text: str) -> bool:
    """Some line holds only spaces and tabs (`_BLANK_LINE`): one ends in a blank."""
    return " \n" in text or "\t\n" in text or text.endswith((" ", "\t"))


def _mask_lines(lines: list[str], one_line: bool, joined: str | None = None) -> str:
    """The cell's (dedented) lines with IPython's syntax masked, line for line (``joined``:
    the lines joined, when the caller has that text)."""
    text = "\n".join(lines) if joined is None else joined
    if not _may_hold_magic(text, one_line):
        # Most cells hold no line that could be a magic: no need to follow brackets and
        # strings line by line to know which candidates IPython would see. (A `%%` cell
        # never comes here: its first line is a candidate.)
        return text
    out: list[str] = []
    depth, quote, cont, magic_cont = 0, None, False, False
    for line in lines:
        stripped = line.strip()
        if magic_cont:  # backslash continuation of a masked line
            out.append("")
            magic_cont = line.rstrip().endswith("\\")
            continue
        if depth == 0 and quote is None and not cont and _is_magic(stripped, one_line):
            indent = line[: len(line) - len(line.lstrip())]
            out.append(f"{indent}pass")
            magic_cont = line.rstrip().endswith("\\")
            continue
        out.append(line)
        depth, quote = _scan(line, depth, quote)
        cont = quote is None and line.rstrip().endswith("\\")
    return "\n".join(out)


# Kernels of another language known by their name alone (Colab's Swift for TensorFlow
# notebooks say only `{"name": "swift", "display_name": "Swift"}`): the name's first word.
# A name outside the table is taken for Python: custom Python kernels are named anything
# (`tf2`, `conda-env-ml-py`, `Python [conda env:tf]`).
_KERNEL_LANGUAGES = {
    "swift": "Swift", "ir": "R", "r": "R", "julia": "Julia", "scala": "Scala",
    "bash": "Bash", "javascript": "JavaScript", "nodejs": "JavaScript",
    "ijavascript": "JavaScript", "typescript": "TypeScript", "tslab": "TypeScript",
    "java": "Java", "ijava": "Java", "kotlin": "Kotlin", "gophernotes": "Go", "go": "Go",
    "rust": "Rust", "evcxr": "Rust", "xcpp": "C++", "cling": "C++", "ruby": "Ruby",
    "haskell": "Haskell",
    "octave": "Octave", "matlab": "MATLAB", "sas": "SAS", "stata": "Stata",
    "powershell": "PowerShell", "perl": "Perl", "lua": "Lua", "clojure": "Clojure",
    "wolfram": "Wolfram", "sparkr": "R",
}
_FIRST_NAME_WORD = re.compile(r"[a-z]+")  # `julia-1.9` → julia, `xcpp17` → xcpp


def notebook_language(meta: dict[str, Any]) -> str:
    """The notebook's kernel language: ``kernelspec.language``, else
    ``language_info.name``, else a known language that ``kernelspec.name`` or
    ``display_name`` starts with (``swift``, ``ir``, ``julia-1.9``); ``""`` when none says."""
    spec = meta.get("kernelspec")
    spec = spec if isinstance(spec, dict) else {}
    info = meta.get("language_info")
    lang = str(spec.get("language") or "")
    if not lang and isinstance(info, dict):
        lang = str(info.get("name") or "")
    if lang:
        return lang
    for key in ("name", "display_name"):
        m = _FIRST_NAME_WORD.match(str(spec.get(key) or "").strip().lower())
        if m and m.group() in _KERNEL_LANGUAGES:
            return _KERNEL_LANGUAGES[m.group()]
    return ""


def read_notebook(text: str, path: str) -> tuple[dict | None, list[dict], str, Finding | None]:
    """→ (notebook, cells, skip reason, error). ``cells`` are the raw cell dicts."""
    try:
        nb = json.loads(text)
    except json.JSONDecodeError as exc:
        return None, [], "", error_finding(path, f"not a valid notebook (JSON: {exc.msg})",
                                           line=exc.lineno, column=exc.colno - 1,
                                           hint=JSON_HINT)
    if not isinstance(nb, dict):
        return None, [], "", error_finding(path, "not a notebook: the JSON is not an object",
                                           hint=JSON_HINT)
    raw_meta = nb.get("metadata")
    meta: dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
    lang = notebook_language(meta)
    if lang and lang.lower() not in ("python", "python3", "python2", "ipython", "ipython3"):
        return nb, [], f"the notebook's kernel language is {lang}, not Python", None
    cells = nb.get("cells")
    if cells is None and isinstance(nb.get("worksheets"), list):
        # nbformat 3: the cells of every worksheet, in order (the dicts themselves, so a fix
        # written to one lands in ``nb``); numbered over all of them.
        cells = [c for ws in nb["worksheets"] if isinstance(ws, dict)
                 and isinstance(ws.get("cells"), list) for c in ws["cells"]]
    if not isinstance(cells, list):
        return None, [], "", error_finding(path, "not a notebook: no list of cells",
                                           hint=JSON_HINT)
    return nb, cells, "", None


def cell_source(cell: dict) -> str | None:
    """A cell's source as one string (a list of lines joined; nbformat 3's ``input``), or
    ``None`` where the JSON holds something else there (``["y = 1\n", 5]``, a number)."""
    src = cell.get("source", cell.get("input", ""))
    if isinstance(src, list):
        return "".join(src) if all(isinstance(line, str) for line in src) else None
    if src is None or isinstance(src, str):
        return src or ""
    return None


def cell_text(cell: dict) -> str:
    """A cell's source as one string; empty where it is not text (see `cell_source`)."""
    text = cell_source(cell)
    return "" if text is None else text


def _not_text(cell: dict) -> str:
    """What a cell whose source is not text holds instead, for its TFP000."""
    src = cell.get("source", cell.get("input"))
    if isinstance(src, list):
        odd = next(x for x in src if not isinstance(x, str))
        return f"a list holding {type(odd).__name__} {json.dumps(odd)[:40]}"
    return f"{type(src).__name__} {json.dumps(src)[:40]}"


def _cell_error(text: str) -> Exception:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(text)
    except (SyntaxError, ValueError, MemoryError, RecursionError) as exc:
        return exc
    return SyntaxError("the cell parses alone but not in place")


def _python2_cell(masked: str, line_no: int, path: str) -> tuple[str, list[ast.stmt]] | None:
    """A cell of a Python 2 kernel read as Python 2 (:mod:`tfperf.lint.python2`: a copy with
    print statements and the like rewritten in place, same lines), with its statements put
    on their module lines; ``None`` where the copy does not parse either."""
    from tfperf.lint import python2

    copy = python2.normalise(masked)
    if copy is None:
        return None
    try:
        return copy, ast.parse("\n" * line_no + copy, filename=path).body
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None


def _parse_error(cell: Cell, path: str, kernel: tuple[int, int] | None) -> Finding:
    exc = _cell_error(cell.masked)  # its message and place as the cell alone
    if isinstance(exc, SyntaxError):
        return syntax_error_finding(path, cell.masked, exc, f"cell {cell.index}", kernel,
                                    cell.indent(exc.lineno), cell=cell.index, hint=CELL_HINT)
    return error_finding(path, f"cannot parse cell {cell.index}: {exc}", cell=cell.index,
                         hint=CELL_HINT)


def build_module(cells: list[dict], path: str, kernel: tuple[int, int] | None = None) -> Module:
    """The notebook's code cells as one module (``kernel``: the Python its metadata says it
    ran on, named in the TFP000 of a cell that only a newer Python parses; on a Python 2
    kernel a cell that does not parse is read as Python 2, as a Python 2 ``.py`` file is)."""
    mod = Module("")
    parts: list[str] = []
    body: list[ast.stmt] = []
    line_no = 0
    with warnings.catch_warnings():  # once for all cells: it costs as much as a small parse
        warnings.simplefilter("ignore")
        for i, raw in enumerate(cells, start=1):
            if not isinstance(raw, dict) or raw.get("cell_type") != "code":
                continue
            text = cell_source(raw)
            if text is None:  # malformed JSON for a cell: said, and the others analysed
                cell = mod.cells[i] = Cell(i, "", skipped="its source is not text")
                cell.error = error_finding(
                    path, f"cell {i} is not read: its source is not text ({_not_text(raw)})",
                    line=1, column=0, cell=i,
                    hint="a notebook cell's source is a string or a list of strings; "
                         "fix the cell in the JSON or exclude the notebook")
                mod.line_map.append((i, 1))
                parts.append("")
                line_no += 1
                continue
            cell = mask_cell(Cell(i, text))
            mod.cells[i] = cell
            cell_lines = cell.masked.split("\n")
            if not cell.skipped and cell.masked.strip():
                try:
                    # Blank lines in front put the cell's nodes on their module lines; the
                    # tokenizer skips them for next to nothing (ast.increment_lineno walks).
                    body.extend(ast.parse("\n" * line_no + cell.masked, filename=path).body)
                except (SyntaxError, ValueError, MemoryError, RecursionError):
                    py2 = _python2_cell(cell.masked, line_no, path) \
                        if kernel is not None and kernel[0] == 2 else None
                    if py2 is not None:
                        cell.masked, cell.python2 = py2[0], True
                        cell_lines = cell.masked.split("\n")
                        body.extend(py2[1])
                    else:
                        cell.error = _parse_error(cell, path, kernel)
                        cell_lines = ["" for _ in cell_lines]  # left out; the others analysed
            mod.line_map.extend(zip(repeat(i), range(1, len(cell_lines) + 1)))
            parts.append("\n".join(cell_lines))
            line_no += len(cell_lines)
    mod.text = "\n".join(parts) + ("\n" if parts else "")
    mod.tree = ast.Module(body=body, type_ignores=[])
    return mod


def _to_cell(mod: Module, f: Finding) -> Finding:
    loc = f.location
    if loc is None or loc.line is None or not (1 <= loc.line <= len(mod.line_map)):
        return f
    cell, line = mod.line_map[loc.line - 1]
    end_line = loc.end_line
    if end_line is not None and 1 <= end_line <= len(mod.line_map):
        end_cell, end_line = mod.line_map[end_line - 1]
        if end_cell != cell:
            end_line = None
    source = mod.cells.get(cell)
    shift = source.indent if source is not None else (lambda line: 0)

    new_loc = Location(path=loc.path, line=line, column=_plus(loc.column, shift(line)),
                       end_line=end_line,
                       end_column=_plus(loc.end_column, shift(end_line)) if end_line else None,
                       cell=cell)
    fix = f.fix
    if fix is not None:
        edits = []
        for e in fix.edits:
            c1, l1 = mod.line_map[e.line - 1] if e.line <= len(mod.line_map) else (0, 0)
            c2, l2 = mod.line_map[e.end_line - 1] if e.end_line <= len(mod.line_map) else (0, 0)
            if c1 != cell or c2 != cell or ("\n" in e.content and source is not None
                                             and any(source.indents)):
                fix = None  # a fix across cells, or re-indenting a dedented cell: not offered
                break
            edits.append(Edit(l1, e.column + shift(l1), l2, e.end_column + shift(l2),
                              e.content))
        else:
            fix = Fix(fix.applicability, tuple(edits), fix.description)
    return replace(f, location=new_loc, fix=fix)


def _plus(column: int | None, shift: int) -> int | None:
    return None if column is None else column + shift


def kernel_python(nb: dict | None) -> tuple[int, int] | None:
    """The Python the notebook last ran on, from ``metadata.language_info.version``."""
    meta = nb.get("metadata") if isinstance(nb, dict) else None
    info = meta.get("language_info") if isinstance(meta, dict) else None
    version = info.get("version") if isinstance(info, dict) else None
    m = re.match(r"(\d+)\.(\d+)", version) if isinstance(version, str) else None
    if m:
        return (int(m.group(1)), int(m.group(2)))
    spec = meta.get("kernelspec") if isinstance(meta, dict) else None
    name = spec.get("name") if isinstance(spec, dict) else None
    # A kernel named python2 (no version recorded): the last Python 2, as jupyter named it.
    return (2, 7) if isinstance(name, str) and name.lower() == "python2" else None


def _pos_to_cell(mod: Module, pos: list[int]) -> list[int]:
    """A summary's position in the joined module → the same place in its cell."""
    line, col, end_line, end_col, _ = pos
    if not 1 <= line <= len(mod.line_map):
        return pos
    cell, cell_line = mod.line_map[line - 1]
    source = mod.cells.get(cell)
    shift = source.indent if source is not None else (lambda line: 0)
    end_cell, cell_end = mod.line_map[end_line - 1] if 1 <= end_line <= len(mod.line_map) \
        else (cell, cell_line)
    if end_cell != cell:
        cell_end, end_col = cell_line, col
    return [cell_line, col + shift(cell_line), cell_end, end_col + shift(cell_end), cell]


def lint_cells(cells: list[dict], path: str, dispatcher: Dispatcher,
               kernel: tuple[int, int] | None = None,
               summary_out: list | None = None,
               notes: list[str] | None = None) -> list[Finding]:
    mod = build_module(cells, path, kernel)
    py2 = [i for i, c in mod.cells.items() if c.python2]
    if py2 and notes is not None:
        from tfperf.lint.python2 import NOTE
        which = f"cell{'s' if len(py2) > 1 else ''} {', '.join(map(str, py2))}"
        notes.append(f"{path}: {which} (a Python 2 kernel) {NOTE}")
    if not dispatcher.version_set:  # the notebook's own `!pip install tensorflow==X` pins it
        pin = notebook_pin([cell_text(c) for c in cells
                            if isinstance(c, dict) and c.get("cell_type") == "code"])
        if pin is not None and (pin.version, pin.upper) != (dispatcher.tf_version,
                                                            dispatcher.tf_newest):
            dispatcher = copy.copy(dispatcher)
            dispatcher.tf_version, dispatcher.tf_newest = pin.version, pin.upper
        if pin is not None and dispatcher.infer_target:  # pinned: no guess from the code
            dispatcher = copy.copy(dispatcher)
            dispatcher.infer_target = False
    findings = [c.error for c in mod.cells.values() if c.error is not None]
    if mod.text.strip():
        summaries: list = []
        for f in lint_source(mod.text, path, dispatcher=dispatcher, tree=mod.tree,
                             summary_out=summaries):
            findings.append(_to_cell(mod, f))
        for summary in summaries:
            summary.map_positions(lambda pos: _pos_to_cell(mod, pos))
            summary.move_noqa(lambda pos: _pos_to_cell(mod, pos))
        if summary_out is not None:
            summary_out.extend(summaries)
    findings.sort(key=lambda f: (f.location.cell or 0, f.location.line or 0,
                                 f.location.column or 0, f.code) if f.location else (0,))
    return findings


def _layout(text: str) -> dict[str, Any] | None:
    """The json.dumps settings that reproduce ``text`` exactly, if any."""
    nb = json.loads(text)
    for indent in (1, 2, 4, None, 0, 3):
        for ascii_ in (False, True):
            for seps in ((",", ": "), (", ", ": ")):
                out = json.dumps(nb, indent=indent, ensure_ascii=ascii_, separators=seps)
                for tail in ("\n", ""):
                    if out + tail == text:
                        return {"indent": indent, "ensure_ascii": ascii_, "separators": seps,
                                "tail": tail}
    return None


def _set_source(raw: dict, text: str) -> None:
    key = "source" if "source" in raw else "input"
    if isinstance(raw.get(key), list):
        raw[key] = text.splitlines(keepends=True)
    else:
        raw[key] = text


def lint_notebook_text(text: str, path: str, dispatcher: Dispatcher,
                       options: RunOptions, summary_out: list | None = None) -> FileResult:
    result = FileResult(path)
    nb, cells, skip, err = read_notebook(text, path)
    if err is not None:
        result.findings = [err]
        return result
    if skip:
        result.notes.append(f"{path}: skipped: {skip}")
        return result
    kernel = kernel_python(nb)
    findings = lint_cells(cells, path, dispatcher, kernel, summary_out, result.notes)
    if not (options.fix or options.diff) or not any(wanted(f, options.unsafe) for f in findings):
        result.findings = findings
        return result
    layout = _layout(text)
    if layout is None:
        result.findings = findings
        result.notes.append(f"{path}: fixes not applied: the notebook's JSON layout "
                            "could not be reproduced exactly")
        return result
    applied = 0
    for _ in range(MAX_PASSES):
        by_cell: dict[int, list[Fix]] = {}
        for f in findings:
            if wanted(f, options.unsafe) and f.location and f.location.cell:
                by_cell.setdefault(f.location.cell, []).append(f.fix)  # type: ignore[arg-type]
        changed = 0
        for idx, fixes in by_cell.items():
            raw = cells[idx - 1]
            old = cell_text(raw)
            new, n, _ = apply_edits(old, fixes)
            if n and new != old and not mask_cell(Cell(idx, new)).skipped \
                    and _parses(mask_cell(Cell(idx, new)).masked):
                _set_source(raw, new)
                changed += n
        if not changed:
            break
        applied += changed
        if summary_out is not None:
            summary_out.clear()
        findings = lint_cells(cells, path, dispatcher, kernel, summary_out)
    result.findings = findings
    if applied:
        new_text = json.dumps(nb, indent=layout["indent"], ensure_ascii=layout["ensure_ascii"],
                              separators=layout["separators"]) + layout["tail"]
        result.fixed, result.new_text = applied, new_text
        if options.diff:
            result.diff = unified_diff(path, text, new_text)
    return result
