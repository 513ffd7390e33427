"""Load and validate runbook files (runbooks/<slug>.md, see runbooks/README.md).

Plain Python: the CLI and the Django sync command both call load_runbooks().
Validation is strict on purpose: an unknown key is usually a typo that would
silently disable a signature.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from analyzers.versions import parse_range

SEVERITIES = ("low", "medium", "high", "critical")
COMPONENTS = (
    "hdfs", "yarn", "flink", "hbase", "zookeeper", "kafka", "spark", "hive",
    "kernel", "jvm", "os", "k8s",
)
VERSION_COMPONENTS = ("hadoop", "flink", "hbase", "zookeeper", "kafka", "spark", "kernel", "curator")
ROLES = ("required", "supporting", "excluding")
CAPTURE_TYPES = ("ms", "s", "bytes", "count", "int", "float", "path", "block", "host", "str")
OPS = ("==", "!=", ">", ">=", "<", "<=", "contains", "matches")
FIX_KINDS = ("mitigation", "permanent", "diagnosis")
TICKET_STATUSES = ("fixed", "open", "wontfix", "unknown")
FACTS = ("config", "gc.pause", "netstat.time_wait", "jstack.thread")
SLUG_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
DURATION_RE = re.compile(r"^(\d+(?:\.\d+)?)\s*(ms|s|m|h)$")
# Hyperscan has no back-references or look-around; refuse them up front.
UNSUPPORTED_RE = re.compile(r"\\[1-9]|\(\?<?[=!]|\(\?P=")

TOP_KEYS = {
    "slug": True, "title": True, "summary": True, "components": True, "severity": True,
    "symptoms": True, "fixes": True, "affected_versions": False, "relations": False,
    "chain": False, "knobs": False, "tickets": False, "references": False, "differential": False,
}
SYMPTOM_DEF_KEYS = {"id", "title", "patterns", "fact", "captures", "level", "examples", "sources", "description"}
SYMPTOM_USE_KEYS = {"role", "weight", "where", "veto", "group"}
RELATION_KEYS = {"first", "then", "within", "order", "hosts", "role", "weight", "why"}
KNOB_KEYS = {"key", "component", "file", "default", "defaults", "recommended", "why"}
FIX_KEYS = {"title", "kind", "steps"}
STEP_KEYS = {"text", "command"}
TICKET_KEYS = {"id", "title", "status", "affected", "fixed_in", "url"}


class RunbookError(ValueError):
    """An invalid runbook file; the message names the file and the problem."""


@dataclass
class Runbook:
    slug: str
    meta: dict[str, Any]
    body: str
    path: str = ""

    @property
    def title(self) -> str:
        return self.meta["title"]

    @property
    def symptoms(self) -> list[dict[str, Any]]:
        return self.meta["symptoms"]


@dataclass
class Catalog:
    runbooks: dict[str, Runbook] = field(default_factory=dict)

    def symptom_users(self) -> dict[str, list[str]]:
        """Symptom id -> slugs that list it as required or supporting."""
        users: dict[str, list[str]] = {}
        for rb in self.runbooks.values():
            for s in rb.symptoms:
                if s.get("role", "supporting") != "excluding":
                    users.setdefault(s["id"], []).append(rb.slug)
        return users

    def symptom_definitions(self) -> dict[str, dict[str, Any]]:
        defs: dict[str, dict[str, Any]] = {}
        for rb in self.runbooks.values():
            for s in rb.symptoms:
                defs.setdefault(s["id"], {k: s[k] for k in SYMPTOM_DEF_KEYS if k in s})
        return defs


def split_front_matter(text: str, path: str = "<text>") -> tuple[dict[str, Any], str]:
    if not text.startswith("---"):
        raise RunbookError(f"{path}: does not start with '---' (YAML front matter)")
    parts = re.split(r"^---\s*$", text, maxsplit=2, flags=re.M)
    if len(parts) < 3:
        raise RunbookError(f"{path}: front matter is not closed by a '---' line")
    try:
        meta = yaml.safe_load(parts[1])
    except yaml.YAMLError as exc:
        raise RunbookError(f"{path}: invalid YAML: {exc}") from None
    if not isinstance(meta, dict):
        raise RunbookError(f"{path}: front matter must be a mapping")
    return meta, parts[2].lstrip("\n")


def parse_runbook(text: str, path: str = "<text>", expected_slug: str | None = None) -> Runbook:
    meta, body = split_front_matter(text, path)
    validate_meta(meta, path)
    if expected_slug is not None and meta["slug"] != expected_slug:
        raise RunbookError(f"{path}: slug '{meta['slug']}' does not match the file name '{expected_slug}'")
    return Runbook(slug=meta["slug"], meta=meta, body=body, path=path)


def dump_runbook(meta: dict[str, Any], body: str) -> str:
    """The inverse of parse_runbook: front matter + body, in the file format."""
    front = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=100)
    return f"---\n{front}---\n{body}"


def load_runbooks(directory: str | Path) -> Catalog:
    directory = Path(directory)
    catalog = Catalog()
    files = sorted(p for p in directory.glob("*.md") if p.name.lower() != "readme.md")
    for p in files:
        rb = parse_runbook(p.read_text(encoding="utf-8"), str(p), expected_slug=p.stem)
        catalog.runbooks[rb.slug] = rb
    check_catalog(catalog)
    return catalog


def check_catalog(catalog: Catalog) -> None:
    """Cross-file checks: a shared symptom id has one definition."""
    seen: dict[str, tuple[str, dict[str, Any]]] = {}
    for rb in catalog.runbooks.values():
        for s in rb.symptoms:
            ident = {k: s.get(k) for k in ("patterns", "fact", "captures")}
            if s["id"] in seen and seen[s["id"]][1] != ident:
                raise RunbookError(
                    f"{rb.path}: symptom '{s['id']}' is defined differently in {seen[s['id']][0]} "
                    "(patterns, fact and captures of a shared symptom must be identical)"
                )
            seen.setdefault(s["id"], (rb.path, ident))
        for d in rb.meta.get("differential") or []:
            if d["slug"] not in catalog.runbooks:
                raise RunbookError(f"{rb.path}: differential names unknown runbook '{d['slug']}'")


# --- validation of one file -------------------------------------------------

def _fail(path: str, where: str, msg: str) -> RunbookError:
    return RunbookError(f"{path}: {where}: {msg}")


def _check_keys(obj: Any, allowed: set[str], required: set[str], path: str, where: str) -> None:
    if not isinstance(obj, dict):
        raise _fail(path, where, "must be a mapping")
    unknown = set(obj) - allowed
    if unknown:
        raise _fail(path, where, f"unknown key(s) {sorted(unknown)}")
    missing = required - set(obj)
    if missing:
        raise _fail(path, where, f"missing key(s) {sorted(missing)}")


def _check_str(value: Any, path: str, where: str, max_len: int | None = None) -> None:
    if not isinstance(value, str) or not value.strip():
        raise _fail(path, where, "must be a non-empty string")
    if max_len and len(value) > max_len:
        raise _fail(path, where, f"longer than {max_len} characters")


def _check_list(value: Any, path: str, where: str, min_len: int = 0) -> list:
    if not isinstance(value, list) or len(value) < min_len:
        raise _fail(path, where, f"must be a list with at least {min_len} item(s)")
    return value


def parse_duration_ms(text: str) -> float:
    m = DURATION_RE.match(str(text).strip())
    if not m:
        raise ValueError(f"bad duration {text!r} (use e.g. 500ms, 30s, 10m, 2h)")
    n, unit = float(m.group(1)), m.group(2)
    return n * {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000}[unit]


def validate_meta(meta: dict[str, Any], path: str) -> None:
    allowed = set(TOP_KEYS)
    required = {k for k, req in TOP_KEYS.items() if req}
    _check_keys(meta, allowed, required, path, "front matter")
    slug = meta["slug"]
    if not isinstance(slug, str) or not SLUG_RE.match(slug):
        raise _fail(path, "slug", f"{slug!r} is not a kebab-case slug")
    _check_str(meta["title"], path, "title", 100)
    _check_str(meta["summary"], path, "summary")
    comps = _check_list(meta["components"], path, "components", 1)
    for c in comps:
        if c not in COMPONENTS:
            raise _fail(path, "components", f"unknown component {c!r} (allowed: {', '.join(COMPONENTS)})")
    if meta["severity"] not in SEVERITIES:
        raise _fail(path, "severity", f"must be one of {SEVERITIES}")
    for i, av in enumerate(meta.get("affected_versions") or []):
        where = f"affected_versions[{i}]"
        _check_keys(av, {"component", "range", "note"}, {"component", "range"}, path, where)
        if av["component"] not in VERSION_COMPONENTS:
            raise _fail(path, where, f"unknown version component {av['component']!r}")
        try:
            parse_range(str(av["range"]))
        except ValueError as exc:
            raise _fail(path, where, str(exc)) from None
    ids = _validate_symptoms(meta["symptoms"], path)
    _validate_relations(meta.get("relations") or [], ids, path)
    for i, sid in enumerate(meta.get("chain") or []):
        if sid not in ids:
            raise _fail(path, f"chain[{i}]", f"unknown symptom id {sid!r}")
    for i, k in enumerate(meta.get("knobs") or []):
        where = f"knobs[{i}]"
        _check_keys(k, KNOB_KEYS, {"key", "default", "recommended", "why"}, path, where)
        for fld in ("key", "why"):
            _check_str(k[fld], path, f"{where}.{fld}")
        for fld in ("default", "recommended"):
            if not isinstance(k[fld], str):
                raise _fail(path, f"{where}.{fld}", "must be a string (quote numbers and booleans)")
    fixes = _check_list(meta["fixes"], path, "fixes", 1)
    for i, f in enumerate(fixes):
        where = f"fixes[{i}]"
        _check_keys(f, FIX_KEYS, {"title", "kind", "steps"}, path, where)
        if f["kind"] not in FIX_KINDS:
            raise _fail(path, where, f"kind must be one of {FIX_KINDS}")
        for j, st in enumerate(_check_list(f["steps"], path, f"{where}.steps", 1)):
            _check_keys(st, STEP_KEYS, {"text"}, path, f"{where}.steps[{j}]")
    for i, t in enumerate(meta.get("tickets") or []):
        where = f"tickets[{i}]"
        _check_keys(t, TICKET_KEYS, {"id", "title", "status"}, path, where)
        if t["status"] not in TICKET_STATUSES:
            raise _fail(path, where, f"status must be one of {TICKET_STATUSES}")
        if "fixed_in" in t and not isinstance(t["fixed_in"], list):
            raise _fail(path, where, "fixed_in must be a list of version strings")
    for i, r in enumerate(meta.get("references") or []):
        _check_keys(r, {"title", "url"}, {"title", "url"}, path, f"references[{i}]")
    for i, d in enumerate(meta.get("differential") or []):
        _check_keys(d, {"slug", "how"}, {"slug", "how"}, path, f"differential[{i}]")


def _validate_symptoms(symptoms: Any, path: str) -> set[str]:
    symptoms = _check_list(symptoms, path, "symptoms", 1)
    ids: set[str] = set()
    for i, s in enumerate(symptoms):
        where = f"symptoms[{i}]"
        _check_keys(s, SYMPTOM_DEF_KEYS | SYMPTOM_USE_KEYS, {"id", "title", "role"}, path, where)
        sid = s["id"]
        if not isinstance(sid, str) or not SLUG_RE.match(sid):
            raise _fail(path, where, f"id {sid!r} is not kebab-case")
        if sid in ids:
            raise _fail(path, where, f"symptom id {sid!r} listed twice")
        ids.add(sid)
        where = f"symptom '{sid}'"
        if s["role"] not in ROLES:
            raise _fail(path, where, f"role must be one of {ROLES}")
        if "group" in s and (s["role"] != "required" or not isinstance(s["group"], str) or not s["group"]):
            raise _fail(path, where, "group (alternatives among required symptoms) needs role 'required' and a name")
        weight = s.get("weight", 0.0)
        if not isinstance(weight, (int, float)) or not 0 <= weight <= 1:
            raise _fail(path, where, "weight must be a number in [0, 1]")
        if ("patterns" in s) == ("fact" in s):
            raise _fail(path, where, "needs exactly one of 'patterns' or 'fact'")
        captures = s.get("captures") or {}
        if not isinstance(captures, dict):
            raise _fail(path, where, "captures must be a mapping name -> type")
        for name, typ in captures.items():
            if typ not in CAPTURE_TYPES:
                raise _fail(path, where, f"capture {name!r} has unknown type {typ!r}")
        if "patterns" in s:
            for j, pat in enumerate(_check_list(s["patterns"], path, f"{where}.patterns", 1)):
                _check_pattern(pat, captures, path, f"{where}.patterns[{j}]")
        elif s["fact"] not in FACTS:
            raise _fail(path, where, f"unknown fact {s['fact']!r} (known: {', '.join(FACTS)})")
        for j, cond in enumerate(s.get("where") or []):
            cw = f"{where}.where[{j}]"
            _check_keys(cond, {"capture", "op", "value"}, {"capture", "op", "value"}, path, cw)
            if cond["op"] not in OPS:
                raise _fail(path, cw, f"op must be one of {OPS}")
            if cond["capture"] not in captures and not ("fact" in s and cond["capture"] in ("value", "key")):
                raise _fail(path, cw, f"capture {cond['capture']!r} is not declared in captures")
        for j, ex in enumerate(s.get("examples") or []):
            if "patterns" in s and not any(re.search(p, ex) for p in s["patterns"]):
                raise _fail(path, f"{where}.examples[{j}]", "is not matched by any of the patterns")
    if not any(s["role"] == "required" for s in symptoms):
        raise _fail(path, "symptoms", "at least one symptom must have role 'required'")
    return ids


def _check_pattern(pat: Any, captures: dict[str, str], path: str, where: str) -> None:
    if not isinstance(pat, str) or not pat:
        raise _fail(path, where, "must be a non-empty string")
    if UNSUPPORTED_RE.search(pat):
        raise _fail(path, where, "back-references and look-around are not supported")
    try:
        compiled = re.compile(pat)
    except re.error as exc:
        raise _fail(path, where, f"invalid regex: {exc}") from None
    if compiled.match(""):
        raise _fail(path, where, "matches the empty string")
    for name in compiled.groupindex:
        if name not in captures:
            raise _fail(path, where, f"named group {name!r} has no type in captures")


def _validate_relations(relations: Any, ids: set[str], path: str) -> None:
    for i, r in enumerate(_check_list(relations, path, "relations")):
        where = f"relations[{i}]"
        _check_keys(r, RELATION_KEYS, {"first", "then"}, path, where)
        for k in ("first", "then"):
            if r[k] not in ids:
                raise _fail(path, where, f"{k} names unknown symptom {r[k]!r}")
        if "within" in r:
            try:
                parse_duration_ms(r["within"])
            except ValueError as exc:
                raise _fail(path, where, str(exc)) from None
        if r.get("order", "after") not in ("after", "any"):
            raise _fail(path, where, "order must be 'after' or 'any'")
        if r.get("hosts", "any") not in ("same", "other", "any"):
            raise _fail(path, where, "hosts must be same, other or any")
        if r.get("role", "supporting") not in ("required", "supporting"):
            raise _fail(path, where, "role must be required or supporting")


if __name__ == "__main__":  # python -m analyzers.runbooks [DIR]: validate, one line per problem
    import sys

    try:
        cat = load_runbooks(sys.argv[1] if len(sys.argv) > 1 else "runbooks")
    except RunbookError as exc:
        print(exc, file=sys.stderr)
        sys.exit(1)
    print(f"{len(cat.runbooks)} runbooks OK")
