"""How well confidence predicts being right: a reliability table per
confidence bin, and a measured precision per runbook.

An observation is one finding with its confidence and whether it was right.
Two sources give them: the fixture bundles (tests/fixtures: a finding is
right when the case's expected.json lists it as expected or acceptable), read
by scripts/calibration.py for `make bench`; and the app's confirm/reject
feedback (kb/selectors/calibration.py). Plain Python, no Django.

The shown confidence is not recalibrated against these figures (yet). The
fixture set says every finding is right (observed precision 1.00 in every
bin, so the confidences look under-confident by about 0.3), but it cannot say
otherwise: tests/analyzers/test_bundles_expected.py refuses any finding a
case does not expect, so the set holds no wrong finding by construction. A
fit to data without a single negative (isotonic or Platt over the bins) maps
every confidence to about 1.0 and erases what confidence carries now, a lone
decisive line (~0.6) against a corroborated chain (~0.95). Confirm/reject
feedback is the measurement that can hold negatives; the runbook page shows
it, and `manage.py calibration` prints its table for when it is large enough
to fit a map on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

BIN_EDGES = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)


@dataclass(frozen=True)
class Observation:
    runbook: str
    confidence: float
    correct: bool


def reliability(observations: Iterable[Observation], edges: tuple[float, ...] = BIN_EDGES) -> list[dict[str, Any]]:
    """One row per bin [lo, hi) (the last bin closed): count, mean predicted
    confidence, observed precision (None for an empty bin)."""
    obs = list(observations)
    rows = []
    for i, (lo, hi) in enumerate(zip(edges, edges[1:])):
        last = i == len(edges) - 2
        inside = [o for o in obs if lo <= o.confidence < hi or (last and o.confidence == hi)]
        rows.append({
            "lo": lo, "hi": hi, "count": len(inside),
            "predicted": round(sum(o.confidence for o in inside) / len(inside), 3) if inside else None,
            "observed": round(sum(o.correct for o in inside) / len(inside), 3) if inside else None,
        })
    return rows


def expected_calibration_error(rows: list[dict[str, Any]]) -> float | None:
    """The count-weighted mean gap between predicted and observed over the bins."""
    total = sum(r["count"] for r in rows)
    if not total:
        return None
    return round(sum(r["count"] * abs(r["predicted"] - r["observed"]) for r in rows if r["count"]) / total, 3)


def per_runbook(observations: Iterable[Observation]) -> dict[str, dict[str, Any]]:
    """slug -> findings, correct, precision (correct / findings), mean confidence."""
    out: dict[str, dict[str, Any]] = {}
    for o in observations:
        row = out.setdefault(o.runbook, {"findings": 0, "correct": 0, "confidence_sum": 0.0})
        row["findings"] += 1
        row["correct"] += int(o.correct)
        row["confidence_sum"] += o.confidence
    for row in out.values():
        row["precision"] = round(row["correct"] / row["findings"], 3)
        row["mean_confidence"] = round(row.pop("confidence_sum") / row["findings"], 3)
    return dict(sorted(out.items()))


def format_reliability(rows: list[dict[str, Any]], title: str) -> list[str]:
    """The table as text, with a bar per bin: '#' observed precision, '|' mean predicted."""
    lines = [title, f"  {'confidence':<11} {'count':>5} {'predicted':>9} {'observed':>8}  0 {'':-<19} 1"]
    for r in rows:
        label = f"{r['lo']:.1f}-{r['hi']:.1f}"
        if not r["count"]:
            lines.append(f"  {label:<11} {0:>5} {'-':>9} {'-':>8}")
            continue
        bar = ["#" if i < round(r["observed"] * 20) else " " for i in range(20)]
        mark = min(19, int(r["predicted"] * 20))
        bar[mark] = "|"
        lines.append(f"  {label:<11} {r['count']:>5} {r['predicted']:>9.2f} {r['observed']:>8.2f}  [{''.join(bar)}]")
    ece = expected_calibration_error(rows)
    lines.append(f"  expected calibration error: {ece if ece is not None else 'n/a'} "
                 "(count-weighted |predicted - observed|)")
    return lines
