"""Every answer of ``tfperf explain`` on the development set, for a byte compare before/after a
speed change (a speed change that moves one answer is not a speed change).

    .venv/bin/python benchmarks/explain_answers.py write OUT.json [--src DIR]
    .venv/bin/python benchmarks/explain_answers.py compare A.json B.json

``write`` renders each fixture log (tests/doctor/fixtures/explain_logs, every split), each of them
repeated 4 times (``x4:ID``: the paths that read a repeated line once), and the two 10,000-line
logs of bench_explain_cpu.py as text, JSON and Markdown, with the exit status, and stores them
keyed by log id; ``--src`` runs another checkout's explainer on this checkout's logs.
``compare`` prints every log whose answer differs in any byte and exits 1 if one does.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from explain_logs import long_log, rows
from explain_logs import text as log_text


def _write(out: Path, src: str | None) -> None:
    if src:
        sys.path.insert(0, src)
    from tfperf.doctor.explain_render import report_json, report_markdown, report_text
    from tfperf.doctor.explainer import explain_log

    index = rows()
    texts = {r["id"]: log_text(r["id"]) for r in index}
    texts.update({f"x4:{k}": "\n".join([v] * 4) for k, v in list(texts.items())})
    texts["long:set"] = long_log([r["id"] for r in index])
    texts["long:benign"] = long_log([r["id"] for r in index if r["expected"] == "none"])
    answers = {}
    for log_id, text in texts.items():
        ex = explain_log(text)
        answers[log_id] = {"text": report_text(ex), "json": report_json(ex),
                           "markdown": report_markdown(ex), "exit": ex.exit_status}
    out.write_text(json.dumps(answers, sort_keys=True, indent=0), encoding="utf-8")
    print(f"{len(answers)} answers written to {out}")


def _compare(a: Path, b: Path) -> int:
    left = json.loads(a.read_text(encoding="utf-8"))
    right = json.loads(b.read_text(encoding="utf-8"))
    moved = sorted(k for k in left.keys() | right.keys() if left.get(k) != right.get(k))
    for log_id in moved:
        kinds = [k for k in ("text", "json", "markdown", "exit")
                 if (left.get(log_id) or {}).get(k) != (right.get(log_id) or {}).get(k)]
        print(f"{log_id}: differs in {', '.join(kinds) or 'presence'}")
    print(f"{len(left.keys() & right.keys())} logs compared, {len(moved)} differ")
    return 1 if moved else 0


def main() -> int:
    args = sys.argv[1:]
    if len(args) >= 2 and args[0] == "write":
        src = args[args.index("--src") + 1] if "--src" in args else None
        _write(Path(args[1]), src)
        return 0
    if len(args) == 3 and args[0] == "compare":
        return _compare(Path(args[1]), Path(args[2]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
