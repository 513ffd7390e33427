"""Differential diagnosis: occurrences of symptoms -> ranked root causes.

Every rule is data from the runbooks (roles, weights, `where` conditions,
relations, affected versions); this module only evaluates it. The reasoning
behind each confidence is returned with the finding (`explanation`).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from analyzers.conditions import COMPONENT
from analyzers.model import Hit, occurrences_meet
from analyzers.occurrences import Occurrences, Use, as_occurrences
from analyzers.ranking import rank_findings
from analyzers.runbook_spec import Knob, Relation, RunbookSpec
from analyzers.versions import in_range

MAX_EVIDENCE_PER_SYMPTOM = 10
VERSION_IN_RANGE_BONUS = 0.05
VERSION_FIXED_PENALTY = 0.15


def evidence_item(hit: Hit) -> dict[str, Any]:
    return {
        "path": hit.path, "line": hit.line, "host": hit.host, "timestamp": hit.timestamp,
        "symptom": hit.symptom, "text": hit.text,
    }


def _sort_key(hit: Hit) -> tuple:
    return (hit.timestamp or "9999", hit.path, hit.line)


def symptom_users(runbooks: list[RunbookSpec]) -> dict[str, list[str]]:
    users: dict[str, list[str]] = defaultdict(list)
    for rb in runbooks:
        for s in rb.symptoms:
            if s.role != "excluding":
                users[s.id].append(rb.slug)
    return users


def symptom_requirers(runbooks: list[RunbookSpec]) -> dict[str, list[str]]:
    """{symptom id: slugs of the runbooks that require it} (a symptom several runbooks require
    decides none of them alone: diagnose and considered both ask)."""
    requirers: dict[str, list[str]] = defaultdict(list)
    for rb in runbooks:
        for s in rb.symptoms:
            if s.role == "required":
                requirers[s.id].append(rb.slug)
    return requirers


def present_uses(rb: RunbookSpec, occurrences: Occurrences) -> dict[str, Use]:
    """{symptom id: its hits as rb uses them} for the symptoms present for rb: seen, meeting
    `where`, and for a usage with a `burst`, that many within its window."""
    present: dict[str, Use] = {}
    for s in rb.symptoms:
        use = occurrences.use(s.id, s.where)
        if use is not None and (s.burst is None or use.burst(s.burst).count >= s.burst.count):
            present[s.id] = use
    return present


def _relation_holds(rel: Relation, present: dict[str, list[Hit]]) -> Hit | None:
    """The first 'then' occurrence that satisfies the relation with some 'first' occurrence."""
    firsts, thens = present.get(rel.first, []), present.get(rel.then, [])
    if not firsts or not thens:
        return None
    for b in thens:
        for a in firsts:
            if occurrences_meet((a.host, a.when), (b.host, b.when), hosts=rel.hosts, within_s=rel.within_s,
                                after=rel.order == "after"):
                return b
    return None


def _reason(weight: float, kind: str, text: str, **about: Any) -> dict[str, Any]:
    """One contribution to a confidence, as data (the page shows it without parsing)."""
    return {"weight": round(weight, 2), "kind": kind, "text": text, **about}


def _explanation_line(r: dict[str, Any]) -> str:
    """The reason as the one-line text of `explanation` (kept for the CLI and API clients)."""
    return f"{'+' if r['weight'] >= 0 else '-'}{abs(r['weight']):.2f} {r['text']}"


def _version_adjustment(rb: RunbookSpec, versions: dict[str, list[str]]) -> tuple[float, list[dict[str, Any]]]:
    """A detected version inside the runbook's affected range raises confidence; outside lowers it."""
    delta, notes = 0.0, []
    for av in rb.affected_versions:
        for v in versions.get(av.component, []):
            try:
                inside = in_range(v, av.range)
            except ValueError:
                continue
            if inside:
                delta += VERSION_IN_RANGE_BONUS
                notes.append(_reason(VERSION_IN_RANGE_BONUS, "version",
                                     f"{av.component} {v} is in the affected range {av.range}",
                                     component=av.component, version=v))
            else:
                delta -= VERSION_FIXED_PENALTY
                notes.append(_reason(-VERSION_FIXED_PENALTY, "version",
                                     f"{av.component} {v} is outside the affected range {av.range}",
                                     component=av.component, version=v))
            break
    return delta, notes


def diagnose(occurrences: Occurrences | dict[str, list[Hit]], runbooks: list[RunbookSpec],
             versions: dict[str, list[str]], config: dict[str, str]) -> list[dict[str, Any]]:
    occurrences = as_occurrences(occurrences, runbooks)
    requirers = symptom_requirers(runbooks)
    findings = []
    for rb in runbooks:
        f = _diagnose_one(rb, occurrences, requirers, versions, config)
        if f is not None:
            findings.append(f)
    findings.sort(key=lambda f: (-f["confidence"], -len(f["evidence"]), f["runbook"]))
    return rank_findings(findings, runbooks)


def _diagnose_one(rb: RunbookSpec, occurrences: Occurrences, requirers, versions, config) -> dict[str, Any] | None:
    present = present_uses(rb, occurrences)
    # Required symptoms: each ungrouped one must be present; of a `group`, one is enough
    # (the same requirement seen through different logs, e.g. a GC log or a pause monitor).
    groups: dict[str, list] = defaultdict(list)
    for s in rb.symptoms:
        if s.role == "required":
            groups[s.group or s.id].append(s)
    met = [[s for s in members if s.id in present] for members in groups.values()]
    if not all(met):
        return None
    required = [s for members in met for s in members]
    # A symptom other runbooks also require is shared evidence, not a diagnosis:
    # alone it gives candidates, not a finding.
    specific = any(requirers.get(s.id) == [rb.slug] for s in required) or len(met) >= 2
    if not specific:
        return None
    score, why = 0.0, []
    for s in rb.symptoms:
        if s.id not in present:
            continue
        w = s.weight
        n = present[s.id].count
        burst = f"; {present[s.id].burst(s.burst).text(s.burst)}" if s.burst else ""
        if s.role == "excluding":
            if s.veto:
                return None
            score -= w
            why.append(_reason(-w, "symptom", f"{s.id} ({n}x{burst}): points at another cause",
                               symptom=s.id, count=n, role=s.role))
        else:
            score += w
            why.append(_reason(w, "symptom", f"{s.id} ({n}x, {s.role}{burst}{_stands_in(s, groups, present)})",
                               symptom=s.id, count=n, role=s.role))
    pairs = {sid: use.relation_hits() for sid, use in present.items()}
    for rel in rb.relations:
        hit = _relation_holds(rel, pairs)
        if hit is None:
            if rel.role == "required":
                return None
            continue
        w = rel.weight
        score += w
        detail = rel.why or f"{rel.then} follows {rel.first}"
        why.append(_reason(w, "relation", f"{rel.first} -> {rel.then}: {detail}",
                           first=rel.first, then=rel.then))
    delta, notes = _version_adjustment(rb, versions)
    score += delta
    why.extend(notes)
    confidence = round(min(0.99, max(0.05, score)), 2)
    evidence = []
    for s in rb.symptoms:
        if s.id not in present or s.role == "excluding":
            continue
        use = present[s.id]
        # A burst's evidence is its densest window, not the routine occurrences before it.
        evidence.extend(use.burst_hits(s.burst, MAX_EVIDENCE_PER_SYMPTOM) if s.burst
                        else use.earliest.items[:MAX_EVIDENCE_PER_SYMPTOM])
    evidence.sort(key=_sort_key)
    return {
        "runbook": rb.slug,
        "title": rb.title,
        "confidence": confidence,
        "severity": rb.severity,
        "explanation": [_explanation_line(r) for r in why],
        "reasons": why,
        "evidence": [evidence_item(h) for h in evidence],
        "chain": _chain(rb, present),
        "knobs": [_knob(k, config) for k in rb.knobs],
        # One shape, two contract keys: `fixes` one line each, `fix_steps` in full.
        "fixes": [f.line() for f in rb.fixes],
        "fix_steps": [f.as_json() for f in rb.fixes],
        "tickets": [{"id": t.id, "title": t.title, "status": t.status, "fixed_in": t.fixed_in, "url": t.url}
                    for t in rb.tickets],
    }


def _stands_in(s, groups, present: dict[str, Use]) -> str:
    """For a shared line counted only in some processes' files (a `where` on `component`) that meets a
    group in place of stronger evidence: whose files, and what was not seen."""
    stronger = [m.id for m in groups.get(s.group or "", []) if m.id not in present and m.weight > s.weight]
    if not stronger or not any(c.capture == COMPONENT for c in s.where):
        return ""
    writers = sorted({h.component for h in present[s.id].earliest.items})
    return f"; in {', '.join(writers)} logs, in place of {', '.join(stronger)}, not seen"


def _chain(rb: RunbookSpec, present: dict[str, Use]) -> list[dict[str, Any]]:
    out = []
    for sid in rb.chain:
        if sid in present:
            item = evidence_item(present[sid].earliest.items[0])
            item["count"] = present[sid].count
            out.append(item)
    return out


def _knob(k: Knob, config: dict[str, str]) -> dict[str, Any]:
    return {
        "key": k.key, "component": k.component, "file": k.file,
        "default": k.default, "defaults": list(k.defaults),
        "recommended": k.recommended, "why": k.why, "found": config.get(k.key),
    }


def symptom_summary(occurrences: Occurrences | dict[str, list[Hit]], runbooks: list[RunbookSpec],
                    titles: dict[str, str]) -> list[dict[str, Any]]:
    users = symptom_users(runbooks)
    occurrences = as_occurrences(occurrences, runbooks)
    out = []
    for sid, symptom in occurrences.items():
        out.append({
            "id": sid,
            "title": titles.get(sid, sid),
            "count": symptom.count,
            "first_seen": symptom.first_seen,
            "last_seen": symptom.last_seen,
            "hosts": sorted(symptom.hosts),
            "candidate_runbooks": sorted(users.get(sid, [])),
            "example": evidence_item(symptom.earliest.items[0]),
        })
    out.sort(key=lambda s: (s["first_seen"] or "9999", s["id"]))
    return out
