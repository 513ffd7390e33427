"""Version strings and ranges: "2.5.0-cdh5.2.0" -> (2, 5, 0); ">=2.0,<2.8" -> predicates."""

from __future__ import annotations

import re

_NUM_RE = re.compile(r"\d+(?:\.\d+)*")
_CMP_RE = re.compile(r"^\s*(>=|<=|==|!=|>|<)?\s*(\d+(?:\.\d+)*)\s*$")


def parse_version(text: str) -> tuple[int, ...]:
    """The leading numeric part of a version: vendor suffixes (-cdh, -SNAPSHOT) are ignored."""
    m = _NUM_RE.search(text or "")
    if not m:
        raise ValueError(f"no version number in {text!r}")
    return tuple(int(p) for p in m.group(0).split("."))


def _cmp(a: tuple[int, ...], b: tuple[int, ...]) -> int:
    n = max(len(a), len(b))
    a, b = a + (0,) * (n - len(a)), b + (0,) * (n - len(b))
    return (a > b) - (a < b)


def parse_range(spec: str) -> list[tuple[str, tuple[int, ...]]]:
    """">=2.0,<2.8" -> [(">=", (2, 0)), ("<", (2, 8))]. A bare version means ==."""
    out = []
    for part in spec.split(","):
        m = _CMP_RE.match(part)
        if not m:
            raise ValueError(f"bad version range {spec!r} (use e.g. '>=2.0,<2.8')")
        out.append((m.group(1) or "==", tuple(int(p) for p in m.group(2).split("."))))
    return out


def in_range(version: str, spec: str) -> bool:
    v = parse_version(version)
    ops = {">=": lambda c: c >= 0, "<=": lambda c: c <= 0, ">": lambda c: c > 0,
           "<": lambda c: c < 0, "==": lambda c: c == 0, "!=": lambda c: c != 0}
    return all(ops[op](_cmp(v, ref)) for op, ref in parse_range(spec))

