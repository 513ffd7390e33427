"""How far fix steps are written with the incident's own values (issue 15).

Counts the runbooks with a `fill:` map, and on every real `positive*` fixture
case the placeholders of the case's runbook's fix steps that its golden result
fills (analyzers/fill.py) and those left. Reads tests/golden (the results the
golden test keeps byte-identical), so no bundle is analysed again; the fill
maps and fix steps are the current runbooks'.

    .venv/bin/python -m scripts.fill_coverage [--list]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from analyzers.fill import fill_fixes
from tests.helpers import CASES, catalog

GOLDEN = Path(__file__).resolve().parent.parent / "tests" / "golden"


def case_counts(case: Path) -> tuple[int, int, int] | None:
    """(filled, left, filled in the first step) for the case's own runbook, or None
    when its golden result has no finding of that runbook."""
    slug = case.parent.name
    result = json.loads((GOLDEN / f"cases__{slug}__{case.name}.json").read_text(encoding="utf-8"))
    finding = next((f for f in result["findings"] if f["runbook"] == slug), None)
    if finding is None:
        return None
    meta = catalog().runbooks[slug].meta
    records = finding["evidence"] + [e for f in result["findings"] for e in f["evidence"]]
    fixes = fill_fixes(meta.get("fixes") or [], meta.get("fill"), records, catalog().symptoms)
    steps = [st for fix in fixes for st in fix["steps"]]
    filled = sum(len(st["filled"]) for st in steps)
    left = sum(len(st["missing"]) for st in steps)
    return filled, left, len(steps[0]["filled"]) if steps else 0


def main(argv: list[str]) -> None:
    runbooks = catalog().runbooks
    with_fill = sum(1 for rb in runbooks.values() if rb.meta.get("fill"))
    print(f"runbooks with a fill map: {with_fill} of {len(runbooks)}")
    totals = [0, 0, 0, 0]
    for case in sorted(CASES.glob("*/positive*")):
        counts = case_counts(case)
        if counts is None:
            continue
        totals[0] += 1
        for i, n in enumerate(counts, start=1):
            totals[i] += n
        if "--list" in argv:
            print(f"  {case.parent.name}/{case.name}: filled {counts[0]}, left {counts[1]}, first step {counts[2]}")
    print(f"positive cases with their runbook's finding: {totals[0]}; placeholders filled {totals[1]}, "
          f"left {totals[2]}; cases whose first step has a filled value: "
          f"{sum(1 for c in sorted(CASES.glob('*/positive*')) if (n := case_counts(c)) and n[2])}")


if __name__ == "__main__":
    main(sys.argv[1:])
