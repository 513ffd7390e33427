"""Hadoop-style *-site.xml (core, hdfs, yarn, mapred, hbase): one config fact per <property>.

Parsed with pyexpat directly rather than xml.etree because expat reports the
line of each <name>, and because it lets us refuse a DOCTYPE outright (the
defusedxml approach, without the dependency): no DTD means no internal entity
bombs and no external entity fetches. Hadoop's own files never need a DTD.
"""

from __future__ import annotations

from xml.parsers import expat

from analyzers.facts._util import make_fact
from analyzers.model import BundleFile, Fact


class _Refused(Exception):
    pass


def _refuse(*_args) -> None:
    raise _Refused("DTDs and entities are not accepted")


def parse(file: BundleFile, text: str, notes: list[str] | None = None) -> list[Fact]:
    """Config facts in document order; [] (and a note) for a malformed or DTD-carrying file."""
    props: list[dict] = []
    stack: list[str] = []
    cur: dict | None = None
    buf: list[str] = []

    p = expat.ParserCreate()
    # Any of these means the file wants a DTD or entities: refuse the whole file.
    p.StartDoctypeDeclHandler = _refuse
    p.EntityDeclHandler = _refuse
    p.UnparsedEntityDeclHandler = _refuse
    p.ExternalEntityRefHandler = _refuse
    p.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)

    def start(tag: str, _attrs: dict) -> None:
        nonlocal cur
        stack.append(tag)
        if tag == "property":
            cur = {"line": p.CurrentLineNumber}
        elif cur is not None and tag in ("name", "value") and stack[-2:-1] == ["property"]:
            buf.clear()
            if tag == "name":
                cur["line"] = p.CurrentLineNumber

    def end(tag: str) -> None:
        nonlocal cur
        if cur is not None and tag in ("name", "value") and stack[-2:-1] == ["property"]:
            cur[tag] = "".join(buf).strip()
        elif tag == "property" and cur is not None:
            if cur.get("name"):
                props.append(cur)
            cur = None
        stack.pop()

    def chars(data: str) -> None:
        if cur is not None and stack and stack[-1] in ("name", "value"):
            buf.append(data)

    p.StartElementHandler = start
    p.EndElementHandler = end
    p.CharacterDataHandler = chars
    try:
        p.Parse(text, True)
    except (expat.ExpatError, _Refused, ValueError) as exc:
        # Half a file would pass for a complete config and hide knobs: all or nothing.
        if notes is not None:
            notes.append(f"{file.path}: not read as Hadoop XML config ({exc})")
        return []

    return [make_fact(file, "config", prop["line"],
                      f"<name>{prop['name']}</name><value>{prop.get('value', '')}</value>",
                      {"key": prop["name"], "value": prop.get("value", "")})
            for prop in props]
