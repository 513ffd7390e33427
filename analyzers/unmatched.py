"""Group the ERROR/FATAL/exception lines no signature explained into templates (Drain3).

These are what a new runbook could be written from: the analysis shows the
most frequent ones with a count and one example line.
"""

from __future__ import annotations

import re

from drain3 import TemplateMiner
from drain3.masking import MaskingInstruction
from drain3.template_miner_config import TemplateMinerConfig

from analyzers.template_key import message_part

import logging

logging.getLogger("drain3").setLevel(logging.WARNING)  # it logs INFO chatter on every start

MAX_LINES = 20_000
MAX_TEMPLATES = 50

_MASKS = [
    (r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?\b", "TS"),
    (r"\bblk_-?\d+(?:_\d+)?\b", "BLOCK"),
    (r"\bBP-\d+-[\d.]+-\d+\b", "POOL"),
    (r"\b(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?\b", "IP"),
    (r"\b0x[0-9a-fA-F]+\b", "HEX"),
    (r"\b[0-9a-f]{32}\b", "ID"),
    (r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", "UUID"),
    (r"\bcontainer_[\w]+\b", "CONTAINER"),
    (r"(?<![\w.])-?\d+(?:\.\d+)?(?:ms|s|MB|KB|GB|B)?\b", "NUM"),
]


def _miner() -> TemplateMiner:
    cfg = TemplateMinerConfig()
    cfg.masking_instructions = [MaskingInstruction(p, name) for p, name in _MASKS]
    cfg.drain_sim_th = 0.5
    cfg.drain_depth = 4
    cfg.profiling_enabled = False
    return TemplateMiner(config=cfg)


def unmatched_templates(lines: list[tuple[str, int, str]], more: int = 0) -> list[dict]:
    """lines: (path, line number, text) -> [{template, count, example: {path, line, text}}];
    `more`: lines after these the caller counted but did not keep (past MAX_LINES)."""
    if not lines:
        return []
    miner = _miner()
    examples: dict[int, tuple[str, int, str]] = {}
    for path, lineno, text in lines[:MAX_LINES]:
        res = miner.add_log_message(message_part(text))
        examples.setdefault(res["cluster_id"], (path, lineno, text))
    clusters = sorted(miner.drain.clusters, key=lambda c: -c.size)[:MAX_TEMPLATES]
    out = []
    for c in clusters:
        path, lineno, text = examples[c.cluster_id]
        out.append({"template": c.get_template(), "count": c.size,
                    "example": {"path": path, "line": lineno, "text": text}})
    rest = max(0, len(lines) - MAX_LINES) + more
    if rest:
        out.append({"template": f"... {rest} more lines not grouped", "count": rest, "example": None})
    return out
