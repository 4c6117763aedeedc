"""What a doctor probe is, and how probes are found.

A probe is one module in :mod:`tfperf.doctor.probes` that exposes one function, ``probe``,
with the source signature::

    STAGE = "slow"            # "local": fast, in this process, run one after another;
                              # "slow": a tool or a process, run in a thread beside the rest
    READS_LOCAL_FACTS = True  # (slow probes, optional) start once the local facts are in

    def probe(options: GatherOptions, earlier: Mapping[str, Any]) -> Mapping[str, Any]:
        '''One line saying what it finds out.'''

``earlier`` holds the facts gathered before it (the local ones, for a slow probe that reads
them). The result's keys are :class:`~tfperf.doctor.facts.Facts` fields; keys Facts does not
declare are kept under ``facts.extra[<module name>]``, so a new probe needs no other edit to
be gathered and shown. A probe never raises on purpose and bounds its own time (a missing
tool is the fact "not found", a hung one "timed out after Ns"); if it raises anyway, the
report says "could not look" for what it would have found. The module's name is the
probe's name everywhere (``probe_seconds``, ``probe_errors``, the report).

Modules of the package without a ``probe`` function are helpers of the probes.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any

STAGES = ("local", "slow")
PROBES_PACKAGE = "tfperf.doctor.probes"


@dataclass(frozen=True)
class GatherOptions:
    timeout: float = 120.0  # TF import, and each live check
    tool_timeout: float = 10.0  # nvidia-smi, nvcc, ldconfig, the dlopen test
    compute: bool = True
    matmul_size: int | None = None
    devices: bool = False  # --devices: collectives across this machine's devices
    logical_cpus: int = 2  # without a GPU, MirroredStrategy spans this many CPU devices
    max_message_bytes: int | None = None  # the all-reduce sweep's largest message
    workers: str | None = None  # --workers: TF_CONFIG, "env", or HOST:PORT,HOST:PORT
    worker_index: int | None = None


Source = Callable[[GatherOptions, Mapping[str, Any]], Mapping[str, Any]]


class ProbeError(Exception):
    """A probe module is malformed (a programming error, caught by the tests)."""


@dataclass(frozen=True)
class Probe:
    name: str
    source: Source
    stage: str = "local"
    reads_local_facts: bool = False
    summary: str = ""

    def __post_init__(self) -> None:
        if self.stage not in STAGES:
            raise ProbeError(f"probe {self.name}: STAGE must be one of {STAGES}, "
                             f"not {self.stage!r}")
        if self.reads_local_facts and self.stage != "slow":
            raise ProbeError(f"probe {self.name}: only a slow probe waits for local facts")


def probe_of(module: ModuleType) -> Probe | None:
    """The probe a module declares, or ``None`` for a helper module."""
    fn = getattr(module, "probe", None)
    if fn is None:
        return None
    if not callable(fn):
        raise ProbeError(f"{module.__name__}.probe is not a function")
    doc = (fn.__doc__ or module.__doc__ or "").strip().splitlines()
    return Probe(name=module.__name__.rsplit(".", 1)[-1], source=fn,
                 stage=getattr(module, "STAGE", "local"),
                 reads_local_facts=bool(getattr(module, "READS_LOCAL_FACTS", False)),
                 summary=doc[0] if doc else "")


def discover(package: str = PROBES_PACKAGE) -> tuple[Probe, ...]:
    """Every probe of the package, sorted by name (modules starting with ``_`` skipped)."""
    pkg = importlib.import_module(package)
    found = []
    for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        probe = probe_of(importlib.import_module(f"{package}.{info.name}"))
        if probe is not None:
            found.append(probe)
    return tuple(found)
