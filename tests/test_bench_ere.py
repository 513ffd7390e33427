"""scripts/bench.py gives grep the engine's own patterns (to_ere): each one must be an
expression GNU grep accepts and must take the lines Python's `re` takes, or the
grep row of `make bench` measures something else (a literal "[" once became "[="
in a bracket, which grep refuses: the bench stopped before its later rows)."""

from __future__ import annotations

import re
import subprocess

import pytest

from analyzers.signatures import signatures_from_runbooks, to_hyperscan
from scripts.bench import to_ere
from tests.helpers import catalog, runbook_metas


def _grep(eres: list[str], lines: list[str]) -> list[str]:
    """The lines any of `eres` takes, with one grep (a refused expression fails the test).

    In the C locale, as the bench runs grep (grep_count): in a UTF-8 locale GNU grep's DFA for
    a counted `.` (`.{1,2000}`) over multibyte characters took more than 10 minutes once the
    examples held CJK lines; byte-wise it takes the same lines here in a minute."""
    args = ["grep", "-E"] + [a for ere in eres for a in ("-e", ere)]
    out = subprocess.run(args, input="\n".join(lines) + "\n", capture_output=True, text=True,
                         env={"LC_ALL": "C", "PATH": "/usr/bin:/bin"})
    assert out.returncode <= 1, f"grep refused one of the expressions: {out.stderr.strip()}"
    return out.stdout.splitlines()


# GNU grep takes ~2 minutes to build its automata for the whole catalog: the slow tier.
@pytest.mark.slow
def test_every_pattern_is_an_expression_grep_accepts_and_takes_the_lines_re_takes():
    examples = sorted({line for d in catalog().symptoms.values() for ex in d.get("examples") or []
                       for line in ex.split("\n") if line.strip()})
    pairs = []
    for signature in signatures_from_runbooks(runbook_metas()):
        try:
            pairs.append((signature.pattern, to_ere(to_hyperscan(signature.pattern).decode())))
        except ValueError:
            continue   # no ERE form: the bench leaves such a pattern out and says so
    # One pattern per grep would cost a process each (~600); in groups, a line the Python
    # patterns of a group take must be what grep takes with the same group.
    differences = []
    for i in range(0, len(pairs), 50):
        group = pairs[i:i + 50]
        by_re = [line for line in examples if any(re.search(p, line) for p, _ in group)]
        by_grep = _grep([ere for _, ere in group], examples)
        if by_grep != by_re:
            differences.append((i, sorted(set(by_re) ^ set(by_grep))[:3]))
    assert differences == []
