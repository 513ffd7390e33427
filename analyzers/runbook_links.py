"""Validation of `leads_to`, the links between runbooks that rank findings
(analyzers/ranking.py; format in runbooks/README.md).

Per file: the keys and values of each link. Across files: every linked slug
exists, and the links never ask a runbook to rank above itself (a cycle of
"cause" links, or a "trigger" link that reverses one, would leave no root).
"""

from __future__ import annotations

from typing import Any

from analyzers.runbook_vocabulary import DURATION_RE, LEADS_TO_KEYS, LEADS_TO_KINDS


def check_leads_to(links: Any, slug: Any, p: Any) -> None:
    """`p` is a runbook_checks.Problems (not imported: that module imports this one)."""
    for i, link in enumerate(p.items(links, "leads_to")):
        where = f"leads_to[{i}]"
        if not p.keys(link, LEADS_TO_KEYS, {"slug", "as", "why"}, where):
            continue
        if link.get("slug") == slug:
            p.error(where, "a runbook cannot lead to itself")
        if link.get("as") not in LEADS_TO_KINDS:
            p.error(where, f"as must be one of {LEADS_TO_KINDS}")
        if "why" in link:
            p.text(link["why"], f"{where}.why")
        if link.get("hosts", "any") not in ("same", "other", "any"):
            p.error(where, "hosts must be same, other or any")
        if "within" in link and not DURATION_RE.match(str(link["within"]).strip()):
            p.error(where, f"bad duration {link['within']!r} (use e.g. 500ms, 30s, 10m, 2h)")


def precedence(metas: dict[str, dict[str, Any]]) -> dict[str, set[str]]:
    """slug -> the slugs its links rank below it (the root cause precedes)."""
    after: dict[str, set[str]] = {slug: set() for slug in metas}
    for slug, meta in metas.items():
        for link in meta.get("leads_to") or []:
            if link.get("as") == "cause":
                after[slug].add(link["slug"])
            else:
                after.setdefault(link["slug"], set()).add(slug)
    return after


def link_problems(metas: dict[str, dict[str, Any]], paths: dict[str, str]) -> list[str]:
    """Unknown linked slugs and ranking cycles, one line each, naming the file."""
    problems = [
        f"{paths.get(slug, slug)}: leads_to names unknown runbook '{link['slug']}'"
        for slug, meta in metas.items() for link in meta.get("leads_to") or [] if link["slug"] not in metas
    ]
    if problems:
        return problems
    after = precedence(metas)
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(slug: str, path: list[str]) -> list[str] | None:
        state[slug] = 1
        for nxt in sorted(after.get(slug, ())):
            if state.get(nxt) == 1:
                return path + [slug, nxt]
            if nxt not in state:
                found = visit(nxt, path + [slug])
                if found:
                    return found
        state[slug] = 2
        return None

    for slug in sorted(after):
        if slug not in state:
            cycle = visit(slug, [])
            if cycle:
                loop = cycle[cycle.index(cycle[-1]):]
                return [f"{paths.get(loop[0], loop[0])}: leads_to ranks runbooks in a cycle: {' > '.join(loop)}"]
    return []
