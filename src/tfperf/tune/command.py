"""``tfperf tune``: search the levers for one function, measure each candidate, hand back the
change. Only argparse and the standard library at import time (imported on every start)."""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path
from typing import Any, TextIO


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "tune",
        help="search tf.function, XLA, vectorized_map, precision and lint's fixes for one "
             "function; measure every candidate; hand back as a patch the one that agrees "
             "and beats the baseline by more than the run's noise",
        description="Tune FUNC of FILE.py on its inputs (the file's @tfperf.inputs function, "
                    "or --inputs FILE.py:FN): each lever alone and in combination, within a "
                    "time budget; every candidate is an edit of a copy of the module, timed "
                    "interleaved with the baseline and checked against its outputs (values, "
                    "and the same structure, shapes and dtypes: precision casts cast back at "
                    "the return). The pick beats the baseline by more than the noise of the "
                    "rounds that timed both; among candidates those rounds cannot tell apart, "
                    "the one without a precision change and with fewer levers wins. FILE.py "
                    "is imported and executed (its top level runs, as under `import`). "
                    "Without :FUNC, the file's baseline @variant is tuned. Exit status 2 on "
                    "bad input.")
    p.add_argument("target", metavar="FILE.py[:FUNC]",
                   help="the function to tune (FUNC may be obj.method: a method of a "
                        "module-level object, a Keras layer's call)")
    p.add_argument("--inputs", metavar="FILE.py:FN",
                   help="a function returning the arguments (a tuple, one value, or a dict "
                        "of keyword arguments)")
    p.add_argument("--budget", type=float, default=60.0, metavar="SECONDS",
                   help="time for the whole search (default 60); importing TensorFlow and "
                        "FILE.py and making the inputs come on top")
    p.add_argument("--calls", type=int, metavar="N",
                   help="rank by the time of N calls, first call (trace, compile) included; "
                        "default: the steady state")
    p.add_argument("--json", action="store_true", help="JSON on stdout (schema in docs/tune.md)")
    p.add_argument("--diff", action="store_true", help="print the winning patch")
    p.add_argument("--html", metavar="OUT.html",
                   help="also write the result as one self-contained HTML file (every "
                        "candidate with its verdict, the patch as a diff; nothing fetched)")
    p.add_argument("--apply", action="store_true",
                   help="write the winning patch into FILE.py, and only there: refused when FUNC "
                        "is defined in another file or FILE.py changed since it was measured "
                        "(the new text must parse; mode kept)")
    p.add_argument("--no-cache", action="store_true",
                   help="measure again, ignore the cache (results are kept per file path, "
                        "function, source, inputs' shapes, machine and settings)")
    p.add_argument("--reduced-precision", action="store_true",
                   help="accept bfloat16/float16 candidates at their own dtype's tolerance "
                        "(default: judged by the tolerance of the dtype FUNC returns)")
    p.add_argument("--plot", metavar="PATH",
                   help="write a PNG of the candidates (median, IQR, break-even calls; the "
                        "rejected ones with why); needs matplotlib (the plot extra)")
    p.add_argument("--isolate", action="store_true",
                   help="build and measure every candidate in a fresh process of its own (a "
                        "crash or hang rejects only that candidate; not cached)")
    p.add_argument("--threads", action="store_true",
                   help="also try TensorFlow's CPU thread-pool sizes (intra_op/inter_op); "
                        "implies --isolate")
    p.add_argument("--devices", metavar="N|auto",
                   help="screen candidates in parallel, one process per device (GPUs pinned "
                        "with CUDA_VISIBLE_DEVICES; on a CPU, N local processes); implies "
                        "--isolate")
    p.add_argument("--ray", metavar="ADDRESS",
                   help="run the candidates' processes on a Ray cluster (ray.init address; "
                        "'local' starts one here); needs the 'ray' extra; implies --isolate")
    p.add_argument("--verbose", action="store_true",
                   help="let TensorFlow's C++ start-up notices through (hidden by default)")
    p.set_defaults(func=run)


def _split(spec: str) -> tuple[Path, str | None]:
    path, _, name = spec.partition(".py:")
    if name:
        return Path(path + ".py"), name
    head, colon, tail = spec.rpartition(":")
    if colon and head and Path(head).exists():  # another file's FUNC: its path is checked,
        return Path(head), tail                # not "no such file" for the whole string
    return Path(spec), None


def run(args: argparse.Namespace) -> int:
    from tfperf.cli import UsageError

    if args.budget is not None and args.budget <= 0:
        raise UsageError("--budget must be positive")
    if args.calls is not None and args.calls < 1:  # `--calls 0` ran, ranked by nothing
        raise UsageError(f"--calls must be at least 1, not {args.calls}")
    devices = getattr(args, "devices", None)
    if devices is not None and devices != "auto" and not (devices.isdigit() and int(devices)):
        raise UsageError(f"--devices must be a positive count or 'auto', not {devices!r}")
    from tfperf.core.usercode import UserCodeError
    from tfperf.tune.target import TuneError

    if getattr(args, "ray", None):  # before the user's file is read: fail fast
        from tfperf.tune.ray_pool import require_ray

        try:
            require_ray()
        except TuneError as exc:
            print(f"tfperf tune: error: {exc}", file=sys.stderr)
            return 2
    _check(args)  # before TensorFlow is imported: bad input fails fast
    from tfperf.core.tensorflow_needed import tensorflow_missing

    missing = tensorflow_missing()  # the base install: say so, not the user's failed import
    if missing:
        raise UsageError(missing)
    if not args.verbose:
        from tfperf.core.tensorflow_logs import quiet_tensorflow_startup

        quiet_tensorflow_startup()
    out = sys.stdout
    # With --json, stdout holds one document: what the user's file prints (at import, in the
    # inputs function, in every call tune times) goes to stderr.
    quiet = contextlib.redirect_stdout(sys.stderr) if args.json else contextlib.nullcontext()
    try:
        with quiet:
            fn, inputs = _load(args)
            return _tune(args, fn, inputs, out)
    except (UserCodeError, TuneError) as exc:
        print(f"tfperf tune: error: {exc}", file=sys.stderr)
        return 2


def _check(args: argparse.Namespace) -> None:
    """FILE.py[:FUNC] and --inputs checked by their syntax alone (nothing runs): the files
    read and parse, the functions are defined, inputs are given where the call needs them."""
    from tfperf.cli import UsageError
    from tfperf.core.matplotlib_needed import matplotlib_missing
    from tfperf.core.usercode import UserCodeError, check_output_path, check_user_file

    if args.plot and (missing := matplotlib_missing()):
        raise UsageError(missing)
    path, name = _split(args.target)
    try:
        target = check_user_file(path)
        if name is not None:
            target.require_function(name)
        elif not target.may_declare("variant"):
            raise UsageError(f"{path}: name the function to tune as {path}:FUNC")
        if args.inputs:
            ipath, iname = _split(args.inputs)
            if iname is None:
                raise UsageError("--inputs must be FILE.py:FN")
            check_user_file(ipath).require_function(iname)
        elif not target.may_declare("inputs"):
            raise UsageError(f"{path}: no @tfperf.inputs function; give --inputs FILE.py:FN")
        for option, out in (("--plot", args.plot), ("--html", args.html)):
            if out:
                check_output_path(out, option)
    except UserCodeError as exc:
        raise UsageError(str(exc)) from None


def _load(args: argparse.Namespace) -> tuple[Any, Any]:
    from tfperf.bench.declare import close_collector, open_collector
    from tfperf.core.usercode import import_file
    from tfperf.tune.target import TuneError

    path, name = _split(args.target)
    collector = open_collector()
    try:
        module = import_file(path, prefix="_tfperf_tune_")
    finally:
        close_collector(collector)
    if name is None:
        base = next((v for v in collector.variants if v.baseline), None) or \
            (collector.variants[0] if collector.variants else None)
        if base is None:
            raise TuneError(f"{path}: name the function to tune as {path}:FUNC")
        fn: Any = base.fn
    else:
        fn = module
        for part in name.split("."):  # FILE.py:obj.method: a bound method of a module's object
            fn = getattr(fn, part, None)
        if not callable(fn):
            raise TuneError(f"{path}: no function {name!r}")
    if args.inputs:
        ipath, iname = _split(args.inputs)
        if iname is None:
            raise TuneError("--inputs must be FILE.py:FN")
        imod = module if ipath.resolve() == path.resolve() else import_file(ipath)
        inputs = getattr(imod, iname, None)
        if not callable(inputs):
            raise TuneError(f"{ipath}: no function {iname!r}")
    elif collector.inputs:
        inputs = collector.inputs[0]
    else:
        raise TuneError(f"{path}: no @tfperf.inputs function; give --inputs FILE.py:FN")
    return fn, inputs


def _stateful(value: Any) -> bool:
    """Inputs holding variables (a model, an optimizer): each candidate needs fresh ones."""
    import tensorflow as tf

    leaves = tf.nest.flatten(value, expand_composites=False)
    return any(isinstance(x, tf.Variable) or hasattr(x, "trainable_variables") for x in leaves)


def _tune(args: argparse.Namespace, fn: Any, make: Any, out: TextIO) -> int:
    from tfperf.tune.patch import apply_patch
    from tfperf.tune.search import tune
    from tfperf.tune.target import TuneError

    try:
        first = make()
    except Exception as exc:
        raise TuneError(f"the inputs function raised {type(exc).__name__}: {exc}") from None
    from tfperf.tune.inputs import InputsFunction, as_args

    a, kw = as_args(first)
    factory = InputsFunction(make) if _stateful(first) else None  # a child finds `make`
    say = None if args.json else (lambda m: print(f"  {m}", file=sys.stderr))
    result = tune(fn, a, kw, budget=args.budget, inputs=factory, calls=args.calls,
                  cache=not args.no_cache, progress=say,
                  isolate=bool(getattr(args, "isolate", False)),
                  threads=bool(getattr(args, "threads", False)),
                  devices=getattr(args, "devices", None), ray=getattr(args, "ray", None),
                  reduced_precision=bool(getattr(args, "reduced_precision", False)))
    if args.json:
        print(result.to_json(), file=out)
    else:
        print(result.table(), file=out)
        if args.diff and result.patch:
            print(result.patch, end="", file=out)
    if args.html:
        from tfperf.core.html import save

        if not save(result.to_html(), args.html, "tune"):
            return 2
    if args.plot:
        from tfperf.bench.plot import PlotError

        try:
            print(f"plot written to {result.plot(args.plot)}", file=sys.stderr)
        except PlotError as exc:
            print(f"tfperf tune: error: {exc}", file=sys.stderr)
            return 2
    if args.apply:  # only the file named on the command line (TuneError: one line, exit 2)
        print(apply_patch(result, _split(args.target)[0]), file=sys.stderr)
    return 0
