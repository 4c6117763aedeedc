"""What a lint rule is: one class per module in ``tfperf.lint.rules``.

A rule declares what it is (code, name, message, the article claims it rests on, its docs and
examples) and how it checks: :meth:`Rule.check` is called for every node whose type is in
``node_types`` during the engine's single walk; :meth:`Rule.check_module` once per module for
whole-module analysis. Both yield :class:`~tfperf.core.findings.Finding` objects, best built
with :meth:`Rule.finding`. See ``docs/lint-rules-guide.md``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from tfperf.core.findings import Applicability, Edit, Finding, Fix, Location, Status

if TYPE_CHECKING:
    from tfperf.analysis.project import Project
    from tfperf.lint.semantic import Context

# Sections every rule's docs must have, in this order (as ``## Heading`` lines).
DOC_SECTIONS = ("What it does", "Why is this bad?", "Example", "Use instead", "Fix safety")
# Sections a rule's docs may add after those: what the rule deliberately does not report.
OPTIONAL_DOC_SECTIONS = ("Known limitations",)

# Rule groups, as Clippy has them: what runs by default is what has earned it on code that
# no one here wrote (precision judged on a corpus of real repositories: docs/lint.md).
GROUPS = {
    "perf": "performance rules precise enough to run by default",
    "migration": "TF1 API leftovers: a migration, not a speed-up; enable with --select TFP7 "
                 "or extend-select",
    "correctness": "errors, numerics or model quality rather than time; enable with "
                   "--select correctness or the rule's code",
    "pedantic": "true but seldom worth changing on real code (a print or plot per epoch, "
                "one-off display code); enable with --select pedantic or the rule's code",
    "preview": "not yet precise enough on real code; enable with --preview",
}
DEFAULT_GROUPS = frozenset({"perf"})


def example_source(text: str) -> str:
    """An example as written in a rule: a triple-quoted string whose first line break and
    common indentation are not part of the code (Fixit's convention), so examples read as
    code in the rule's module."""
    import textwrap

    return textwrap.dedent(text[1:] if text.startswith("\n") else text)


class _Example:
    """Code as a rule module writes it, dedented (:func:`example_source`) on first read.

    Every lint run imports every rule, and with them hundreds of examples that only tests and
    docs read: a plain class with lazy properties costs next to nothing to build, where a
    frozen dataclass dedenting in ``__post_init__`` cost a pre-commit run on one small file
    about a tenth of its time."""

    __slots__ = ("_files", "_raw", "_source", "notebook", "spelling", "tf_version")

    def __init__(self, source: str, tf_version: str | None = None, *,
                 files: dict[str, str] | None = None, notebook: bool = False,
                 spelling: str = "") -> None:
        self._raw = source
        self._source: str | None = None
        self.tf_version = tf_version
        self._files = files
        self.notebook = notebook
        self.spelling = spelling

    @property
    def files(self) -> dict[str, str]:
        """The other modules of the example's small project (name → source, dedented as the
        example is): the example is then ``example.py`` among them, linted as a project."""
        return {k: example_source(v) for k, v in (self._files or {}).items()}

    @property
    def cells(self) -> list[str]:
        """A notebook example's code cells: its source cut at ``# %%`` lines."""
        cells: list[str] = []
        current: list[str] = []
        for line in self.source.splitlines(keepends=True):
            if line.strip() == "# %%":
                cells.append("".join(current))
                current = []
            else:
                current.append(line)
        return [*cells, "".join(current)]

    @property
    def source(self) -> str:
        if self._source is None:
            self._source = example_source(self._raw)
        return self._source

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.source!r})"


class Valid(_Example):
    """A VALID example: ``source`` must give no finding of the rule. ``tf_version``: the
    TensorFlow the example targets ("2.10", or a range: ">=2.1"; default: the newest known).
    ``files``: other modules of a small project the example is linted with; ``notebook``:
    the example is a notebook whose cells ``# %%`` lines separate; ``spelling``: which
    spelling of the rule's shape the example writes (a loop form, an index form, a value
    through a name, a helper in another module, a notebook), for the metamorphic tests."""

    __slots__ = ()


class Invalid(_Example):
    """An INVALID example: ``source`` must produce findings of the rule.

    ``count``: exact number of findings of this rule expected (``None``: at least one).
    ``lines``: the 1-based lines the findings start on, sorted (``None``: not checked).
    ``fixed``: the source after applying all of this rule's fixes, safe and unsafe
    (``None``: the rule offers no fix here, and the test checks that it offers none).
    ``tf_version``: the TensorFlow the example targets ("2.10", or a range: ">=2.1"; default:
    the newest known). ``files``, ``notebook``, ``spelling``: as for :class:`Valid`; in a
    project or a notebook, ``count`` counts the findings in every file, ``lines`` those in
    ``example.py`` (a notebook's: lines within their cells).
    """

    __slots__ = ("_fixed", "count", "lines")

    def __init__(self, source: str, count: int | None = None,
                 lines: tuple[int, ...] | None = None, fixed: str | None = None,
                 tf_version: str | None = None, *, files: dict[str, str] | None = None,
                 notebook: bool = False, spelling: str = "") -> None:
        super().__init__(source, tf_version, files=files, notebook=notebook,
                         spelling=spelling)
        self.count = count
        self.lines = lines
        self._fixed = fixed

    @property
    def fixed(self) -> str | None:
        return None if self._fixed is None else example_source(self._fixed)


class Rule:
    """Base class of every lint rule. Subclasses set the class attributes and override
    :meth:`check` and/or :meth:`check_module`. Rules are stateless: one instance serves all
    modules (and may run in worker processes)."""

    code: ClassVar[str] = ""          # "TFP101"
    name: ClassVar[str] = ""          # "python-loop-over-tensor" (kebab-case)
    message: ClassVar[str] = ""       # one line, shown for every finding
    hint: ClassVar[str] = ""          # one line: what to do instead
    claims: ClassVar[tuple[str, ...]] = ()  # article claim IDs: ("S12", "S16")
    group: ClassVar[str] = "preview"  # see GROUPS: a new rule waits in preview until measured
    docs: ClassVar[str] = ""          # markdown with the DOC_SECTIONS
    valid: ClassVar[Sequence[Valid]] = ()
    invalid: ClassVar[Sequence[Invalid]] = ()
    node_types: ClassVar[tuple[type[ast.AST], ...]] = ()
    # Optional call filters, applied by the engine before :meth:`check` sees an ``ast.Call``
    # (other node types are not filtered). Declare one only where ``check`` returns nothing
    # for every other call anyway: they exist so that a rule interested in a handful of
    # APIs is not called for each of a module's thousands of calls.
    # ``callee_names``: the callee's spelled last name (``f`` in ``f(x)``/``m.f(x)``).
    callee_names: ClassVar[frozenset[str] | None] = None
    # ``callee_qualnames``: what the callee resolves to (``ctx.call_qualname``), canonical.
    callee_qualnames: ClassVar[frozenset[str] | None] = None
    # Top-level packages (``"tensorflow"``) of which the module must import something
    # (anywhere, absolutely) for the rule to be run on it at all. Declare it only where every
    # finding needs a name resolved into one of them: e.g. a rule that needs ``tf.function``
    # cannot fire in a module that imports only ``keras``.
    requires_imports: ClassVar[frozenset[str] | None] = None
    # ``True`` where the rule reports nothing in a module that imports neither TensorFlow
    # nor Keras (``ctx.imports_tf`` is false, e.g. ``check`` returns first thing when it
    # is): the engine then skips the rule there instead of calling it for every node (about
    # half the modules of user code, and of their assignments, import neither).
    needs_tf: ClassVar[bool] = False
    fixable: ClassVar[bool] = False   # whether the rule ever offers a fix
    # ``True`` where a finding advises batching a loop's iterations into one op: the engine
    # drops such findings inside a per-device tower loop (``with tf.device(...)`` chosen by
    # the iteration, :func:`tfperf.analysis.loops.in_tower`), whose iterations
    # must stay on their own devices.
    batches_loops: ClassVar[bool] = False

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Finding]:
        """Findings for one node of a type in ``node_types``."""
        return ()

    def check_module(self, ctx: Context) -> Iterable[Finding]:
        """Findings from whole-module analysis (called once per module, after the walk)."""
        return ()

    def publish(self, ctx: Context) -> list[Any] | None:
        """Facts about this module that :meth:`check_project` needs from it (JSON-able: lists,
        dicts, strings, numbers; a position is a ``*pos`` key holding
        :func:`tfperf.analysis.summary.position`'s list, so notebooks can map it). Stored in
        the module's summary, cached with its findings."""
        return None

    def facts_need_calls(self, facts: list[Any]) -> bool:
        """Whether this module's ``facts`` ask the project about its functions and calls (who
        calls them, what they return): then its summary keeps them all. Facts that hold only
        positions and names (a class's method to report, a call site) keep it lean."""
        return True

    def check_project(self, project: Project) -> Iterable[Finding]:
        """Findings that need more than one module: asked once per run, after every module
        is summarised, of the whole project (:class:`tfperf.analysis.project.Project`). Build
        them with :meth:`project_finding`; they carry no fix."""
        return ()

    @classmethod
    def wants_project(cls) -> bool:
        return cls.check_project is not Rule.check_project

    def project_finding(self, path: str, pos: list[int], message: str | None = None, *,
                        hint: str | None = None) -> Finding:
        """A finding of this rule at a summary's position ``pos`` in the file ``path``."""
        line, col, end_line, end_col, cell = pos
        return Finding(code=self.code, name=self.name, message=message or self.message,
                       status=Status.WARN, hint=self.hint if hint is None else hint,
                       location=Location(path=path, line=line, column=col, end_line=end_line,
                                         end_column=end_col, cell=cell or None))

    def applies_to(self, ctx: Context) -> bool:
        """A cheap once-per-module gate: ``False`` only where neither :meth:`check` nor
        :meth:`check_module` can yield anything in this module (e.g. no ``tf.function`` is
        spelled anywhere), so the engine need not dispatch the rule's nodes at all."""
        return True

    @classmethod
    def gated(cls) -> bool:
        return cls.applies_to is not Rule.applies_to

    @classmethod
    def wants_module(cls) -> bool:
        return cls.check_module is not Rule.check_module

    def finding(self, ctx: Context, node: ast.AST, message: str | None = None, *,
                hint: str | None = None, fix: Fix | None = None,
                end_node: ast.AST | None = None) -> Finding:
        """A finding of this rule at ``node`` (through ``end_node`` if given)."""
        loc = ctx.location(node)
        if end_node is not None:
            end = ctx.location(end_node)
            loc = type(loc)(path=loc.path, line=loc.line, column=loc.column,
                            end_line=end.end_line, end_column=end.end_column)
        return Finding(code=self.code, name=self.name, message=message or self.message,
                       status=Status.WARN, hint=self.hint if hint is None else hint,
                       location=loc, fix=fix)

    @staticmethod
    def safe_fix(*edits: Edit, description: str = "") -> Fix:
        return Fix(Applicability.SAFE, tuple(edits), description)

    @staticmethod
    def unsafe_fix(*edits: Edit, description: str = "") -> Fix:
        return Fix(Applicability.UNSAFE, tuple(edits), description)

    @classmethod
    def summary(cls) -> dict[str, str]:
        """Plain data for renderers (SARIF's rule table, ``tfperf rules --format json``)."""
        return {"code": cls.code, "name": cls.name, "summary": cls.message,
                "help": cls.hint, "claims": ",".join(cls.claims), "group": cls.group,
                "fixable": "yes" if cls.fixable else "no"}
