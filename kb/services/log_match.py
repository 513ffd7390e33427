"""Signature matching for a pasted log excerpt, used only while
analyzers.engine.analyze_text is not available. Deliberately small: no
relations, conditions or version evidence; it gives the same result shape
(CONTRACT.md section 2, findings + symptoms) so the page does not care.
"""

from __future__ import annotations

import re
from typing import Any

from analyzers.runbooks import Catalog
from analyzers.runbooks import Runbook as ParsedRunbook

MAX_EVIDENCE = 20


def log_match_fallback(text: str, runbooks: list[dict[str, Any]]) -> dict[str, Any]:
    catalog = Catalog({m["slug"]: ParsedRunbook(slug=m["slug"], meta=m, body="") for m in runbooks})
    users = catalog.symptom_users()
    definitions = catalog.symptom_definitions()
    compiled = {sid: [re.compile(p) for p in d.get("patterns") or []] for sid, d in definitions.items()}
    hits: dict[str, list[dict[str, Any]]] = {}
    for n, line in enumerate(text.splitlines(), start=1):
        for sid, patterns in compiled.items():
            if any(p.search(line) for p in patterns):
                hits.setdefault(sid, []).append({"line": n, "text": line[:2000], "symptom": sid})

    findings = []
    for meta in runbooks:
        uses = {s["id"]: s for s in meta["symptoms"] if s["id"] in hits}
        if any(s["role"] == "excluding" for s in uses.values()):
            continue
        required = [sid for sid, s in uses.items() if s["role"] == "required"]
        # A shared symptom alone is not a finding (runbooks/README.md, roles).
        own = [sid for sid in required if users.get(sid) == [meta["slug"]]]
        if not own and len(required) < 2:
            continue
        evidence = sorted((h for sid in uses for h in hits[sid]), key=lambda h: h["line"])
        findings.append({
            "runbook": meta["slug"],
            "title": meta["title"],
            "confidence": round(min(0.99, max(0.05, sum(s.get("weight", 0.0) for s in uses.values()))), 2),
            "matched_symptoms": len(uses),
            "evidence": evidence[:MAX_EVIDENCE],
        })
    findings.sort(key=lambda f: (-f["matched_symptoms"], -f["confidence"], f["runbook"]))
    symptoms = [
        {"id": sid, "title": definitions[sid].get("title", sid), "count": len(lines),
         "candidate_runbooks": users.get(sid, []), "example": lines[0]}
        for sid, lines in sorted(hits.items())
    ]
    return {"findings": findings, "symptoms": symptoms, "engine": "fallback"}
