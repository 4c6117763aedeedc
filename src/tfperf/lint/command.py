"""``tfperf lint``, ``tfperf rules`` and ``tfperf rule CODE``: argument parsing and output.

Only the standard library is imported here (this module loads on every ``tfperf`` start);
the engine is imported when a subcommand runs.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

FORMATS = ("text", "concise", "json", "sarif", "github")


def _codes(values: list[str] | None) -> list[str] | None:
    if values is None:
        return None
    return [c.strip() for v in values for c in v.split(",") if c.strip()]


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "lint", help="find the article's TensorFlow anti-patterns in code (static; fixes)",
        description="Static checks for slow TensorFlow patterns in .py files and notebooks. "
                    "Exit status: 0 clean, 1 findings, 2 error (a bad option or path, a "
                    "file that could not be read or whose fixes could not be written).")
    p.add_argument("paths", nargs="*", default=["."], metavar="PATH",
                   help="files, directories or globs (default: .)")
    p.add_argument("--format", choices=FORMATS, default="text", help="output format")
    p.add_argument("--statistics", action="store_true", help="count findings per rule")
    p.add_argument("--select", action="append", metavar="CODES",
                   help="rule codes or prefixes to run (comma-separated; default: the 'perf' "
                        "group; ALL: every rule but those in preview)")
    p.add_argument("--ignore", action="append", metavar="CODES", help="rule codes to skip")
    p.add_argument("--extend-select", action="append", metavar="CODES",
                   help="codes to add to the selection")
    p.add_argument("--preview", action="store_true",
                   help="run the rules still in preview too (not yet precise on real code)")
    p.add_argument("--tf-version", metavar="X.Y",
                   help="the TensorFlow the code targets: X.Y, or a range such as '>=2.1' "
                        "(default: tf-version in pyproject, the project's pin, the installed "
                        "TensorFlow, the newest known)")
    p.add_argument("--fix", action="store_true", help="apply safe fixes")
    p.add_argument("--unsafe-fixes", action="store_true",
                   help="apply unsafe fixes too (implies --fix unless --diff)")
    p.add_argument("--diff", action="store_true",
                   help="show the fixes as a diff, write nothing")
    p.add_argument("--no-cache", action="store_true", help="analyse every file again")
    p.add_argument("--no-project-context", action="store_true",
                   help="model a file named alone by itself, without the modules of its "
                        "project that import it or that it imports")
    p.add_argument("--show-context", action="store_true",
                   help="say on stderr which project modules were modelled as context")
    p.add_argument("--jobs", "-j", type=int, default=0,
                   help="worker processes (default: all cores when there are many files)")
    p.set_defaults(func=run_lint)

    r = subparsers.add_parser("rules", help="list the lint rules",
                              description="The lint rules: code, name, group (* on by "
                                          "default), claims, automatic fix. Exit status 0.")
    r.add_argument("--format", choices=("text", "json"), default="text")
    r.set_defaults(func=run_rules)

    one = subparsers.add_parser("rule", help="explain one lint rule",
                                description="What one rule finds, why, what to write instead, "
                                            "its group and measured precision. Exit status: 0, "
                                            "2 no such rule.")
    one.add_argument("code", help="a rule code, e.g. TFP101")
    one.set_defaults(func=run_rule)


def run_lint(args: argparse.Namespace) -> int:
    from tfperf.cli import UsageError
    from tfperf.lint.session import LintRequest, run

    if args.jobs < 0:
        raise UsageError("--jobs must be ≥ 0")
    request = LintRequest(
        paths=list(args.paths), select=_codes(args.select), ignore=_codes(args.ignore) or [],
        extend_select=_codes(args.extend_select) or [],
        fix=args.fix or (args.unsafe_fixes and not args.diff), unsafe=args.unsafe_fixes,
        diff=args.diff, cache=not args.no_cache, jobs=args.jobs, preview=args.preview,
        tf_version=args.tf_version,
        project_context=False if args.no_project_context else None)
    try:
        outcome = run(request)
    except ValueError as exc:  # bad selectors, missing paths, bad config
        raise UsageError(str(exc)) from exc
    except OSError as exc:  # whatever else the system refused: one line, never a traceback
        from tfperf.core.files import os_error_line

        raise UsageError(os_error_line(exc)) from exc
    _print(outcome, args)
    if outcome.errors:  # a file not read or not written, a folder not listed
        return 2
    return 1 if outcome.findings else 0


def _print(outcome, args: argparse.Namespace) -> None:
    from tfperf.core import render

    findings = outcome.findings
    out = sys.stdout
    for note in outcome.notes:
        print(f"tfperf lint: {note}", file=sys.stderr)
    if getattr(args, "show_context", False):
        line = outcome.context.describe() if outcome.context is not None \
            else "project context: not used (turned off, a folder linted whole, or no " \
                 "cross-module rule selected)"
        print(f"tfperf lint: {line}", file=sys.stderr)
    if args.diff:
        for diff in outcome.diffs:
            out.write(diff)
    if args.format == "json":
        print(render.to_json([f.to_dict() for f in findings]))
    elif args.format == "sarif":
        print(render.findings_sarif(findings, _sarif_rules(outcome.rules, findings)))
    elif args.format == "github":
        if findings:
            print(render.findings_github(findings))
    elif args.format == "concise":
        if findings:
            print(render.findings_concise(findings))
    else:
        color = render.use_color(out)
        if findings:
            print(render.findings_grouped(findings, color=color))
            print()
            print(_statistics(findings), file=out)  # the closing summary, by rule
        print(_summary(outcome, args), file=sys.stderr if not findings else out)
    if args.statistics and args.format != "text":
        print(_statistics(findings), file=sys.stderr if args.format in ("json", "sarif")
              else out)
    out.flush()  # the report first, then what went wrong, last on a terminal
    for error in outcome.errors:
        print(f"tfperf lint: error: {error}", file=sys.stderr)


def _statistics(findings) -> str:
    from tfperf.core import render

    return render.text_table(["count", "code", "name", "files", "fixable"],
                             render.rule_statistics(findings), "rrlrr")


def _summary(outcome, args: argparse.Namespace) -> str:
    n, files = len(outcome.findings), outcome.files
    parts = [f"{n} finding{'s' * (n != 1)} in {files} file{'s' * (files != 1)}"]
    if not files and not outcome.errors:  # a mistyped folder must not pass as clean code
        parts.append("no Python file or notebook under the paths given (files that "
                     ".gitignore or the exclude setting name are skipped)")
    if outcome.fixed:
        verb = "would fix" if args.diff else "fixed"
        parts.append(f"{verb} {outcome.fixed}")
    if outcome.errors:
        e = len(outcome.errors)
        parts.append(f"{e} error{'s' * (e != 1)} (listed below)")
    safe = sum(1 for f in outcome.findings if f.fix and str(f.fix.applicability) == "safe")
    unsafe = sum(1 for f in outcome.findings if f.fix and str(f.fix.applicability) != "safe")
    if safe and getattr(args, "fix", False):  # --fix ran and these stayed: not "fixable"
        parts.append(f"{safe} fix{'es' * (safe != 1)} not applied"
                     + (" (the errors below say why)" if outcome.errors else ""))
    elif safe:
        parts.append(f"{safe} fixable with --fix")
    if unsafe:
        parts.append(f"{unsafe} {'more' if safe else 'fixable'} with --unsafe-fixes")
    return "; ".join(parts) + "."


def run_rules(args: argparse.Namespace) -> int:
    from tfperf.core import render
    from tfperf.lint.registry import rule_classes
    from tfperf.lint.rule import DEFAULT_GROUPS, GROUPS

    rows = [(r.code, r.name, r.group + ("*" if r.group in DEFAULT_GROUPS else ""),
             ",".join(r.claims), "yes" if r.fixable else "", r.message)
            for r in rule_classes()]
    if args.format == "json":
        print(render.to_json([r.summary() for r in rule_classes()]))
    else:
        print(render.text_table(["code", "name", "group", "claims", "fix", "message"], rows))
        print("\ngroups (* = on by default):")
        for name, what in GROUPS.items():
            print(f"  {name + ('*' if name in DEFAULT_GROUPS else ''):<10} {what}")
    return 0


_ENGINE_SUMMARIES = {"TFP000": "the file or cell could not be read or parsed as Python",
                     "TFP001": "a rule raised an error on a file (a tfperf bug); the others ran"}


def _sarif_rules(rules: Any, findings: Any) -> list[dict[str, str]]:
    """The selected rules' descriptors, and the engine's own codes that occur: a SARIF result
    whose ruleId no descriptor names (TFP000 for a file that does not parse) has no rule
    text, help or index in a code-scanning view."""
    from tfperf.lint.registry import ENGINE_CODES

    out = [r.summary() for r in rules]
    seen = {f.code for f in findings}
    out += [{"code": code, "name": name, "summary": _ENGINE_SUMMARIES[code]}
            for code, name in ENGINE_CODES.items() if code in seen]
    return out


def run_rule(args: argparse.Namespace) -> int:
    from tfperf.cli import UsageError
    from tfperf.lint.registry import ENGINE_CODES, get

    code = args.code.strip().upper()
    if code in ENGINE_CODES:
        print(f"# {code} {ENGINE_CODES[code]}\n\nReported by the engine itself: "
              + ("the file or cell could not be read or parsed as Python; the reason is in the "
                 "message." if code == "TFP000" else
                 "a rule raised an error on a file (a tfperf bug); the other rules still ran."))
        return 0
    try:
        rule = get(code)
    except KeyError:
        raise UsageError(f"no rule {args.code!r} (see `tfperf rules`)") from None
    from tfperf.lint.measured import judged
    from tfperf.lint.rule import DEFAULT_GROUPS, GROUPS

    claims = ", ".join(rule.claims)
    fix = "sometimes" if rule.fixable else "no"
    on = "on by default" if rule.group in DEFAULT_GROUPS else "off by default"
    print(f"# {rule.code} {rule.name}\n\n{rule.message}.\n\nGroup: {rule.group} ({on}; "
          f"{GROUPS[rule.group]}).\nPrecision: {judged(rule.code)}.\nClaims: {claims}. "
          f"Automatic fix: {fix}.\n\n{rule.docs.rstrip()}")
    return 0
