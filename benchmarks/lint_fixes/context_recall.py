"""Recall rounds linted 'file alone' inside a copy of each repository tree (a .git marker
added at the tree root, as the real checkout has), with project context on and off.
The round folder holds fixes.csv, src/manifest.json (after files) and trees/ (each repository
at its before commit); the trees are copied under <outdir>. Nothing is written in the round.

    python benchmarks/lint_fixes/context_recall.py <round folder> <tfperf executable> <outdir>
"""
import json
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fixset import parse_ranges, read_fixes
from score import target_setting

ROUND, TFPERF, OUT = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
OUT.mkdir(parents=True, exist_ok=True)
TREES = OUT / "trees"
manifest = json.loads((ROUND / "src/manifest.json").read_text())
RUNS = {"before": [("on", []), ("on_preview", ["--preview"]), ("off", ["--no-project-context"])],
        "after": [("on", []), ("off", ["--no-project-context"])]}
out, errors = [], []

def near(fs, spans):
    got = []
    for f in fs:
        if f.get("line") is None:
            continue
        a, b = f["line"], f.get("end_line") or f["line"]
        c = f.get("cell") or 0
        if any((sc or 0) == c and a <= e + 2 and b >= s - 2 for sc, s, e in spans):
            got.append({k: f.get(k) for k in ("code", "line", "message")})
    return got

for r in read_fixes(ROUND / "fixes.csv"):
    name = f"{r.repo.replace('/', '+')}@{r.before[:10]}"
    src_tree = ROUND / "trees" / name
    tree = TREES / name
    if not tree.exists():
        shutil.copytree(src_tree, tree, symlinks=True)
        (tree / ".git").mkdir(exist_ok=True)
    rec = {"id": r.id, "repo": r.repo}
    for side in ("before", "after"):
        rel = r.path if side == "before" else (r.after_path or r.path)
        target = tree / rel
        saved = target.read_bytes() if target.exists() else None
        if side == "after":
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes((ROUND / "src" / manifest[r.id]["after"]).read_bytes())
        spans = parse_ranges(r.before_lines if side == "before" else r.after_lines)
        tv = target_setting(r, side)
        try:
            for tag, extra in RUNS[side]:
                p = subprocess.run([TFPERF, "lint", "--format", "json", "--no-cache", *extra,
                                    "--tf-version", tv, str(target)], capture_output=True,
                                   text=True)
                if p.returncode not in (0, 1) or "Traceback" in p.stderr:
                    errors.append({"id": r.id, "side": side, "tag": tag, "rc": p.returncode,
                                   "stderr": p.stderr[-1500:]})
                try:
                    fs = json.loads(p.stdout or "[]")
                except json.JSONDecodeError:
                    fs = []
                rec[f"{side}_{tag}"] = near(fs, spans)
                rec[f"{side}_{tag}_total"] = len(fs)
                rec[f"{side}_{tag}_all"] = [(f.get("code"), f.get("line"), f.get("message"))
                                            for f in fs]
        finally:
            if side == "after":
                if saved is None:
                    target.unlink()
                else:
                    target.write_bytes(saved)
    out.append(rec)
    print(r.id, {k: len(v) for k, v in rec.items()
                 if isinstance(v, list) and not k.endswith("_all")}, flush=True)
(OUT / "rows.json").write_text(json.dumps(out, indent=1))
(OUT / "errors.json").write_text(json.dumps(errors, indent=1))
print(len(out), "rows;", len(errors), "errors")
