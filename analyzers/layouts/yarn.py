"""`yarn logs -applicationId <id>`: every container's logs of an application in one stream.

Hadoop 2 (AggregatedLogFormat)            Hadoop 3 (LogToolUtils, per log file)
    Container: container_.. on h_45454        Container: container_.. on h_45454
    ==================================        LogAggregationType: AGGREGATED
    LogType:stderr                            ==================================
    Log Upload Time:24-Feb-2016 02:15:55      LogType:stderr
    LogLength:0                               LogLastModifiedTime:Mon Apr 22 ...
    Log Contents:                             LogLength:1234
    <content>                                 LogContents:
    End of LogType:stderr   (2.8 and later)   <content>
                                              End of LogType:stderr
                                              ********************************

Hadoop writes "\\nEnd of LogType:", so the blank line right before it is not content. Before
2.8 there is no end marker: the next "LogType:" or "Container:" line ends the content.
"""

from __future__ import annotations

import re

from analyzers.layouts.base import Demuxer, Section, safe_part
from analyzers.paths import role_component

_CONTAINER_RE = re.compile(r"^Container: (container_\w+) on ([\w.\-]+?)(?:[_:]\d+)?\s*$")
_HEADER_RE = re.compile(r"^(LogAggregationType|Log Upload Time|LogLastModifiedTime|LogLength):")
_RULE_RE = re.compile(r"^(=+|\*+)$")


class YarnLogs(Demuxer):
    label = "yarn logs -applicationId <application id>"
    preamble = Section("yarn-logs-client.log", None)

    def __init__(self) -> None:
        super().__init__()
        self.container = self.host = self.logtype = None
        self.in_content = False
        self.end_markers = False      # Hadoop 2.8+: every log ends with "End of LogType:"
        self.held: str | None = None  # a blank line that may be the one before "End of LogType:"

    @classmethod
    def recognises(cls, lines: list[str]) -> bool:
        first = next((i for i, ln in enumerate(lines) if _CONTAINER_RE.match(ln)), None)
        return first is not None and any(ln.startswith("LogType:") for ln in lines[first:])

    def feed(self, line: str) -> list[tuple[Section, str]]:
        bare = line.rstrip("\r\n")
        # most lines are content: test the header regex only on lines that could be one
        container = _CONTAINER_RE.match(bare) if bare.startswith("Container: ") else None
        if self.in_content:
            if bare.startswith("End of LogType:"):
                self._end(markers=True)
                return []
            if self.end_markers or not (container or bare.startswith("LogType:")):
                return self._content(line, bare)
            self._end(markers=False)
        if container:
            self.container, self.host = container.groups()
            return []
        if bare.startswith("LogType:"):
            self.logtype = bare[len("LogType:"):].strip()
            return []
        if bare in ("Log Contents:", "LogContents:") and self.container:
            self.in_content = True
            name = f"{safe_part(self.host)}/{safe_part(self.container)}/{safe_part(self.logtype or 'log')}"
            self.current = Section(name, self.host, role_component((self.logtype or "").lower()))
            return []
        if not bare or _HEADER_RE.match(bare) or _RULE_RE.match(bare):
            return []
        return self.other(line)

    def _content(self, line: str, bare: str) -> list[tuple[Section, str]]:
        out = [(self.current, self.held)] if self.held is not None else []
        self.held = None
        if bare:
            out.append((self.current, line))
        else:
            self.held = line
        return out

    def _end(self, markers: bool) -> None:
        self.in_content, self.held, self.current = False, None, None
        self.end_markers = self.end_markers or markers
