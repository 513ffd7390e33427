"""Flink flink-conf.yaml (legacy, line based) and config.yaml (standard YAML, 1.19+).

Flink reads flink-conf.yaml with its own line parser, not a YAML parser:
text after '#' is dropped, each line is split at the first ": ", lines
without one are skipped. We mimic that so the values are the ones Flink sees.
Flink 1.19+ config.yaml is standard YAML with nesting; nested keys are
flattened to dotted ones ("high-availability: {zookeeper: ...}" ->
"high-availability.zookeeper...."), as Flink does.
"""

from __future__ import annotations

import re

import yaml

from analyzers.facts._util import make_fact
from analyzers.model import BundleFile, Fact

# A config has hundreds of keys; the cap only stops alias fan-out
# (a "billion laughs" made of YAML aliases) from exploding while flattening.
MAX_KEYS = 100_000
_INDENTED_KEY_RE = re.compile(r"^[ \t]+[^\s#][^#]*:(\s|$)", re.M)


def parse(file: BundleFile, text: str) -> list[Fact]:
    name = file.path.rsplit("/", 1)[-1].lower()
    # An indented key means someone wrote nested YAML even in flink-conf.yaml.
    if name.startswith("flink-conf.yaml") and not _INDENTED_KEY_RE.search(text):
        return _legacy(file, text)
    facts = _standard(file, text)
    return _legacy(file, text) if facts is None else facts


def _legacy(file: BundleFile, text: str) -> list[Fact]:
    facts = []
    for n, raw in enumerate(text.splitlines(), 1):
        conf = raw.split("#", 1)[0].strip()
        key, sep, value = conf.partition(": ")
        key, value = key.strip(), value.strip()
        if sep and key and value:
            facts.append(make_fact(file, "config", n, raw, {"key": key, "value": value}))
    return facts


def _standard(file: BundleFile, text: str) -> list[Fact] | None:
    """Facts from standard YAML, or None when it is not a YAML mapping."""
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except (yaml.YAMLError, RecursionError):
        return None
    if root is None:
        return []
    if not isinstance(root, yaml.MappingNode):
        return None
    lines = text.splitlines()
    out: list[Fact] = []
    _flatten(file, root, "", lines, out)
    return out


def _flatten(file: BundleFile, node: yaml.MappingNode, prefix: str, lines: list[str],
             out: list[Fact]) -> None:
    for k, v in node.value:
        if len(out) >= MAX_KEYS:
            return
        if not isinstance(k, yaml.ScalarNode):
            continue
        key = f"{prefix}.{k.value}" if prefix else k.value
        if isinstance(v, yaml.MappingNode):
            _flatten(file, v, key, lines, out)
            continue
        value = _render(v)
        if value is None:
            continue
        line = k.start_mark.line + 1
        text = lines[line - 1] if line <= len(lines) else f"{key}: {value}"
        out.append(make_fact(file, "config", line, text, {"key": key, "value": value}))


def _render(node: yaml.Node) -> str | None:
    """The scalar as written (no YAML 1.1 coercion: "0x10" stays "0x10");
    a list as a flow sequence; None for null."""
    if isinstance(node, yaml.ScalarNode):
        if node.tag == "tag:yaml.org,2002:null" and node.style is None:
            return None
        return node.value
    if isinstance(node, yaml.SequenceNode) and all(isinstance(i, yaml.ScalarNode) for i in node.value):
        return "[" + ", ".join(i.value for i in node.value) + "]"
    try:
        return yaml.serialize(node, Dumper=yaml.SafeDumper, default_flow_style=True,
                              width=1 << 20).strip().removesuffix("...").strip()
    except yaml.YAMLError:
        return None
