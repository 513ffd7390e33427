"""Draft a runbook from a lead (issue 12): the lead's line generalised into a symptom pattern,
and a runbook file around it whose cause, knobs and fixes the author writes.

The variable parts of a log line (ids, numbers, hosts and IPs, paths, hex, UUIDs, HDFS block,
YARN container and application ids, durations, timestamps) become named captures of their
kind, never `.*`; the rest is the process's own wording, escaped. The pattern starts at the
message's first literal word (never at an unbounded capture: runbooks/README.md "Patterns"),
must hold a literal of >= 4 characters for the prefilter (analyzers/literals.py), must match
the example and every other record given, and the files pass the runbook validator.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable

import yaml

from analyzers.literals import required_literals
from analyzers.runbook_checks import RunbookError
from analyzers.runbook_vocabulary import COMPONENTS, SLUG_RE
from analyzers.runbooks import dump_symptom, parse_runbook, parse_symptom
from analyzers.template_key import message_part

MIN_LITERAL = 4          # the prefilter needs a required literal this long (analyzers/literals.py)
MAX_MESSAGE = 240        # a longer message is cut at a word: its head names the phenomenon
TODO = "TODO"

# (kind, how it is found in the example, what the pattern accepts, capture type). Order matters:
# the more specific kind wins where two could read the same text (a container id holds numbers).
# "Found" regexes need a boundary on the left so a digit inside a word (psycopg2) stays literal.
_LEFT = r"(?<![\w.\-/:])"
_KINDS: tuple[tuple[str, str, str, str], ...] = (
    ("uuid", r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",
     r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}", "str"),
    ("container", r"container_(?:e\d+_)?\d+_\d+_\d+_\d+", r"container_(?:e\d+_)?\d+_\d+_\d+_\d+", "str"),
    ("attempt", r"appattempt_\d+_\d+_\d+", r"appattempt_\d+_\d+_\d+", "str"),
    ("application", r"application_\d+_\d+", r"application_\d+_\d+", "str"),
    ("job", r"job_\d+_\d+", r"job_\d+_\d+", "str"),
    ("block", r"blk_-?\d+(?:_\d+)?", r"blk_-?\d+(?:_\d+)?", "block"),
    ("time", _LEFT + r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?",
     r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?", "str"),
    ("url", _LEFT + r"[a-z][a-z0-9+.\-]*://[^\s\"',;)\]}]+", r"[a-z][a-z0-9+.\-]*://[^\s\"',;)\]}]+", "path"),
    # Java's InetSocketAddress: "host/10.0.0.5:9092" (either side may be empty).
    ("address", r"(?<![\w.\-:/])[a-zA-Z][\w\-]*(?:\.[\w\-]+)*/\d{1,3}(?:\.\d{1,3}){3}(?::\d{1,5})?(?![\w.])",
     r"[\w\-.]*/\d{1,3}(?:\.\d{1,3}){3}(?::\d{1,5})?", "host"),
    ("ip", r"(?<![\w.\-])\d{1,3}(?:\.\d{1,3}){3}(?::\d{1,5})?(?![\w.])", r"\d{1,3}(?:\.\d{1,3}){3}(?::\d{1,5})?", "host"),
    # host:port; a source file and its line ("Foo.java:42", "base.py:7") is no host.
    ("host", _LEFT + r"[a-zA-Z][\w\-]*(?:\.[\w\-]+)*(?<!\.java)(?<!\.scala)(?<!\.py)(?<!\.go)(?<!\.rb)(?<!\.kt):\d{2,5}(?!\d)",
     r"[\w\-.]+:\d{1,5}", "host"),
    ("path", r"(?<![\w.\-:/])/(?!\d{1,3}(?:\.\d{1,3}){3}(?![\w.]))[\w.\-]+(?:/[\w.\-]*)*", r"/[^\s\"',;:)\]}]*", "path"),
    ("hex", _LEFT + r"(?:0x[0-9a-fA-F]+|(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{12,})(?![\w])",
     r"(?:0x)?[0-9a-fA-F]+", "str"),
    ("duration", _LEFT + r"\d+(?:\.\d+)? ?(?:ns|us|ms|millis|milliseconds|seconds|secs|sec|s|minutes|min|m|hours|h)(?![\w])",
     r"\d+(?:\.\d+)? ?(?:ns|us|ms|millis|milliseconds|seconds|secs|sec|s|minutes|min|m|hours|h)", "str"),
    ("number", r"(?<![\w])-?\d+(?:\.\d+)?(?![\w])", r"-?\d+(?:\.\d+)?", "float"),
)
# What an example in the library shows for a value of the incident: the library is every team's,
# the incident's hosts, paths and ids are its team's (the draft runbook, seen by the team until
# published, and its fixture keep the real line). Each matches its kind's pattern above.
_NEUTRAL = {"uuid": "00000000-0000-0000-0000-000000000000", "container": "container_e01_1000000000000_0001_01_000001",
            "attempt": "appattempt_1000000000000_0001_000001", "application": "application_1000000000000_0001",
            "job": "job_1000000000000_0001", "block": "blk_1073741825_1001", "time": "2000-01-01T00:00:00.000",
            "url": "hdfs://namenode.example:8020/path", "address": "host.example/192.0.2.1:9092", "ip": "192.0.2.1",
            "host": "host.example:8020", "path": "/path/to/file", "hex": "0xdeadbeef"}
_FOUND = re.compile("|".join(f"(?P<{kind}>{found})" for kind, found, _, _ in _KINDS))
_ACCEPT = {kind: (accept, typ) for kind, _, accept, typ in _KINDS}
_SPACE = re.compile(r"\s+")


class DraftError(ValueError):
    """The lead cannot be generalised into a pattern the catalog accepts (said why)."""


@dataclass(frozen=True)
class Generalised:
    pattern: str
    captures: dict[str, str]       # capture name -> type (runbooks/README.md "Capture types")
    example: str                   # the message the pattern was made from
    neutral: str                   # the same with its hosts, paths, ids and times replaced (_NEUTRAL)


def generalise(line: str, others: Iterable[str] = ()) -> Generalised:
    """`line` (a lead's headline) as a symptom pattern matching it and each of `others`."""
    message = _cut(message_part(line))
    pieces: list[str] = []
    captures: dict[str, str] = {}
    neutral: list[str] = []
    at = 0
    for m in _FOUND.finditer(message):
        pieces.append(_literal(message[at:m.start()]))
        neutral += [message[at:m.start()], _NEUTRAL.get(m.lastgroup, m.group())]
        kind = m.lastgroup
        accept, typ = _ACCEPT[kind]
        name = kind if kind not in captures else f"{kind}_{sum(1 for n in captures if n.split('_')[0] == kind) + 1}"
        captures[name] = typ
        pieces.append(f"(?P<{name}>{accept})")
        at = m.end()
    pieces.append(_literal(message[at:]))
    neutral.append(message[at:])
    lines = [line, *others, "".join(neutral)]
    # Records of one template may end differently (a cut line, an optional tail): the pattern
    # keeps the longest head of the line that every record has.
    for end in range(len(pieces), 0, -1):
        pattern, kept = _renumbered(_from_first_literal(pieces[:end], dict(captures)), captures)
        if pattern and all(re.search(pattern, ln) for ln in lines):
            break
    else:
        pattern, kept = _renumbered(_from_first_literal(pieces, dict(captures)), captures)
    pattern = pattern[:-3] if pattern.endswith(r"\s+") else pattern
    _check(pattern, kept, lines)
    return Generalised(pattern, kept, message, "".join(neutral))


def _renumbered(pattern: str, captures: dict[str, str]) -> tuple[str, dict[str, str]]:
    """number, number_2, ... in the order they occur, once leading captures are gone."""
    seen: dict[str, int] = {}
    renamed: dict[str, str] = {}

    def rename(m: re.Match) -> str:
        kind = m.group(1).split("_")[0]
        seen[kind] = seen.get(kind, 0) + 1
        name = kind if seen[kind] == 1 else f"{kind}_{seen[kind]}"
        renamed[name] = captures[m.group(1)]
        return f"(?P<{name}>"
    return re.sub(r"\(\?P<(\w+)>", rename, pattern), renamed


def _cut(message: str) -> str:
    if len(message) <= MAX_MESSAGE:
        return message
    head = message[:MAX_MESSAGE]
    return head[:head.rfind(" ")] if " " in head else head


def _literal(text: str) -> str:
    """Escaped wording; a run of blanks matches any run (aligned columns differ by line)."""
    return r"\s+".join(re.escape(part) for part in _SPACE.split(text)) if text else ""


def _from_first_literal(pieces: list[str], captures: dict[str, str]) -> str:
    """Start at the first literal with a word in it: `re.search` needs no anchor before, and a
    pattern may not begin with an unbounded capture (a "+0800 " or "#0 " left of the wording is
    a header's tail, not the phenomenon)."""
    i = 0
    while i < len(pieces) and not (not pieces[i].startswith("(?P<") and re.search(r"[A-Za-z]{2}", pieces[i])):
        m = re.match(r"\(\?P<(\w+)>", pieces[i])
        if m:
            captures.pop(m.group(1), None)
        i += 1
    pattern = "".join(pieces[i:])
    while pattern.startswith("\\s+"):
        pattern = pattern[3:]
    return pattern


def _check(pattern: str, captures: dict[str, str], lines: list[str]) -> None:
    if not pattern:
        raise DraftError("the line has no wording of its own to match (only ids, numbers and times)")
    literals = required_literals(pattern)
    if not literals or min(len(s.strip()) for s in literals) < MIN_LITERAL:
        raise DraftError(f"the pattern {pattern!r} holds no literal of {MIN_LITERAL}+ characters for the prefilter")
    compiled = re.compile(pattern)
    missed = [ln for ln in lines if not compiled.search(ln)]
    if missed:
        raise DraftError(f"the pattern {pattern!r} does not match {missed[0][:200]!r}")
    unused = set(captures) - set(compiled.groupindex)
    for name in unused:
        captures.pop(name)


# --- the draft files ----------------------------------------------------------------------

def draft_slug(component: str, template: str, taken: Iterable[str] = ()) -> str:
    """component + the template's first words, kebab-case, made unique against `taken`."""
    message = re.sub(r"<\w+>|\[[^\]]*\]|\S*[/\\]\S*", " ", message_part(template))
    # A logger or exception class names itself by its last part (master.HMaster -> hmaster).
    message = re.sub(r"\b(?:[A-Za-z_]\w*\.)+([A-Za-z_]\w*)", r"\1", message)
    words = [w.lower() for w in re.findall(r"[A-Za-z][A-Za-z]+", message)]
    stop = {"the", "a", "an", "of", "to", "in", "at", "for", "and", "or", "is", "was", "on", "with", component}
    words = [w for w in words if w not in stop][:5]
    base = "-".join([component, *words])[:60].strip("-") or component
    taken = set(taken)
    slug, n = base, 2
    while slug in taken:
        slug, n = f"{base}-{n}", n + 1
    assert SLUG_RE.match(slug), slug
    return slug


def component_of(lead: dict[str, Any], hint: str | None = None) -> str:
    """The component the lead's file or text names (the catalog's vocabulary), else os."""
    if hint in COMPONENTS:
        return hint
    haystack = f"{lead.get('path', '')} {lead.get('text', '')[:2000]}".lower()
    for name in ("flink", "hbase", "zookeeper", "kafka", "spark", "hive", "yarn", "hdfs", "k8s", "kernel"):
        if name in haystack:
            return name
    if "org.apache.hadoop.hdfs" in haystack or "namenode" in haystack or "datanode" in haystack:
        return "hdfs"
    return "jvm" if "java." in haystack or "exception" in haystack else "os"


@dataclass(frozen=True)
class Draft:
    slug: str
    symptom_id: str
    symptom_text: str              # runbooks/symptoms/<symptom_id>.yaml
    runbook_text: str              # runbooks/<slug>.md
    fixture_lines: list[str]       # the lead's record (and its context): the positive fixture


def draft_runbook(lead: dict[str, Any], *, incident: str, taken: Iterable[str] = (),
                  taken_symptoms: Iterable[str] = (), component: str | None = None,
                  others: Iterable[str] = ()) -> Draft:
    """A runbook draft (and its library symptom) from one lead of a result (docs/contract.md
    "leads"); `incident` names where the lead was seen (its SOURCE), `taken` the runbook slugs and
    `taken_symptoms` the library's ids in use; `others` more records of the lead's template."""
    headline = lead.get("headline") or lead["text"].split("\n", 1)[0]
    general = generalise(headline, others)
    comp = component_of(lead, component)
    slug = draft_slug(comp, lead.get("template") or headline, taken)
    symptom_id = draft_slug(comp, lead.get("template") or headline, taken_symptoms)
    level = _level(lead)
    # The library is every team's: its example is the line with neutral values, its source says
    # no more than where it came from in kind (the runbook and its fixture name the incident).
    symptom = {"id": symptom_id, "title": _title(general.neutral, 200), "patterns": [general.pattern],
               "captures": general.captures, **({"level": level} if level else {}),
               "examples": [general.neutral], "sources": [f"drafted from a lead of an incident (runbook {slug})"]}
    symptom_text = dump_symptom(symptom)
    library = {symptom_id: parse_symptom(symptom_text, f"runbooks/symptoms/{symptom_id}.yaml", symptom_id)}
    meta = {"slug": slug, "title": _title(general.neutral, 100),
            "summary": f"{TODO}: the root cause, in 1-3 sentences (drafted from {incident}).",
            "components": [comp], "severity": "medium",
            "symptoms": [{"id": symptom_id, "role": "required", "weight": 0.6}],
            "fixes": [{"title": f"{TODO}: the fix", "kind": "diagnosis",
                       "steps": [{"text": f"{TODO}: how to confirm the cause, then how to fix it."}]}]}
    body = (f"## Summary\n\n{TODO}: what went wrong and why.\n\n"
            f"## Evidence\n\nSeen in {incident}, `{lead.get('path')}` line {lead.get('line')} "
            f"({lead.get('reason') or 'a lead'}):\n\n```\n{lead['text']}\n```\n\n"
            f"## Root cause\n\n{TODO}\n\n## Knobs\n\n{TODO}: the settings involved, their defaults checked in "
            f"upstream source (tag and path).\n\n## Resolution\n\n{TODO}\n")
    front = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=100)
    runbook_text = f"---\n{front}---\n{body}"
    parse_runbook(runbook_text, f"runbooks/{slug}.md", expected_slug=slug, library=library)
    return Draft(slug, symptom_id, symptom_text, runbook_text, lead["text"].split("\n"))


def _level(lead: dict[str, Any]) -> str | None:
    m = re.search(r"\b(FATAL|ERROR|WARN|INFO)\b", lead.get("headline") or "")
    return m.group(1) if m else None


def _title(message: str, limit: int) -> str:
    title = _SPACE.sub(" ", message).strip()
    return title if len(title) <= limit else title[:limit - 3].rsplit(" ", 1)[0] + "..."


__all__ = ["Draft", "DraftError", "Generalised", "RunbookError", "component_of", "draft_runbook", "draft_slug",
           "generalise"]
