"""Find the claim modules and run them: ``tfperf bench --suite article``.

Claim modules are discovered, as lint rules are: every module of
``tfperf.bench.suite.claims`` whose name does not start with ``_`` is one, and must declare

- ``CLAIMS``: the ids it measures (``("S13", "S13b")``), and
- ``run(ctx: Context) -> list[Claim]``: one claim per declared id.

Adding a claim is adding a module; nothing else lists them. A module that declares nothing,
reports an id it did not declare, or leaves a declared one out is a programming error the
tests catch (:class:`SuiteError`); one that crashes while measuring makes its claims ``not
measured`` and the run goes on.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tfperf.bench.machine import machine_info
from tfperf.bench.report import SuiteReport
from tfperf.bench.suite.context import Context
from tfperf.bench.suite.verdict import NOT_MEASURED, Claim, Figure

CLAIMS_PACKAGE = "tfperf.bench.suite.claims"
CLAIM_ID_RE = re.compile(r"^S\d{1,2}[a-z]?$")


class SuiteError(Exception):
    """A claim module is malformed (a programming error, not a measurement)."""


@dataclass(frozen=True)
class ClaimModule:
    name: str
    claims: tuple[str, ...]
    run: Callable[[Context], list[Claim]]
    title: str  # the module docstring's first line


def discover(package: str = CLAIMS_PACKAGE) -> list[ClaimModule]:
    """Every claim module of ``package``, sorted by name; raises :class:`SuiteError`."""
    pkg = importlib.import_module(package)
    found: list[ClaimModule] = []
    owner: dict[str, str] = {}
    for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{package}.{info.name}")
        claims = getattr(module, "CLAIMS", None)
        run = getattr(module, "run", None)
        where = f"{package}.{info.name}"
        if not isinstance(claims, tuple) or not claims or not callable(run):
            raise SuiteError(f"{where}: a claim module declares CLAIMS (a tuple of ids) and "
                             "run(ctx)")
        for cid in claims:
            if not isinstance(cid, str) or not CLAIM_ID_RE.match(cid):
                raise SuiteError(f"{where}: {cid!r} is not a claim id (S1..S22, suffix a-z)")
            if cid in owner:
                raise SuiteError(f"{where}: {cid} is already measured by {owner[cid]}")
            owner[cid] = where
        doc = (module.__doc__ or "").strip().splitlines()
        found.append(ClaimModule(info.name, claims, run, doc[0] if doc else info.name))
    return found


def measured_ids(modules: Sequence[ClaimModule] | None = None) -> set[str]:
    """The article's claim ids (S1..S22, suffix dropped) some module measures."""
    mods = discover() if modules is None else modules
    return {re.sub(r"[a-z]$", "", cid) for m in mods for cid in m.claims}


def _crashed(module: ClaimModule, exc: BaseException) -> tuple[str, list[Claim]]:
    first = (str(exc).strip().splitlines() or [""])[0][:300]
    msg = f"{module.name}: {type(exc).__name__}" + (f": {first}" if first else "")
    return msg, [Claim(cid, module.title, Figure("–"), None, "", NOT_MEASURED,
                       f"not measured: the claim module crashed: {msg}")
                 for cid in module.claims]


def run_suite(quick: bool = False, only: Sequence[str] | None = None,
              modules: Sequence[ClaimModule] | None = None,
              inject: Mapping[str, Mapping[str, Callable[..., Any]]] | None = None,
              progress: Callable[[float, str], None] | None = None,
              roofline: bool = False) -> SuiteReport:
    """Run every claim module (or those measuring an id in ``only``); ``roofline``: each
    variant's FLOPs and its fraction of the right roof, with no FLOPs declared."""
    import tensorflow as tf

    t0 = time.perf_counter()
    mods = discover() if modules is None else list(modules)
    if only is not None:
        wanted = set(only)
        mods = [m for m in mods if wanted & set(m.claims)]
    gpu = bool(tf.config.list_logical_devices("GPU"))
    claims: list[Claim] = []
    errors: list[str] = []
    with tempfile.TemporaryDirectory(prefix="tfperf-suite-") as tmp:
        ctx = Context(quick=quick, gpu=gpu, budget=1.5 if quick else 5.0, workdir=Path(tmp),
                      inject=dict(inject or {}), roofline=roofline)
        for i, module in enumerate(mods):
            if progress:
                progress(i / max(1, len(mods)), module.name)
            try:
                got = module.run(ctx)
            except Exception as exc:  # one claim's crash must not hide the others
                msg, failed = _crashed(module, exc)
                errors.append(msg)
                claims.extend(failed)
                continue
            ids = [c.id for c in got]
            if sorted(ids) != sorted(module.claims):
                raise SuiteError(f"{module.name}: declares {list(module.claims)} but "
                                 f"reported {ids}")
            claims.extend(c for c in got if only is None or c.id in only)
    if progress:
        progress(1.0, "done")
    return SuiteReport(machine=machine_info(), claims=claims, quick=quick,
                       elapsed_s=time.perf_counter() - t0, comparisons=ctx.comparisons,
                       scaled=ctx.scaled, errors=errors)


__all__ = ["CLAIMS_PACKAGE", "ClaimModule", "SuiteError", "discover", "measured_ids",
           "run_suite"]
