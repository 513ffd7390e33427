"""How many wordings of the runbooks' required symptoms a real log has shown (issue 13).

A wording is one entry of a symptom's `patterns` (each release line's or client's
text is its own entry). For every runbook, every pattern of every symptom it
requires (any `group` alternative included) is looked for in the lines of the
fixture cases marked `Provenance: real` (tests/fixtures/cases, never the
held-out accuracy corpus):

- **own**: a real `positive*` case of that runbook has a line the pattern matches:
  the runbook is tested on that wording as real clusters print it;
- **seen**: some real case (any runbook's, positive or near-miss) has such a line:
  the wording is attested, but this runbook's positives do not carry it;
- **unseen**: no real fixture line shows the wording (its examples are template-built
  or come from threads not kept as fixtures). An unseen wording that was searched for
  is listed, with the queries that found no real log, in
  tests/fixtures/cases/<slug>/wordings.yaml (`searched` below):

      - symptom: <symptom id>
        pattern: '<the pattern, exactly as in the symptom file>'
        searches:
          - {corpus: issues, query: "...", found: "only the source"}

Fact symptoms (config values, not log lines) have no wording and are not counted.

    .venv/bin/python -m scripts.wording_coverage [--list] [--slug SLUG] [--json]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import yaml

from tests.helpers import CASES, bundle_files, catalog, provenance


@dataclass
class Wording:
    runbook: str
    symptom: str
    pattern: str
    state: str = "unseen"            # own | seen | unseen
    searched: bool = False           # not own, and its runbook's wordings.yaml lists the searches
    where: list[str] = field(default_factory=list)   # cases whose lines show it


@lru_cache(maxsize=None)
def real_case_lines() -> dict[str, list[str]]:
    """'<slug>/<case>' -> every line of its bundle files, for the real cases."""
    out: dict[str, list[str]] = {}
    for source in sorted(CASES.glob("*/*/SOURCE.md")):
        case = source.parent
        if provenance(case) != "real":
            continue
        out[f"{case.parent.name}/{case.name}"] = [
            ln for f in bundle_files(case) for ln in f.read_text(encoding="utf-8", errors="replace").splitlines()]
    return out


@lru_cache(maxsize=None)
def _cases_matching(pattern: str) -> tuple[str, ...]:
    regex = re.compile(pattern)
    return tuple(name for name, lines in real_case_lines().items() if any(regex.search(ln) for ln in lines))


def searched(slug: str) -> list[dict]:
    """The entries of tests/fixtures/cases/<slug>/wordings.yaml (none when it is absent)."""
    path = CASES / slug / "wordings.yaml"
    return yaml.safe_load(path.read_text(encoding="utf-8")) or [] if path.exists() else []


def wordings(slug: str | None = None) -> list[Wording]:
    out = []
    for rb in catalog().runbooks.values():
        if slug and rb.slug != slug:
            continue
        listed = {(e["symptom"], e["pattern"]) for e in searched(rb.slug)}
        for use in rb.spec.symptoms:
            if use.role != "required":
                continue
            for pattern in use.patterns:
                w = Wording(rb.slug, use.id, pattern)
                w.where = list(_cases_matching(pattern))
                own = [c for c in w.where if c.startswith(f"{rb.slug}/positive")]
                w.state = "own" if own else "seen" if w.where else "unseen"
                w.searched = w.state != "own" and (use.id, pattern) in listed
                out.append(w)
    return out


def totals(ws: list[Wording]) -> dict[str, int]:
    counts = {"wordings": len(ws), "own": 0, "seen": 0, "unseen": 0}
    for w in ws:
        counts[w.state] += 1
    counts["unseen_searched"] = sum(w.searched for w in ws if w.state == "unseen")
    counts["seen_searched"] = sum(w.searched for w in ws if w.state == "seen")
    counts["runbooks_fully_own"] = sum(
        1 for slug in {w.runbook for w in ws} if all(w.state == "own" for w in ws if w.runbook == slug))
    counts["runbooks"] = len({w.runbook for w in ws})
    return counts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--list", action="store_true", help="list every wording not shown by the runbook's own real positive")
    ap.add_argument("--slug", help="one runbook only")
    ap.add_argument("--json", action="store_true", help="every wording as JSON")
    args = ap.parse_args(argv)
    ws = wordings(args.slug)
    if args.json:
        json.dump([w.__dict__ for w in ws], sys.stdout, indent=1)
        print()
        return 0
    t = totals(ws)
    print("wordings of required symptoms (one per pattern entry), against the real fixture cases")
    print(f"  {t['wordings']} wordings in {t['runbooks']} runbooks")
    print(f"  own real positive shows it:      {t['own']:4d} ({100 * t['own'] / max(1, t['wordings']):.0f} %)")
    print(f"  another real case shows it:      {t['seen']:4d} ({t['seen_searched']} with why none is a positive here)")
    print(f"  no real fixture line shows it:   {t['unseen']:4d} ({t['unseen_searched']} searched for, "
          "queries in tests/fixtures/cases/<slug>/wordings.yaml)")
    print(f"  runbooks with every wording in their own real positives: {t['runbooks_fully_own']}/{t['runbooks']}")
    if args.list:
        for w in ws:
            if w.state != "own":
                where = f" (in {', '.join(w.where[:3])})" if w.where else ""
                state = w.state + "*" if w.searched else w.state
                print(f"{state:7s} {w.runbook}  {w.symptom}  {w.pattern}{where}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
