"""Validation of runbook front matter and symptom library files.

Every problem of a file is collected before anything is raised, so an author
fixes a file in one pass instead of one error per run. Errors make the file
invalid; warnings (weights that a veto makes meaningless, library symptoms
no runbook uses) are reported and do not stop a load.
"""

from __future__ import annotations

import re
from typing import Any

from analyzers.runbook_vocabulary import (
    CAPTURE_TYPES, COMPONENTS, FACTS, FIX_KEYS, FIX_KINDS, KNOB_KEYS, OPS, RELATION_KEYS, ROLES, SEVERITIES,
    SLUG_RE, STEP_KEYS, SYMPTOM_DEF_KEYS, SYMPTOM_USE_KEYS, TICKET_KEYS, TICKET_STATUSES, TOP_KEYS, UNSUPPORTED_RE, VERSION_COMPONENTS,
    parse_duration_ms,
)
from analyzers.burst import check_burst
from analyzers.conditions import COMPONENT
from analyzers.fill import check_fill
from analyzers.runbook_links import check_leads_to
from analyzers.versions import parse_range


class RunbookError(ValueError):
    """An invalid runbook or symptom file: the message names the file and each problem on a line."""

    def __init__(self, message: str, problems: list[str] | None = None):
        super().__init__(message)
        self.problems = problems or [message]


class Problems:
    """The errors and warnings found in one file, each as 'path: where: what'."""

    def __init__(self, path: str):
        self.path = path
        self.errors: list[str] = []
        self.warnings: list[str] = []

    def error(self, where: str, msg: str) -> None:
        self.errors.append(f"{self.path}: {where}: {msg}")

    def warn(self, where: str, msg: str) -> None:
        self.warnings.append(f"{self.path}: {where}: {msg}")

    def raise_if_any(self) -> None:
        if self.errors:
            raise RunbookError("\n".join(self.errors), list(self.errors))

    def keys(self, obj: Any, allowed: set[str], required: set[str], where: str) -> bool:
        """Checks a mapping's keys; False when obj is no mapping (nothing more to check)."""
        if not isinstance(obj, dict):
            self.error(where, "must be a mapping")
            return False
        if unknown := set(obj) - allowed:
            self.error(where, f"unknown key(s) {sorted(unknown)}")
        if missing := required - set(obj):
            self.error(where, f"missing key(s) {sorted(missing)}")
        return True

    def text(self, value: Any, where: str, max_len: int | None = None) -> None:
        if not isinstance(value, str) or not value.strip():
            self.error(where, "must be a non-empty string")
        elif max_len and len(value) > max_len:
            self.error(where, f"longer than {max_len} characters")

    def items(self, value: Any, where: str, min_len: int = 0) -> list:
        """The list, or [] after recording the problem."""
        if not isinstance(value, list) or len(value) < min_len:
            self.error(where, f"must be a list with at least {min_len} item(s)")
            return []
        return value


# --- symptom library files ----------------------------------------------------

def check_symptom_definition(d: Any, p: Problems, expected_id: str | None = None) -> None:
    if not p.keys(d, SYMPTOM_DEF_KEYS, {"id", "title"}, "symptom"):
        return
    sid = d.get("id")
    if not isinstance(sid, str) or not SLUG_RE.match(sid):
        p.error("id", f"{sid!r} is not kebab-case")
    elif expected_id is not None and sid != expected_id:
        p.error("id", f"'{sid}' does not match the file name '{expected_id}'")
    for key, limit in (("title", 200), ("look_in", 300)):
        if key in d:
            p.text(d[key], key, limit)
    if ("patterns" in d) == ("fact" in d):
        p.error("symptom", "needs exactly one of 'patterns' or 'fact'")
    captures = d.get("captures") or {}
    if not isinstance(captures, dict):
        p.error("captures", "must be a mapping name -> type")
        captures = {}
    for name, typ in captures.items():
        if typ not in CAPTURE_TYPES:
            p.error("captures", f"capture {name!r} has unknown type {typ!r} (allowed: {', '.join(CAPTURE_TYPES)})")
        if name == COMPONENT:   # a `where` on it reads the file's component
            p.error("captures", "'component' is reserved for the file's component")
    compiled = []
    if "patterns" in d:
        for j, pat in enumerate(p.items(d["patterns"], "patterns", 1)):
            c = _check_pattern(pat, captures, p, f"patterns[{j}]")
            if c is not None:
                compiled.append(c)
        if not d.get("examples"):
            p.error("examples", "a pattern symptom needs at least one example line")
    elif "fact" in d and d["fact"] not in FACTS:
        p.error("fact", f"unknown fact {d['fact']!r} (known: {', '.join(FACTS)})")
    for j, ex in enumerate(p.items(d.get("examples") or [], "examples")):
        if not isinstance(ex, str):
            p.error(f"examples[{j}]", "must be a string")
        elif compiled and not any(c.search(ex) for c in compiled):
            p.error(f"examples[{j}]", "is not matched by any of the patterns")


def _check_pattern(pat: Any, captures: dict[str, str], p: Problems, where: str) -> re.Pattern | None:
    if not isinstance(pat, str) or not pat:
        p.error(where, "must be a non-empty string")
        return None
    if UNSUPPORTED_RE.search(pat):
        p.error(where, "back-references and look-around are not supported")
    try:
        compiled = re.compile(pat)
    except re.error as exc:
        p.error(where, f"invalid regex: {exc}")
        return None
    if compiled.match(""):
        p.error(where, "matches the empty string")
    for name in compiled.groupindex:
        if name not in captures:
            p.error(where, f"named group {name!r} has no type in captures")
    return compiled


# --- runbook front matter -----------------------------------------------------

def check_runbook_meta(meta: dict[str, Any], p: Problems, library: dict[str, dict[str, Any]]) -> None:
    required = {k for k, req in TOP_KEYS.items() if req}
    if not p.keys(meta, set(TOP_KEYS), required, "front matter"):
        return
    slug = meta.get("slug")
    if not isinstance(slug, str) or not SLUG_RE.match(slug):
        p.error("slug", f"{slug!r} is not a kebab-case slug")
    p.text(meta.get("title"), "title", 100)
    p.text(meta.get("summary"), "summary")
    for c in p.items(meta.get("components"), "components", 1):
        if c not in COMPONENTS:
            p.error("components", f"unknown component {c!r} (allowed: {', '.join(COMPONENTS)})")
    if meta.get("severity") not in SEVERITIES:
        p.error("severity", f"must be one of {SEVERITIES}")
    for i, av in enumerate(p.items(meta.get("affected_versions") or [], "affected_versions")):
        where = f"affected_versions[{i}]"
        if not p.keys(av, {"component", "range", "note"}, {"component", "range"}, where):
            continue
        if av.get("component") not in VERSION_COMPONENTS:
            p.error(where, f"unknown version component {av.get('component')!r}")
        try:
            parse_range(str(av.get("range")))
        except ValueError as exc:
            p.error(where, str(exc))
    ids = _check_symptom_uses(meta.get("symptoms"), p, library)
    _check_relations(meta.get("relations") or [], ids, p)
    for i, sid in enumerate(p.items(meta.get("chain") or [], "chain")):
        if sid not in ids:
            p.error(f"chain[{i}]", f"unknown symptom id {sid!r}")
    check_leads_to(meta.get("leads_to") or [], slug, p)
    _check_knobs(meta.get("knobs") or [], p)
    _check_fixes(meta.get("fixes"), p)
    _check_references(meta, p)
    p.errors.extend(f"{p.path}: {w}: {m}" for w, m in check_fill(meta.get("fill", {}), meta.get("fixes"), library))


def _check_symptom_uses(symptoms: Any, p: Problems, library: dict[str, dict[str, Any]]) -> set[str]:
    ids: set[str] = set()
    uses = p.items(symptoms, "symptoms", 1)
    for i, s in enumerate(uses):
        where = f"symptoms[{i}]"
        if not isinstance(s, dict):
            p.error(where, "must be a mapping")
            continue
        sid = s.get("id")
        if not isinstance(sid, str) or not SLUG_RE.match(sid):
            p.error(where, f"id {sid!r} is not kebab-case")
            continue
        where = f"symptom '{sid}'"
        inline = sorted(set(s) & (SYMPTOM_DEF_KEYS - {"id"}))
        if inline:
            p.error(where, f"definition key(s) {inline} belong in runbooks/symptoms/{sid}.yaml; "
                           "a runbook lists only id, role, weight, group, where, veto, burst")
        p.keys({k: v for k, v in s.items() if k not in inline}, SYMPTOM_USE_KEYS | {"id"}, {"id", "role"}, where)
        if sid in ids:
            p.error(where, "listed twice")
        ids.add(sid)
        definition = library.get(sid)
        if definition is None:
            p.error(where, f"unknown symptom: no runbooks/symptoms/{sid}.yaml")
        role = s.get("role")
        if role not in ROLES:
            p.error(where, f"role must be one of {ROLES}")
        if "group" in s and (role != "required" or not isinstance(s["group"], str) or not s["group"]):
            p.error(where, "group (alternatives among required symptoms) needs role 'required' and a name")
        weight = s.get("weight", 0.0)
        if not isinstance(weight, (int, float)) or not 0 <= weight <= 1:
            p.error(where, "weight must be a number in [0, 1]")
        elif role == "excluding" and s.get("veto", True) and weight:
            p.warn(where, f"weight {weight} is never used: an excluding symptom vetoes the finding "
                          "(set veto: false to subtract the weight instead)")
        if "veto" in s and role != "excluding":
            p.warn(where, "veto only applies to excluding symptoms")
        _check_where(s, definition, p, where)
        check_burst(s.get("burst"), p, where)
    if uses and not any(isinstance(s, dict) and s.get("role") == "required" for s in uses):
        p.error("symptoms", "at least one symptom must have role 'required'")
    return ids


def _check_where(use: dict[str, Any], definition: dict[str, Any] | None, p: Problems, where: str) -> None:
    if definition is None or definition.get("invalid"):
        return  # reported already: the symptom file is missing or invalid
    captures = definition.get("captures") or {}
    is_fact = "fact" in definition
    for j, cond in enumerate(p.items(use.get("where") or [], f"{where}.where")):
        cw = f"{where}.where[{j}]"
        if not p.keys(cond, {"capture", "op", "value"}, {"capture", "op", "value"}, cw):
            continue
        if cond.get("op") not in OPS:
            p.error(cw, f"op must be one of {OPS}")
        name = cond.get("capture")
        if name == COMPONENT and cond.get("op") not in ("==", "!=", "contains", "matches"):   # a name
            p.error(cw, "component (the file's, analyzers/conditions.py) takes ==, !=, contains or matches")
        elif name != COMPONENT and name not in captures and not (is_fact and name in ("value", "key")):
            p.error(cw, f"capture {name!r} is not declared in the symptom's captures")


def _check_relations(relations: Any, ids: set[str], p: Problems) -> None:
    for i, r in enumerate(p.items(relations, "relations")):
        where = f"relations[{i}]"
        if not p.keys(r, RELATION_KEYS, {"first", "then"}, where):
            continue
        for k in ("first", "then"):
            if k in r and r[k] not in ids:
                p.error(where, f"{k} names unknown symptom {r[k]!r}")
        if "within" in r:
            try:
                parse_duration_ms(r["within"])
            except ValueError as exc:
                p.error(where, str(exc))
        if r.get("order", "after") not in ("after", "any"):
            p.error(where, "order must be 'after' or 'any'")
        if r.get("hosts", "any") not in ("same", "other", "any"):
            p.error(where, "hosts must be same, other or any")
        if r.get("role", "supporting") not in ("required", "supporting"):
            p.error(where, "role must be required or supporting")
        if not isinstance(weight := r.get("weight", 0.0), (int, float)) or not 0 <= weight <= 1:
            p.error(where, "weight must be a number in [0, 1]")


def _check_knobs(knobs: Any, p: Problems) -> None:
    for i, k in enumerate(p.items(knobs, "knobs")):
        where = f"knobs[{i}]"
        if not p.keys(k, KNOB_KEYS, {"key", "default", "recommended", "why"}, where):
            continue
        for fld in (f for f in ("key", "why") if f in k):
            p.text(k[fld], f"{where}.{fld}")
        for fld in (f for f in ("default", "recommended") if f in k and not isinstance(k[f], str)):
            p.error(f"{where}.{fld}", "must be a string (quote numbers and booleans)")


def _check_fixes(fixes: Any, p: Problems) -> None:
    for i, f in enumerate(p.items(fixes, "fixes", 1)):
        where = f"fixes[{i}]"
        if not p.keys(f, FIX_KEYS, {"title", "kind", "steps"}, where):
            continue
        if f.get("kind") not in FIX_KINDS:
            p.error(where, f"kind must be one of {FIX_KINDS}")
        for j, st in enumerate(p.items(f.get("steps"), f"{where}.steps", 1)):
            p.keys(st, STEP_KEYS, {"text"}, f"{where}.steps[{j}]")


def _check_references(meta: dict[str, Any], p: Problems) -> None:
    for i, t in enumerate(p.items(meta.get("tickets") or [], "tickets")):
        where = f"tickets[{i}]"
        if not p.keys(t, TICKET_KEYS, {"id", "title", "status"}, where):
            continue
        if t.get("status") not in TICKET_STATUSES:
            p.error(where, f"status must be one of {TICKET_STATUSES}")
        if "fixed_in" in t and not isinstance(t["fixed_in"], list):
            p.error(where, "fixed_in must be a list of version strings")
    for i, r in enumerate(p.items(meta.get("references") or [], "references")):
        p.keys(r, {"title", "url"}, {"title", "url"}, f"references[{i}]")
    for i, d in enumerate(p.items(meta.get("differential") or [], "differential")):
        p.keys(d, {"slug", "how"}, {"slug", "how"}, f"differential[{i}]")
