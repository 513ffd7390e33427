"""Folders that wrap a bundle are never hosts: flat, one top folder or a/b/ give the same result.

Issue 14: `tar czf prod2-logs.tgz prod2-logs/` gave every line the host "prod2-logs".
"""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest

from analyzers.engine import analyze_paths
from tests.helpers import SEED_BUNDLES, bundle_files, runbook_metas

SEEDS = sorted(p for p in SEED_BUNDLES.iterdir() if (p / "expected.json").exists())
WRAPPERS = ["", "prod2-logs/", "a/b/", "2024-03-08/", "flink-1.17.2/", "incident-42/2024-03-08/"]


def _tgz(seed: Path, dest: Path, wrapper: str) -> Path:
    """The seed's files as `tar czf` makes them from inside the seed (flat) or from above it."""
    out = dest / f"{seed.name}-{wrapper.replace('/', '_') or 'flat'}.tgz"
    with tarfile.open(out, "w:gz") as tf:
        for f in bundle_files(seed):
            tf.add(f, arcname=wrapper + str(f.relative_to(seed)))
    return out


def _view(result: dict) -> dict:
    """What must not depend on the wrapper: findings, hosts, paths, timeline lanes."""
    return {
        "findings": result["findings"],
        "symptoms": result["symptoms"],
        "files": [(f["path"], f["host"], f["component"]) for f in result["files"]],
        "lanes": sorted({t["host"] or "" for t in result["timeline"]}),
        "timeline": result["timeline"],
        "unmatched": result["unmatched"],
    }


@pytest.mark.parametrize("seed", SEEDS, ids=[s.name for s in SEEDS])
def test_a_seed_gives_the_same_result_flat_and_wrapped(seed, tmp_path):
    runbooks = runbook_metas()
    flat = _view(analyze_paths([str(_tgz(seed, tmp_path, ""))], runbooks))
    as_dir = _view(analyze_paths([str(seed)], runbooks))
    assert as_dir["findings"] == flat["findings"] and as_dir["lanes"] == flat["lanes"]
    for wrapper in WRAPPERS[1:]:
        wrapped = _view(analyze_paths([str(_tgz(seed, tmp_path, wrapper))], runbooks))
        assert wrapped == flat, f"{seed.name} under {wrapper} differs from flat"
        names = {w for w in wrapper.split("/") if w}
        assert not names & {f[1] for f in wrapped["files"]}, f"a wrapper became a host: {wrapped['files']}"


def test_the_issue_example_gives_four_hosts_not_the_top_folder(tmp_path):
    """prod2-logs/ with four host folders, archived the usual way."""
    lines = (SEED_BUNDLES / "003-hbase-rs-abort-pipeline-recovery").rglob("*.log")
    with tarfile.open(tmp_path / "prod2-logs.tgz", "w:gz") as tf:
        for f in sorted(lines):
            tf.add(f, arcname=f"prod2-logs/{f.parent.name}/{f.name}")
    result = analyze_paths([str(tmp_path / "prod2-logs.tgz")], runbook_metas())
    assert {f["host"] for f in result["files"]} == {"dn2", "dn3", "dn-src", "c1-hd-dn18"}
    assert all(not f["path"].startswith("prod2-logs/") for f in result["files"])
    assert {ev["host"] for f in result["findings"] for ev in f["evidence"]} <= {"dn2", "dn3", "dn-src", "c1-hd-dn18"}


@pytest.mark.parametrize("folder", ["2024-03-08", "flink-1.17.2", "kafka_2.13-3.5.0", "prod2-logs", "bundle-7"])
def test_date_version_and_wrapper_folders_are_never_hosts_even_inside(folder, tmp_path):
    seed = SEED_BUNDLES / "000-flink-hdfs-openforwrite-after-soft-lockup"
    with tarfile.open(tmp_path / "b.tgz", "w:gz") as tf:
        for f in bundle_files(seed):
            # host folder, then the date or version folder, then the file: the host stays
            tf.add(f, arcname=str(f.relative_to(seed).parent / folder / f.name))
    result = analyze_paths([str(tmp_path / "b.tgz")], runbook_metas())
    assert {f["host"] for f in result["files"]} == {"hadoop-080-037", "hadoop-081-159"}


def test_a_flink_log_folder_takes_hosts_and_roles_from_the_daemon_file_names(tmp_path):
    """`tar czf flink-logs.tgz flink-1.14.6/log/` of a JobManager and a TaskManager host."""
    case = SEED_BUNDLES.parent / "cases" / "flink-insufficient-network-buffers" / "positive"
    with tarfile.open(tmp_path / "flink-logs.tgz", "w:gz") as tf:
        for f in sorted(case.glob("*/flink-*.log")):
            tf.add(f, arcname=f"flink-1.14.6/log/{f.name}")
    result = analyze_paths([str(tmp_path / "flink-logs.tgz")], runbook_metas())
    assert {(f["path"], f["host"], f["component"]) for f in result["files"]} == {
        ("flink-flink-standalonesession-0-jm-1.log", "jm-1", "flink-jobmanager"),
        ("flink-flink-taskexecutor-0-tm-4.log", "tm-4", "flink-taskmanager")}
