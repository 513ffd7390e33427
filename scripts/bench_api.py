"""Benchmark: a 1 MB bundle through the HTTP API with a warm worker.

Starts its own Redis, a Celery worker (spark engine, local[2]) and the web
app on loopback ports, in a scratch KB_VAR_DIR; warms the worker up with one
analysis (the SparkSession starts then), then uploads a 1 MB bundle several
times and prints the time from the end of each upload to `done`.
Target (issue 4): within 3 seconds.

    python -m scripts.bench_api [--runs 5] [--engine spark|local]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT / "tests" / "fixtures" / "seed-bundles" / "001-flink-checkpoint-hdfs-not-enough-replicas"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def bundle_1mb() -> bytes:
    """~1 MB of Flink TaskManager INFO lines with seed 001's failure at the end."""
    r = random.Random(1)
    lines = []
    size = 0
    while size < 1_000_000:
        line = (f"2019-08-24 23:{r.randint(0, 59):02d}:{r.randint(0, 59):02d},{r.randint(0, 999):03d} INFO  "
                f"org.apache.flink.runtime.checkpoint.CheckpointCoordinator - Completed checkpoint {r.randint(1, 10**6)} "
                f"for job {uuid.UUID(int=r.getrandbits(128)).hex} ({r.randint(1000, 10**7)} bytes in {r.randint(5, 900)} ms).")
        lines.append(line)
        size += len(line) + 1
    text = "\n".join(lines) + "\n" + (SEED / "flink-taskmanager" / "taskmanager.log").read_text()
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        data = text.encode()
        info = tarfile.TarInfo("tm-host-1/flink-root-taskexecutor-0-tm-host-1.log")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def post_bundle(base: str, token: str, data: bytes, name: str) -> dict:
    boundary = uuid.uuid4().hex
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\n"
            f"Content-Type: application/gzip\r\n\r\n").encode() + data + f"\r\n--{boundary}--\r\n".encode()
    req = urllib.request.Request(f"{base}/api/v1/analyses", data=body, method="POST", headers={
        "Authorization": f"Bearer {token}", "Content-Type": f"multipart/form-data; boundary={boundary}"})
    with urllib.request.urlopen(req, timeout=60) as resp:
        return json.loads(resp.read())


def wait_done(base: str, token: str, url: str, timeout: float = 600) -> tuple[dict, float]:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        req = urllib.request.Request(base + url, headers={"Authorization": f"Bearer {token}"})
        with urllib.request.urlopen(req, timeout=30) as resp:
            body = json.loads(resp.read())
        if body["status"] in ("done", "failed"):
            return body, time.monotonic() - t0
        time.sleep(0.05)
    raise TimeoutError(url)


def paste_latency() -> None:
    """The runbook search answers a pasted stack trace with the local engine, in process."""
    sys.path.insert(0, str(ROOT))
    from analyzers.engine import analyze_text
    from analyzers.runbooks import load_runbooks

    runbooks = [rb.meta for rb in load_runbooks(ROOT / "runbooks").runbooks.values()]
    text = (SEED / "flink-taskmanager" / "taskmanager.log").read_text()
    t0 = time.perf_counter()
    analyze_text(text, runbooks)
    cold = time.perf_counter() - t0
    warm = []
    for _ in range(20):
        t0 = time.perf_counter()
        analyze_text(text, runbooks)
        warm.append(time.perf_counter() - t0)
    print(f"pasted stack trace ({len(text.splitlines())} lines): first {cold * 1000:.0f} ms "
          f"(compiles the signatures), then median {statistics.median(warm) * 1000:.1f} ms [target < 1 s]")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--engine", choices=["spark", "local"], default="spark")
    args = ap.parse_args(argv)
    paste_latency()
    py = sys.executable
    procs: list[subprocess.Popen] = []
    with tempfile.TemporaryDirectory(prefix="kb-bench-api-") as var:
        redis_port, web_port = free_port(), free_port()
        env = {**os.environ, "KB_VAR_DIR": var, "REDIS_URL": f"redis://127.0.0.1:{redis_port}/0",
               "KB_ENGINE": args.engine, "SPARK_MASTER": "local[2]", "DEBUG": "false",
               # kb refuses to start without a key when DEBUG is off: a throwaway one for this run.
               "SECRET_KEY": os.environ.get("SECRET_KEY") or secrets.token_urlsafe(50)}
        env.pop("DATABASE_URL", None)
        manage = lambda *a: subprocess.run([py, "manage.py", *a], cwd=ROOT, env=env, check=True,
                                           capture_output=True, text=True)
        try:
            procs.append(subprocess.Popen(["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1",
                                           "--save", "", "--appendonly", "no"], stdout=subprocess.DEVNULL,
                                          start_new_session=True))
            manage("migrate", "--noinput")
            manage("sync_runbooks")
            manage("ensure_login")
            token = manage("createtoken", "admin", "--name", "bench").stdout.strip().split()[-1]
            log = open(Path(var) / "worker.log", "w")
            procs.append(subprocess.Popen([py, "-m", "celery", "-A", "kb", "worker", "-c", "1", "--loglevel", "WARNING"],
                                          cwd=ROOT, env=env, stdout=log, stderr=log, start_new_session=True))
            procs.append(subprocess.Popen([py, "manage.py", "runserver", f"127.0.0.1:{web_port}", "--noreload"],
                                          cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                          start_new_session=True))
            base = f"http://127.0.0.1:{web_port}"
            for _ in range(100):
                try:
                    urllib.request.urlopen(base + "/api/v1/openapi.json", timeout=2)
                    break
                except OSError:
                    time.sleep(0.2)
            data = bundle_1mb()
            t0 = time.monotonic()
            first = post_bundle(base, token, data, "warmup.tar.gz")
            body, _ = wait_done(base, token, first["url"])
            print(f"warm-up ({args.engine}): {time.monotonic() - t0:.1f} s to done (includes starting the engine)")
            times = []
            for i in range(args.runs):
                posted = post_bundle(base, token, data, f"run{i}.tar.gz")
                body, seconds = wait_done(base, token, posted["url"])
                found = [f["runbook"] for f in (body.get("result") or {}).get("findings", [])]
                assert body["status"] == "done" and "hdfs-close-not-enough-replicas" in found, body.get("error")
                times.append(seconds)
            med = statistics.median(times)
            print(f"1 MB bundle via the API, warm {args.engine} worker: upload finished -> done "
                  f"median {med:.2f} s, max {max(times):.2f} s over {len(times)} runs "
                  f"[target <= 3 s: {'met' if max(times) <= 3 else 'MISSED'}]")
        finally:
            for p in reversed(procs):
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                    p.wait(timeout=20)
                except (ProcessLookupError, subprocess.TimeoutExpired):
                    try:
                        os.killpg(p.pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
