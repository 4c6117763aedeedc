"""Gathering: run every probe and merge what they found into one :class:`Facts` record.

The fast local probes run one after the other while the slow ones (driver tools, libraries,
the TensorFlow subprocess) run side by side in threads, so a full doctor costs about one
TensorFlow import. Probes are found by :func:`tfperf.doctor.probe.discover`; tests inject
their own list.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from tfperf.doctor.facts import Facts
from tfperf.doctor.probe import GatherOptions, Probe, discover
from tfperf.doctor.probes.runner import kill_children

_FIELDS = frozenset(f.name for f in dataclasses.fields(Facts))


def _run(probe: Probe, opts: GatherOptions,
         earlier: Mapping[str, Any]) -> tuple[dict[str, Any], float, str | None]:
    start = time.perf_counter()
    try:
        out, err = dict(probe.source(opts, earlier)), None
    except Exception as exc:  # a probe bug must cost its facts, not the report
        out, err = {}, f"{type(exc).__name__}: {exc}"
    return out, time.perf_counter() - start, err


def gather(options: GatherOptions | None = None,
           probes: Sequence[Probe] | None = None) -> Facts:
    """Run every probe (default: all discovered) and merge their facts.

    Slow probes that need no local facts (the TF subprocess above all) start first, so that
    TensorFlow's import overlaps everything else; those that read the local facts start once
    those are in.
    """
    opts = options or GatherOptions()
    probes = discover() if probes is None else probes
    local = [p for p in probes if p.stage == "local"]
    slow = [p for p in probes if p.stage == "slow"]
    collected: dict[str, Any] = {}
    extra: dict[str, dict[str, Any]] = {}
    seconds: dict[str, float] = {}
    errors: dict[str, str] = {}

    def keep(probe: Probe, result: tuple[dict[str, Any], float, str | None]) -> None:
        out, secs, err = result
        for key, value in out.items():
            if key in _FIELDS:
                collected[key] = value
            else:
                extra.setdefault(probe.name, {})[key] = value
        seconds[probe.name] = secs
        if err:
            errors[probe.name] = err

    with ThreadPoolExecutor(max_workers=max(1, len(slow)),
                            thread_name_prefix="tfperf-probe") as ex:
        try:
            futures = [(p, ex.submit(_run, p, opts, {})) for p in slow
                       if not p.reads_local_facts]
            for p in local:
                keep(p, _run(p, opts, collected))
            snapshot = dict(collected)
            futures += [(p, ex.submit(_run, p, opts, snapshot)) for p in slow
                        if p.reads_local_facts]
            for p, fut in futures:
                keep(p, fut.result())
        except KeyboardInterrupt:
            # The pool's exit waits for the probe threads, and they for their children,
            # which Ctrl-C does not reach (sessions of their own): end the children now.
            ex.shutdown(wait=False, cancel_futures=True)
            kill_children()
            raise
    facts = Facts.from_dict(collected)
    facts.extra = extra
    facts.probe_seconds = {k: round(v, 3) for k, v in seconds.items()}
    facts.probe_errors = errors
    return facts
