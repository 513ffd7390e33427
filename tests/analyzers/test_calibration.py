"""The reliability table and per-runbook precision (analyzers/calibration.py)."""

from analyzers.calibration import (
    Observation, expected_calibration_error, format_reliability, per_runbook, reliability,
)

OBS = [Observation("a", 0.9, True), Observation("a", 0.85, False), Observation("b", 0.55, True),
       Observation("b", 1.0, True), Observation("c", 0.1, False)]


def test_each_bin_counts_its_findings_and_compares_predicted_with_observed():
    rows = reliability(OBS)
    assert [(r["lo"], r["count"]) for r in rows] == [(0.0, 1), (0.2, 0), (0.4, 1), (0.6, 0), (0.8, 3)]
    top = rows[-1]   # 0.9, 0.85 and 1.0 (the last bin includes 1.0)
    assert top["predicted"] == round((0.9 + 0.85 + 1.0) / 3, 3) and top["observed"] == round(2 / 3, 3)
    assert rows[1]["predicted"] is None and rows[1]["observed"] is None
    gaps = 1 * 0.1 + 1 * 0.45 + 3 * abs(top["predicted"] - top["observed"])
    assert expected_calibration_error(rows) == round(gaps / 5, 3)


def test_per_runbook_precision_is_the_share_of_right_findings():
    table = per_runbook(OBS)
    assert table["a"] == {"findings": 2, "correct": 1, "precision": 0.5, "mean_confidence": 0.875}
    assert table["c"]["precision"] == 0.0


def test_the_text_table_draws_observed_as_bars_and_predicted_as_a_mark():
    lines = format_reliability(reliability(OBS), "title")
    assert lines[0] == "title"
    (top,) = [line for line in lines if line.lstrip().startswith("0.8-1.0")]
    assert top.endswith("[#############     | ]")  # 0.67 observed -> 13 of 20; 0.92 predicted -> mark at 18
    assert any(line.lstrip().startswith("0.2-0.4") and line.rstrip().endswith("-") for line in lines)
    assert lines[-1].startswith("  expected calibration error: ")

