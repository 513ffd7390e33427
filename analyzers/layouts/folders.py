"""Collector archives whose folder layout, not each line, says which pod a file is from.

    Strimzi's report.sh (strimzi-kafka-operator tools/report.sh) zips ./reports/ with
        podlogs/<pod>.log, podlogs/<pod>-<container>.log (.log.0: the previous container)
        configs/<pod>.cfg, crds/, crs/, events/events.txt, <resource>/<name>.yaml
    A pod log's host is its pod; recognised only when the archive also has report.sh's other
    folders, so any "podlogs/" folder of someone else's making keeps the ordinary rules.
"""

from __future__ import annotations

import re

from analyzers.layouts.base import Section
from analyzers.paths import role_component

# report.sh asks for these containers by name (get_pod_logs "$POD" <container>)
_CONTAINERS = "zookeeper|kafka|tls-sidecar|topic-operator|user-operator|cruise-control"
_POD_LOG_RE = re.compile(rf"(?:^|/)podlogs/(?P<pod>[^/]+?)(?:-(?P<container>{_CONTAINERS}))?\.log(?:\.0)?$")
_POD_CONFIG_RE = re.compile(r"(?:^|/)configs/(?P<pod>[^/]+)\.cfg$")
_REPORT_FOLDERS_RE = re.compile(r"(?:^|/)(?:crds|crs|configs|events)/[^/]+$")


def folder_sections(paths: list[str]) -> dict[str, Section]:
    """{path: Section(host, component)} for the files a collector's layout places."""
    if not any(_POD_LOG_RE.search(p) for p in paths) or not any(_REPORT_FOLDERS_RE.search(p) for p in paths):
        return {}
    out = {}
    for p in paths:
        m = _POD_LOG_RE.search(p) or _POD_CONFIG_RE.search(p)
        if m:
            container = m.groupdict().get("container") or ""
            out[p] = Section(p, m.group("pod"), role_component(container) or role_component(m.group("pod")))
    return out
