"""Calibration on the fixture set (part of `make bench`; or python -m scripts.calibration [--write]).

Analyzes every fixture bundle (tests/fixtures: the seed bundles and each
runbook's positive and near-miss cases) with the shipped catalog; a finding
is right when the case's expected.json lists it as expected or acceptable.
Prints the reliability table (per confidence bin: count, mean predicted
confidence, observed precision) and, per runbook, its precision and how its
positive and near-miss cases went; then the same table for the candidates
of the bundles with no finding, at their score (how often a candidate the
engine did not claim was the expected cause after all). --write stores the per-runbook figures in
kb/data/fixture_precision.json, which the runbook page shows when no
confirm/reject feedback exists yet (labelled as fixture precision).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from analyzers.calibration import Observation, format_reliability, per_runbook, reliability

ROOT = Path(__file__).resolve().parent.parent
PRECISION_FILE = ROOT / "kb" / "data" / "fixture_precision.json"


def _case_kind(case: Path) -> tuple[str | None, str]:
    """(the runbook the case is for, positive | near-miss); seeds are positives of their first expected."""
    if case.parent.name == "seed-bundles":
        return None, "positive"
    return case.parent.name, "near-miss" if case.name.startswith("near-miss") else "positive"


def measure() -> tuple[list[Observation], dict[str, dict], int, list[Observation]]:
    from analyzers.engine import analyze_paths
    from tests.helpers import bundle_cases, bundle_copy, expected, runbook_metas

    runbooks = runbook_metas()
    observations: list[Observation] = []
    guesses: list[Observation] = []   # candidates of bundles with no finding, at their score
    cases: dict[str, dict] = {rb["slug"]: {"positive_cases": 0, "found_in_positive": 0,
                                           "near_miss_cases": 0, "found_in_near_miss": 0} for rb in runbooks}
    bundles = bundle_cases()
    for case in bundles:
        want = expected(case)
        right = set(want["expected"]) | set(want.get("acceptable", []))
        with tempfile.TemporaryDirectory(prefix="kb-calib-") as tmp:
            result = analyze_paths([str(bundle_copy(case, Path(tmp)))], runbooks)
        found = {f["runbook"] for f in result["findings"]}
        for f in result["findings"]:
            observations.append(Observation(f["runbook"], f["confidence"], f["runbook"] in right))
        for c in result.get("candidates") or []:
            guesses.append(Observation(c["runbook"], c["score"], c["runbook"] in right))
        slug, kind = _case_kind(case)
        for s in ([slug] if slug else want["expected"]):
            if s not in cases:
                continue
            if kind == "positive" and s in want["expected"]:
                cases[s]["positive_cases"] += 1
                cases[s]["found_in_positive"] += s in found
            elif kind == "near-miss":
                cases[s]["near_miss_cases"] += 1
                cases[s]["found_in_near_miss"] += s in found
    return observations, cases, len(bundles), guesses


def report(observations: list[Observation], cases: dict[str, dict], bundles: int,
           guesses: list[Observation] = ()) -> list[str]:
    rows = reliability(observations)
    lines = format_reliability(rows, f"calibration on the fixture set: {len(observations)} findings in {bundles} "
                                     "seed, positive and near-miss bundles (right = expected or acceptable)")
    precision = per_runbook(observations)
    wrong = {s: p for s, p in precision.items() if p["precision"] < 1}
    missed = {s: c for s, c in cases.items() if c["found_in_positive"] < c["positive_cases"]}
    fired = {s: c for s, c in cases.items() if c["found_in_near_miss"]}
    lines.append(f"  per runbook: {len(precision)} runbooks with findings, {len(wrong)} below precision 1.00"
                 + "".join(f"; {s} {p['correct']}/{p['findings']}" for s, p in wrong.items()))
    lines.append(f"  positive cases missed: {sum(c['positive_cases'] - c['found_in_positive'] for c in missed.values())}"
                 + "".join(f"; {s} {c['found_in_positive']}/{c['positive_cases']}" for s, c in missed.items())
                 + f"; near-miss cases that gave their runbook anyway: {sum(c['found_in_near_miss'] for c in fired.values())}")
    if guesses:
        lines += format_reliability(reliability(guesses), f"candidates of the bundles with no finding: {len(guesses)}, "
                                                          "at their score (right = expected or acceptable there)")
    return lines


def precision_table(observations: list[Observation], cases: dict[str, dict]) -> dict[str, dict]:
    precision = per_runbook(observations)
    return {slug: {**precision.get(slug, {"findings": 0, "correct": 0, "precision": None, "mean_confidence": None}),
                   **c} for slug, c in sorted(cases.items())}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", action="store_true", help=f"store the per-runbook figures in {PRECISION_FILE}")
    args = ap.parse_args(argv)
    observations, cases, bundles, guesses = measure()
    print("\n".join(report(observations, cases, bundles, guesses)))
    if args.write:
        PRECISION_FILE.parent.mkdir(parents=True, exist_ok=True)
        PRECISION_FILE.write_text(json.dumps(precision_table(observations, cases), indent=1, sort_keys=True) + "\n")
        print(f"wrote {PRECISION_FILE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
