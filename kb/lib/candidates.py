"""No verdict, next step: when the symptoms found are shared by several root
causes and none is a finding, rank those causes and say for each what would
confirm or rule it out, and which command gives it.

    derive_candidates(result, metas={slug: runbook front matter}, titles={symptom id: title})
      -> [{"runbook": slug, "title": .., "score": 0.1, "found": [ids], "missing": [{"symptom", "title"}],
           "next_step": "..", "where": "jmap -histo:live <tm-pid> | ..", "tell_apart": [..]}]

The shape is the result's `candidates` key (docs/contract.md §2); the page
uses the result's own list when the engine wrote one and derives it here from
`symptoms[].candidate_runbooks` and the runbooks' symptoms, fixes and
`differential` otherwise. Pure functions: no Django, no I/O.
"""

from __future__ import annotations

from typing import Any

from analyzers.fill import fill_text

SEVERITY_RANK = {"critical": 0, "high": 1, "medium": 2, "low": 3}


def _missing(meta: dict[str, Any], seen: set[str], titles: dict[str, str]) -> list[dict[str, Any]]:
    """The required symptoms not seen; of a group of alternatives, each member
    (any one would do) unless one of them was seen."""
    uses = [u for u in meta.get("symptoms") or [] if isinstance(u, dict) and u.get("role") == "required"]
    groups_seen = {u.get("group") for u in uses if u.get("group") and u.get("id") in seen}
    return [{"symptom": u["id"], "title": titles.get(u["id"], u["id"]), "group": u.get("group") or ""}
            for u in uses if u.get("id") not in seen and not (u.get("group") and u.get("group") in groups_seen)]


def _where(meta: dict[str, Any]) -> str | None:
    """The first diagnosis step's command (else its text): what to run to confirm."""
    fixes = [f for f in meta.get("fixes") or [] if isinstance(f, dict)]
    for fix in sorted(fixes, key=lambda f: f.get("kind") != "diagnosis"):
        for step in fix.get("steps") or []:
            if step.get("command"):
                return step["command"]
    return None


def _next_step(missing: list[dict[str, Any]]) -> str:
    if not missing:
        return "Its required evidence is here; check the conditions and excluding symptoms in its runbook."
    alternatives: dict[str, list[str]] = {}
    for m in missing:
        alternatives.setdefault(m["group"] or m["symptom"], []).append(m["title"])
    needs = [" or ".join(titles) for titles in alternatives.values()]
    return "Look for " + "; and ".join(needs) + ": it confirms this cause, its absence rules it out."


def derive_candidates(result: dict[str, Any], metas: dict[str, dict[str, Any]],
                      titles: dict[str, str]) -> list[dict[str, Any]]:
    findings = {f.get("runbook") for f in result.get("findings") or []}
    seen = {s.get("id") for s in result.get("symptoms") or []}
    found: dict[str, list[str]] = {}
    for s in result.get("symptoms") or []:
        for slug in s.get("candidate_runbooks") or []:
            if slug not in findings:
                found.setdefault(slug, []).append(s["id"])
    out = []
    for slug, ids in found.items():
        meta = metas.get(slug) or {}
        weights = {u.get("id"): float(u.get("weight") or 0) for u in meta.get("symptoms") or [] if isinstance(u, dict)}
        missing = _missing(meta, seen, titles)
        out.append({
            "runbook": slug, "title": meta.get("title") or slug, "score": round(sum(weights.get(i, 0) for i in ids), 3),
            "found": ids, "missing": missing, "next_step": _next_step(missing), "where": _where(meta),
            "where_parts": fill_text(_where(meta) or "", {}), "where_is_command": True,
            "severity": meta.get("severity"),
            "tell_apart": [{"runbook": d["slug"], "title": (metas.get(d["slug"]) or {}).get("title") or d["slug"],
                            "how": d.get("how", "")}
                           for d in meta.get("differential") or [] if isinstance(d, dict) and d.get("slug") in found],
        })
    out.sort(key=lambda c: (-c["score"], -len(c["found"]), SEVERITY_RANK.get(c["severity"] or "", 9), c["runbook"]))
    return out
