"""Search: words against the catalog, and a pasted log against its signatures."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from analyzers.engine import analyze_text
from kb.models import Runbook, Team
from kb.selectors.catalog import runbook_catalog
from kb.services.symptom_overlays import catalog_resolve

# Points for a word found in each field: a title hit outranks a body mention.
FIELD_WEIGHTS = {"slug": 4, "title": 5, "symptoms": 3, "knobs": 3, "summary": 2, "body": 1}
WORD_RE = re.compile(r"[\w.\-]+")
MAX_LOG_CHARS = 1_000_000


@dataclass
class WordHit:
    runbook: Runbook
    score: int
    matched_words: int
    fields: list[str] = field(default_factory=list)


def _haystacks(runbook: Runbook) -> dict[str, str]:
    meta = runbook.meta
    return {
        "slug": runbook.slug,
        "title": runbook.title,
        "symptoms": " ".join(f"{s['id']} {s['title']}" for s in meta.get("symptoms") or []),
        "knobs": " ".join(k["key"] for k in meta.get("knobs") or []),
        "summary": runbook.summary,
        "body": runbook.body,
    }


def runbook_search_words(*, q: str, team: Team | None, limit: int = 50) -> list[WordHit]:
    """Rank runbooks by where the words of q occur. Runbooks matching more of
    the words come first, then the higher score. Case-insensitive substring
    matching in Python: the catalog is small and this works on every database."""
    words = list(dict.fromkeys(w.lower() for w in WORD_RE.findall(q or "") if len(w) >= 2))
    if not words:
        return []
    hits = []
    for runbook in runbook_catalog(team=team):
        stacks = {name: text.lower() for name, text in _haystacks(runbook).items()}
        score, matched, fields = 0, 0, set()
        for word in words:
            found = [name for name, text in stacks.items() if word in text]
            if found:
                matched += 1
                score += sum(FIELD_WEIGHTS[name] for name in found)
                fields.update(found)
        if matched:
            hits.append(WordHit(runbook, score, matched, sorted(fields, key=list(FIELD_WEIGHTS).index)))
    hits.sort(key=lambda h: (-h.matched_words, -h.score, h.runbook.slug))
    return hits[:limit]


def runbook_search_log(*, text: str, team: Team | None) -> dict[str, Any]:
    """Match a pasted log excerpt against the signatures of every runbook `team` sees.

    Returns the engine result (docs/contract.md §2) with Runbook rows
    attached for the page: findings[i]["runbook_obj"]; for each symptom its
    candidate runbooks split into "explained_by" (already findings) and
    "candidates" (possible causes that the excerpt alone cannot confirm).
    """
    text = (text or "")[:MAX_LOG_CHARS].replace("\r\n", "\n")
    runbooks = {r.slug: r for r in runbook_catalog(team=team).order_by("slug")}
    metas = catalog_resolve([r.meta for r in runbooks.values()], team.pk if team else None)
    result = analyze_text(text, metas)
    result["engine"] = result["stats"]["engine"]
    for finding in result["findings"]:
        finding["runbook_obj"] = runbooks.get(finding["runbook"])
    found = {f["runbook"] for f in result["findings"]}
    for symptom in result["symptoms"]:
        slugs = [s for s in symptom.get("candidate_runbooks", []) if s in runbooks]
        symptom["explained_by"] = [runbooks[s] for s in slugs if s in found]
        symptom["candidates"] = [runbooks[s] for s in slugs if s not in found]
    return result
