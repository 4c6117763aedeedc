"""The helpers the levers write into the user's module are template strings: a backslash at
the end of a line inside a (non-raw) string literal joins the two lines, so the written
patch held one long line with a run of spaces. Read from the source tokens, not by running
each lever."""

from __future__ import annotations

import tokenize
from pathlib import Path

import tfperf.tune

TUNE = Path(tfperf.tune.__file__).parent


def _joined_lines(path: Path) -> list[str]:
    """``path:line`` of each non-raw string literal holding a backslash line break."""
    out = []
    with open(path, encoding="utf-8") as f:
        for tok in tokenize.generate_tokens(f.readline):
            if tok.type != tokenize.STRING:
                continue
            prefix = tok.string[:len(tok.string) - len(tok.string.lstrip("rRbBuUfF"))]
            if "r" not in prefix.lower() and "\\\n" in tok.string:
                out.append(f"{path.relative_to(TUNE)}:{tok.start[0]}")
    return out


def test_no_template_string_joins_its_lines_with_a_backslash():
    found = [where for p in sorted(TUNE.rglob("*.py")) for where in _joined_lines(p)]
    assert not found, found
