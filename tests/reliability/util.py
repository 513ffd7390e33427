"""Helpers of the fault tests: uploads, bundles, process trees, results to compare."""

from __future__ import annotations

import io
import os
import tarfile
import time
from pathlib import Path
from typing import Any

from django.test import Client

from tests.celery_harness import wait_for
from tests.helpers import CASE_META, CASES, SEED_BUNDLES

SEED = SEED_BUNDLES / "001-flink-checkpoint-hdfs-not-enough-replicas"
SEED_FINDING = "hdfs-close-not-enough-replicas"


def tgz_of(directory: Path, arcname: str | None = None) -> bytes:
    """A .tar.gz of a fixture directory, without its metadata files."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        tar.add(directory, arcname=arcname or directory.name,
                filter=lambda ti: None if os.path.basename(ti.name) in CASE_META else ti)
    return buf.getvalue()


def case_dir(slug: str) -> Path:
    return CASES / slug / "positive"


def api_upload(client: Client, token: str, name: str, data: bytes, **fields) -> Any:
    f = io.BytesIO(data)
    f.name = name
    return client.post("/api/v1/analyses", {"file": f, **fields}, HTTP_AUTHORIZATION=f"Bearer {token}")


def api_upload_id(client: Client, token: str, name: str, data: bytes, **fields) -> int:
    response = api_upload(client, token, name, data, **fields)
    assert response.status_code == 202, (response.status_code, response.content[:500])
    return response.json()["id"]


def api_get(client: Client, token: str, analysis_id: int) -> Any:
    return client.get(f"/api/v1/analyses/{analysis_id}", HTTP_AUTHORIZATION=f"Bearer {token}")


def unacked(redis_server) -> int:
    """Messages a worker took but did not acknowledge (kombu's Redis transport keeps them
    in the `unacked` hash and restores them after the visibility timeout)."""
    import redis

    return redis.Redis(port=redis_server.port).hlen("unacked")


# Parts of a result that depend on the run (timings), not on the input.
RUN_STATS = ("seconds", "startup_seconds", "engine")


def result_core(result: dict[str, Any]) -> dict[str, Any]:
    """The result without its timings: two runs on the same input must agree on this."""
    core = dict(result)
    core["stats"] = {k: v for k, v in result.get("stats", {}).items() if k not in RUN_STATS}
    return core


# ---------------------------------------------------------------- processes (from /proc, no psutil)


def _stat(pid: int) -> tuple[str, str, int] | None:
    """(command name, state, parent pid) of a live process, or None."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            text = fh.read()
    except OSError:
        return None
    name = text[text.index("(") + 1:text.rindex(")")]
    fields = text[text.rindex(")") + 2:].split()
    return name, fields[0], int(fields[1])


def alive(pid: int) -> bool:
    st = _stat(pid)
    return st is not None and st[1] != "Z"


def descendants(pid: int) -> list[int]:
    """Every live process below `pid`."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            st = _stat(int(entry))
            if st is not None and st[1] != "Z":
                children.setdefault(st[2], []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def java_processes(pids: list[int]) -> list[int]:
    return [p for p in pids if (_stat(p) or ("",))[0] == "java"]


def wait_gone(pids: list[int], timeout: float) -> None:
    wait_for(lambda: not [p for p in pids if alive(p)], timeout, 0.1, f"processes {pids} to exit")


def pool_children(worker_pid: int) -> list[int]:
    """The direct children of a Celery worker's main process (its prefork pool)."""
    return [p for p in descendants(worker_pid) if (_stat(p) or ("", "", 0))[2] == worker_pid]


def timed(fn, *args, **kwargs) -> tuple[Any, float]:
    t0 = time.monotonic()
    value = fn(*args, **kwargs)
    return value, time.monotonic() - t0
