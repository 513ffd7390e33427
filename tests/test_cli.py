"""`manage.py analyze` (docs/contract.md §2): JSON on stdout, exit 0; unusable input exits 2
with one clear line on stderr naming the file, never a traceback."""

import gzip
import io
import json
import os
import subprocess
import sys
import tarfile
import zipfile

import pytest

from tests.helpers import ROOT, SEED_BUNDLES


def analyze(*paths, engine="local"):
    env = {**os.environ, "KB_VAR_DIR": os.environ.get("KB_VAR_DIR", str(ROOT / "var"))}
    return subprocess.run([sys.executable, "manage.py", "analyze", *map(str, paths), "--format", "json",
                           "--engine", engine], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def assert_rejected(proc, *words):
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    for w in words:
        assert w in lines[0], lines[0]


def test_it_prints_the_contract_json_for_a_seed_archive(tmp_path):
    archive = tmp_path / "seed000.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        seed = SEED_BUNDLES / "000-flink-hdfs-openforwrite-after-soft-lockup"
        for p in sorted(seed.rglob("*.*")):
            if p.name != "expected.json":
                tar.add(p, arcname=str(p.relative_to(seed)))
    proc = analyze(archive)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert set(out) >= {"findings", "symptoms", "unmatched", "stats"}
    top = out["findings"][0]
    assert top["runbook"] == "hdfs-openforwrite-after-interrupted-close"
    assert set(top) >= {"runbook", "title", "confidence", "evidence", "knobs", "fixes"}
    ev = next(e for e in top["evidence"] if "Interrupted while waiting" in e["text"])
    assert ev["path"] == "hadoop-081-159/flink-taskmanager.log" and ev["host"] == "hadoop-081-159"
    assert ev["timestamp"] == "2019-04-23T17:38:05.591" and ev["line"] == 48
    assert set(out["stats"]) >= {"files", "lines", "bytes", "seconds", "startup_seconds", "engine"}


def test_it_rejects_a_missing_path():
    assert_rejected(analyze("/nonexistent/bundle.zip"), "/nonexistent/bundle.zip")


def test_it_rejects_a_text_file_that_says_it_is_a_zip(tmp_path):
    fake = tmp_path / "logs.zip"
    fake.write_text("2019-04-23 17:39:19,323 INFO this is not a zip\n")
    assert_rejected(analyze(fake), "logs.zip")


def test_it_rejects_a_truncated_archive(tmp_path):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        data = os.urandom(300_000)
        info = tarfile.TarInfo("host1/app.log")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    cut = tmp_path / "cut.tgz"
    cut.write_bytes(buf.getvalue()[: len(buf.getvalue()) // 2])
    assert_rejected(analyze(cut), "cut.tgz")


@pytest.mark.slow
def test_it_rejects_a_gzip_bomb(tmp_path):
    # Highly compressible text (not zeros, which would just be skipped as binary).
    bomb = tmp_path / "app.log.gz"
    with gzip.open(bomb, "wb", compresslevel=9) as fh:
        chunk = b"2019-04-23 17:39:19,323 INFO same line again and again\n" * 20000
        for _ in range(300):
            fh.write(chunk)
    assert_rejected(analyze(bomb), "app.log.gz")


def test_it_rejects_a_bundle_of_binaries_only(tmp_path):
    z = tmp_path / "cores.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr("host1/core.1234", b"\x7fELF" + os.urandom(8192))
    assert_rejected(analyze(z), "cores.zip", "no log files")


def test_it_rejects_an_empty_archive(tmp_path):
    empty = tmp_path / "empty.zip"
    with zipfile.ZipFile(empty, "w"):
        pass
    assert_rejected(analyze(empty), "empty.zip", "no log files")


def test_it_skips_traversal_entries_and_binaries_but_analyses_the_rest(tmp_path):
    z = tmp_path / "mixed.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr("../../evil.log", "java.lang.OutOfMemoryError: Java heap space\n")
        zf.writestr("host1/core.bin", b"\x7fELF" + os.urandom(4096))
        zf.writestr("host1/app.log", "2021-01-01 00:00:00,000 ERROR x - java.lang.OutOfMemoryError: Java heap space\n")
    proc = analyze(z)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    reasons = {s["path"]: s["reason"] for s in out["skipped"]}
    assert any("evil.log" in p for p in reasons) and any("core.bin" in p for p in reasons)
    assert [f["runbook"] for f in out["findings"]] == ["jvm-heap-oom"]
    assert not (tmp_path.parent / "evil.log").exists()


def test_it_reads_gbk_encoded_logs(tmp_path):
    log = tmp_path / "host1" / "taskmanager.log"
    log.parent.mkdir()
    log.write_bytes("2019-04-23 17:39:19,323 ERROR 任务失败 java.lang.OutOfMemoryError: Java heap space\n".encode("gbk"))
    proc = analyze(tmp_path)
    out = json.loads(proc.stdout)
    assert [f["runbook"] for f in out["findings"]] == ["jvm-heap-oom"]
    assert "任务失败" in out["findings"][0]["evidence"][0]["text"]
    assert out["files"][0]["encoding"].lower().replace("-", "") in ("gb18030", "gbk")


@pytest.mark.slow
def test_it_finds_a_signature_at_the_end_of_a_50_mb_line(tmp_path):
    log = tmp_path / "long.log"
    with open(log, "wb") as fh:
        fh.write(b"2019-04-23 17:39:19,323 ERROR x " + b"a" * (50 * 1024 * 1024))
        fh.write(b" java.lang.OutOfMemoryError: Java heap space\n")
    proc = analyze(log)
    assert proc.returncode == 0, proc.stderr
    assert [f["runbook"] for f in json.loads(proc.stdout)["findings"]] == ["jvm-heap-oom"]
