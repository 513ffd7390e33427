"""Golden results: the full JSON of every seed and fixture bundle, byte for byte.

A refactor of the engine or of anything between it and the page must leave
these results unchanged. Each bundle is analyzed by the local engine over the
real runbooks and compared with `tests/golden/<case>.json`; only what varies
from run to run is normalised: the temporary directory the bundle was copied
into and the durations in `stats`.

A new runbook legitimately adds symptoms (and sometimes findings) to these
results. Regenerate them, then review the diff before committing:

    KB_UPDATE_GOLDEN=1 .venv/bin/python -m pytest -q tests/analyzers/test_golden.py
    git diff --stat tests/golden/
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from analyzers.engine import analyze_paths
from tests.helpers import bundle_cases, bundle_copy, case_id, runbook_specs

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
UPDATE = os.environ.get("KB_UPDATE_GOLDEN") == "1"
VOLATILE_STATS = ("seconds", "startup_seconds")
CASES = bundle_cases()


def golden_path(case: Path) -> Path:
    return GOLDEN / (case_id(case).replace("/", "__") + ".json")


def normalised_json(result: dict, tmp: Path) -> str:
    for key in VOLATILE_STATS:
        if key in result.get("stats", {}):
            result["stats"][key] = 0
    # Key order is part of what is compared: no sort_keys.
    text = json.dumps(result, indent=1, ensure_ascii=False) + "\n"
    return text.replace(str(tmp), "<tmp>")


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_result_is_byte_identical_to_the_golden_file(case, tmp_path):
    result = analyze_paths([str(bundle_copy(case, tmp_path))], runbook_specs())
    got = normalised_json(result, tmp_path)
    path = golden_path(case)
    if UPDATE:
        path.write_text(got, encoding="utf-8")
    assert path.exists(), f"no golden file {path.name}: run with KB_UPDATE_GOLDEN=1 and review it"
    assert got == path.read_text(encoding="utf-8"), (
        f"{case_id(case)}: result differs from {path.name} "
        "(KB_UPDATE_GOLDEN=1 regenerates; review the diff)")


def test_every_golden_file_belongs_to_a_bundle():
    """A renamed or removed fixture must not leave a stale golden file behind."""
    known = {golden_path(c).name for c in CASES}
    stale = sorted(p.name for p in GOLDEN.glob("*.json") if p.name not in known)
    if UPDATE:
        for name in stale:
            (GOLDEN / name).unlink()
        stale = []
    assert not stale, f"golden files without a bundle: {stale}"
