"""One ``tfperf lint`` run: configuration, rules, files, cache, workers, outcome."""

from __future__ import annotations

import contextlib
import copy
import gc
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from tfperf.core.findings import Finding
from tfperf.lint import registry
from tfperf.lint.config import load_config
from tfperf.lint.context import Context, find_context
from tfperf.lint.discovery import DiscoveryError, check_paths, iter_discover
from tfperf.lint.engine import Dispatcher, project_findings, sort_key
from tfperf.lint.result import FileResult, RunOptions
from tfperf.lint.rule import Rule
from tfperf.lint.runner import lint_file
from tfperf.lint.target import NEWEST_KNOWN, FileTargets, TargetError, TargetTF
from tfperf.lint.target import resolve as resolve_target
from tfperf.lint.workers import quiet_worker_signals, run_chunks, start_method

if TYPE_CHECKING:
    from tfperf.lint.cache import LintCache

# Below this many files to analyse, worker start-up costs more than it saves.
MIN_FILES_PER_WORKER = 24
CHUNK = 16
GC_THRESHOLD = 100_000  # generation-0 allocations between collections while linting


@dataclass
class LintRequest:
    paths: list[str]
    select: list[str] | None = None
    ignore: list[str] = field(default_factory=list)
    extend_select: list[str] = field(default_factory=list)
    fix: bool = False
    unsafe: bool = False
    diff: bool = False
    cache: bool = True
    jobs: int = 0                      # 0: decide from the core count and the file count
    preview: bool = False              # run the "preview" group's rules too
    tf_version: str | None = None      # the TensorFlow targeted (default: see lint/target.py)
    cache_dir: Path | None = None      # default: <project root>/.tfperf_cache/lint
    # Files named on the command line are modelled with their project's modules linked by
    # imports (lint/context.py); None: as the configuration says (default on).
    project_context: bool | None = None


@dataclass
class LintOutcome:
    findings: list[Finding]
    rules: list[Rule]
    files: int
    fixed: int = 0
    diffs: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # One line each: a file not read or not written, a folder not listed (exit status 2).
    errors: list[str] = field(default_factory=list)
    cache_hits: int = 0
    analysed: int = 0
    workers: int = 1
    target: TargetTF | None = None
    context: Context | None = None     # the project context used, if any was looked for


def _project(rules: list[Rule], results: dict[str, FileResult],
             file_keys: list[tuple[str, str]], hit_keys: dict[str, str],
             cache: LintCache | None, known: list[Finding]) -> list[Finding]:
    """The rules' cross-module findings over every file's summary: as a run over exactly
    these files (same keys) left them in the cache, else worked out (and stored)."""
    from tfperf.analysis.summary import ModuleSummary

    digest = None
    if cache is not None and all(key for _, key in file_keys):
        from tfperf.lint.cache import project_digest  # not loaded by a --no-cache run

        digest = project_digest(cache.salt, file_keys)
        cached = cache.project(digest)
        if cached is not None:
            return cached
    summaries = []
    for path, _ in file_keys:
        data = results[path].summary
        if data is None and cache is not None and path in hit_keys:
            data = cache.summary(hit_keys[path])
        if data:
            try:
                summaries.append(ModuleSummary.loads(path, data))
            except (ValueError, KeyError, TypeError):  # a damaged cache line: left out
                continue
    found = project_findings(rules, summaries, known)
    if digest is not None:
        cache.put_project(digest, found)
    return found


def _ignored(config, path: str, finding: Finding) -> bool:
    """``per-file-ignores`` of the configuration cover this finding."""
    off = config.ignored_codes(Path(path))
    return any(o.upper() == "ALL" or finding.code.startswith(o.upper()) for o in off)


def choose_rules(select, ignore, extend_select, preview: bool = False) -> list[Rule]:
    """Rules for these selectors; ``ValueError`` for a selector that matches no rule."""
    if select is None and not extend_select and not preview and not ignore:
        rules = registry.default_rules()  # imports only the default rules' modules
        if rules is not None:
            return rules
    unknown = registry.unknown_selectors([*(select or []), *ignore, *extend_select])
    if unknown:
        raise ValueError(f"unknown rule code(s): {', '.join(unknown)} (see `tfperf rules`)")
    return registry.select(select=select, ignore=ignore, extend_select=extend_select,
                           preview=preview)


# ------------------------------------------------------------------ worker processes

_WORKER: dict[str, object] = {}


def _init_worker(codes: list[str], options: RunOptions, tf_version: tuple[int, int],
                 version_set: bool = False, targets: FileTargets | None = None,
                 key_salt: bytes | None = None) -> None:
    quiet_worker_signals()
    by_code = {r.code: r for r in registry.all_rules()}
    _WORKER["dispatcher"] = Dispatcher([by_code[c] for c in codes], tf_version, version_set,
                                       defer_project=True)
    _WORKER["options"] = options
    _WORKER["targets"] = targets
    _WORKER["key_salt"] = key_salt


def _lint_chunk(paths: list[str]) -> list[FileResult]:
    return _lint_files(paths, _WORKER["dispatcher"], _WORKER["options"],  # type: ignore[arg-type]
                       _WORKER.get("targets"), _WORKER.get("key_salt"))  # type: ignore[arg-type]


def _target_key(targets: FileTargets, path: str) -> bytes:
    """The file's target as part of its cache key: its releases, and whether a pin chose
    them (without one, the module's own APIs may choose: lint/code_target.py)."""
    guess = "" if targets.pinned(path) else "?k" if targets.keras_graph(path) else "?"
    return f"\0tf{_version_key(targets.range(path))}{guess}".encode()


def _version_key(versions: tuple[tuple[int, int], tuple[int, int] | None]) -> str:
    """The targeted releases as part of a cache key: the oldest alone when that is all the
    target admits (so the keys of a pinned project do not change), else both."""
    low, high = versions
    return str(low) if high is None or high == low else f"{low}-{high}"


def _lint_files(paths: list[str], dispatcher: Dispatcher, options: RunOptions,
                targets: FileTargets | None = None,
                key_salt: bytes | None = None) -> list[FileResult]:
    """Lint ``paths``; with ``key_salt``, each result also carries the file's cache key, made
    from the bytes read for linting (a cold run hashes in the workers, not before them)."""
    by_version: dict[tuple[tuple[int, int], tuple[int, int] | None, bool, bool],
                     Dispatcher] = {(dispatcher.tf_version, dispatcher.tf_newest,
                                     dispatcher.infer_target, dispatcher.keras_graph): dispatcher}

    def for_file(path: str) -> Dispatcher:
        """The dispatcher for the versions this file targets (its own project's pin; with
        no pin, the module's own APIs may target an older TF: lint/code_target.py)."""
        if targets is None:
            return dispatcher
        low, high = targets.range(path)
        key = (low, high, not targets.pinned(path), targets.keras_graph(path))
        if key not in by_version:
            by_version[key] = copy.copy(dispatcher)
            d = by_version[key]
            d.tf_version, d.tf_newest, d.infer_target, d.keras_graph = key
        return by_version[key]

    if key_salt is not None:
        from tfperf.lint.cache import content_key

    def lint_one(path: str) -> FileResult:
        if key_salt is None:
            return lint_file(path, for_file(path), options)
        try:
            data = Path(path).read_bytes()
        except OSError:
            return lint_file(path, for_file(path), options)  # says why it cannot be read
        target = _target_key(targets, path) if targets is not None \
            else f"\0tf{_version_key((dispatcher.tf_version, dispatcher.tf_newest))}".encode()
        result = lint_file(path, for_file(path), options, data=data)
        result.cache_key = content_key(key_salt, data, path, target)
        result.version_key = target.decode()
        return result

    with _few_collections():
        return [lint_one(p) for p in paths]


@contextlib.contextmanager
def _few_collections() -> Iterator[None]:
    """Run the cyclic GC rarely while linting.

    Analysis allocates millions of short-lived AST and bookkeeping objects that reference
    counting frees (the semantic model keeps parent links outside the trees), so the default
    generation-0 threshold only makes the collector rescan live objects over and over.
    """
    old = gc.get_threshold()
    gc.set_threshold(max(old[0], GC_THRESHOLD), old[1], old[2])
    try:
        yield
    finally:
        gc.set_threshold(*old)


def _workers(requested: int, n_files: int) -> int:
    if requested:
        return max(1, requested)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(cores or 1, n_files // MIN_FILES_PER_WORKER))


def analyse(paths: list[str], rules: list[Rule], options: RunOptions, jobs: int = 0,
            tf_version: tuple[int, int] = NEWEST_KNOWN, version_set: bool = False,
            targets: FileTargets | None = None, key_salt: bytes | None = None,
            incidents: list[str] | None = None) -> tuple[list[FileResult], int]:
    """Lint files, in worker processes when there are enough of them → (results, workers).
    A line per worker that died (its files were linted again here) goes to ``incidents``."""
    n = _workers(jobs, len(paths))
    method = start_method() if n > 1 and len(paths) >= 2 else None
    if method is None:
        return _lint_files(paths, Dispatcher(rules, tf_version, version_set,
                                             defer_project=True),
                           options, targets, key_salt), 1
    chunks = [paths[i:i + CHUNK] for i in range(0, len(paths), CHUNK)]
    return _in_workers(chunks, n, method, rules, options, tf_version, version_set, targets,
                       key_salt, incidents), n


def _in_workers(chunks: Iterable[list[str]], n: int, method: str, rules: list[Rule],
                options: RunOptions,
                tf_version: tuple[int, int], version_set: bool, targets: FileTargets | None,
                key_salt: bytes | None, incidents: list[str] | None) -> list[FileResult]:
    # Imported here: a run over a few files (a pre-commit hook) never starts a worker.
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    def make_pool() -> ProcessPoolExecutor:
        return ProcessPoolExecutor(
            max_workers=n, mp_context=multiprocessing.get_context(method),
            initializer=_init_worker,
            initargs=([r.code for r in rules], options, tf_version, version_set, targets,
                      key_salt))

    here: list[Dispatcher] = []  # made once, only if a dead worker's files come back

    def redo(chunk: list[str]) -> list[FileResult]:
        if not here:
            here.append(Dispatcher(rules, tf_version, version_set, defer_project=True))
        return _lint_files(chunk, here[0], options, targets, key_salt)

    return run_chunks(chunks, n, make_pool, _lint_chunk, redo, incidents)


def analyse_found(found: Iterator[str], rules: list[Rule], options: RunOptions,
                  jobs: int = 0, tf_version: tuple[int, int] = NEWEST_KNOWN,
                  version_set: bool = False, targets: FileTargets | None = None,
                  key_salt: bytes | None = None, incidents: list[str] | None = None
                  ) -> tuple[list[str], list[FileResult], int]:
    """:func:`analyse` over files as discovery finds them → (files, results, workers).

    As soon as enough files are found to use every worker (the count :func:`analyse` would
    choose cannot grow further), the pool starts and each chunk goes to it while the walk
    goes on: the workers no longer wait for the main process's discovery. Fewer files: they
    are analysed as :func:`analyse` does. Chunks and results are the same either way."""
    files: list[str] = []
    cores = _workers(jobs, 1 << 30)  # the most workers this run may use
    enough = 2 if jobs else MIN_FILES_PER_WORKER * cores
    for path in found:
        files.append(str(path))
        if len(files) >= enough:
            break
    else:
        results, n = analyse(files, rules, options, jobs, tf_version, version_set, targets,
                             key_salt, incidents)
        return files, results, n
    method = start_method() if cores > 1 else None
    if method is None:
        files.extend(str(p) for p in found)
        results, n = analyse(files, rules, options, jobs, tf_version, version_set, targets,
                             key_salt, incidents)
        return files, results, n

    def chunks() -> Iterator[list[str]]:
        sent = 0
        for path in found:
            files.append(str(path))
            if len(files) - sent >= CHUNK:
                yield files[sent:sent + CHUNK]
                sent += CHUNK
        for i in range(sent, len(files), CHUNK):
            yield files[i:i + CHUNK]

    results = _in_workers(chunks(), cores, method, rules, options, tf_version, version_set, targets,
                          key_salt, incidents)
    return files, results, cores


# ------------------------------------------------------------------ the run


def run(request: LintRequest) -> LintOutcome:
    # The main process unpickles every worker's results and reads every summary back:
    # objects by the hundred thousand, with every result of the run alive, which the
    # default collector would rescan again and again.
    with _few_collections():
        return _run(request)


def _run(request: LintRequest) -> LintOutcome:
    try:
        check_paths(request.paths)  # before anything is read, linted or written
    except DiscoveryError as exc:
        raise ValueError(str(exc)) from exc
    config = load_config(request.paths)
    select = request.select if request.select is not None else config.select
    rules = choose_rules(select, [*config.ignore, *request.ignore],
                         [*config.extend_select, *request.extend_select],
                         preview=request.preview or config.preview)
    try:
        target = resolve_target(request.tf_version or config.tf_version,
                                Path(request.paths[0]) if request.paths else None)
    except TargetError as exc:
        raise ValueError(str(exc)) from None
    options = RunOptions(fix=request.fix, unsafe=request.unsafe, diff=request.diff)
    project_rules = [r for r in rules if r.wants_project()]
    targets = FileTargets(target)  # each file's own project pin, unless tf-version is set

    cache = None
    if request.cache and not (request.fix or request.diff) and rules:
        from tfperf.core.files import cache_dir
        from tfperf.lint.cache import LintCache

        where = request.cache_dir or cache_dir("lint", request.paths[0] if request.paths else None)
        cache = LintCache(where, [r.code for r in rules],
                          salt=f"tf{_version_key((target.version, target.newest))}")
    results: dict[str, FileResult] = {}
    keys: dict[str, str] = {}
    hit_keys: dict[str, str] = {}
    todo: list[str] = []
    # An empty cache cannot hit: the workers key each file from the bytes they read.
    key_salt = cache.salt if cache is not None and cache.empty() else None
    unlisted: list[str] = []  # folders the walk could not list
    skipped: list[str] = []  # broken symlinks: a note each, the rest linted
    found = (str(p) for p in iter_discover(request.paths, config.excluded, unlisted,
                                           skipped))
    fresh: list[FileResult] = []
    workers = 1
    incidents: list[str] = []  # a worker process that died: its files were linted again
    # Every file is analysed (no cache, or an empty one): the workers start on the first
    # files while the walk goes on.
    streamed = bool(rules) and (cache is None or key_salt is not None)
    try:
        if streamed:
            files, fresh, workers = analyse_found(found, rules, options, request.jobs,
                                                  target.version, target.configured, targets,
                                                  key_salt, incidents)
        else:
            files = list(found)
    except DiscoveryError as exc:
        raise ValueError(str(exc)) from exc
    for path in () if streamed else files:
        if cache is not None and key_salt is None:
            try:
                # The file's targeted TF is part of its key: a new pin is not a cache hit.
                key = cache.key_of(path, _target_key(targets, path))
            except OSError:
                key = ""
            hit = cache.get(key, path) if key else None
            if hit is not None and (not project_rules or cache.has_summary(key)):
                results[path] = FileResult(path, hit, notes=cache.notes(key, path))
                hit_keys[path] = key  # its summary is read only if the project changed
                continue
            keys[path] = key
        todo.append(path)
    if streamed:
        todo = files
    elif rules:
        fresh, workers = analyse(todo, rules, options, request.jobs, target.version,
                                 target.configured, targets, key_salt, incidents)
    for r in fresh:
        results[r.path] = r
        key = keys.get(r.path) or r.cache_key
        # a file's notes (read as Python 2, a notebook skipped) come from its bytes: stored
        # with it, or a warm run analyses it again
        stored = cache is not None and bool(key) and not r.errors \
            and cache.put(key, r.findings, r.summary, summarised=bool(project_rules),
                          notes=r.notes, path=r.path)
        if stored and cache is not None and r.cache_key:  # keyed in a worker: stat recorded here
            file_target = r.version_key.encode() if r.version_key \
                else _target_key(targets, r.path)
            cache.record(r.path, file_target, key)
    findings: list[Finding] = []
    for path in files:
        r = results.get(path)  # type: ignore[assignment]
        if r is None:
            continue
        findings.extend(f for f in r.findings if not _ignored(config, path, f))
    context = None
    context_files: list[str] = []
    on = request.project_context if request.project_context is not None \
        else config.project_context
    named = _named_files(request.paths, files) if project_rules and on else []
    if named:
        context = find_context(named, files, config.excluded,
                               cache.dir / "context_imports.json" if cache is not None else None)
        context_files = context.files
    if project_rules:  # every module is summarised: the cross-module checks
        known = list(findings)
        if context_files:
            known += _lint_context(context_files, rules, request.jobs, target, targets,
                                   cache, results, keys, hit_keys, incidents)
        reported = {os.path.realpath(p) for p in files}
        file_keys = [(p, hit_keys.get(p) or keys.get(p) or results[p].cache_key)
                     for p in [*files, *context_files] if p in results]
        findings.extend(f for f in _project(project_rules, results, file_keys, hit_keys,
                                            cache, known)
                        if not _ignored(config, f.location.path or "", f)
                        and (not context_files
                             or os.path.realpath(f.location.path or "") in reported))
    if cache is not None:
        cache.flush()
    findings.sort(key=sort_key)
    ordered = [results[p] for p in files if p in results]
    return LintOutcome(findings=findings, rules=rules, files=len(files),
                       fixed=sum(r.fixed for r in ordered),
                       diffs=[r.diff for r in ordered if r.diff],
                       notes=[*(skipped if files else []),
                              *(n for r in ordered for n in r.notes), *incidents],
                       # Nothing but broken symlinks: nothing was linted, which must not
                       # pass as clean code (exit 0).
                       errors=[*unlisted, *(skipped if not files else []),
                               *(e for r in ordered for e in r.errors)],
                       cache_hits=cache.hits if cache else 0, analysed=len(todo),
                       workers=workers, target=target, context=context)


def _named_files(paths: list[str], files: list[str]) -> list[str]:
    """The linted files the command line named (a file, or a glob's match), not found by
    walking a folder: they get project context."""
    folders = [os.path.realpath(p) for p in paths if os.path.isdir(p)]
    if not folders:
        return list(files)
    return [f for f in files
            if not any(os.path.realpath(f).startswith(d.rstrip(os.sep) + os.sep)
                       for d in folders)]


def _lint_context(paths: list[str], rules: list[Rule], jobs: int, target: TargetTF,
                  targets: FileTargets, cache: LintCache | None,
                  results: dict[str, FileResult], keys: dict[str, str],
                  hit_keys: dict[str, str],
                  incidents: list[str] | None = None) -> list[Finding]:
    """Summarise the context modules (from the cache where it holds them), never fixing
    them; their findings are returned for de-duplication only, never reported, and a
    module that cannot be read or parsed is left out silently (not the user's request)."""
    todo: list[str] = []
    known: list[Finding] = []
    for path in paths:
        if cache is not None:
            try:
                key = cache.key_of(path, _target_key(targets, path))
            except OSError:
                continue
            hit = cache.get(key, path)
            if hit is not None and cache.has_summary(key):
                results[path] = FileResult(path, hit)
                hit_keys[path] = key
                known += hit
                continue
            keys[path] = key
        todo.append(path)
    fresh, _ = analyse(todo, rules, RunOptions(), jobs, target.version, target.configured,
                       targets, incidents=incidents) if todo else ([], 1)
    for r in fresh:
        if r.errors:  # not read: left out
            continue
        results[r.path] = r
        known += r.findings
        stored = keys.get(r.path)
        if cache is not None and stored:
            cache.put(stored, r.findings, r.summary, summarised=True, notes=r.notes,
                      path=r.path)
    return known
