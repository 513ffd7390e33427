"""The runbook format's vocabulary: allowed keys, roles, types and values
(runbooks/README.md). Validation (runbook_checks.py) and the loader use it."""

from __future__ import annotations

import re

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
    "fill": False,
    "leads_to": False,
}
# A symptom's definition lives in runbooks/symptoms/<id>.yaml; a runbook only uses it.
SYMPTOM_DEF_KEYS = {"id", "title", "patterns", "fact", "captures", "level", "examples", "sources", "description", "look_in"}
SYMPTOM_USE_KEYS = {"role", "weight", "where", "veto", "group", "burst"}
BURST_KEYS = {"count", "within", "hosts"}
LEADS_TO_KEYS = {"slug", "as", "why", "hosts", "within"}
LEADS_TO_KINDS = ("cause", "trigger")
RELATION_KEYS = {"first", "then", "within", "order", "hosts", "role", "weight", "why"}
KNOB_KEYS = {"key", "component", "file", "default", "defaults", "recommended", "why"}
FIX_KEYS = {"title", "kind", "steps"}
STEP_KEYS = {"text", "command"}
TICKET_KEYS = {"id", "title", "status", "affected", "fixed_in", "url"}


def parse_duration_ms(text: str) -> float:
    """A relation's, link's or burst's `within` ("500ms", "30s", "10m", "2h") in milliseconds."""
    m = DURATION_RE.match(str(text).strip())
    if not m:
        raise ValueError(f"bad duration {text!r} (use e.g. 500ms, 30s, 10m, 2h)")
    n, unit = float(m.group(1)), m.group(2)
    return n * {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000}[unit]
