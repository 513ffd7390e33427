"""manage.py draft_runbook (issue 12): a runbook drafted from a lead of a stored analysis
whose result is the engine's own output on a real incident (tests/fixtures/leads/, provenance
in its SOURCE.md); printed, or saved as a runbook of the analysis' team."""

from __future__ import annotations

import shutil

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

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
    headline = real_result["leads"][0]["headline"]
    assert headline in runbook_text                                       # the example line, for the team
    assert f"incident {lead_analysis.bundle.incident.pk}" in runbook_text  # its source
    # The library (every team's) shows the wording, not the incident's timestamp or its name.
    [example] = runbook.meta["symptoms"][0]["examples"]
    assert example.endswith("master.HMaster: Failed to become active master") and "2023-09-18" not in example
    assert "incident" not in symptom_text.replace("an incident", "")


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


# --- the web: "Draft a runbook" on a lead ------------------------------------------------------

def test_each_lead_has_a_draft_button_and_it_opens_the_editor_prefilled(client, bob, incident, real_result):
    analysis = make_analysis(incident=incident, user=bob, result=real_result)
    client.force_login(bob)
    page = client.get(reverse("analysis_detail", args=[analysis.pk])).content.decode()
    url = reverse("lead_draft", args=[analysis.pk, 1])
    assert f'href="{url}"' in page
    editor = client.get(url)
    assert editor.status_code == 200
    html = editor.content.decode()
    assert "TODO" in html and "hbase-" in html and "Save runbook" in html
    assert "Failed to become active master" in html


def test_only_the_team_admins_draft_and_another_team_sees_nothing(client, alice, mallory, incident, real_result):
    analysis = make_analysis(incident=incident, user=alice, result=real_result)
    url = reverse("lead_draft", args=[analysis.pk, 1])
    client.force_login(alice)                     # a member, not an admin
    assert client.get(url).status_code == 403
    client.force_login(mallory)                   # another team's admin
    assert client.get(url).status_code == 404
    assert client.post(url, {"symptom": "x", "text": "y"}).status_code == 404
    assert not Runbook.objects.exists() and not Symptom.objects.exists()


def test_a_lead_that_does_not_exist_is_404(client, bob, incident, real_result):
    analysis = make_analysis(incident=incident, user=bob, result=real_result)
    client.force_login(bob)
    assert client.get(reverse("lead_draft", args=[analysis.pk, 99])).status_code == 404


def test_saving_an_invalid_draft_says_why_and_stores_nothing(client, bob, incident, real_result):
    pytest.importorskip("kb.services.governance", reason="team runbooks arrive with the governance branch")
    analysis = make_analysis(incident=incident, user=bob, result=real_result)
    client.force_login(bob)
    url = reverse("lead_draft", args=[analysis.pk, 1])
    form = client.get(url).context["form"]
    response = client.post(url, {"symptom": form.initial["symptom"],
                                 "text": form.initial["text"].replace("severity: medium", "severity: dire")})
    assert response.status_code == 400 and "severity" in response.content.decode()
    assert not Runbook.objects.exists() and not Symptom.objects.exists()


def test_saving_stores_the_team_runbook_and_its_fixture_which_export_writes_as_a_case(
        client, bob, incident, real_result, settings, tmp_path):
    pytest.importorskip("kb.services.governance", reason="team runbooks arrive with the governance branch")
    settings.DRAFT_FIXTURES_DIR = tmp_path / "fixtures"
    analysis = make_analysis(incident=incident, user=bob, result=real_result)
    client.force_login(bob)
    url = reverse("lead_draft", args=[analysis.pk, 1])
    form = client.get(url).context["form"]
    response = client.post(url, {"symptom": form.initial["symptom"], "text": form.initial["text"]})
    assert response.status_code == 302
    runbook = Runbook.objects.get(team=analysis.team)
    call_command("export_runbooks", "--dir", str(tmp_path / "out"), "--slug", runbook.slug,
                 "--fixtures", str(tmp_path / "cases"))
    case = tmp_path / "cases" / runbook.slug / "positive"
    assert f"incident {incident.pk}" in (case / "SOURCE.md").read_text()
    logs = [p for p in case.rglob("*.log")]
    assert logs and "Failed to become active master" in logs[0].read_text()
    assert (tmp_path / "out" / f"{runbook.slug}.md").exists()
