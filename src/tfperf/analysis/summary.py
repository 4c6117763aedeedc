"""A module's summary: what other modules need to know about it, as plain data.

Extracted once per module from the semantic model (:class:`tfperf.lint.semantic.Context`),
cached with the module's findings (by the hash of its bytes), and joined with the other
modules' summaries by :class:`tfperf.analysis.project.Project`. It depends on the module's
own text alone: names imported from elsewhere stay references (``("agent", "Agent.train")``)
until the project resolves them.

What it holds:

- ``functions``: each module-level function and method (``f``, ``Class.method``), and each
  name or ``self`` attribute bound to ``tf.function(g)``: its parameters, the kinds of their
  defaults, whether TensorFlow traces it (and with an ``input_signature`` or relaxed
  shapes), what it returns (kinds told from spellings: :func:`kinds.quick_kind`); in a
  module that does not import TensorFlow, only its name and place;
- ``calls``: each call that may reach a function of the project (a function of this
  module, a name imported from a module that is not a known library, a method of an
  instance of such a class, ``self.method``) from a function or a loop (module-level code
  outside loops runs once), with where it runs (the function around it, whether once per
  iteration of an eager loop, or traced) and, for calls in loops that may reach traced
  code, the kinds of the values passed (a Python number that changes per iteration, a
  tensor whose leading size does);
- ``imports``: the names the module imports from modules that may be the project's own;
- ``facts``: what each rule with a cross-module check publishes about the module
  (``Rule.publish``), read back by its ``Rule.check_project``;
- ``noqa``: the module's ``# noqa`` comments, so that findings made from summaries obey them.

Positions are ``[line, column, end line, end column, cell]`` in characters (cell 0 outside
notebooks), as findings report them.
"""

from __future__ import annotations

import ast
import builtins
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from tfperf.analysis import kinds
from tfperf.lint.analysis.examples import one_input, one_sample
from tfperf.lint.analysis.pieces import dataset_batch
from tfperf.lint.analysis.tf_functions import tf_function_decorator_or_wrapper, wrapping
from tfperf.lint.analysis.traced import eager_guarded, traced
from tfperf.lint.analysis.trips import PROGRESS_BARS, PROGRESS_RANGES, runs_per_entry
from tfperf.lint.semantic import Context

Pos = list[int]  # [line, column, end line, end column, cell]

# Top-level packages that are never the project's own: calls into them are not summarised.
LIBRARY_ROOTS = frozenset({
    "tensorflow", "keras", "tf_keras", "numpy", "scipy", "pandas", "sklearn", "matplotlib",
    "torch", "jax", "flax", "gym", "gymnasium", "cv2", "PIL", "tqdm", "absl", "seaborn",
    "h5py", "yaml", "requests", "IPython", "google", "transformers", "wandb", "mlflow",
    "skimage", "imageio", "six", "pytest", "tensorflow_datasets", "tensorflow_probability",
    "tensorflow_addons", "tensorflow_hub", "tensorflow_text", "tensorboard", "sonnet",
    "gpflow", "horovod", "ray", "optuna", "plotly", "networkx", "nltk", "spacy", "librosa",
    "tf_agents", "baselines", "stable_baselines", "stable_baselines3", "albumentations",
})
_STDLIB = frozenset(getattr(sys, "stdlib_module_names", ()))
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
_TEXT = 40  # characters of an argument's source kept for messages


@dataclass
class ArgFact:
    """One value passed at a call: ``slot`` is the position ("0", "1"...) or the keyword;
    ``varies``: a Python number that changes per iteration of a loop around the call;
    ``leading``: a tensor or array whose first dimension changes per iteration."""

    slot: str
    kind: str
    varies: bool = False
    leading: bool = False
    text: str = ""


@dataclass
class CallFact:
    """A call that may reach a function of the project (``pos``: where, for a call in a
    loop; zeros elsewhere, where no message names it). ``callee``: (module, qualname),
    module "" for this module, else as imported (``"agent"``, ``".utils"``); ``caller``:
    the qualname of the function the call runs in ("" at module level); ``loop``: what the
    innermost loop around it (within its function) iterates, "" when none ("dataset",
    "range", "while", "other"); ``traced``: the call runs in traced code; ``guarded``: in a
    branch that runs eagerly on purpose; ``star``: ``*args``/``**kwargs`` hide the slots;
    ``ones``: the slots given one input made into a batch of one, or one observation of an
    environment (for a call in a loop); ``env``: that loop steps an environment
    (``env.step(a)`` in its body): each iteration is one environment step, whatever the
    batch a callee is given. ``trips``: for a call in a loop, how many times it runs each
    time its function is entered, where literals say (:mod:`tfperf.lint.analysis.trips`);
    None when unknown. ``batches``: the slots given (a part of) the batch that a loop over a
    ``tf.data`` dataset takes per iteration (:mod:`tfperf.lint.analysis.pieces`)."""

    callee: tuple[str, str]
    pos: Pos
    caller: str = ""
    loop: str = ""
    traced: bool = False
    guarded: bool = False
    args: list[ArgFact] = field(default_factory=list)
    star: bool = False
    ones: list[str] = field(default_factory=list)  # slots given one input as a batch of one
    env: bool = False
    trips: int | None = None
    batches: list[str] = field(default_factory=list)


@dataclass
class FunctionFact:
    """A function other modules may call. ``params``: positional then keyword-only names
    (``self`` included for methods); ``defaults``: parameter → the kind of its default;
    ``traced``: "" (run eagerly), "decorated", "wrapped" (``tf.function(g)``) or "keras"
    (a Keras ``call``/``train_step``); ``signature``: made with an ``input_signature``;
    ``relaxed``: ``reduce_retracing``/``experimental_relax_shapes``; ``returns``: a kind."""

    qualname: str
    pos: Pos
    params: list[str] = field(default_factory=list)
    defaults: dict[str, str] = field(default_factory=dict)
    traced: str = ""
    signature: bool = False
    relaxed: bool = False
    returns: str = kinds.UNKNOWN
    method: bool = False


@dataclass(repr=False)
class ModuleSummary:
    path: str
    functions: dict[str, FunctionFact] = field(default_factory=dict)
    calls: list[CallFact] = field(default_factory=list)
    imports: dict[str, list[str]] = field(default_factory=dict)  # name → [module, attribute]
    facts: dict[str, Any] = field(default_factory=dict)          # rule code → JSON data
    noqa: dict[str, str] = field(default_factory=dict)           # "cell:line" → codes
    tf: list[int] = field(default_factory=list)  # targeted TF: [major, minor, newest major, minor]
    # class qualname → its bases that name a class of this module or a project module, as
    # call references ([module, qualname]): `self.m()` in a subclass runs a base's `m`.
    bases: dict[str, list[list[str]]] = field(default_factory=dict)

    def __repr__(self) -> str:
        return f"ModuleSummary({self.path!r}, {len(self.functions)} functions, " \
               f"{len(self.calls)} calls)"

    # ---------------------------------------------------------------- plain data

    def to_json(self) -> dict[str, Any]:
        return {
            "functions": [[f.qualname, f.pos, f.params, f.defaults, f.traced, f.signature,
                           f.relaxed, f.returns, f.method] for f in self.functions.values()],
            "calls": [[list(c.callee), c.pos, c.caller, c.loop, c.traced, c.guarded,
                       [[a.slot, a.kind, a.varies, a.leading, a.text] for a in c.args],
                       c.star, c.ones, c.env, c.trips, c.batches] for c in self.calls],
            "imports": self.imports, "facts": self.facts, "noqa": self.noqa, "tf": self.tf,
            "bases": self.bases,
        }

    def dumps(self) -> str:
        """The summary as compact JSON text (:meth:`loads` reads it back)."""
        import json

        return json.dumps(self.to_json(), separators=(",", ":"))

    @classmethod
    def loads(cls, path: str, text: str) -> ModuleSummary:
        import json

        return cls.from_json(path, json.loads(text))

    @classmethod
    def from_json(cls, path: str, data: dict[str, Any]) -> ModuleSummary:
        functions = {}
        for q, pos, params, defaults, tr, sig, rel, ret, method in data.get("functions", ()):
            functions[q] = FunctionFact(q, pos, params, defaults, tr, sig, rel, ret, method)
        calls = [CallFact((c[0][0], c[0][1]), c[1], c[2], c[3], c[4], c[5],
                          [ArgFact(*a) for a in c[6]], c[7], list(c[8]) if len(c) > 8 else [],
                          bool(c[9]) if len(c) > 9 else False, c[10] if len(c) > 10 else None,
                          list(c[11]) if len(c) > 11 else [])
                 for c in data.get("calls", ())]
        return cls(path, functions, calls, dict(data.get("imports", {})),
                   dict(data.get("facts", {})), dict(data.get("noqa", {})),
                   list(data.get("tf", [])), dict(data.get("bases", {})))

    def map_positions(self, move: Callable[[Pos], Pos]) -> None:
        """Re-express every position (a notebook's joined lines → its cells)."""
        for f in self.functions.values():
            f.pos = move(f.pos)
        for c in self.calls:
            c.pos = move(c.pos)
        def move_in(fact: Any) -> None:
            # A rule's fact: a position under any key ending in "pos", also in the dicts of
            # a list it holds (TFP703's calls of a loop).
            if isinstance(fact, list):
                for item in fact:
                    move_in(item)
            elif isinstance(fact, dict):
                for k, v in fact.items():
                    if k.endswith("pos") and isinstance(v, list) and len(v) == 5:
                        fact[k] = move(v)
                    elif isinstance(v, list):
                        move_in(v)

        for facts in self.facts.values():
            move_in(facts if isinstance(facts, list) else ())

    def move_noqa(self, move: Callable[[Pos], Pos]) -> None:
        """Re-key the ``# noqa`` lines by the positions ``move`` gives."""
        moved = {}
        for key, codes in self.noqa.items():
            cell, line = (int(p) for p in key.split(":"))
            pos = move([line, 0, line, 0, cell])
            moved[f"{pos[4]}:{pos[0]}"] = codes
        self.noqa = moved

    def suppressed(self, code: str, pos: Pos) -> bool:
        """A ``# noqa`` on the line at ``pos`` covers ``code``."""
        codes = self.noqa.get(f"{pos[4]}:{pos[0]}")
        if codes is None:
            return False
        return codes == "" or any(code.startswith(c) for c in codes.split(","))


# -------------------------------------------------------------------- extraction


def _ascii(ctx: Context) -> bool:
    """The module is ASCII: ``ast``'s byte columns are its character columns (no need to
    split it into lines, which most modules never are)."""
    return ctx.cached("analysis.ascii", ctx.source.isascii)


def position(ctx: Context, node: Any) -> Pos:
    if _ascii(ctx):
        return [node.lineno, node.col_offset, node.end_lineno or node.lineno,
                node.end_col_offset or 0, 0]
    line, col, end_line, end_col = ctx.span(node)
    return [line, col, end_line, end_col, 0]


def header_position(ctx: Context, node: Any) -> Pos:
    """A ``def``'s header: from ``def`` to the end of its name (where a finding about the
    whole function points)."""
    head = len("async def " if type(node) is ast.AsyncFunctionDef else "def ")
    if _ascii(ctx):
        line, col = node.lineno, node.col_offset
    else:
        line, col, _, _ = ctx.span(node)
    return [line, col, line, col + head + len(node.name), 0]


def project_module(spec: str) -> bool:
    """A module that may be the project's own (not the standard library, not a library)."""
    if spec.startswith("."):
        return True
    root = spec.split(".", 1)[0]
    return bool(root) and root not in LIBRARY_ROOTS and root not in _STDLIB


def qualnames(ctx: Context) -> dict[ast.AST, str]:
    """Module-level functions and classes' methods (nested classes too) → qualname."""
    return ctx.cached("analysis.qualnames", lambda: _qualnames(ctx.tree.body))


def _qualnames(body: list[Any]) -> dict[ast.AST, str]:
    # A loop, not a recursive closure: a closure that calls itself is a reference cycle,
    # which would keep the module's tree alive until the garbage collector's next full
    # pass (trees are meant to be freed by reference counting the moment a module is done).
    out: dict[ast.AST, str] = {}
    shadowed = _shadowed(body)
    todo: list[tuple[list[Any], str]] = [(body, "")]
    while todo:
        stmts, prefix = todo.pop()
        for stmt in stmts:
            if type(stmt) in _DEFS:
                out[stmt] = prefix + _own_name(stmt, shadowed)
            elif type(stmt) is ast.ClassDef:
                name = _own_name(stmt, shadowed)
                out[stmt] = prefix + name
                todo.append((stmt.body, f"{prefix}{name}."))
            elif type(stmt) in (ast.If, ast.Try):
                todo.append((stmt.body, prefix))
                todo.append((stmt.orelse, prefix))
    return out


def _shadowed(body: list[Any]) -> set[int]:
    """Module-level ``def``/``class`` statements that a later one of the same name in the
    module's own statement list replaces: a notebook defining a function again in a later
    cell, a script redefining it. The code between the two runs the earlier one (the name's
    binding at each use says which), so each keeps a qualname of its own."""
    last: dict[str, int] = {}
    for i, stmt in enumerate(body):
        if type(stmt) in _DEFS or type(stmt) is ast.ClassDef:
            last[stmt.name] = i
    return {id(stmt) for i, stmt in enumerate(body)
            if (type(stmt) in _DEFS or type(stmt) is ast.ClassDef) and last[stmt.name] != i}


def _own_name(stmt: Any, shadowed: set[int]) -> str:
    """The name a summarised ``def``/``class`` is known by: its own, or, for a definition
    replaced later in the module (:func:`_shadowed`), its name and line (``show@12``),
    which no import or later call reaches."""
    return f"{stmt.name}@{stmt.lineno}" if id(stmt) in shadowed else stmt.name


def short_name(qualname: str) -> str:
    """The name a call spells for a summarised function (``Agent.act`` → ``act``;
    ``show@12``, a definition replaced later, → ``show``)."""
    return qualname.rsplit(".", 1)[-1].split("@", 1)[0]


def enclosing_qualname(ctx: Context, node: Any) -> str:
    """The qualname of the summarised function ``node`` runs in ("" at module level; a
    nested function counts as the function around it, which is where it is usually run)."""
    names = qualnames(ctx)
    found = ""
    for fn in ctx.enclosing_functions(node):
        q = names.get(fn)
        if q is not None:
            found = q
    return found


def _imports(ctx: Context) -> dict[str, list[str]]:
    """Local name → [module, attribute] for module-level imports of the project's modules
    (attribute "" for ``import a.b as m``)."""
    out: dict[str, list[str]] = {}
    node: Any
    for node in ctx.nodes_of(ast.Import, ast.ImportFrom):
        if ctx.scope_of(node) is not ctx.tree:
            continue
        if type(node) is ast.Import:
            for a in node.names:
                if project_module(a.name):
                    out[a.asname or a.name.split(".", 1)[0]] = \
                        [a.name if a.asname else a.name.split(".", 1)[0], ""]
        else:
            spec = "." * node.level + (node.module or "")
            if not project_module(spec) or spec == "":
                continue
            for a in node.names:
                # `from pkg.mod import *`: kept under a key no name can be, "*pkg.mod"
                out[a.asname or a.name if a.name != "*" else "*" + spec] = [spec, a.name]
    return out


def _star_imported(ctx: Context) -> bool:
    """The module star-imports a module of the project: a name bound nowhere here may be
    one of its classes."""
    def compute() -> bool:
        n: Any
        for n in ctx.nodes_of(ast.ImportFrom):
            spec = "." * n.level + (n.module or "")
            if spec and project_module(spec) and any(a.name == "*" for a in n.names):
                return True
        return False
    return ctx.cached("analysis.star_imported", compute)


def _import_of(ctx: Context, name: Any) -> tuple[str, str] | None:
    """What a name bound by an import refers to: (module, attribute) ("" for a module)."""
    b = ctx.binding(name)
    if b is None or b.kind != "import":
        return None
    node = b.value
    for a in node.names:
        bound = a.asname or (a.name.split(".", 1)[0] if type(node) is ast.Import else a.name)
        if bound != name.id:
            continue
        if type(node) is ast.Import:
            module = a.name if a.asname else a.name.split(".", 1)[0]
            return (module, "") if project_module(module) else None
        spec = "." * node.level + (node.module or "")
        return (spec, a.name) if spec and project_module(spec) else None
    return None


def _class_ref(ctx: Context, expr: Any, depth: int = 0) -> tuple[str, str] | None:
    """The class ``expr`` is an instance of, when it is made from a class of this module or
    of a project module: ``x = Agent(...)``, ``self.agent = Agent(...)``, a parameter
    annotated ``Agent``."""
    if depth > 4:
        return None
    value: ast.AST | None = None
    if type(expr) is ast.Name:
        b = ctx.binding(expr)
        if b is None:
            return None
        if b.kind == "assign" and b.value is not expr:
            value = b.value
        elif b.kind == "param" and b.value.annotation is not None:
            return _class_of(ctx, b.value.annotation)
        else:
            return None
    elif type(expr) is ast.Attribute and type(expr.value) is ast.Name \
            and expr.value.id == "self":
        values = kinds.self_assignments(ctx, expr).get(expr.attr, [])
        if len(values) != 1:
            return None
        value = values[0]
    if type(value) is ast.Call:
        return _class_of(ctx, value.func)
    if value is not None and type(value) in (ast.Name, ast.Attribute):
        return _class_ref(ctx, value, depth + 1)
    return None


def instance_class(ctx: Context, expr: Any) -> tuple[str, str] | None:
    """The project class ``expr`` is an instance of, as (module spec, qualname): spec ""
    for a class of this module (``self.actor = Actor(...)``, ``x: Actor``), else the
    import it came through (``from .network import Actor``); ``None`` if not known."""
    return _class_ref(ctx, expr)


def _class_of(ctx: Context, func: Any) -> tuple[str, str] | None:
    """``Agent`` / ``agents.Agent`` naming a class of this module or a project module."""
    if type(func) is ast.Name:
        b = ctx.binding(func)
        if b is not None and b.kind == "class":
            q = qualnames(ctx).get(b.value)
            return ("", q) if q else None
        if b is not None and b.kind == "import":
            ref = _import_of(ctx, func)
            return ref if ref is not None and ref[1] and ref[1][:1].isupper() else None
        if b is None and func.id[:1].isupper() and _star_imported(ctx):
            return ("*", func.id)  # one of the star-imported modules' classes, if any
        return None
    if type(func) is ast.Attribute and type(func.value) is ast.Name and func.attr[:1].isupper():
        ref = _import_of(ctx, func.value)
        if ref is not None:
            module, attr = ref
            return (module, f"{attr}.{func.attr}" if attr else func.attr)
    return None


def _owner_root(func: Any, owners: frozenset[str], own_method: bool) -> bool:
    """``func`` (``a.b.m``) may reach the project: its root is ``self``/``cls`` calling a
    method name of this module (or an attribute of ``self``), or a name that imports a
    project module or may hold an instance of a project class."""
    owner = func.value
    if type(owner) is ast.Name:  # the common case, without walking a chain
        name: str = owner.id
        return own_method if name in ("self", "cls") else name in owners
    root = _root_name(owner)
    if root in ("self", "cls"):
        return own_method or type(func.value) is ast.Attribute
    return root in owners


def _owner_names(ctx: Context, imported: set[str]) -> frozenset[str]:
    """Names that may hold something of the project: those importing a project module
    (or a name of one), those assigned an instance of what may be a project class
    (``agent = Agent(...)``, ``net = models.Net()``: a capitalised name not imported from a
    library, or anything of an imported project module), and annotated parameters."""
    def compute() -> frozenset[str]:
        out = set(imported)
        libraries = _library_names(ctx)
        n: Any
        for n in ctx.nodes_of(ast.Assign):
            value = n.value
            if type(value) is not ast.Call:
                continue
            f = value.func
            root = _root_name(f)
            if root is None or root in libraries:
                continue
            last: str = f.id if type(f) is ast.Name else getattr(f, "attr", "")
            if last[:1].isupper() or root in imported:
                out.update(t.id for t in n.targets if type(t) is ast.Name)
        for n in ctx.nodes_of(ast.arg):
            if n.annotation is not None:
                out.add(n.arg)
        return frozenset(out)
    return ctx.cached("analysis.owner_names", compute)


def _library_names(ctx: Context) -> frozenset[str]:
    """Names the module binds by importing from a library (``tf``, ``np``, ``Sequential``
    from keras): nothing called through them is the project's."""
    out: set[str] = set()
    n: Any
    for n in ctx.nodes_of(ast.Import, ast.ImportFrom):
        for a in n.names:
            if type(n) is ast.Import:
                name, spec = a.asname or a.name.split(".", 1)[0], a.name
            else:
                name, spec = a.asname or a.name, "." * n.level + (n.module or "")
            if not project_module(spec):
                out.add(name)
    return frozenset(out)


def _root_name(expr: Any) -> str | None:
    while type(expr) is ast.Attribute:
        expr = expr.value
    return expr.id if type(expr) is ast.Name else None


def callee_ref(ctx: Context, call: Any) -> tuple[str, str] | None:
    """Where ``call`` may lead in the project: (module, qualname), or ``None``."""
    func = call.func
    if type(func) is ast.Name:
        b = ctx.binding(func)
        if b is None:
            # Bound nowhere here, not a builtin: one of the star-imported modules' names.
            star = _star_imported(ctx) and not hasattr(builtins, func.id)
            return ("*", func.id) if star else None
        if b.kind in ("def", "class"):  # a class: its instance is built (and called)
            q = qualnames(ctx).get(b.value)
            return ("", q) if q else None
        if b.kind == "import":
            ref = _import_of(ctx, func)
            return ref if ref is not None and ref[1] else None
        if b.kind == "assign" and ctx.scope_of(b.value) is ctx.tree \
                and wrapping(ctx, b.value) is not None:
            return ("", func.id)  # step = tf.function(g)
        if b.kind == "param":  # `def fit(ds, step_fn=train_step)`: the default runs
            default = _default_left(ctx, b.value)
            return _function_named(ctx, default) if type(default) is ast.Name else None
        return None
    if type(func) is not ast.Attribute:
        return None
    owner = func.value
    if type(owner) is ast.Name:
        if owner.id == "self":  # `self.step = train_step` in __init__, `self.step(...)`
            values = kinds.self_assignments(ctx, func).get(func.attr)
            if values is not None and len(values) == 1 and type(values[0]) is ast.Name \
                    and kinds.set_only_in_class(ctx, func, func.attr):
                ref = _function_named(ctx, values[0])
                if ref is not None:
                    return ref
        if owner.id in ("self", "cls"):
            cls = ctx.enclosing_class(func)
            q = qualnames(ctx).get(cls) if cls is not None else None
            return ("", f"{q}.{func.attr}") if q else None
        ref = _import_of(ctx, owner)
        if ref is not None:
            module, attr = ref
            return (module, f"{attr}.{func.attr}" if attr else func.attr)
    cls_ref = _class_ref(ctx, owner)
    if cls_ref is not None:
        return (cls_ref[0], f"{cls_ref[1]}.{func.attr}")
    if type(owner) is ast.Attribute and _root_name(owner) in ("self", "cls") \
            and distinctive_method(func.attr):
        # `self.deep_q.predict_movement(x)`, the attribute's class chosen at run time:
        # whichever project class defines that method (the project resolves the name).
        return (BY_METHOD_NAME, func.attr)
    return None


def _function_named(ctx: Context, name: Any) -> tuple[str, str] | None:
    """Stop 39, pass B: the reference of a function a name holds as a value (a ``def`` of
    this module, or a function imported from a project module): what calling a parameter
    defaulting to it, or an attribute assigned it, runs."""
    b = ctx.binding(name)
    if b is None:
        return None
    if b.kind == "def":
        q = qualnames(ctx).get(b.value)
        return ("", q) if q else None
    if b.kind == "import":
        ref = _import_of(ctx, name)
        return ref if ref is not None and ref[1] else None
    return None


def _functions_held(ctx: Context, functions: set[str]) -> set[str]:
    """Names of parameters defaulting to one of ``functions`` (``step_fn=train_step``) and
    attributes of ``self`` assigned one (``self.step = train_step``): calls through them
    may reach the project (:func:`callee_ref` decides)."""
    out: set[str] = set()
    for fn in ctx.nodes_of(ast.FunctionDef, ast.AsyncFunctionDef):
        a = fn.args  # type: ignore[attr-defined]
        positional = [*a.posonlyargs, *a.args]
        pairs = [*zip(positional[len(positional) - len(a.defaults):], a.defaults, strict=True),
                 *zip(a.kwonlyargs, a.kw_defaults, strict=True)]
        out.update(p.arg for p, d in pairs if type(d) is ast.Name and d.id in functions)
    for n in ctx.nodes_of(ast.Assign):
        v = n.value  # type: ignore[attr-defined]
        if type(v) is ast.Name and v.id in functions:
            out.update(t.attr for t in n.targets  # type: ignore[attr-defined]
                       if type(t) is ast.Attribute and type(t.value) is ast.Name
                       and t.value.id == "self")
    return out


def _default_left(ctx: Context, arg: Any) -> Any:
    """The default of the parameter ``arg`` where calls of its function in this module
    leave it, and none gives it a value (a caller passing its own function decides what
    runs); else None."""
    from tfperf.lint.analysis.callers import bound_arguments, calls_of

    fn = ctx.scope_of(arg)
    args = getattr(fn, "args", None)
    if args is None or type(fn) not in _DEFS:
        return None
    positional = [*args.posonlyargs, *args.args]
    default = None
    if arg in positional:
        i = positional.index(arg) - (len(positional) - len(args.defaults))
        default = args.defaults[i] if i >= 0 else None
    elif arg in args.kwonlyargs:
        default = args.kw_defaults[args.kwonlyargs.index(arg)]
    calls = calls_of(ctx, fn)
    if default is None or not calls:
        # Review 39 (1): no call here reaches it: its callers are in other modules,
        # whose arguments (a compiled step passed in) this module does not see.
        return None
    for call in calls:
        bound = bound_arguments(fn, call)
        if bound is None or bound.get(arg.arg) is not default:
            return None
    return default


# A call's module when only its method's name is known (:func:`callee_ref`).
BY_METHOD_NAME = "?"

# Method names that library objects define (Keras models, layers and optimizers, datasets,
# sessions, environments, containers, files, scikit-learn...): an attribute of unknown class
# calling one of them is as likely a library object as a project class, so the name alone
# resolves nothing.
_LIBRARY_METHODS = frozenset({
    "predict", "fit", "evaluate", "call", "build", "compile", "save", "load", "load_weights",
    "save_weights", "get_weights", "set_weights", "summary", "train_on_batch",
    "predict_on_batch", "test_on_batch", "get_config", "from_config", "compute_output_shape",
    "add_weight", "add_loss", "add_metric", "reset_states", "reset_state", "update_state",
    "result", "apply_gradients", "minimize", "get_updates", "get_gradients", "gradient",
    "watch", "map", "batch", "shuffle", "repeat", "prefetch", "cache", "take", "skip",
    "filter", "zip", "unbatch", "padded_batch", "interleave", "run", "close", "step", "reset",
    "render", "seed", "sample", "append", "extend", "insert", "remove", "pop", "get", "update",
    "items", "keys", "values", "copy", "clear", "setdefault", "add", "discard", "format",
    "join", "split", "strip", "read", "write", "open", "flush", "sort", "index", "count",
    "transform", "fit_transform", "inverse_transform", "score", "forward", "train", "eval",
    "assign", "assign_add", "assign_sub", "numpy", "item", "reshape", "astype", "mean", "sum",
    "max", "min", "put", "info", "debug", "warning", "error", "log", "send", "recv", "start",
    "stop", "wait", "acquire", "release", "submit", "apply", "encode", "decode",
})


def _calls_by_method_name(ctx: Context) -> bool:
    """The module calls a distinctive method on an attribute of ``self`` (its class chosen
    at run time): a link the project resolves by the method's name."""
    by_attr, _ = ctx.call_groups()
    for attr, calls in by_attr.items():
        if not distinctive_method(attr):
            continue
        for c in calls:
            owner: Any = getattr(c.func, "value", None)
            if type(owner) is ast.Attribute and _root_name(owner) in ("self", "cls"):
                return True
    return False


def distinctive_method(name: str) -> bool:
    """A method name that names a project method when the receiver's class is unknown:
    not a dunder, not a name library objects define."""
    return not name.startswith("__") and name not in _LIBRARY_METHODS


def _loop_kind(ctx: Context, call: Any) -> str:
    loops = ctx.enclosing_loops(call)
    if not loops:
        return ""
    loop: Any = loops[0]
    if type(loop) is ast.While:
        return "while"
    it = getattr(loop, "iter", None)
    if it is None and getattr(loop, "generators", None):
        it = loop.generators[0].iter
    return _iterable_kind(ctx, it) if it is not None else "other"


def _iterable_kind(ctx: Context, it: Any, depth: int = 0) -> str:
    """What a loop's iterable walks, seen through the wrappers that yield what they wrap
    (``enumerate``, ``iter``, a ``tqdm`` bar) and ``zip`` (a range or a dataset zipped with
    anything walks it too): "range", "dataset" or "other"."""
    if depth > 4:
        return "other"
    if type(it) is ast.Name:  # `bar = tqdm(range(n))`, then `for i in bar:`
        b = ctx.binding(it)
        if b is not None and b.kind == "assign" and type(b.value) is ast.Call:
            return _iterable_kind(ctx, b.value, depth + 1)
    if type(it) is not ast.Call:
        return "dataset" if ctx.imports_tf and ctx.is_dataset(it) else "other"
    if ctx.is_builtin_call(it, "range") or ctx.call_qualname(it) in PROGRESS_RANGES:
        return "range"
    if it.args and (ctx.is_builtin_call(it, "enumerate", "iter")
                    or ctx.call_qualname(it) in PROGRESS_BARS):
        return _iterable_kind(ctx, it.args[0], depth + 1)
    if ctx.is_builtin_call(it, "zip"):
        kinds = {_iterable_kind(ctx, a, depth + 1) for a in it.args}
        return next((k for k in ("range", "dataset") if k in kinds), "other")
    return "dataset" if ctx.imports_tf and ctx.is_dataset(it) else "other"


def steps_environment(ctx: Context, loop: Any) -> bool:
    """The loop's own body steps an environment: ``env.step(a)``, ``self.env.step(a)``."""
    def compute() -> bool:
        return any(type(n) is ast.Call and env_step(n) for n in ast.walk(loop))
    return bool(ctx.cached(f"analysis.env_loop.{id(loop)}", compute))


def env_step(call: Any) -> bool:
    """``env.step(a)`` / ``self.env.step(a)`` / ``envs.step(actions)``."""
    f = call.func
    if type(f) is not ast.Attribute or f.attr != "step" or not call.args:
        return False
    owner = f.value
    name = getattr(owner, "id", "") or getattr(owner, "attr", "")
    return "env" in name.lower()


def _text(ctx: Context, node: Any) -> str:
    text = ctx.source_of(node) if getattr(node, "lineno", None) else ""
    text = " ".join(text.split())
    return text if len(text) <= _TEXT else text[:_TEXT - 1] + "…"


def _arg_facts(ctx: Context, call: Any, looked_at: bool) -> list[ArgFact]:
    """The values passed at ``call``: their kinds (:func:`kinds.quick_kind`), and whether
    they change per iteration, where the project's checks ask (``looked_at``: a call in a
    loop that may reach a traced function); none elsewhere."""
    out: list[ArgFact] = []
    if not looked_at:
        return out
    slots = [(str(i), a) for i, a in enumerate(call.args) if type(a) is not ast.Starred]
    slots += [(k.arg, k.value) for k in call.keywords if k.arg is not None]
    for slot, value in slots:
        kind = kinds.quick_kind(ctx, value)
        varies = kind in (kinds.NUMBER, kinds.UNKNOWN) \
            and kinds.python_number_varies(ctx, value, call)
        leading = kind not in kinds.PYTHON_VALUES \
            and kinds.leading_size_varies(ctx, value, call)
        out.append(ArgFact(slot, kinds.NUMBER if varies else kind, varies, leading,
                           _text(ctx, value) if varies or leading else ""))
    return out


def _one_input_slots(ctx: Context, call: Any) -> list[str]:
    """The slots of ``call`` given one input as a batch of one (``np.reshape(s, [1, n])``,
    ``x[None]``), one observation of an environment, or one field of one transition of a
    sampled replay minibatch the loop walks (``for s, a, r, s2, d in random.sample(...)``):
    a callee that hands it to ``model.predict`` predicts one input per iteration."""
    slots = [(str(i), a) for i, a in enumerate(call.args) if type(a) is not ast.Starred]
    slots += [(k.arg, k.value) for k in call.keywords if k.arg is not None]
    loop = ctx.enclosing_loops(call)[0]
    return [slot for slot, value in slots
            if one_input(ctx, value) or one_sample(ctx, value, loop)]


def _batch_slots(ctx: Context, call: Any) -> list[str]:
    """The slots of ``call`` given (a part of) the batch its loop takes from a dataset:
    a callee that hands it to ``model.predict`` pays predict's set-up per batch."""
    slots = [(str(i), a) for i, a in enumerate(call.args) if type(a) is not ast.Starred]
    slots += [(k.arg, k.value) for k in call.keywords if k.arg is not None]
    loop = ctx.enclosing_loops(call)[0]
    return [slot for slot, value in slots if dataset_batch(ctx, value, loop)]


def _tf_options(ctx: Context, creation: Any) -> tuple[bool, bool]:
    """(input_signature given, shapes relaxed) from a decorator or ``tf.function(...)``."""
    if type(creation) is not ast.Call:
        return False, False
    sig = relaxed = False
    for k in creation.keywords:
        if k.arg == "input_signature" and not (type(k.value) is ast.Constant
                                               and k.value.value is None):
            sig = True
        elif k.arg in ("reduce_retracing", "experimental_relax_shapes") \
                and not (type(k.value) is ast.Constant and k.value.value is False):
            relaxed = True
    return sig, relaxed


_KERAS_TRACED = frozenset({"call", "train_step", "test_step", "predict_step"})


def _is_traced(ctx: Context, fn: Any, method: bool) -> bool:
    """``fn`` is compiled by TensorFlow: decorated (or by a wrapper of ``tf.function``),
    wrapped, or a Keras model's traced method."""
    if tf_function_decorator_or_wrapper(ctx, fn) is not None:
        return True
    return (ctx.spells_tf_function or (method and fn.name in _KERAS_TRACED)) \
        and ctx.is_tf_function(fn)


def _function_fact(ctx: Context, fn: Any, qualname: str, method: bool) -> FunctionFact:
    args = fn.args
    params = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    defaults = {}
    positional = [*args.posonlyargs, *args.args]
    for a, d in zip(positional[len(positional) - len(args.defaults):], args.defaults,
                    strict=True):
        defaults[a.arg] = kinds.quick_kind(ctx, d)
    for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        if d is not None:
            defaults[a.arg] = kinds.quick_kind(ctx, d)
    traced_how = ""
    sig = relaxed = False
    deco = tf_function_decorator_or_wrapper(ctx, fn)
    if deco is not None:
        traced_how = "decorated"
        sig, relaxed = _tf_options(ctx, deco)
    elif (ctx.spells_tf_function or (method and fn.name in _KERAS_TRACED)) \
            and ctx.is_tf_function(fn):
        traced_how = "keras" if method and fn.name in _KERAS_TRACED else "wrapped"
    return FunctionFact(qualname, header_position(ctx, fn), params, defaults, traced_how,
                        sig, relaxed, kinds.returned_kind(ctx, fn), method)


def _wrapped_facts(ctx: Context, names: dict[ast.AST, str]) -> Iterable[FunctionFact]:
    """``step = tf.function(g)`` at module level, ``self.step = tf.function(self._g)`` in a
    class: a traced function other modules call by that name."""
    if not ctx.spells_tf_function:
        return
    node: Any
    for node in ctx.nodes_of(ast.Assign):
        if len(node.targets) != 1 or type(node.value) is not ast.Call \
                or not _calls_function(node.value):
            continue
        wrapped = wrapping(ctx, node.value)
        if wrapped is None:
            continue
        target = node.targets[0]
        if type(target) is ast.Name and ctx.scope_of(node) is ctx.tree:
            qualname, method = target.id, False
        elif type(target) is ast.Attribute and type(target.value) is ast.Name \
                and target.value.id == "self":
            cls = ctx.enclosing_class(node)
            q = names.get(cls) if cls is not None else None
            if q is None:
                continue
            qualname, method = f"{q}.{target.attr}", True
        else:
            continue
        fact = _function_fact(ctx, wrapped.fn, qualname, False) \
            if type(wrapped.fn) in _DEFS else FunctionFact(qualname, [])
        fact.pos = position(ctx, node)
        fact.traced = "wrapped"
        fact.signature, fact.relaxed = _tf_options(ctx, wrapped.creation)
        if method and fact.params[:1] == ["self"]:
            fact.params = fact.params[1:]  # bound: `self._g` was wrapped
        fact.method = False
        yield fact


def _calls_function(call: Any) -> bool:
    """``x.function(...)``, ``function(...)`` or ``x.function(...)(...)``: a spelling
    ``tf.function`` may have (cheap test before any name is resolved)."""
    f = call.func
    if type(f) is ast.Call:
        f = f.func
    return (type(f) is ast.Attribute and f.attr == "function") or (
        type(f) is ast.Name and f.id == "function")


def _may_guard(ctx: Context) -> bool:
    """Some test here may ask whether code runs eagerly (the words
    :func:`eager_guarded` looks for): most modules have none, and their calls need no
    look at the tests around them."""
    source = ctx.source
    return ctx.cached("analysis.may_guard", lambda: any(
        w in source for w in ("eager", "torch", "symbolic", "inside_function",
                              "keras_tensor", '"numpy"', "'numpy'")))


def _project_bases(ctx: Context, names: dict[ast.AST, str]) -> dict[str, list[list[str]]]:
    """Each class's bases that are classes of this module or of a project module."""
    out: dict[str, list[list[str]]] = {}
    for node, q in names.items():
        if type(node) is ast.ClassDef and node.bases:
            refs = [list(ref) for ref in map(lambda b: _class_of(ctx, b), node.bases)
                    if ref is not None]
            if refs:
                out[q] = refs
    return out


def summarize(ctx: Context, publishers: Iterable[Any] = (),
              complete: bool = False) -> ModuleSummary:
    """The summary of the module ``ctx`` models; ``publishers``: rules whose
    ``publish(ctx)`` adds facts for their cross-module checks.

    A module that imports no module of the project and publishes no fact can take part in
    a cross-module question only as the home of a traced function (called from elsewhere,
    or from its own loops): unless ``complete``, its summary then holds only those
    functions and the calls of them in loops. Lint's checks need no more; tune asks for
    the complete summary."""
    summary = ModuleSummary(ctx.path, tf=[*ctx.tf_version, *ctx.tf_newest])
    summary.imports = _imports(ctx)
    # Facts that name only positions and this module's own names (a Keras class's `call`,
    # a call in a tape) ask nothing of its functions and calls: they keep it lean.
    asking = False
    for rule in publishers:
        facts = rule.publish(ctx)
        if facts:
            summary.facts[rule.code] = facts
            need = getattr(rule, "facts_need_calls", None)  # tune's publishers may lack it
            asking = asking or need is None or need(facts)
    # Calls by method name through an attribute of `self` (`self.deep_q.predict_movement`)
    # may reach the project's TensorFlow code whatever this module imports.
    links = not summary.imports and not asking and _calls_by_method_name(ctx)
    if not summary.imports and not ctx.imports_tf and not asking and not links:
        # Neither TensorFlow nor another module of the project: nothing here runs or
        # reaches TensorFlow code, so no cross-module question is about it.
        return summary
    lean = not complete and not summary.imports and not asking and not links
    if lean and not ctx.may_trace:
        return summary  # and no traced function either
    names = qualnames(ctx)
    # Elsewhere a function is a link in a chain of calls, no more, unless a rule published
    # a fact about it (one that names a parameter needs the parameters).
    full = ctx.imports_tf or bool(summary.facts)
    for node, q in names.items():
        if type(node) in _DEFS:
            method = type(ctx.parent(node)) is ast.ClassDef
            if lean:
                if _is_traced(ctx, node, method):
                    summary.functions[q] = _function_fact(ctx, node, q, method)
                continue
            summary.functions[q] = _function_fact(ctx, node, q, method) if full \
                else FunctionFact(q, header_position(ctx, node), method=method)
    for fact in _wrapped_facts(ctx, names):
        summary.functions.setdefault(fact.qualname, fact)
    if lean and not summary.functions:
        return summary
    if not lean:
        summary.bases = _project_bases(ctx, names)
    local = {q.rsplit(".", 1)[-1] for q in summary.functions}
    # Classes with methods here: `RandomExpand(...)` builds one (Project.reachable).
    classes = {q.rsplit(".", 1)[0] for q in summary.functions if "." in q}
    local |= {c for c in classes if "." not in c}
    imported = set(summary.imports)
    by_attr, by_name = ctx.call_groups()
    owners = frozenset() if lean else _owner_names(ctx, imported)
    methods = {q.rsplit(".", 1)[-1] for q in summary.functions if "." in q}
    star = not lean and _star_imported(ctx)
    held = set() if lean else _functions_held(ctx, local | imported)
    candidates = [c for n, lst in by_name.items()
                  if n in local or n in imported or (star and not hasattr(builtins, n))
                  or n in held for c in lst]
    # An attribute call may reach the project only through `self`/`cls` (a method of the
    # class: its name is one), an imported module or an instance of a project class.
    for attr, lst in by_attr.items():
        # A method of this module's class, or one a subclass here may inherit.
        own_method = attr in methods or bool(summary.bases) or attr in held
        candidates += [c for c in lst if _owner_root(c.func, owners, own_method)]
    # Functions a rule asks about its callers' values for (a fact with `watch_args`: an
    # eager function handing its parameter on to a tf.function).
    watched = {f["fn"] for facts in summary.facts.values() if type(facts) is list
               for f in facts if type(f) is dict and f.get("watch_args")}
    by_function: dict[int, tuple[str, bool]] = {}
    once_seen: set[str] = set()
    tf_module = ctx.imports_tf  # without TensorFlow nothing here is traced or guarded
    for call in candidates:
        inner = ctx.enclosing_function(call)
        loop = _loop_kind(ctx, call)
        if lean and not loop:
            continue  # module-level code run once: it makes nothing run per iteration
        once = inner is None and not loop
        if once:
            # Module-level code outside loops is kept (caller ""), once per callee and with
            # no argument facts: a script that runs a function once tells that the function
            # is not only entered from outside.
            key = _text(ctx, call.func)
            if type(call.func) is ast.Name:  # `show(x)` before and after `def show` again
                b = ctx.binding(call.func)
                key += f"@{id(b.value) if b is not None else 0}"
            if key in once_seen:
                continue
            once_seen.add(key)
        ref = callee_ref(ctx, call)
        if ref is None or (ref[0] == "" and ref[1] not in summary.functions
                           and ref[1] not in classes
                           and ref[1].split(".", 1)[0] not in summary.imports
                           and ref[1].rsplit(".", 1)[0] not in summary.bases):
            continue
        local_fn = summary.functions.get(ref[1]) if ref[0] == "" else None
        looked_at = bool(loop) and (local_fn is None or bool(local_fn.traced)
                                    or ref[1] in watched)
        where = by_function.get(id(inner))
        if where is None:  # the same for every call of one function: worked out once
            where = by_function[id(inner)] = (enclosing_qualname(ctx, call),
                                               tf_module and traced(ctx, call))
        # A position is only ever shown for a call in a loop (the call that makes a
        # function run per iteration, a value passed per iteration).
        summary.calls.append(CallFact(
            ref, position(ctx, call) if loop else [0, 0, 0, 0, 0], where[0], loop,
            where[1], tf_module and _may_guard(ctx) and eager_guarded(ctx, call),
            [] if once else _arg_facts(ctx, call, looked_at),
            any(type(a) is ast.Starred for a in call.args)
            or any(k.arg is None for k in call.keywords),
            _one_input_slots(ctx, call) if loop else [],
            bool(loop) and steps_environment(ctx, ctx.enclosing_loops(call)[0]),
            runs_per_entry(ctx, call) if loop else None,
            _batch_slots(ctx, call) if loop in ("dataset", "other") else []))
    summary.calls.sort(key=lambda c: c.pos)
    return summary


def position_of(finding: Any) -> Pos:
    """A finding's location as a summary position."""
    loc = finding.location
    return [loc.line or 0, loc.column or 0, loc.end_line or loc.line or 0,
            loc.end_column or 0, loc.cell or 0]
