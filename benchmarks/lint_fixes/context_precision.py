"""Precision rounds: every file of each repository linted alone inside a copy of it (.git
marker at its root), project context on vs off; findings only 'on' gives are listed.
The round folder holds src/<owner+name>/ (one repository each); TF: the round's run_lint.sh
pins, by owner (below). Nothing is written in the round.

    .venv/bin/python benchmarks/lint_fixes/context_precision.py <round folder> <out folder>
"""
import json
import os
import shutil
import sys
from pathlib import Path

from tfperf.lint.discovery import discover
from tfperf.lint.session import LintRequest, run

ROUND, OUT = Path(sys.argv[1]), Path(sys.argv[2])
TF = {"garethjns": "2.3", "mcps5601": "2.4", "dyadxmachina": ">=1.8", "Jean-Christ1": "2.2",
      "dongminlee94": "1.0", "spideralessio": "2.1", "mohd-faizy": ">=2.20", "yurangja99": "2.4",
      "Changyu-Guo": "2.3", "henryle-n": "2.2", "gregorLen": "2.6"}
KEEP = (".py", ".ipynb", ".txt", ".toml", ".cfg", ".yml", ".yaml")
OUT.mkdir(parents=True, exist_ok=True)
new, counts = [], {}


def key(x):
    return (x.code, x.location.line, x.location.cell, x.message)


for repo in sorted((ROUND / "src").iterdir()):
    dst = OUT / "repos" / repo.name
    if not dst.exists():
        shutil.copytree(repo, dst, ignore=lambda d, names: [n for n in names
                        if not os.path.isdir(os.path.join(d, n)) and not n.endswith(KEEP)])
        (dst / ".git").mkdir()
    tv = TF.get(repo.name.split("+")[0])
    if repo.name.startswith("chrismattmann"):
        tv = None  # two parts in the round; file alone: each file's own inference
    cache = OUT / "cache" / repo.name
    files = [str(p) for p in discover([str(dst)])]
    n_on = n_off = 0
    for f in files:
        kw = dict(paths=[f], cache_dir=cache, tf_version=tv)
        on = run(LintRequest(**kw))
        off = run(LintRequest(**kw, project_context=False))
        a, b = {key(x) for x in on.findings}, {key(x) for x in off.findings}
        n_on += len(a)
        n_off += len(b)
        for k in sorted(a - b, key=str):
            new.append({"repo": repo.name, "file": os.path.relpath(f, dst), "code": k[0],
                        "line": k[1], "cell": k[2], "message": k[3], "kind": "new"})
        for k in sorted(b - a, key=str):
            new.append({"repo": repo.name, "file": os.path.relpath(f, dst), "code": k[0],
                        "line": k[1], "cell": k[2], "message": k[3], "kind": "gone"})
    counts[repo.name] = (len(files), n_off, n_on)
    print(repo.name, counts[repo.name], flush=True)
(OUT / "diff.json").write_text(json.dumps(new, indent=1))
(OUT / "counts.json").write_text(json.dumps(counts, indent=1))
print(len([x for x in new if x["kind"] == "new"]), "new;",
      len([x for x in new if x["kind"] == "gone"]), "gone")
