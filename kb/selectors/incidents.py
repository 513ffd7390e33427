"""Reads for the incident and analysis pages (HackSoft selectors).

Every query that starts from a user goes through kb.access, so another
team's rows never reach a page. `analysis_report` turns a stored result
(docs/contract.md §2) into what the templates show; templates only format.
"""

from __future__ import annotations

import re
from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import F, OuterRef, QuerySet, Subquery
from django.db.models.fields.json import KT

from kb.access import visible
from kb.models import Analysis, Bundle, Incident, Runbook, Symptom, Team
from kb.selectors.collab import incident_filter
from kb.selectors.runbooks import FIX_KIND_LABELS
from kb.lib.timeline import (
    GREY,
    chain_build,
    evidence_anchor,
    finding_colours,
    timeline_build,
)

FIX_KIND_ORDER = ("diagnosis", "mitigation", "permanent")
ROLE_NAMES = {
    "flink-jobmanager": "Flink JobManager", "flink-taskmanager": "Flink TaskManager",
    "hdfs-namenode": "NameNode", "hdfs-datanode": "DataNode", "hdfs-journalnode": "JournalNode",
    "yarn-resourcemanager": "ResourceManager", "yarn-nodemanager": "NodeManager",
    "hbase-master": "HMaster", "hbase-regionserver": "RegionServer", "zookeeper": "ZooKeeper",
    "kafka-broker": "Kafka broker", "spark-driver": "Spark driver", "spark-executor": "Spark executor",
}
EXPLANATION_RE = re.compile(r"^(?P<delta>[+-]\d+(?:\.\d+)?)\s+(?P<text>.*)$", re.S)


# -- incidents ---------------------------------------------------------------

def user_teams(*, user: Any) -> QuerySet[Team]:
    return Team.objects.filter(memberships__user=user).order_by("name").distinct()


def team_members(*, team: Team) -> QuerySet:
    return get_user_model().objects.filter(memberships__team=team).order_by("username").distinct()


def incident_list(*, user: Any, status: str = "", severity: str = "", q: str = "", component: str = "",
                  runbook: str = "", confirmed: bool = False, team: Team | None = None) -> QuerySet[Incident]:
    """The user's teams' incidents, newest first, each annotated with the top
    finding of its latest done analysis (`top_runbook`, `top_title`,
    `top_confidence`) and the status of its latest analysis (`latest_status`).
    `q` searches titles, notes and matched runbooks; runbook/component/confirmed/team
    as in kb.selectors.collab.incident_filter."""
    qs = visible(Incident.objects.select_related("team", "owner"), user)
    if status:
        qs = qs.filter(status=status)
    if severity:
        qs = qs.filter(severity=severity)
    qs = incident_filter(qs, component=component, runbook=runbook, confirmed=confirmed, team=team, q=q)
    analyses = Analysis.objects.filter(bundle__incident=OuterRef("pk")).order_by("-created", "-pk")
    done = analyses.filter(status=Analysis.Status.DONE).order_by(F("finished").desc(nulls_last=True), "-created", "-pk")
    def top(key: str) -> Subquery:
        # KT: the value as text (->> / json_extract), the same on PostgreSQL and SQLite.
        return Subquery(done.annotate(v=KT(f"result__findings__0__{key}")).values("v")[:1])

    return qs.annotate(
        latest_status=Subquery(analyses.values("status")[:1]),
        top_runbook=top("runbook"), top_title=top("title"), top_confidence=top("confidence"),
    ).order_by("-created", "-pk")


def incident_detail(*, incident: Incident) -> dict[str, Any]:
    """Bundles with their analyses (newest first), the analyses still queued or
    running, and the latest done analysis."""
    bundles = list(
        Bundle.objects.filter(incident=incident).select_related("uploaded_by").prefetch_related("analyses")
    )
    latest_done = (
        Analysis.objects.filter(bundle__incident=incident, status=Analysis.Status.DONE)
        .select_related("bundle")
        .order_by(F("finished").desc(nulls_last=True), "-created", "-pk")
        .first()
    )
    in_flight = [a for b in bundles for a in b.analyses.all()
                 if a.status in (Analysis.Status.QUEUED, Analysis.Status.RUNNING)]
    return {"bundles": bundles, "latest_done": latest_done, "in_flight": in_flight,
            "members": team_members(team=incident.team)}


# -- analysis report -----------------------------------------------------------

def _explanation(finding: dict[str, Any]) -> list[dict[str, Any]]:
    """The contributions to a finding's confidence. Results stored before
    `reasons` existed carry only the explanation lines: those are read as they are."""
    if "reasons" in finding:
        return [{"delta": f"{r['weight']:+.2f}", "up": r["weight"] >= 0, "text": r["text"]}
                for r in finding["reasons"]]
    out = []
    for line in finding.get("explanation") or []:
        m = EXPLANATION_RE.match(str(line))
        if m:
            delta = float(m.group("delta"))
            out.append({"delta": m.group("delta"), "up": delta >= 0, "text": m.group("text")})
        else:
            out.append({"delta": "", "up": None, "text": str(line)})
    return out


def _norm(value: Any) -> str:
    return str(value).strip().lower()


def _knobs(knobs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for k in knobs or []:
        found, recommended = k.get("found"), k.get("recommended")
        first_word = _norm(recommended).split(" ", 1)[0] if recommended is not None else ""
        mismatch = found is not None and _norm(found) not in (_norm(recommended), first_word)
        out.append({**k, "mismatch": mismatch})
    return out


def _fix_groups(fix_steps: list[dict[str, Any]], prefix: str) -> list[dict[str, Any]]:
    kinds = {f.get("kind") or "other" for f in fix_steps or []}
    order = [k for k in FIX_KIND_ORDER if k in kinds] + sorted(kinds - set(FIX_KIND_ORDER))
    groups = []
    for kind in order:
        fixes = []
        for i, fix in enumerate(fix_steps):
            if (fix.get("kind") or "other") != kind:
                continue
            steps = [{"text": st.get("text", ""), "command": st.get("command") or "",
                      "cmd_id": f"{prefix}-{i}-{j}"} for j, st in enumerate(fix.get("steps") or [])]
            fixes.append({"title": fix.get("title", ""), "steps": steps})
        groups.append({"kind": kind, "label": FIX_KIND_LABELS.get(kind, kind.title()), "fixes": fixes})
    return groups


def host_roles(files: list[dict[str, Any]]) -> dict[str, str]:
    """host -> what runs there, from the components of its files ("Flink JobManager, kernel")."""
    comps: dict[str, set[str]] = {}
    for f in files or []:
        if f.get("host") and f.get("component") and f["component"] != "unknown":
            comps.setdefault(f["host"], set()).add(f["component"])
    return {h: ", ".join(sorted(ROLE_NAMES.get(c, c) for c in cs)) for h, cs in comps.items()}


class _Anchors:
    """Hands out each evidence anchor id once per page; later uses only link to it."""

    def __init__(self) -> None:
        self.used: set[str] = set()

    def mark(self, item: dict[str, Any]) -> dict[str, Any]:
        anchor = evidence_anchor(item.get("path"), item.get("line"))
        item["href"] = "#" + anchor
        item["anchor"] = anchor if anchor not in self.used else ""
        self.used.add(anchor)
        return item


def _titles(result: dict[str, Any], team_id: int) -> tuple[dict[str, str], dict[str, str], set[frozenset[str]]]:
    """Symptom titles, runbook titles and look-alike pairs for the slugs the result
    names, as the analysis's team sees those runbooks."""
    from kb.selectors.catalog import runbook_catalog

    symptoms = {s["id"]: s.get("title") or s["id"] for s in result.get("symptoms") or []}
    ids = {e.get("symptom") for e in result.get("timeline") or []} - set(symptoms) - {None}
    symptoms.update(dict(Symptom.objects.filter(id__in=ids).values_list("id", "title")))
    slugs = {f["runbook"] for f in result.get("findings") or []}
    for s in result.get("symptoms") or []:
        slugs.update(s.get("candidate_runbooks") or [])
    runbooks: dict[str, str] = {}
    related: set[frozenset[str]] = set()
    for slug, title, meta in runbook_catalog(team=team_id).filter(slug__in=slugs).values_list("slug", "title", "meta"):
        runbooks[slug] = title
        for d in (meta or {}).get("differential") or []:
            if isinstance(d, dict) and d.get("slug"):
                related.add(frozenset((slug, d["slug"])))
    runbooks.update({f["runbook"]: f.get("title") or f["runbook"] for f in result.get("findings") or []})
    return symptoms, runbooks, related


def analysis_report(*, analysis: Analysis) -> dict[str, Any]:
    """Everything the analysis partial shows for a done analysis."""
    result = analysis.result or {}
    findings_in = result.get("findings") or []
    symptom_titles, runbook_titles, related = _titles(result, analysis.team_id)
    colours = finding_colours(findings_in)
    roles = host_roles(result.get("files") or [])
    anchors = _Anchors()
    findings = []
    for rank, f in enumerate(findings_in, start=1):
        evidence = [anchors.mark({**e, "symptom_title": symptom_titles.get(e.get("symptom"), e.get("symptom")),
                                  "host_role": roles.get(e.get("host") or "", ""), "slot": f"f{rank}-{n}"})
                    for n, e in enumerate(f.get("evidence") or [], start=1)]
        confidence = float(f.get("confidence") or 0)
        findings.append({
            **f, "rank": rank, "colour": colours[f["runbook"]], "percent": round(confidence * 100),
            "explanation_items": _explanation(f), "evidence": evidence,
            "knobs": _knobs(f.get("knobs") or []),
            "fix_groups": _fix_groups(f.get("fix_steps") or [], f"cmd-a{analysis.pk}-{rank}"),
            "hosts": sorted({e.get("host") for e in evidence if e.get("host")}),
        })
    components = {f["path"]: f.get("component") for f in result.get("files") or []}
    stories = chain_build(findings_in, components=components, related=related)
    for story in stories:
        for step in story["steps"]:
            step.update(symptom_title=symptom_titles.get(step.get("symptom"), step.get("symptom")),
                        finding_rank=list(colours).index(step["runbook"]) + 1,
                        host_role=roles.get(step.get("host") or "", ""), colour=colours.get(step["runbook"], GREY))
    finding_slugs = set(colours)
    symptoms = []
    for s in result.get("symptoms") or []:
        candidates = [{"slug": c, "title": runbook_titles.get(c, c), "is_finding": c in finding_slugs}
                      for c in s.get("candidate_runbooks") or []]
        example = dict(s.get("example") or {})
        if example:
            example["href"] = "#" + evidence_anchor(example.get("path"), example.get("line"))
        symptoms.append({**s, "candidates": candidates, "example": example,
                         "used": any(c["is_finding"] for c in candidates)})
    timeline = timeline_build(result.get("timeline") or [], colours=colours,
                              symptom_titles=symptom_titles, runbook_titles=runbook_titles)
    events = [anchors.mark({**i, "symptom_title": symptom_titles.get(i.get("symptom"), i.get("symptom")),
                            "colour": next((colours[r] for r in colours if r in (i.get("runbooks") or [])), GREY),
                            "slot": f"t{n}"})
              for n, i in enumerate(result.get("timeline") or [], start=1)]
    return {
        "findings": findings, "stories": stories, "symptoms": symptoms, "timeline": timeline,
        "events": events, "unmatched": result.get("unmatched") or [], "versions": result.get("versions") or [],
        "config": result.get("config") or [], "files": result.get("files") or [],
        "skipped": result.get("skipped") or [], "notes": result.get("notes") or [],
        "stats": result.get("stats") or {}, "host_roles": sorted(roles.items()),
        "runbook_titles": runbook_titles,
    }

