"""Fix steps written with the incident's own values (the path, host, WAL or
session the bundle names) instead of the runbook's placeholders.

A runbook's optional `fill:` map (runbooks/README.md) says where each
placeholder of its fix steps is found in a bundle:

    fill:
      /path/to/sink/dir: {symptom: hdfs-datastreamer-thread-alive, take: dir}
      /hbase/WALs/<server>/<wal>: {symptom: hbase-wal-failed-log-close, capture: wal, take: path}
      <writer-host>: {symptom: hdfs-close-interrupted-waiting-for-acks, field: host}
      /path/to/file:                   # a list: the first source with a value wins
        - {symptom: hdfs-fsck-openforwrite, capture: path}
        - {symptom: hdfs-datastreamer-thread-alive, capture: value, take: path}

The value comes from the first evidence record of `symptom` (the finding's
own evidence first, then the rest of the result): its `field` (host, path,
timestamp), or its named `capture` (from the record's `captures` when the
result has them, else the symptom's patterns matched again on the record's
text; a fact symptom's `value` is its record's text), or the whole text;
`take` then keeps the value as it is, or the first absolute path or URI in
it as a path (`path`), its folder (`dir`) or its last part (`name`), or the
YARN application a container, attempt, job or application id in it belongs to
(`app_id`: container_e17_1456890000000_0212_01_000007 -> application_1456890000000_0212),
or the first YARN container id in it (`container_id`).

`fill_fixes` returns every step as parts to render: literal text, a filled
value with where it came from, and placeholders the bundle had no value for
(declared ones and the usual `<word>` / `/path/to/...` forms), so a page can
mark those. Pure functions: no Django, no I/O.
"""

from __future__ import annotations

import posixpath
import re
from typing import Any, Iterable

FILL_KEYS = {"symptom", "capture", "field", "take"}
FIELDS = ("host", "path", "timestamp")
TAKES = ("value", "path", "dir", "name", "app_id", "container_id")
# <server>, <tm-pid>, <http-port>; an XML tag is not a placeholder (see _generic).
ANGLE_RE = re.compile(r"<([A-Za-z][\w.-]*)>")
PATH_PLACEHOLDER_RE = re.compile(r"/path/to/[\w./-]*\w")
# An absolute path, or the path of a URI (hdfs://ns1/a/b -> /a/b); stops at blanks, quotes and
# brackets. Commas stay inside (HBase WAL folders are "host,port,startcode"), not at the end.
PATH_RE = re.compile(r"(?:[a-z][a-z0-9+.-]*://[^/\s\"']*)?(/[^\s\"';()\[\]]+)")
# A YARN id: its cluster timestamp and application number name the application (`yarn logs
# -applicationId` wants that form, the logs mostly name a container or a task attempt).
YARN_ID_RE = re.compile(r"\b(?:application|app|job|attempt|container(?:_e\d+)?)_(\d{10,})_(\d+)")
CONTAINER_RE = re.compile(r"\bcontainer(?:_e\d+)?_\d{10,}_\d+_\d+_\d+")


def check_fill(fill: Any, fixes: Any, symptom_ids: set[str] | dict[str, dict[str, Any]]) -> list[tuple[str, str]]:
    """Problems of a runbook's `fill:` map as (where, what); [] when it is valid.
    `fixes` are the runbook's fixes (each placeholder must occur in a step),
    `symptom_ids` the library's ids, or the library itself (id -> definition):
    then a `capture` must also be one the symptom has."""
    if not isinstance(fill, dict):
        return [("fill", "must be a mapping placeholder -> {symptom, capture|field, take}")]
    steps = " ".join(f"{st.get('text', '')} {st.get('command', '')}" for f in fixes or [] if isinstance(f, dict)
                     for st in f.get("steps") or [] if isinstance(st, dict))
    problems = []
    for key, sources in fill.items():
        where = f"fill[{key!r}]"
        if not isinstance(key, str) or not key.strip():
            problems.append((where, "the placeholder must be a non-empty string"))
        elif key not in steps:
            problems.append((where, "no fix step uses this placeholder"))
        for src in sources if isinstance(sources, list) and sources else [sources]:
            problems += _check_source(src, symptom_ids, where)
    return problems


def _check_source(src: Any, symptom_ids: set[str] | dict[str, dict[str, Any]], where: str) -> list[tuple[str, str]]:
    problems = []
    if not isinstance(src, dict):
        return [(where, "must be a mapping {symptom, capture|field, take} or a list of them")]
    unknown = set(src) - FILL_KEYS
    if unknown:
        problems.append((where, f"unknown key(s) {sorted(unknown)}"))
    if src.get("symptom") not in symptom_ids:
        problems.append((where, f"unknown symptom {src.get('symptom')!r}"))
    if "capture" in src and "field" in src:
        problems.append((where, "give capture or field, not both"))
    if "field" in src and src["field"] not in FIELDS:
        problems.append((where, f"field must be one of {FIELDS}"))
    if src.get("take", "value") not in TAKES:
        problems.append((where, f"take must be one of {TAKES}"))
    definition = symptom_ids.get(src.get("symptom")) if isinstance(symptom_ids, dict) else None
    if definition is not None and "capture" in src and src["capture"] not in capture_names(definition):
        problems.append((where, f"symptom {src['symptom']!r} has no capture {src['capture']!r} "
                                f"(it has {sorted(capture_names(definition))})"))
    return problems


def capture_names(definition: dict[str, Any]) -> set[str]:
    """The captures a symptom's records can have: its patterns' named groups, or a
    fact symptom's declared captures (a misspelt `capture:` would never fill)."""
    if "patterns" not in definition:
        return set(definition.get("captures") or {}) | {"value"}
    names: set[str] = set()
    for pattern in definition.get("patterns") or []:
        try:
            names |= set(re.compile(pattern).groupindex)
        except (re.error, TypeError):
            continue
    return names


def first_path(value: str) -> str | None:
    """The first absolute path in `value`, a URI's path without scheme and authority.

    >>> first_path('"DataStreamer for file /data/x/tmp-part-0-6.in-progress" #107220')
    '/data/x/tmp-part-0-6.in-progress'
    >>> first_path('FailedLogCloseException: hdfs://ns1/hbase/WALs/rs,1/rs.1, unflushedEntries=61')
    '/hbase/WALs/rs,1/rs.1'
    """
    m = PATH_RE.search(value)
    return m.group(1).rstrip(",.:") if m else None


def _take(value: Any, how: str) -> str | None:
    if value is None or value == "":
        return None
    text = str(value)
    if how == "value":
        return text
    if how == "app_id":
        m = YARN_ID_RE.search(text)
        return f"application_{m.group(1)}_{m.group(2)}" if m else None
    if how == "container_id":
        m = CONTAINER_RE.search(text)
        return m.group(0) if m else None
    path = first_path(text)
    if path is None and how == "name" and not re.search(r"\s", text):
        return posixpath.basename(text.rstrip("/")) or None    # a bundle file at the top: "client.log"
    if path is None:
        return None
    if how == "dir":
        parent = posixpath.dirname(path.rstrip("/"))
        return parent if parent not in ("", "/") else None
    if how == "name":
        return posixpath.basename(path.rstrip("/")) or None
    return path


def record_captures(record: dict[str, Any], patterns: list[str]) -> dict[str, Any]:
    """The named captures of a record: its own when the result has them, else
    those of the first of its symptom's patterns that matches its text."""
    if isinstance(record.get("captures"), dict):
        return record["captures"]
    text = str(record.get("text") or "")
    for pattern in patterns:
        try:
            m = re.search(pattern, text)
        except re.error:
            continue
        if m:
            return {k: v for k, v in m.groupdict().items() if v is not None}
    return {"value": text} if not patterns else {}


def resolve(sources: Any, records: list[dict[str, Any]],
            library: dict[str, dict[str, Any]]) -> tuple[str, dict[str, Any]] | None:
    """(value, the record it came from) from the first of `sources` (one
    source or a list) that has a value in `records`, or None."""
    for src in sources if isinstance(sources, list) else [sources]:
        found = _resolve_one(src, records, library) if isinstance(src, dict) else None
        if found:
            return found
    return None


def _resolve_one(src: dict[str, Any], records: Iterable[dict[str, Any]],
                 library: dict[str, dict[str, Any]]) -> tuple[str, dict[str, Any]] | None:
    patterns = list((library.get(src.get("symptom")) or {}).get("patterns") or [])
    for record in records:
        if record.get("symptom") != src.get("symptom"):
            continue
        if "field" in src:
            raw = record.get(src["field"])
        elif "capture" in src:
            raw = record_captures(record, patterns).get(src["capture"])
        else:
            raw = record.get("text")
        value = _take(raw, src.get("take", "value"))
        if value:
            return value, record
    return None


def _generic(text: str) -> list[tuple[int, int]]:
    """Spans of placeholders nobody declared: <word> (not an XML tag whose
    </word> is in the same text) and /path/to/... forms."""
    spans = [m.span() for m in PATH_PLACEHOLDER_RE.finditer(text)]
    for m in ANGLE_RE.finditer(text):
        if f"</{m.group(1)}>" not in text:
            spans.append(m.span())
    return spans


def fill_text(text: str, values: dict[str, tuple[str, dict[str, Any]] | None]) -> list[dict[str, Any]]:
    """`text` as parts: {"text"} literal, {"text", "filled": True, "placeholder", "source"}
    and {"text", "missing": True} for a placeholder left because the bundle has no value."""
    spans: list[tuple[int, int, str | None]] = []
    taken = [False] * len(text)
    for key in sorted(values, key=len, reverse=True):          # the longest placeholder wins
        for m in re.finditer(re.escape(key), text):
            if not any(taken[m.start():m.end()]):
                spans.append((m.start(), m.end(), key))
                taken[m.start():m.end()] = [True] * (m.end() - m.start())
    for start, end in _generic(text):
        if not any(taken[start:end]):
            spans.append((start, end, None))
            taken[start:end] = [True] * (end - start)
    parts, pos = [], 0
    for start, end, key in sorted(spans):
        if start > pos:
            parts.append({"text": text[pos:start]})
        found = values.get(key) if key is not None else None
        if found:
            value, record = found
            parts.append({"text": value, "filled": True, "placeholder": text[start:end],
                          "source": f"{record.get('path')}:{record.get('line')}"})
        else:
            parts.append({"text": text[start:end], "missing": True})
        pos = end
    if pos < len(text):
        parts.append({"text": text[pos:]})
    return parts


def knob_note(command: str, knobs: list[dict[str, Any]], files: list[dict[str, Any]]) -> str:
    """For a command that sets a knob the bundle's configs hold: "now 5 in conf/hdfs-site.xml"."""
    for knob in knobs or []:
        if knob.get("key") and knob.get("found") is not None and knob["key"] in command:
            wanted = posixpath.basename(str(knob.get("file") or "").split(" ")[0])
            where = [f["path"] for f in files or [] if f.get("kind") == "config"
                     and (not wanted or posixpath.basename(f.get("path", "")) == wanted)]
            return f"{knob['key']} is {knob['found']} in this bundle" + (f" ({', '.join(where[:3])})" if where else "")
    return ""


def fill_fixes(fix_steps: list[dict[str, Any]], fill: dict[str, Any] | None,
               records: list[dict[str, Any]], library: dict[str, dict[str, Any]],
               knobs: list[dict[str, Any]] | None = None,
               files: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """The fixes with every step's text and command as parts (see fill_text),
    `command` as the filled string to copy, `missing` the placeholders left,
    and `knob` a note on the value the bundle's configs hold."""
    values = {key: resolve(src, records, library) for key, src in (fill or {}).items()}
    out = []
    for fix in fix_steps or []:
        steps = []
        for step in fix.get("steps") or []:
            text_parts = fill_text(str(step.get("text") or ""), values)
            command = str(step.get("command") or "")
            command_parts = fill_text(command, values) if command else []
            steps.append({
                "text": "".join(p["text"] for p in text_parts), "text_parts": text_parts,
                "command": "".join(p["text"] for p in command_parts), "command_parts": command_parts,
                "missing": [p["text"] for p in text_parts + command_parts if p.get("missing")],
                "filled": [p for p in text_parts + command_parts if p.get("filled")],
                "knob": knob_note(command, knobs or [], files or []) if command else "",
            })
        out.append({**fix, "steps": steps})
    return out
