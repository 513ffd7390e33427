"""How often the decisive line of a real incident is among the first leads
(issue 12, "Leads"): `python -m scripts.leads_eval [ROOT] [--top 5]`.

The corpus is tests/fixtures/leads/<case>/: log files as posted in a public
thread, its SOURCE.md (where, what failed, why that line decides it) and an
expected.json naming the acceptable decisive lines:

    {"decisive": [{"path": "<file in the case>", "contains": "<unique substring>"}], "note": "..."}

Each case is analysed by the local engine (the same as `manage.py analyze
--engine local`), without its SOURCE.md and expected.json, and is a hit when
one of the first `top` leads is a decisive line: the lead's path is the named
file (or a section of it: a collector stream such as `docker compose logs` is
split into <path>/<container>/<log>) and the lead's record text contains the
substring. The scoring lives here, outside analyzers/, so the engine cannot
grade itself.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "fixtures" / "leads"
CASE_META = ("expected.json", "SOURCE.md")
TOP = 5


@dataclass
class CaseResult:
    case: str
    hit: bool
    rank: int | None            # 1-based rank of the first decisive lead, None when none is a lead
    leads: list[dict] = field(default_factory=list)   # the first `top` leads as the engine gave them
    decisive: list[dict] = field(default_factory=list)
    findings: list[str] = field(default_factory=list)  # runbooks the engine named (a case is chosen so none is its cause)
    has_leads: bool = False     # the result has a `leads` key at all (False before the leads engine exists)


def cases(root: Path = CORPUS) -> list[Path]:
    return sorted(p.parent for p in Path(root).glob("*/expected.json"))


def lead_is(lead: dict, want: dict) -> bool:
    """A lead shows a decisive line: same file (or a section of a split stream) and its record holds the line."""
    path = lead.get("path") or ""
    same_file = path == want["path"] or path.startswith(want["path"].rstrip("/") + "/")
    return same_file and want["contains"] in (lead.get("text") or "")


def score(result: dict, decisive: list[dict], top: int = TOP) -> tuple[bool, int | None]:
    """(hit within `top`, rank of the first decisive lead anywhere in the list or None)."""
    for rank, lead in enumerate(result.get("leads") or [], start=1):
        if any(lead_is(lead, want) for want in decisive):
            return rank <= top, rank
    return False, None


def analyze_case(case: Path) -> dict:
    """The local engine's result on the case's files (its metadata left out, as an operator would upload it)."""
    from analyzers.engine import analyze_paths
    from tests.helpers import runbook_metas

    with tempfile.TemporaryDirectory(prefix="leads-eval-") as tmp:
        bundle = Path(tmp) / case.name
        shutil.copytree(case, bundle, ignore=shutil.ignore_patterns(*CASE_META))
        return analyze_paths([str(bundle)], runbook_metas(), engine="local")


def evaluate(root: Path = CORPUS, top: int = TOP) -> tuple[int, int, list[CaseResult]]:
    """(hits, total, per case) over every case under `root`."""
    per_case = []
    for case in cases(root):
        decisive = json.loads((case / "expected.json").read_text(encoding="utf-8"))["decisive"]
        result = analyze_case(case)
        hit, rank = score(result, decisive, top)
        per_case.append(CaseResult(case.name, hit, rank, (result.get("leads") or [])[:top], decisive,
                                   [f["runbook"] for f in result.get("findings", [])], "leads" in result))
    return sum(c.hit for c in per_case), len(per_case), per_case


def table(per_case: list[CaseResult], top: int = TOP) -> str:
    width = max([len(c.case) for c in per_case] + [4])
    rows = [f"{'case':<{width}}  hit  rank  first lead"]
    for c in per_case:
        first = (c.leads[0].get("headline") or c.leads[0].get("text") or "").splitlines()[0][:80] if c.leads else "(no leads)"
        rank = "-" if c.rank is None else str(c.rank)
        rows.append(f"{c.case:<{width}}  {'yes' if c.hit else 'NO ':<3}  {rank:>4}  {first}")
    return "\n".join(rows)


TARGET = 0.90


def summary(hits: int, total: int, top: int = TOP) -> str:
    share = 100.0 * hits / total if total else 0.0
    return (f"leads: decisive line in the first {top} leads for {hits}/{total} real incidents "
            f"({share:.0f} %, target >= {TARGET:.0%})")


def misses(per_case: list[CaseResult]) -> str:
    """Each miss with what the engine put first instead, for MISSES.md and the test's message."""
    out = []
    for c in per_case:
        if c.hit:
            continue
        where = "not a lead at all" if c.rank is None else f"rank {c.rank}"
        want = "; ".join(f"{d['path']}: {d['contains']!r}" for d in c.decisive)
        got = " | ".join((lead.get("headline") or lead.get("text") or "").splitlines()[0][:70] for lead in c.leads) or "(no leads)"
        out.append(f"- {c.case}: decisive line {where} (want {want}); first leads: {got}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", nargs="?", default=str(CORPUS))
    parser.add_argument("--top", type=int, default=TOP)
    args = parser.parse_args(argv)
    hits, total, per_case = evaluate(Path(args.root), args.top)
    print(table(per_case, args.top))
    print(summary(hits, total, args.top))
    if not any(c.has_leads for c in per_case):
        print("(the engine's result has no `leads` key yet: issue 12, branch leads-engine)")
    elif hits < total:
        print(misses(per_case))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
