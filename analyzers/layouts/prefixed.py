"""Streams whose every line (or every block) names the pod, container or service it came from.

    kubectl logs --prefix [--all-containers]   [pod/flink-taskmanager-1-1/flink-main-container] line
    kubectl cluster-info dump                  ==== START logs for container c of pod ns/pod ====
                                               ... ==== END logs for container c of pod ns/pod ====
    docker compose logs (v2 "-1", v1 "_1")     kafka-1  | line      (with or without ANSI colours)
"""

from __future__ import annotations

import re

from analyzers.layouts.base import LEVEL_WORDS, Demuxer, Section, safe_part, share
from analyzers.paths import role_component

_KUBECTL_RE = re.compile(r"^\[pod/([^/\]\s]+)/([^\]\s]+)\] ?")
_DUMP_START_RE = re.compile(r"^==== START logs for container (\S+) of pod ([^/\s]+)/(\S+) ====\s*$")
_DUMP_END_RE = re.compile(r"^==== END logs for container \S+ of pod \S+ ====\s*$")
_ANSI_RE = re.compile(r"\x1b\[[0-9;]*m")
# service name, padding, "|", one space: "kafka-1  | ", "mqcloud-kafka_kafka1_1  | ", "kafka        | "
_COMPOSE_RE = re.compile(r"^(?:\x1b\[[0-9;]*m)*([A-Za-z0-9][\w.\-]*?) +(?:\x1b\[[0-9;]*m)*\| ?(?:\x1b\[0m)?")


# What compose itself prints between the services' lines (v1): "Creating kafka ... done"
_COMPOSE_NOTE_RE = re.compile(r"^(Creating|Starting|Recreating|Stopping|Removing|Attaching to|Gracefully stopping)\b"
                              r"|^\S+ exited with code \d+$")
_COMPOSE_EXIT_RE = re.compile(r"^(\S+) exited with code \d+\s*$")


def _compose_prefix(line: str) -> re.Match | None:
    """The "service  | " prefix; "INFO  | msg" (a log layout with a level first) is not one."""
    m = _COMPOSE_RE.match(line)
    return m if m and m.group(1).upper() not in LEVEL_WORDS else None


def _component(*names: str) -> str | None:
    return next((c for c in (role_component(n.lower()) for n in names) if c), None)


class KubectlPrefix(Demuxer):
    label = "kubectl logs --prefix --all-containers <pod or -l selector>"

    @classmethod
    def recognises(cls, lines: list[str]) -> bool:
        return share(lines, _KUBECTL_RE.match)

    def feed(self, line: str) -> list[tuple[Section, str]]:
        m = _KUBECTL_RE.match(line)
        if not m:
            return self.other(line)
        pod, container = m.groups()
        self.current = self.section((pod, container), lambda: Section(
            f"{safe_part(pod)}/{safe_part(container)}.log", pod, _component(container, pod)))
        return [(self.current, line[m.end():])]


class ClusterInfoDump(Demuxer):
    label = "kubectl cluster-info dump [--all-namespaces] [--output-directory DIR]"
    preamble = Section("cluster-resources.json", None)

    @classmethod
    def recognises(cls, lines: list[str]) -> bool:
        return any(_DUMP_START_RE.match(ln) for ln in lines)

    def feed(self, line: str) -> list[tuple[Section, str]]:
        m = _DUMP_START_RE.match(line)
        if m:
            container, namespace, pod = m.groups()
            self.current = Section(f"{safe_part(namespace)}/{safe_part(pod)}/{safe_part(container)}.log", pod,
                                   _component(container, pod))
            return []
        if _DUMP_END_RE.match(line):
            self.current = None
            return []
        return self.other(line)


class ComposeLogs(Demuxer):
    label = "docker compose logs [--no-color] [--timestamps] > compose.log"

    @classmethod
    def recognises(cls, lines: list[str]) -> bool:
        return (share(lines, lambda ln: _compose_prefix(ln) or _COMPOSE_NOTE_RE.match(ln))
                and any(_compose_prefix(ln) for ln in lines))

    def feed(self, line: str) -> list[tuple[Section, str]]:
        m = _compose_prefix(line)
        if not m:
            # "kafka exited with code 1" is kafka's end, whichever service printed last
            stopped = self._stopped(line)
            if stopped is not None:
                return [(stopped, line)]
            return [] if _COMPOSE_NOTE_RE.match(line) and self.current is None else self.other(line)
        service = m.group(1)
        self.current = self.section((service,), lambda: Section(
            f"{safe_part(service)}/{safe_part(service)}.log", service, _component(service)))
        return [(self.current, _ANSI_RE.sub("", line[m.end():]) if "\x1b" in line else line[m.end():])]

    def _stopped(self, line: str) -> Section | None:
        """The section of the service a "<container> exited with code N" note names: compose v2 names
        the service's container as its prefix does ("namenode"), v1 the project's container
        ("kafka-nodejs-tutorial_kafka_1" for the prefix "kafka_1")."""
        m = _COMPOSE_EXIT_RE.match(_ANSI_RE.sub("", line))
        if not m:
            return None
        name = m.group(1)
        return next((s for (svc,), s in self.known.items()
                     if name == svc or name.endswith(("_" + svc, "-" + svc))), None)
