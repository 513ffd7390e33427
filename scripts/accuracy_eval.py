"""Held-out root-cause accuracy on real incidents (issue 13):
`python -m scripts.accuracy_eval [ROOT]`.

The corpus is tests/fixtures/accuracy/<case>/: a log as posted in a public
thread (sampled as incidents arrive, not by searching for messages kb knows),
its SOURCE.md (where; the root cause the thread establishes) and an
expected.json labelled from the thread's resolution, not from kb's output:

    {"root_cause": "<runbook slug>" | null, "why": "..."}

null when no runbook of the catalog is that root cause: then the right answer
is no finding (a lead is fine). Each case is analysed by the local engine as
an operator would upload it (metadata left out). Per case: hit@1 (the top
finding is the root cause), hit@3, and a false finding (any finding when the
expected root cause is null, or a wrong top-1 when it is not). Totals:
coverage (cases whose cause is in the catalog), top-1 and top-3 accuracy on
covered cases, false-finding rate over all cases. The scoring lives here,
outside analyzers/, so the engine cannot grade itself.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "fixtures" / "accuracy"


@dataclass
class CaseResult:
    case: str
    expected: str | None
    findings: list[str] = field(default_factory=list)   # runbook slugs, ranked as the engine gave them

    @property
    def covered(self) -> bool:
        return self.expected is not None

    @property
    def hit1(self) -> bool:
        return self.covered and self.findings[:1] == [self.expected]

    @property
    def hit3(self) -> bool:
        return self.covered and self.expected in self.findings[:3]

    @property
    def false_finding(self) -> bool:
        # A missed root cause with no finding is a miss, not a false finding: nothing wrong was said.
        if not self.findings:
            return False
        return self.expected is None or self.findings[0] != self.expected


@dataclass
class Totals:
    cases: int
    covered: int
    hit1: int
    hit3: int
    false_findings: int

    @property
    def coverage(self) -> float:
        return self.covered / self.cases if self.cases else 0.0

    @property
    def top1(self) -> float:
        return self.hit1 / self.covered if self.covered else 0.0

    @property
    def top3(self) -> float:
        return self.hit3 / self.covered if self.covered else 0.0

    @property
    def false_rate(self) -> float:
        return self.false_findings / self.cases if self.cases else 0.0


def cases(root: Path = CORPUS) -> list[Path]:
    return sorted(p.parent for p in Path(root).glob("*/expected.json"))


def expected_of(case: Path) -> dict:
    return json.loads((case / "expected.json").read_text(encoding="utf-8"))


def analyze_case(case: Path) -> dict:
    # The same upload as the leads evaluation: the case's files without SOURCE.md/expected.json.
    from scripts.leads_eval import analyze_case as analyze

    return analyze(case)


def evaluate(root: Path = CORPUS) -> tuple[Totals, list[CaseResult]]:
    per_case = []
    for case in cases(root):
        result = analyze_case(case)
        per_case.append(CaseResult(case.name, expected_of(case)["root_cause"],
                                   [f["runbook"] for f in result.get("findings", [])]))
    return totals(per_case), per_case


def totals(per_case: list[CaseResult]) -> Totals:
    return Totals(len(per_case), sum(c.covered for c in per_case), sum(c.hit1 for c in per_case),
                  sum(c.hit3 for c in per_case), sum(c.false_finding for c in per_case))


def table(per_case: list[CaseResult]) -> str:
    width = max([len(c.case) for c in per_case] + [4])
    exp_w = max([len(c.expected or "-") for c in per_case] + [8])
    rows = [f"{'case':<{width}}  {'expected':<{exp_w}}  @1   @3   false  findings (ranked)"]
    for c in per_case:
        mark = (lambda ok: "yes" if ok else "NO ") if c.covered else (lambda ok: " - ")
        rows.append(f"{c.case:<{width}}  {c.expected or '-':<{exp_w}}  {mark(c.hit1)}  {mark(c.hit3)}  "
                    f"{'FALSE' if c.false_finding else '     '}  {', '.join(c.findings) or '(none)'}")
    return "\n".join(rows)


def summary(t: Totals) -> str:
    return (f"accuracy: {t.cases} real incidents; coverage {t.covered}/{t.cases} ({t.coverage:.0%}) have a "
            f"catalog root cause; top-1 {t.hit1}/{t.covered} ({t.top1:.0%}), top-3 {t.hit3}/{t.covered} "
            f"({t.top3:.0%}) on covered cases; false findings {t.false_findings}/{t.cases} ({t.false_rate:.0%})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", nargs="?", default=str(CORPUS))
    args = parser.parse_args(argv)
    t, per_case = evaluate(Path(args.root))
    print(table(per_case))
    print(summary(t))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
