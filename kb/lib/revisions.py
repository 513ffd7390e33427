"""Differences between two saved runbook files."""

from __future__ import annotations

import difflib
from dataclasses import dataclass


@dataclass(frozen=True)
class DiffLine:
    kind: str  # "add" | "del" | "hunk" | "ctx" | "file"
    text: str


def revision_diff(*, old: str, new: str, old_label: str = "old", new_label: str = "new") -> list[DiffLine]:
    """A unified diff as typed lines, for the history page to colour."""
    lines = difflib.unified_diff(
        old.splitlines(), new.splitlines(), fromfile=old_label, tofile=new_label, lineterm="", n=3
    )
    out = []
    for i, line in enumerate(lines):
        if i < 2:  # the ---/+++ header; a removed "---" line later is a deletion
            kind = "file"
        elif line.startswith("@@"):
            kind = "hunk"
        elif line.startswith("+"):
            kind = "add"
        elif line.startswith("-"):
            kind = "del"
        else:
            kind = "ctx"
        out.append(DiffLine(kind, line))
    return out
