"""The rule catalogue: every :class:`~tfperf.lint.rule.Rule` in ``tfperf.lint.rules``.

Rules are discovered by importing each module of the package; the catalogue is checked once
(unique codes, kebab-case names, claims; the required doc sections by tests/lint, rule by
rule) so that a malformed rule fails loudly in tests rather than quietly in a user's run.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Iterable, Sequence
from functools import lru_cache

from tfperf.lint.rule import DEFAULT_GROUPS, DOC_SECTIONS, GROUPS, OPTIONAL_DOC_SECTIONS, Rule

CODE_RE = re.compile(r"^TFP\d{3}$")
NAME_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
CLAIM_RE = re.compile(r"^S\d{1,2}$")
# Codes the engine itself reports; no rule may take them.
ENGINE_CODES = {"TFP000": "syntax-error", "TFP001": "internal-error"}


class RegistryError(Exception):
    """The rule catalogue is malformed (a programming error in a rule module)."""


def doc_problems(rule: type[Rule], docs: bool = True) -> list[str]:
    """What is wrong with a rule's declaration; empty when it is fine. ``docs=False`` leaves
    out the docs' sections (a regex over every rule's docs)."""
    problems = []
    if not CODE_RE.match(rule.code) or rule.code in ENGINE_CODES:
        problems.append(f"bad code {rule.code!r}")
    if not NAME_RE.match(rule.name):
        problems.append(f"name {rule.name!r} is not kebab-case")
    if not rule.message or "\n" in rule.message:
        problems.append("message must be one non-empty line")
    if not rule.claims or not all(CLAIM_RE.match(c) for c in rule.claims):
        problems.append(f"claims {rule.claims!r} must be article claim IDs (S1..S22)")
    if docs:
        headings = re.findall(r"^##+\s*(.+?)\s*$", rule.docs, flags=re.M)
        for section in DOC_SECTIONS:
            if section not in headings:
                problems.append(f"docs lack the section '## {section}'")
        known = [h for h in headings if h in (*DOC_SECTIONS, *OPTIONAL_DOC_SECTIONS)]
        if known != sorted(known, key=(*DOC_SECTIONS, *OPTIONAL_DOC_SECTIONS).index):
            problems.append(f"docs sections out of order: {known}")
    if rule.group not in GROUPS:
        problems.append(f"group {rule.group!r} is not one of {sorted(GROUPS)}")
    if not rule.node_types and not rule.wants_module() and not rule.wants_project():
        problems.append("neither node_types nor check_module nor check_project: the rule "
                        "can never fire")
    return problems


@lru_cache(maxsize=1)
def _load() -> tuple[type[Rule], ...]:
    import tfperf.lint.rules as package

    found: dict[str, type[Rule]] = {}
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        for obj in vars(module).values():
            if isinstance(obj, type) and issubclass(obj, Rule) and obj is not Rule \
                    and obj.__module__ == module.__name__ and obj.code:
                # The docs' sections are checked rule by rule in tests/lint (every rule's
                # doc_problems), not on each run: reading all docs was ~1 ms of every start.
                problems = doc_problems(obj, docs=False)
                if problems:
                    raise RegistryError(f"{module.__name__}.{obj.__name__}: "
                                        + "; ".join(problems))
                if obj.code in found:
                    raise RegistryError(f"code {obj.code} defined by both "
                                        f"{found[obj.code].__module__} and {module.__name__}")
                found[obj.code] = obj
    names = [r.name for r in found.values()]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise RegistryError(f"rule names used twice: {sorted(dup)}")
    return tuple(found[c] for c in sorted(found))


# Each rule module writes its group on one line; the default run reads these lines (one
# file read each) and imports only the default groups' modules: the other ~47 modules cost
# ~0.013 s CPU of every `tfperf lint small.py`. tests/lint checks the reading against the
# classes for every module.
# The whole line is a string literal (a comment may follow): `group = "a" if X else "b"` or
# `group = GROUP` is not read as a group, and the module is not trusted (all are imported).
_GROUP_LINE = re.compile(r'^    group\b.*$', re.MULTILINE)
_PLAIN_GROUP = re.compile(r'    group = "(\w+)"[ \t]*(?:#.*)?')


def group_written(text: str) -> str | None:
    """The group a rule module's source writes on its one ``group =`` line; None where
    there is no such line, a second one, or one that is not a plain string."""
    lines = _GROUP_LINE.findall(text)
    if len(lines) != 1:
        return None
    plain = _PLAIN_GROUP.fullmatch(lines[0])
    return plain.group(1) if plain else None


def written_groups() -> dict[str, str] | None:
    """Rule module name -> the group its source writes; None where any module cannot be
    read so (a missing or second ``group =`` line, an unreadable file): then every module
    is imported."""
    import tfperf.lint.rules as package

    out: dict[str, str] = {}
    for info in pkgutil.iter_modules(package.__path__):
        if info.name.startswith("_"):
            continue
        try:
            with open(f"{package.__path__[0]}/{info.name}.py", encoding="utf-8") as fh:
                group = group_written(fh.read())
        except (OSError, UnicodeDecodeError):
            return None
        if group is None:
            return None
        out[info.name] = group
    return out


def default_rules() -> list[Rule] | None:
    """The default selection (no ``select``/``extend_select``, no preview) importing only
    the default groups' modules; None where the sources cannot tell (import them all)."""
    if _load.cache_info().currsize:  # already imported: nothing to save
        return None
    groups = written_groups()
    if groups is None:
        return None
    package = "tfperf.lint.rules"
    rules: list[Rule] = []
    for name in sorted(n for n, g in groups.items() if g in DEFAULT_GROUPS):
        module = importlib.import_module(f"{package}.{name}")
        for obj in vars(module).values():
            if isinstance(obj, type) and issubclass(obj, Rule) and obj is not Rule \
                    and obj.__module__ == module.__name__ and obj.code:
                if obj.group not in DEFAULT_GROUPS:
                    return None  # the line read is not the class's group
                rules.append(obj())
    rules.sort(key=lambda r: r.code)
    return rules


def all_rules() -> list[Rule]:
    """One instance of every registered rule, sorted by code."""
    return [cls() for cls in _load()]


def rule_classes() -> tuple[type[Rule], ...]:
    return _load()


def get(code: str) -> Rule:
    """The rule with this exact code (case-insensitive); ``KeyError`` if there is none."""
    code = code.strip().upper()
    for cls in _load():
        if cls.code == code:
            return cls()
    raise KeyError(code)


def _matches(code: str, selector: str) -> bool:
    return selector == "ALL" or code.startswith(selector)


def unknown_selectors(selectors: Iterable[str]) -> list[str]:
    """Selectors that match no rule (probably typos)."""
    selectors = list(selectors)
    if not selectors:
        return []
    codes = [c.code for c in _load()]
    return [s for s in selectors
            if s.upper() != "ALL" and s.lower() not in GROUPS
            and not any(_matches(c, s.upper()) for c in codes)]


def select(rules: Sequence[Rule] | None = None, *, select: Iterable[str] | None = None,
           ignore: Iterable[str] = (), extend_select: Iterable[str] = (),
           preview: bool = False) -> list[Rule]:
    """Rules chosen by code prefixes (``"TFP1"``, ``"TFP101"``, ``"ALL"``), as ruff does:
    ``select`` plus ``extend_select``, minus ``ignore``; when a code matches both, the more
    specific (longer) selector wins.

    Groups decide what a selector reaches: with no ``select``, the default groups (``perf``);
    a prefix or ``ALL`` reaches the ``perf``, ``migration``, ``correctness`` and ``pedantic``
    rules, and
    ``preview`` rules only with ``preview=True``, which also adds them to the default; a
    group's name (``correctness``) selects its rules, less specifically than any prefix; an
    exact code selects its rule whatever its group."""
    rules = list(rules) if rules is not None else all_rules()
    sel = [s.strip().upper() for s in (select or []) if s.strip()]
    ext = [s.strip().upper() for s in extend_select if s.strip()]
    ign = [s.strip().upper() for s in ignore if s.strip()]
    default_groups = DEFAULT_GROUPS | ({"preview"} if preview else set())

    def specificity(rule: Rule, selectors: list[str]) -> int:
        best = -1
        for s in selectors:
            if s == rule.code:
                best = max(best, len(s))
            elif s.lower() == rule.group:
                best = max(best, 1)  # by group name: below any code prefix ("TFP" is 3)
            elif _matches(rule.code, s) and (rule.group != "preview" or preview):
                best = max(best, 0 if s == "ALL" else len(s))
        return best

    chosen = []
    for rule in rules:
        s = specificity(rule, sel + ext)
        if select is None and rule.group in default_groups:
            s = max(s, 0)
        if s >= 0 and s > specificity(rule, ign):
            chosen.append(rule)
    return chosen
