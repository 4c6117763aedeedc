"""List candidate performance fixes in a fetched repository, best first (to judge by hand).

    python benchmarks/lint_fixes/mine.py owner/name [--top 25] [--any-message]

Keeps commits whose message speaks of speed (vectorize, faster, retrace, prefetch...) and whose
diff of .py/.ipynb files removes or adds a telling API (tf.tile, tf.transpose, map_fn, .numpy(),
feed_dict, input_signature, num_parallel_calls...), then ranks them by the number of such
signals and the size of the change. `--any-message` also keeps small commits (at most 30 changed
lines) whose message says nothing. This is how fixes.csv was found; every row was then read
and judged (rows.py add --dry-run shows the changed lines).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys

from fixset import DEFAULT_MIRROR, MissingSnapshot, git_dir

MESSAGE = re.compile(
    r"vectori[sz]|speed|faster|retrac|prefetch|einsum|broadcast|transpos|efficien|slow|tile|"
    r"perf|optimi[sz]|fast|loop|parallel|avoid|expensive|overhead|memory leak|batched", re.I)
# signal name -> (pattern, side that counts: "-" removed more than added, "+" the reverse)
SIGNALS = {
    "tile": (r"\b(tf|K|backend)\.(tile|repeat)\(", "-"),
    "transpose": (r"tf\.transpose\(|K\.permute_dimensions|\.transpose\(", "-"),
    "transpose_ab": (r"transpose_[ab]\s*=\s*True|adjoint_[ab]|adjoint_arg", "+"),
    "einsum": (r"einsum\(", "+"),
    "for": (r"^\s*for .* in .*:", "-"),
    "vectorized_map": (r"vectorized_map|pfor", "+"),
    "map_fn": (r"map_fn\(", "-"),
    "signature": (r"input_signature|experimental_relax_shapes|reduce_retracing|TensorSpec", "+"),
    "host_sync": (r"\.numpy\(\)|K\.get_value|\.eval\(", "-"),
    "tf.data": (r"prefetch\(|num_parallel_calls|AUTOTUNE|\.cache\(|interleave\(", "+"),
    "tf.function": (r"tf\.function|@function", "+"),
    "feed_dict": (r"feed_dict", "-"),
    "append": (r"\.append\(", "-"),
    "concat": (r"tf\.concat|tf\.stack", "-"),
}
STRONG = {"signature", "vectorized_map", "tile", "transpose_ab", "einsum", "tf.data", "host_sync"}


def git(gdir, *args: str) -> str:
    return subprocess.run(["git", "-C", str(gdir), *args], capture_output=True, text=True,
                          errors="replace").stdout


def signals(diff: str) -> list[str]:
    minus = [ln[1:] for ln in diff.splitlines() if ln.startswith("-") and not ln.startswith("---")]
    plus = [ln[1:] for ln in diff.splitlines() if ln.startswith("+") and not ln.startswith("+++")]
    found = []
    for name, (pattern, side) in SIGNALS.items():
        rx = re.compile(pattern)
        removed = sum(bool(rx.search(ln)) for ln in minus)
        added = sum(bool(rx.search(ln)) for ln in plus)
        if (side == "-" and removed > added) or (side == "+" and added > removed):
            found.append(name)
    return found


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("repo")
    p.add_argument("--mirror", default=DEFAULT_MIRROR)
    p.add_argument("--top", type=int, default=25)
    p.add_argument("--any-message", action="store_true")
    args = p.parse_args()
    try:
        gdir = git_dir(__import__("pathlib").Path(args.mirror), args.repo)
    except MissingSnapshot:
        print(f"not fetched: fetch github:{args.repo}", file=sys.stderr)
        return 2
    ranked = []
    log = git(gdir, "log", "--all", "--no-merges", "--format=%H\t%ad\t%s", "--date=short",
              "--", "*.py", "*.ipynb")
    for line in log.splitlines():
        sha, date, subject = line.split("\t", 2)
        if not args.any_message and not MESSAGE.search(subject):
            continue
        diff = git(gdir, "show", "--format=", "-U0", sha, "--", "*.py", "*.ipynb")
        if "tf." not in diff and "keras" not in diff.lower():
            continue
        found = signals(diff)
        size = sum(1 for ln in diff.splitlines() if ln[:1] in "+-" and ln[:3] not in ("+++", "---"))
        if not found or (args.any_message and not MESSAGE.search(subject)
                         and (size > 30 or not set(found) & STRONG)):
            continue
        ranked.append((len(found) * 3 - size / 80, sha[:10], date, size, found, subject))
    ranked.sort(key=lambda r: (-r[0], r[1]))
    for _, sha, date, size, found, subject in ranked[: args.top]:
        print(f"{sha} {date} n={size:<5} [{','.join(found)}] {subject[:90]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
