"""manage.py draft_runbook (issue 12): a runbook drafted from a lead of a stored analysis
whose result is the engine's own output on a real incident (tests/fixtures/leads/, provenance
in its SOURCE.md); printed, or saved as a runbook of the analysis' team."""

from __future__ import annotations

import shutil

import pytest
from django.core.management import CommandError, call_command

from analyzers.engine import analyze_paths
from analyzers.runbooks import parse_runbook, parse_symptom
from kb.models import Runbook, Symptom
from tests.cast import make_analysis
from tests.helpers import FIXTURES, runbook_metas

CASE = FIXTURES / "leads" / "hbase-master-npe-waiting-for-meta"


@pytest.fixture(scope="module")
def real_result(tmp_path_factory):
    bundle = tmp_path_factory.mktemp("bundle") / "hbase"
    shutil.copytree(CASE, bundle, ignore=shutil.ignore_patterns("SOURCE.md", "expected.json"))
    result = analyze_paths([str(bundle)], runbook_metas(), engine="local")
    assert not result["findings"] and result["leads"]
    return result


@pytest.fixture
def lead_analysis(incident, alice, real_result):
    return make_analysis(incident=incident, user=alice, result=real_result, name="hbase-master.tar.gz")


def test_it_prints_a_symptom_and_a_runbook_the_validator_accepts(lead_analysis, real_result):
    out = call_command("draft_runbook", str(lead_analysis.pk), "1")
    symptom_part, runbook_part = out.split("# runbooks/", 2)[1:]
    sid = symptom_part.split(".yaml", 1)[0].removeprefix("symptoms/")
    slug = runbook_part.split(".md", 1)[0]
    symptom_text = symptom_part.split("\n", 1)[1]
    runbook_text = runbook_part.split("\n", 1)[1]
    library = {sid: parse_symptom(symptom_text, "s.yaml", sid)}
    runbook = parse_runbook(runbook_text, f"{slug}.md", slug, library=library)
    assert slug.startswith("hbase-") and "TODO" in runbook_text
    assert real_result["leads"][0]["headline"] in symptom_text          # the example line
    assert f"incident {lead_analysis.bundle.incident.pk}" in runbook_text  # its source
    assert runbook.meta["symptoms"][0]["examples"] == [real_result["leads"][0]["headline"]]


def test_slugs_and_symptom_ids_in_use_are_not_reused(lead_analysis, synced):
    first = call_command("draft_runbook", str(lead_analysis.pk), "1")
    slug = first.split("# runbooks/")[2].split(".md")[0]
    sid = first.split("# runbooks/symptoms/")[1].split(".yaml")[0]
    Runbook.objects.filter(pk=Runbook.objects.first().pk).update(slug=slug)
    Symptom.objects.create(id=sid, title="taken", definition={})
    again = call_command("draft_runbook", str(lead_analysis.pk), "1")
    assert f"# runbooks/{slug}-2.md" in again and f"# runbooks/symptoms/{sid}-2.yaml" in again


@pytest.mark.parametrize("args, message", [
    (["999999", "1"], "no analysis 999999"),
    (["{pk}", "42"], "has no lead 42"),
    (["{pk}", "1", "--save", "--team", "Ops"], "--save needs an existing --team and --user"),
    (["{pk}", "1", "--save", "--team", "Other", "--user", "mallory"], "is not an analysis of Other"),
])
def test_bad_arguments_get_one_clear_error_and_store_nothing(lead_analysis, mallory, args, message):
    with pytest.raises(CommandError, match=message):
        call_command("draft_runbook", *[a.format(pk=lead_analysis.pk) for a in args])
    assert not Runbook.objects.exists() and not Symptom.objects.exists()


def test_save_stores_a_runbook_of_the_team_that_reanalysis_names_as_the_finding(lead_analysis, alice, synced):
    pytest.importorskip("kb.services.governance", reason="team runbooks arrive with the governance branch")
    out = call_command("draft_runbook", str(lead_analysis.pk), "1", "--save", "--team", "Ops", "--user", "alice")
    slug = out.split("saved runbook ")[1].split(" ")[0]
    runbook = Runbook.objects.get(slug=slug)
    assert runbook.team == lead_analysis.team
    bundle = CASE / "hbase-master.log"
    result = analyze_paths([str(bundle)], [runbook.meta], engine="local")
    assert [f["runbook"] for f in result["findings"]] == [slug]
