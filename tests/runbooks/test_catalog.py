"""The runbook files against the catalog contract, and each signature against real lines."""

import re

import pytest
import yaml

from analyzers.engine import analyze_text
from tests.helpers import CASES, CATALOG_SLUGS, RUNBOOKS_DIR, SEED_BUNDLES, catalog, expected, runbook_metas, runbook_specs


def test_every_catalog_slug_has_a_valid_runbook():
    assert set(CATALOG_SLUGS) <= set(catalog().runbooks)


def test_the_shipped_catalog_has_no_warnings():
    assert catalog().warnings == []


@pytest.mark.parametrize("slug", sorted(catalog().runbooks))
def test_every_runbook_has_a_positive_and_a_near_miss_case(slug):
    # Cases are named `positive`/`near-miss` or prefixed so (`positive-<scenario>`, issue 13:
    # a synthetic duplicate of a real case may go, whatever its name).
    cases = sorted(p for p in (CASES / slug).iterdir() if p.is_dir())
    pos = [c for c in cases if c.name.startswith("positive")]
    neg = [c for c in cases if c.name.startswith("near-miss")]
    assert pos and neg, f"{slug}: needs a positive* and a near-miss* case, has {[c.name for c in cases]}"
    for c in pos:
        assert slug in expected(c)["expected"], c.name
    for c in neg:
        assert slug not in expected(c)["expected"] + expected(c).get("acceptable", []), c.name
    assert all((c / "SOURCE.md").exists() for c in pos) or (CASES / slug / "SOURCE.md").exists()


def _examples():
    for sid, definition in sorted(catalog().symptoms.items()):
        for i, ex in enumerate(definition.get("examples") or []):
            yield pytest.param(sid, ex, id=f"{sid}:{i}")


@pytest.mark.parametrize("symptom,line", list(_examples()))
def test_every_example_line_is_matched_by_the_engine(symptom, line):
    # Through the whole engine (Hyperscan prefilter + re confirmation), not just `re`.
    result = analyze_text(line + "\n", runbook_specs())
    assert symptom in {s["id"] for s in result["symptoms"]}


def test_the_fast_yaml_loader_reads_every_shipped_file_as_the_python_loader_does():
    # analyzers/runbooks.py reads with libyaml's loader for speed; it must see the same data.
    texts = [re.split(r"^---\s*$", p.read_text(encoding="utf-8"), maxsplit=2, flags=re.M)[1]
             for p in sorted(RUNBOOKS_DIR.glob("*.md")) if p.name != "README.md"]
    texts += [p.read_text(encoding="utf-8") for p in sorted((RUNBOOKS_DIR / "symptoms").glob("*.yaml"))]
    assert len(texts) > 400
    for text in texts:
        fast, python = yaml.load(text, Loader=yaml.CSafeLoader), yaml.safe_load(text)
        assert repr(fast) == repr(python)


def test_every_pattern_symptom_has_examples():
    missing = [sid for sid, d in catalog().symptoms.items() if d.get("patterns") and not d.get("examples")]
    assert missing == []


SEEDS = sorted(p for p in SEED_BUNDLES.iterdir() if expected(p)["expected"])


@pytest.mark.parametrize("seed", SEEDS, ids=[p.name for p in SEEDS])
def test_pasting_a_seed_bundles_lines_finds_its_runbook_first(seed):
    text = "\n".join(p.read_text(encoding="utf-8") for p in sorted(seed.rglob("*")) if p.is_file() and p.name != "expected.json")
    result = analyze_text(text, runbook_metas())
    assert result["findings"], "no finding"
    assert result["findings"][0]["runbook"] == expected(seed)["expected"][0]
