"""The analysis report: a stored result (docs/contract.md §2) turned into what
the incident and analysis pages show. Templates only format.

The page leads with a verdict (the top finding, its confidence and one line
of why, its first fix step with the incident's values, the chain from trigger
to impact) or, without a finding, the candidate causes with their next step;
everything else is one fold away. Keys other branches add to the result
(`leads`, `candidates`, `ruled_out`, per finding `explained_by` and
`rank_reason`) are shown when present; without them the page falls back to
`unmatched` and to candidates re-derived through the engine's ranker
(kb.lib.candidates over analyzers.considered).
"""

from __future__ import annotations

import re
from typing import Any

from analyzers.fill import fill_fixes, fill_text
from kb.lib.candidates import derive_candidates
from kb.lib.evidence import as_record, records as evidence_records, short_path, symptom_weights
from kb.lib.chain import chain_build
from kb.lib.timeline import GREY, evidence_anchor, finding_colours, parse_ts, short_name, timeline_build
from kb.models import Analysis
from kb.selectors.catalog import catalog_symptoms, runbook_catalog
from kb.selectors.runbooks import FIX_KIND_LABELS

FIX_KIND_ORDER = ("diagnosis", "mitigation", "permanent")
ROLE_NAMES = {
    "flink-jobmanager": "Flink JobManager", "flink-taskmanager": "Flink TaskManager",
    "hdfs-namenode": "NameNode", "hdfs-datanode": "DataNode", "hdfs-journalnode": "JournalNode",
    "yarn-resourcemanager": "ResourceManager", "yarn-nodemanager": "NodeManager",
    "hbase-master": "HMaster", "hbase-regionserver": "RegionServer", "zookeeper": "ZooKeeper",
    "kafka-broker": "Kafka broker", "spark-driver": "Spark driver", "spark-executor": "Spark executor",
}
EXPLANATION_RE = re.compile(r"^(?P<delta>[+-]\d+(?:\.\d+)?)\s+(?P<text>.*)$", re.S)
BEST_RECORDS = 3


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
            out.append({"delta": m.group("delta"), "up": float(m.group("delta")) >= 0, "text": m.group("text")})
        else:
            out.append({"delta": "", "up": None, "text": str(line)})
    return out


def _why_line(finding: dict[str, Any], titles: dict[str, str]) -> str:
    """One line of why: the heaviest contributions, in words."""
    reasons = sorted((r for r in finding.get("reasons") or [] if r.get("weight", 0) > 0),
                     key=lambda r: -r["weight"])[:2]
    if not reasons:
        return (finding.get("explanation") or [""])[0]
    words = []
    for r in reasons:
        if r.get("kind") == "symptom" and r.get("symptom"):
            count = f" ×{r['count']}" if (r.get("count") or 0) > 1 else ""
            words.append(f"{titles.get(r['symptom'], r['symptom'])}{count} ({r.get('role', 'seen')})")
        else:
            words.append(r.get("text", ""))
    return "; ".join(words)


def _norm(value: Any) -> str:
    return str(value).strip().lower()


def _knobs(knobs: list[dict[str, Any]], files: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Knobs with `mismatch` (found differs from recommended) and `found_in` (the bundle's config files it is read from)."""
    out = []
    for k in knobs or []:
        found, recommended = k.get("found"), k.get("recommended")
        first_word = _norm(recommended).split(" ", 1)[0] if recommended is not None else ""
        mismatch = found is not None and _norm(found) not in (_norm(recommended), first_word)
        found_in = [f["path"] for f in files if found is not None and f.get("kind") == "config"
                    and f.get("path", "").rsplit("/", 1)[-1] == str(k.get("file") or "").split(" ")[0]]
        out.append({**k, "mismatch": mismatch, "found_in": found_in})
    return out


def _fix_groups(fixes: list[dict[str, Any]], prefix: str) -> list[dict[str, Any]]:
    """Filled fixes (analyzers.fill) grouped diagnosis, mitigation, permanent; each command gets a copy id."""
    kinds = {f.get("kind") or "other" for f in fixes}
    order = [k for k in FIX_KIND_ORDER if k in kinds] + sorted(kinds - set(FIX_KIND_ORDER))
    groups = []
    for kind in order:
        members = []
        for i, fix in enumerate(fixes):
            if (fix.get("kind") or "other") == kind:
                for j, step in enumerate(fix["steps"]):
                    step["cmd_id"] = f"{prefix}-{i}-{j}"
                members.append(fix)
        groups.append({"kind": kind, "label": FIX_KIND_LABELS.get(kind, kind.title()), "fixes": members})
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


def _catalog(result: dict[str, Any], team_id: int) -> tuple[dict[str, str], dict[str, dict[str, Any]],
                                                             set[frozenset[str]]]:
    """Symptom titles, the front matter of every runbook the result names, look-alike
    pairs: as the analysis's team sees them (kb.selectors.catalog)."""
    titles = {s["id"]: s.get("title") or s["id"] for s in result.get("symptoms") or []}
    slugs = {f["runbook"] for f in result.get("findings") or []}
    for s in result.get("symptoms") or []:
        slugs.update(s.get("candidate_runbooks") or [])
    for key in ("candidates", "ruled_out"):
        slugs.update(c.get("runbook") for c in result.get(key) or [] if isinstance(c, dict))
    metas = {slug: meta or {} for slug, meta in
             runbook_catalog(team=team_id).filter(slug__in=slugs).values_list("slug", "meta")}
    for meta in list(metas.values()):
        for d in meta.get("differential") or []:
            if isinstance(d, dict) and d.get("slug") in slugs:
                metas.setdefault(d["slug"], {})
    wanted = {e.get("symptom") for e in result.get("timeline") or []}
    for meta in metas.values():
        wanted.update(u.get("id") for u in meta.get("symptoms") or [] if isinstance(u, dict))
    titles.update({i: t for i, (t, _) in catalog_symptoms(ids=wanted - set(titles), team=team_id).items()})
    related = {frozenset((slug, d["slug"])) for slug, meta in metas.items()
               for d in meta.get("differential") or [] if isinstance(d, dict) and d.get("slug")}
    return titles, metas, related


def _library(metas: dict[str, dict[str, Any]], team_id: int) -> dict[str, dict[str, Any]]:
    """Symptom definitions the runbooks' fill maps name (their patterns give the captures)."""
    ids = {src.get("symptom") for meta in metas.values() for sources in (meta.get("fill") or {}).values()
           for src in (sources if isinstance(sources, list) else [sources]) if isinstance(src, dict)}
    return {i: d for i, (_, d) in catalog_symptoms(ids=ids, team=team_id).items()}


def _finding(f: dict[str, Any], rank: int, *, ctx: dict[str, Any]) -> dict[str, Any]:
    titles, roles, anchors = ctx["titles"], ctx["roles"], ctx["anchors"]
    for n, e in enumerate(f.get("evidence") or [], start=1):
        anchors.mark(e)
        e.update(symptom_title=titles.get(e.get("symptom"), e.get("symptom")),
                 host_role=roles.get(e.get("host") or "", ""), slot=f"f{rank}-{n}")
    recs = evidence_records(f.get("evidence") or [], symptom_weights(f))
    for n, rec in enumerate(recs, start=1):
        rec["slot"] = f"f{rank}-r{n}"
    meta = ctx["metas"].get(f["runbook"]) or {}
    records_all = (f.get("evidence") or []) + ctx["all_evidence"]
    fixes = fill_fixes(f.get("fix_steps") or [], meta.get("fill"), records_all, ctx["library"],
                       f.get("knobs") or [], ctx["files"])
    confidence = float(f.get("confidence") or 0)
    first_step = next(({**st, "cmd_id": f"cmd-a{ctx['pk']}-{rank}-first"} for fix in fixes for st in fix["steps"]), None)
    return {
        **f, "rank": rank, "colour": ctx["colours"][f["runbook"]], "percent": round(confidence * 100),
        "explanation_items": _explanation(f), "why_line": _why_line(f, titles),
        "records": recs, "best_records": recs[:BEST_RECORDS], "more_records": recs[BEST_RECORDS:],
        "knobs": _knobs(f.get("knobs") or [], ctx["files"]),
        "fix_groups": _fix_groups(fixes, f"cmd-a{ctx['pk']}-{rank}"), "first_step": first_step,
        "first_fix_title": fixes[0].get("title") if fixes else "",
        "hosts": sorted({e.get("host") for e in f.get("evidence") or [] if e.get("host")}),
        "ruled_out": [r for r in ctx["ruled_out"] if set(r.get("symptoms") or []) & {e.get("symptom") for e in f.get("evidence") or []}],
    }


def _chain_line(stories: list[dict[str, Any]], top: str, titles: dict[str, str]) -> list[dict[str, Any]]:
    """The story of the top finding as one line of short steps, trigger first."""
    story = next((s for s in stories if top in s["findings"]), None)
    if story is None:
        return []
    out = []
    for step in story["steps"]:
        label = short_name(titles.get(step.get("symptom"), step.get("symptom") or ""))
        if out and out[-1]["label"] == label:
            continue
        out.append({"label": label, "host": step.get("host"), "href": step["href"], "runbook": step["runbook"],
                    "colour": step.get("colour"), "is_top": step["runbook"] == top})
    return out


def _relate(findings: list[dict[str, Any]], stories: list[dict[str, Any]]) -> None:
    """Each finding's place in its story: `after` (the finding it is a consequence
    of: the result's `explained_by`, else the first finding of its chain) and
    `reason` (the result's `rank_reason`, else "trigger of ..." / "follows ...")."""
    by_slug = {f["runbook"]: f for f in findings}
    for f in findings:
        story = next((st for st in stories if f["runbook"] in st["findings"]), {"findings": [f["runbook"]]})
        order = story["findings"]
        after = f.get("explained_by") or (order[0] if order.index(f["runbook"]) else None)
        f["after"] = by_slug.get(after) if after else None
        later = [by_slug[s] for s in order[1:] if s != f["runbook"]] if order[0] == f["runbook"] else []
        f["trigger_of"] = later
        if f.get("rank_reason"):
            f["reason"] = f["rank_reason"]
        elif later:
            f["reason"] = "trigger of " + ", ".join(f"#{x['rank']} {x['title']}" for x in later) + " (chain)"
        elif f["after"]:
            f["reason"] = f"follows #{f['after']['rank']} {f['after']['title']} (chain)"
        else:
            f["reason"] = ""
        if len(findings) == 1 and not later and not f["after"]:
            f["reason"] = ""        # one finding: nothing to rank it against
        f["reason_short"] = re.split(r"[:(]", f["reason"], maxsplit=1)[0].strip()


def _leads(result: dict[str, Any], anchors: _Anchors) -> list[dict[str, Any]]:
    out = []
    for lead in result.get("leads") or []:
        if isinstance(lead, dict):
            item = anchors.mark(dict(lead))
            item["short_path"] = short_path(lead.get("path"), lead.get("host"))
            text = str(lead.get("text") or "")
            item["multi"] = "\n" in text
            out.append(item)
    return out


def analysis_report(*, analysis: Analysis, zoom: dict[str, Any] | None = None) -> dict[str, Any]:
    """Everything the analysis partial shows for a done analysis. `zoom`
    ({"start": datetime, "end": datetime}) narrows the timeline."""
    result = analysis.result or {}
    findings_in = result.get("findings") or []
    titles, metas, related = _catalog(result, analysis.team_id)
    colours = finding_colours(findings_in)
    roles = host_roles(result.get("files") or [])
    anchors = _Anchors()
    ruled_out = [dict(r, title=r.get("title") or (metas.get(r.get("runbook")) or {}).get("title") or r.get("runbook"))
                 for r in result.get("ruled_out") or [] if isinstance(r, dict)]
    ctx = {"titles": titles, "roles": roles, "anchors": anchors, "metas": metas, "colours": colours,
           "library": _library(metas, analysis.team_id), "files": result.get("files") or [], "pk": analysis.pk,
           "all_evidence": [e for f in findings_in for e in f.get("evidence") or []], "ruled_out": ruled_out}
    findings = [_finding(f, rank, ctx=ctx) for rank, f in enumerate(findings_in, start=1)]
    components = {f["path"]: f.get("component") for f in result.get("files") or []}
    stories = chain_build(findings_in, components=components, related=related)
    for story in stories:
        for step in story["steps"]:
            step.update(symptom_title=titles.get(step.get("symptom"), step.get("symptom")),
                        finding_rank=list(colours).index(step["runbook"]) + 1,
                        host_role=roles.get(step.get("host") or "", ""), colour=colours.get(step["runbook"], GREY))
    _relate(findings, stories)
    finding_slugs = set(colours)
    symptoms = []
    for s in result.get("symptoms") or []:
        candidates = [{"slug": c, "title": (metas.get(c) or {}).get("title") or c, "is_finding": c in finding_slugs}
                      for c in s.get("candidate_runbooks") or []]
        example = dict(s.get("example") or {})
        if example:
            example["href"] = "#" + evidence_anchor(example.get("path"), example.get("line"))
        symptoms.append({**s, "candidates": candidates, "example": example,
                         "used": any(c["is_finding"] for c in candidates)})
    timeline = timeline_build(result.get("timeline") or [], colours=colours, symptom_titles=titles,
                              runbook_titles={s: (m.get("title") or s) for s, m in metas.items()}, zoom=zoom)
    events = [as_record(anchors.mark({**i, "symptom_title": titles.get(i.get("symptom"), i.get("symptom")),
                                      "host_role": roles.get(i.get("host") or "", ""), "slot": f"t{n}",
                                      "colour": next((colours[r] for r in colours if r in (i.get("runbooks") or [])), GREY)}))
              for n, i in enumerate(result.get("timeline") or [], start=1)]
    # A result stored before the engine wrote `candidates` gets them from the same ranker.
    stored = result["candidates"] if "candidates" in result else derive_candidates(result, metas)
    candidates = [dict(c, where_parts=fill_text(c.get("where") or "", {})) for c in stored or []]
    top = findings[0] if findings else None
    return {
        "findings": findings, "top": top, "stories": stories, "symptoms": symptoms, "timeline": timeline,
        "chain_line": _chain_line(stories, top["runbook"], titles) if top else [],
        "candidates": candidates or [], "ruled_out": ruled_out, "leads": _leads(result, anchors),
        "has_leads": "leads" in result, "baseline": result.get("baseline"),
        "events": events, "unmatched": result.get("unmatched") or [], "versions": result.get("versions") or [],
        "config": result.get("config") or [], "files": result.get("files") or [],
        "skipped": result.get("skipped") or [], "notes": result.get("notes") or [],
        "stats": result.get("stats") or {}, "host_roles": sorted(roles.items()),
        "runbook_titles": {s: (m.get("title") or s) for s, m in metas.items()}, "severity": (top or {}).get("severity"),
    }


def parse_zoom(start: str | None, end: str | None) -> dict[str, Any] | None:
    """The timeline's zoom from query parameters (ISO timestamps); None when absent or unreadable."""
    lo, hi = parse_ts(start), parse_ts(end)
    if lo is None or hi is None or hi <= lo:
        return None
    return {"start": lo, "end": hi}
