"""Collector outputs that put many hosts' logs in one text stream, split back into files.

    detect(sample_text) -> Demuxer | None      (by content, never by file name)
    demuxer.feed(line) -> [(Section, text), ...]

    yarn logs -applicationId ...   "Container: container_... on host_port", LogType/LogLength headers
    kubectl logs --prefix          "[pod/<pod>/<container>] line"
    kubectl cluster-info dump      "==== START logs for container c of pod ns/pod ===="
    docker compose logs            "kafka-1  | line"
    journalctl -o short-iso        "2023-09-08T17:20:30+0200 host unit[pid]: msg"
    journalctl -o json             {"__REALTIME_TIMESTAMP": ..., "_HOSTNAME": ..., "MESSAGE": ...}

Each section becomes one staged file, named "<stream path>/<host>/<...>" and owned by that host;
the prefix is stripped, so timestamps, signatures and templates read the line as the process
wrote it. Lines a layout does not claim (a continuation, client chatter before the first
section) stay with the previous section, so no line is lost.
"""

from __future__ import annotations

from analyzers.layouts.base import Demuxer, Section
from analyzers.layouts.journald import JournalJson, JournalShortIso
from analyzers.layouts.prefixed import ClusterInfoDump, ComposeLogs, KubectlPrefix
from analyzers.layouts.yarn import YarnLogs

__all__ = ["Demuxer", "Section", "detect", "LAYOUTS"]

# Most specific first: a yarn logs stream may quote other layouts inside its sections.
LAYOUTS: list[type[Demuxer]] = [YarnLogs, ClusterInfoDump, JournalJson, KubectlPrefix, ComposeLogs,
                                JournalShortIso]
SAMPLE_LINES = 200


def detect(sample: str) -> Demuxer | None:
    """A fresh demuxer for the layout the sample (the start of a file) is in, or None."""
    lines = sample.splitlines()[:SAMPLE_LINES]
    if sample and not sample.endswith("\n") and len(lines) > 1:
        lines = lines[:-1]                      # the sample may cut its last line
    return next((layout() for layout in LAYOUTS if layout.recognises(lines)), None)
