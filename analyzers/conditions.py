"""Typed captures and the `where` conditions runbooks put on them.

`component` is a pseudo-capture every hit has: the component of the file it is in (from the
path, else from the file's content: analyzers/hosts.py), so a runbook can ask for a shared line
"written by an HBase process": {capture: component, op: matches, value: "^hbase-"}.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Iterable

if TYPE_CHECKING:
    from analyzers.runbook_spec import Condition

_SIZE_SUFFIX = {"": 1, "b": 1, "k": 1024, "kb": 1024, "m": 1024**2, "mb": 1024**2, "g": 1024**3, "gb": 1024**3}


def convert(value: Any, typ: str) -> Any:
    """A raw captured string -> the declared type; unparsable numbers stay strings."""
    if value is None or not isinstance(value, str):
        return value
    try:
        if typ == "ms":
            return float(value)
        if typ == "s":
            return float(value) * 1000.0
        if typ in ("count", "int"):
            return int(value.replace(",", ""))
        if typ == "float":
            return float(value)
        if typ == "bytes":
            m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgKMG]?[bB]?)\s*", value)
            if m:
                return int(float(m.group(1)) * _SIZE_SUFFIX[m.group(2).lower()])
            return int(value)
    except ValueError:
        return value
    return value


def typed(captures: dict[str, Any], types: dict[str, str]) -> dict[str, Any]:
    return {k: convert(v, types.get(k, "str")) for k, v in captures.items()}


COMPONENT = "component"   # the pseudo-capture (module doc); no symptom may declare a capture so named


def holds(cond: Condition, captures: dict[str, Any], component: str | None = None) -> bool:
    """One condition on one occurrence; a missing capture never satisfies a condition."""
    if cond.capture == COMPONENT:
        if component is None:
            return False
        actual = component
    elif cond.capture not in captures:
        return False
    else:
        actual = captures[cond.capture]
    op, want = cond.op, cond.value
    if op == "contains":
        return str(want) in str(actual)
    if op == "matches":
        return re.search(str(want), str(actual)) is not None
    if op in ("==", "!="):
        same = _num(actual) == _num(want) if _is_num(actual) and _is_num(want) else str(actual) == str(want)
        return same if op == "==" else not same
    if not (_is_num(actual) and _is_num(want)):
        return False
    a, w = _num(actual), _num(want)
    return {">": a > w, ">=": a >= w, "<": a < w, "<=": a <= w}[op]


def all_hold(conds: Iterable[Condition], captures: dict[str, Any], component: str | None = None) -> bool:
    return all(holds(c, captures, component) for c in conds or [])


def _is_num(v: Any) -> bool:
    if isinstance(v, bool):
        return False
    if isinstance(v, (int, float)):
        return True
    try:
        float(str(v))
        return True
    except ValueError:
        return False


def _num(v: Any) -> float:
    return float(v)
