"""Lint one module: parse, index once, dispatch nodes to rules, filter ``# noqa``.

The engine never crashes on its input: a module that does not parse, is not text or has a
bad encoding yields one ``TFP000`` finding; a rule that raises on a module yields one
``TFP001`` finding naming the rule and the file, and every other rule still runs.
"""

from __future__ import annotations

import ast
import codecs
import io
import re
import tokenize
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING

from tfperf.core.findings import Finding, Location, Status
from tfperf.lint.rule import Rule
from tfperf.lint.semantic import Context
from tfperf.lint.target import NEWEST_KNOWN

if TYPE_CHECKING:
    from tfperf.analysis.summary import ModuleSummary

SYNTAX_ERROR, INTERNAL_ERROR = "TFP000", "TFP001"
# Compiled on first use (re's cache): only a module with a finding and a noqa comment needs it.
_NOQA = r"#\s*noqa(?::\s*(?P<codes>[A-Za-z]+[0-9]*(?:[\s,]+[A-Za-z]+[0-9]*)*))?"


def error_finding(path: str, reason: str, line: int | None = None,
                  column: int | None = None, cell: int | None = None,
                  hint: str = "tfperf reads the file as Python source; fix or exclude it"
                  ) -> Finding:
    """The ``TFP000`` finding: this file (or cell) could not be analysed, and why."""
    return Finding(code=SYNTAX_ERROR, name="syntax-error", message=reason,
                   status=Status.FAIL, hint=hint,
                   location=Location(path=path, line=line, column=column, cell=cell))


def syntax_error_finding(path: str, source: str, exc: SyntaxError, what: str = "",
                         kernel: tuple[int, int] | None = None, column_shift: int = 0,
                         cell: int | None = None,
                         hint: str | None = None) -> Finding:
    """TFP000 for ``source`` (a file, or ``what``: ``cell N``) that does not parse: the
    parser's message, or which Python the code needs when it is syntax of a newer one (see
    :mod:`tfperf.lint.newer_syntax`; ``kernel``: the Python a notebook says it ran on)."""
    from tfperf.lint import newer_syntax

    newer = newer_syntax.reason(source, exc, kernel)
    col = (exc.offset - 1 + column_shift) if exc.offset else None
    prefix = f"cannot parse {what}".rstrip()
    if newer is None:
        return error_finding(path, f"{prefix}: {exc.msg}", line=exc.lineno, column=col,
                             cell=cell, **({"hint": hint} if hint else {}))
    return error_finding(path, f"{prefix}: {newer}", line=exc.lineno, column=col, cell=cell,
                         hint=newer_syntax.hint())


def internal_error_finding(path: str, rule: Rule | None, exc: BaseException) -> Finding:
    where = f"rule {rule.code}" if rule is not None else "the semantic model"
    return Finding(code=INTERNAL_ERROR, name="internal-error",
                   message=f"internal error in {where} on {path}: "
                           f"{type(exc).__name__}: {exc}",
                   status=Status.FAIL,
                   hint="a tfperf bug; please report it with the file (the other rules ran)",
                   location=Location(path=path, line=1, column=0))


def decode_source(data: bytes, path: str) -> tuple[str | None, Finding | None]:
    """Bytes → text as Python would read them (BOM, PEP 263 cookie), or a TFP000 reason."""
    if b"\x00" in data:
        return None, error_finding(path, "not a text file (contains NUL bytes)")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        head = b"\n".join(data.splitlines()[:2])
        if b"coding" in head:
            return None, error_finding(path, f"bad encoding declaration: {exc}")
        return None, error_finding(path, "cannot decode as utf-8 (and no encoding "
                                         "declaration says otherwise)")
    try:
        codecs.lookup(encoding)
        text = data.decode(encoding)
    except (LookupError, UnicodeDecodeError) as exc:
        return None, error_finding(path, f"cannot decode as {encoding}: {exc}")
    if text.startswith("\ufeff"):
        text = text[1:]
    return text, None


def parse(source: str, path: str) -> tuple[ast.Module | None, Finding | None]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarning for odd escapes is not our business
            return ast.parse(source, filename=path), None
    except SyntaxError as exc:
        return None, syntax_error_finding(path, source, exc)
    except (ValueError, MemoryError, RecursionError) as exc:
        return None, error_finding(path, f"cannot parse: {exc}")


def python2_copy(source: str, path: str) -> tuple[str, ast.Module] | None:
    """``source`` read as Python 2 (:mod:`tfperf.lint.python2`): the normalised copy and its
    tree, when the text does not parse as it is, is not syntax of a newer Python, and the
    copy parses; else ``None``."""
    from tfperf.lint import newer_syntax, python2

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(source, filename=path)
        return None
    except SyntaxError as exc:
        if newer_syntax.newer_syntax(source, exc) is not None:
            return None
    except (ValueError, MemoryError, RecursionError):
        return None
    copy = python2.normalise(source)
    if copy is None:
        return None
    tree, _ = parse(copy, path)
    return None if tree is None else (copy, tree)


class Dispatcher:
    """The rules of one run, arranged for one walk: node type → rules that want it."""

    def __init__(self, rules: Sequence[Rule], tf_version: tuple[int, int] = NEWEST_KNOWN,
                 version_set: bool = False, tf_newest: tuple[int, int] | None = None,
                 defer_project: bool = False, infer_target: bool = False) -> None:
        self.rules = list(rules)
        self.tf_version = tf_version
        self.tf_newest = tf_newest  # the newest release admitted (None: tf_version only)
        # No setting and no pin chose the version (it is the installed TF's): a module whose
        # own APIs are TF 1.x / multi-backend Keras targets TF 1.15 (lint/code_target.py).
        self.infer_target = infer_target
        # With infer_target: the project pins multi-backend Keras (2.2 or older), so a module
        # importing standalone keras targets TF 1.x (lint/code_target.py).
        self.keras_graph = False
        # Set by the user (tf-version): a notebook's own pip pin does not override it.
        self.version_set = version_set
        self.by_type: dict[type, list[Rule]] = {}
        for rule in self.rules:
            for t in rule.node_types:
                self.by_type.setdefault(t, []).append(rule)
        # Each call filter's fixed parts, worked out once per run instead of once per module.
        self.call_filters = {id(r): _CallFilter(r) for r in self.rules
                             if ast.Call in r.node_types}
        self.module_rules = [r for r in self.rules if r.wants_module()]
        self.gated = [r for r in self.rules if r.requires_imports is not None]
        self.needs_tf = [r.code for r in self.rules if r.needs_tf]
        self.batching = frozenset(r.code for r in self.rules if r.batches_loops)
        self.module_gated = [r for r in self.rules if r.gated()]
        # Rules with a cross-module check: each module is then summarised too.
        self.project_rules = [r for r in self.rules if r.wants_project()]
        # Set by a run over many files: the project's checks wait for every summary (the
        # caller runs them); otherwise each module is its own project.
        self.defer_project = defer_project

    def run(self, tree: ast.Module, source: str, path: str,
            summary_out: list[ModuleSummary] | None = None) -> list[Finding]:
        """Findings of every rule on one parsed module; with ``summary_out`` (and rules with
        a cross-module check), the module's summary is appended to it."""
        try:
            ctx = Context(tree, source, path, self.tf_version, self.tf_newest)
            if self.infer_target:
                from tfperf.lint.code_target import inferred_target

                ctx.tf_unpinned = True
                inferred = inferred_target(ctx, self.keras_graph)
                if inferred is not None:
                    ctx.tf_version, ctx.tf_newest = inferred.version, inferred.upper
        except Exception as exc:  # a bug in the semantic model: report, don't crash the run
            return [internal_error_finding(path, None, exc)]
        findings: list[Finding] = []
        broken: set[str] = set()  # rules that raised here, and rules that cannot fire here
        if self.needs_tf and not ctx.imports_tf:
            broken.update(self.needs_tf)
        roots = ctx.imported_roots
        for rule in self.gated:
            if roots.isdisjoint(rule.requires_imports):  # type: ignore[arg-type]
                broken.add(rule.code)
        for rule in self.module_gated:
            if rule.code in broken:
                continue
            try:
                if not rule.applies_to(ctx):
                    broken.add(rule.code)
            except Exception as exc:
                broken.add(rule.code)
                findings.append(internal_error_finding(path, rule, exc))
        calls = _CallIndex(ctx, self.call_filters)
        extend = findings.extend
        for typ, rules in self.by_type.items():
            nodes = ctx.nodes_of(typ)
            if not nodes:
                continue
            for rule in rules:
                if rule.code in broken:
                    continue
                check = rule.check  # bound once: this loop runs for every node of the module
                try:
                    for node in (calls.for_rule(rule) if typ is ast.Call else nodes):
                        extend(check(node, ctx))
                except Exception as exc:  # one broken rule must not stop the others
                    broken.add(rule.code)
                    findings.append(internal_error_finding(path, rule, exc))
        for rule in self.module_rules:
            if rule.code in broken:
                continue
            try:
                findings.extend(rule.check_module(ctx))
            except Exception as exc:
                broken.add(rule.code)
                findings.append(internal_error_finding(path, rule, exc))
        if ctx.dead_lines and findings:  # a rule that walked into unreachable code
            findings = [f for f in findings if f.location is None
                        or f.location.line not in ctx.dead_lines]
        if self.batching and findings:
            findings = _outside_towers(ctx, findings, self.batching)
        if summary_out is not None and self.project_rules:
            try:
                summary_out.append(module_summary(
                    ctx, [r for r in self.project_rules if r.code not in broken]))
            except Exception as exc:  # a bug in the project model: the module's rules ran
                findings.append(internal_error_finding(path, None, exc))
        return findings


def _outside_towers(ctx: Context, findings: list[Finding],
                    batching: frozenset[str]) -> list[Finding]:
    """``findings`` less those of loop-batching rules whose innermost loop is a per-device
    tower loop (a loop or comprehension nested in a tower keeps its findings)."""
    if not any(f.code in batching for f in findings):
        return findings
    from tfperf.analysis.loops import in_tower

    return [f for f in findings if f.code not in batching or f.location is None
            or f.location.line is None
            or not in_tower(ctx, f.location.line, f.location.column)]


def module_summary(ctx: Context, publishers: Sequence[Rule]) -> ModuleSummary:
    """The module's summary (:mod:`tfperf.analysis.summary`) with its ``# noqa`` lines."""
    from tfperf.analysis.summary import summarize

    summary = summarize(ctx, publishers)
    if "noqa" in ctx.source.lower():
        for i, line in enumerate(ctx.lines, start=1):
            codes = noqa_codes(line)
            if codes is not None:
                summary.noqa[f"0:{i}"] = ",".join(sorted(codes))
    return summary


def project_findings(rules: Sequence[Rule], summaries: Sequence[ModuleSummary],
                     known: Sequence[Finding] = ()) -> list[Finding]:
    """The cross-module checks of ``rules`` over the project these summaries make, ``#
    noqa`` applied; a finding a module's own check already made (``known``: same code,
    file and line) is not repeated. A check that raises gives one TFP001."""
    if not rules or not summaries:
        return []
    from tfperf.analysis.project import Project

    project = Project(summaries)
    seen = {(f.code, f.location.path, f.location.cell, f.location.line)
            for f in known if f.location is not None}
    out: list[Finding] = []
    for rule in rules:
        try:
            found = list(rule.check_project(project))
        except Exception as exc:
            out.append(internal_error_finding(summaries[0].path, rule, exc))
            continue
        for f in found:
            loc = f.location
            m = project.modules.get(loc.path or "") if loc is not None else None
            if loc is None or m is None:
                continue
            if (f.code, loc.path, loc.cell, loc.line) in seen or m.suppressed(
                    f.code, [loc.line or 0, 0, 0, 0, loc.cell or 0]):
                continue
            seen.add((f.code, loc.path, loc.cell, loc.line))
            out.append(f)
    return out


class _CallIndex:
    """Which of a module's calls a rule with a call filter (:attr:`Rule.callee_names`,
    :attr:`Rule.callee_qualnames`) can report on, in walk order, from the calls grouped by
    the callee's spelled last name (:meth:`Context.call_groups`)."""

    def __init__(self, ctx: Context, filters: dict[int, _CallFilter]) -> None:
        self.calls: list[ast.Call] = ctx.calls
        self.ctx = ctx
        self.filters = filters
        self._order: dict[ast.Call, int] | None = None
        self._name_calls: list[list[ast.Call]] | None = None  # calls of resolvable names

    def _in_order(self, parts: list[list[ast.Call]]) -> list[ast.Call]:
        parts = [p for p in parts if p]
        if len(parts) <= 1:
            return parts[0] if parts else []
        if self._order is None:
            self._order = {c: i for i, c in enumerate(self.calls)}  # nodes hash by identity
        return sorted(set().union(*parts), key=self._order.__getitem__)

    def for_rule(self, rule: Rule) -> list[ast.Call]:
        f = self.filters[id(rule)]  # the dispatcher's rules outlive every module
        if f.names is None and f.qualnames is None:
            return self.calls
        by_attr, by_name = self.ctx.call_groups()
        if f.names is not None:
            return self._in_order([*(by_attr[n] for n in by_attr.keys() & f.names),
                                   *(by_name[n] for n in by_name.keys() & f.names)])
        if f.tf_only and not self.ctx.imports_tf:
            return []  # nothing here resolves to TensorFlow or Keras
        # A bare name may be an alias (`from tensorflow import transpose as T`): every call
        # of a bare name that may resolve is a candidate; an attribute call only with the
        # right name. Filtered group by group, then put in walk order: what is sorted is
        # the few calls that match, not every call of a bare name.
        qualname, qualnames = self.ctx.call_qualname, f.qualnames
        if self._name_calls is None:
            resolvable = self.ctx.resolvable_names
            self._name_calls = [lst for n, lst in by_name.items() if n in resolvable]
        groups = [*(by_attr[n] for n in by_attr.keys() & f.lasts), *self._name_calls]
        return self._in_order([[c for c in g if qualname(c) in qualnames]  # type: ignore[operator]
                               for g in groups])


class _CallFilter:
    """A rule's call filter (:attr:`Rule.callee_names`, :attr:`Rule.callee_qualnames`) with
    what the engine derives from it: the last names of the qualified names, and whether they
    are all TensorFlow or Keras APIs (then a module importing neither has no candidate)."""

    __slots__ = ("lasts", "names", "qualnames", "tf_only")

    def __init__(self, rule: Rule) -> None:
        self.names = rule.callee_names
        self.qualnames = rule.callee_qualnames
        qualnames = self.qualnames or ()
        self.lasts = frozenset(q.rsplit(".", 1)[-1] for q in qualnames)
        self.tf_only = all(q.split(".", 1)[0] in ("tensorflow", "keras") for q in qualnames)


def noqa_codes(line: str) -> set[str] | None:
    """``None``: no noqa comment; empty set: bare ``# noqa`` (everything); else the codes
    (prefixes allowed: ``# noqa: TFP1``)."""
    if "noqa" not in line.lower():
        return None
    m = re.search(_NOQA, line, re.IGNORECASE)
    if m is None:
        return None
    codes = m.group("codes")
    return set() if not codes else {c.upper() for c in re.split(r"[\s,]+", codes) if c}


def suppressed(finding: Finding, lines: Sequence[str]) -> bool:
    loc = finding.location
    if loc is None or loc.line is None or not (1 <= loc.line <= len(lines)):
        return False
    codes = noqa_codes(lines[loc.line - 1])
    if codes is None:
        return False
    return not codes or any(finding.code.startswith(c) for c in codes)


def sort_key(f: Finding) -> tuple:
    loc = f.location or Location()
    return (loc.path or "", loc.cell or 0, loc.line or 0, loc.column or 0, f.code, f.message)


def lint_source(source: str, path: str = "<string>", rules: Sequence[Rule] | None = None,
                dispatcher: Dispatcher | None = None,
                tf_version: tuple[int, int] = NEWEST_KNOWN,
                tree: ast.Module | None = None,
                tf_newest: tuple[int, int] | None = None,
                summary_out: list[ModuleSummary] | None = None,
                infer_target: bool = False,
                notes: list[str] | None = None) -> list[Finding]:
    """All findings of ``rules`` (default: every registered rule) in one module's source,
    for code targeting TensorFlow ``tf_version`` (up to ``tf_newest``, when its pin admits
    later releases), sorted, ``# noqa`` applied. ``tree``, if
    given, is ``source`` already parsed (a notebook's cells, parsed one by one).
    ``infer_target``: no pin chose ``tf_version``, so a module written for TF 1.x or
    multi-backend Keras targets TF 1.15 (:mod:`tfperf.lint.code_target`).
    A module that parses only as Python 2 is linted on a copy normalised in place
    (:func:`python2_copy`: same lines), and one line saying so goes to ``notes``.

    Rules with a cross-module check see the module as a project of one, unless the
    dispatcher defers them (``defer_project``): then the module's summary goes to
    ``summary_out`` and the caller runs them over every module's summary."""
    if dispatcher is None:
        if rules is None:
            from tfperf.lint.registry import all_rules
            rules = all_rules()
        dispatcher = Dispatcher(rules, tf_version, tf_newest=tf_newest,
                                infer_target=infer_target)
    if tree is None:
        tree, err = parse(source, path)
        if err is not None:
            py2 = python2_copy(source, path)
            if py2 is None:
                return [err]
            from tfperf.lint.python2 import NOTE
            source, tree = py2
            if notes is not None:
                notes.append(f"{path}: {NOTE}")
    alone = bool(dispatcher.project_rules) and not dispatcher.defer_project
    out = [] if alone else summary_out
    findings = dispatcher.run(tree, source, path, out)  # type: ignore[arg-type]
    if alone and out:
        findings += project_findings(dispatcher.project_rules, out, findings)
    if findings and "noqa" in source.lower():
        from tfperf.lint.semantic import split_lines
        lines = split_lines(source)
        findings = [f for f in findings if not suppressed(f, lines)]
    findings.sort(key=sort_key)
    return _dedupe(findings)


def _dedupe(findings: list[Finding]) -> list[Finding]:
    out: list[Finding] = []
    seen: set[tuple] = set()
    for f in findings:
        key = (f.code, f.location, f.message)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out
