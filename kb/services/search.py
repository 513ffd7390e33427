"""Search: words against the catalog, and a pasted log against its signatures."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from analyzers.engine import analyze_text
from kb.models import Runbook

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


def runbook_search_words(*, q: str, limit: int = 50) -> list[WordHit]:
    """Rank runbooks by where the words of q occur. Runbooks matching more of
    the words come first, then the higher score. Case-insensitive substring
    matching in Python: the catalog is small and this works on every database."""
    words = list(dict.fromkeys(w.lower() for w in WORD_RE.findall(q or "") if len(w) >= 2))
    if not words:
        return []
    hits = []
    for runbook in Runbook.objects.all():
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


def runbook_search_log(*, text: str) -> dict[str, Any]:
    """Match a pasted log excerpt against every runbook's signatures.

    Returns the engine result (docs/contract.md §2) with Runbook rows
    attached for the page: findings[i]["runbook_obj"]; for each symptom its
    candidate runbooks split into "explained_by" (already findings) and
    "candidates" (possible causes that the excerpt alone cannot confirm).
    """
    text = (text or "")[:MAX_LOG_CHARS].replace("\r\n", "\n")
    runbooks = _paste_catalog()
    result = analyze_text(text, [r.meta for r in runbooks.values()])
    result["engine"] = result["stats"]["engine"]
    for finding in result["findings"]:
        finding["runbook_obj"] = runbooks.get(finding["runbook"])
    found = {f["runbook"] for f in result["findings"]}
    for symptom in result["symptoms"]:
        slugs = [s for s in symptom.get("candidate_runbooks", []) if s in runbooks]
        symptom["explained_by"] = [runbooks[s] for s in slugs if s in found]
        symptom["candidates"] = [runbooks[s] for s in slugs if s not in found]
    return result


def _paste_catalog() -> dict[str, Runbook]:
    return {r.slug: r for r in Runbook.objects.all()}


def paste_matcher_warm() -> str | None:
    """Compile, now, the matcher runbook_search_log will use (0.6-1.2 s on first use
    otherwise: the first pasted snippet of a web process would pay it). Called once
    at web start (kb/wsgi.py). Returns the signature-set hash, None without runbooks."""
    from analyzers.signatures import matcher_for, signature_set_hash, signatures_from_runbooks

    metas = [r.meta for r in _paste_catalog().values()]
    if not metas:
        return None
    signatures = signatures_from_runbooks(metas)
    matcher_for(signatures).candidates(b"\n", errors=False)   # the lazily compiled database too
    return signature_set_hash(signatures)
