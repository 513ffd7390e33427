"""Shared test helpers: the real runbook catalog and fixture bundles."""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUNBOOKS_DIR = ROOT / "runbooks"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
SEED_BUNDLES = FIXTURES / "seed-bundles"
CASES = FIXTURES / "cases"

# The catalog's slugs (shared/catalog.md, a contract): every one must have a runbook.
CATALOG_SLUGS = [
    "hdfs-openforwrite-after-interrupted-close", "kernel-soft-lockup-stalls-jvm",
    "hdfs-close-not-enough-replicas", "flink-zk-suspended-lost-leadership",
    "hdfs-pipeline-recovery-no-good-datanode", "flink-filesink-too-many-buckets",
    "container-oom-killed", "jvm-long-gc-pause", "jvm-heap-oom", "jvm-metaspace-oom",
    "jvm-native-thread-limit", "too-many-open-files", "disk-full", "yarn-container-memory-exceeded",
    "yarn-local-dirs-bad", "hdfs-namenode-safemode", "hdfs-datanode-xceiver-limit",
    "hdfs-block-missing", "hdfs-lease-expired", "hdfs-slow-datanode-io", "flink-checkpoint-expired",
    "flink-akka-ask-timeout", "flink-insufficient-network-buffers", "kafka-not-leader-for-partition",
    "kafka-offset-out-of-range", "kafka-consumer-poll-timeout", "spark-shuffle-fetch-failed",
    "hbase-regionserver-session-expired", "hbase-region-too-busy", "zookeeper-too-many-connections",
]


@lru_cache(maxsize=1)
def catalog():
    from analyzers.runbooks import load_runbooks

    return load_runbooks(RUNBOOKS_DIR)


def runbook_metas() -> list[dict]:
    return [rb.meta for rb in catalog().runbooks.values()]


def runbook_specs() -> list:
    """The catalog typed, as the engine reads it: for tests that call the engine hundreds
    of times, which would otherwise parse the metas into specs on every call."""
    return [rb.spec for rb in catalog().runbooks.values()]


def bundle_cases() -> list[Path]:
    """Every fixture bundle with an expected.json: the seed bundles and the per-runbook cases."""
    seeds = sorted(p for p in SEED_BUNDLES.iterdir() if (p / "expected.json").exists())
    cases = sorted(p.parent for p in CASES.glob("*/*/expected.json")) if CASES.exists() else []
    return seeds + cases


def expected(case: Path) -> dict:
    return json.loads((case / "expected.json").read_text())


# Files that describe a fixture case but are not part of the bundle an operator would upload.
CASE_META = ("expected.json", "SOURCE.md")


def bundle_files(case: Path) -> list[Path]:
    """The files of a case's bundle, sorted: everything below it but its metadata files."""
    return sorted(f for f in case.rglob("*") if f.is_file() and f.name not in CASE_META)


def bundle_copy(case: Path, dest: Path) -> Path:
    """The case's bundle without its metadata files (SOURCE.md quotes signatures)."""
    import shutil

    target = dest / case.name
    shutil.copytree(case, target, ignore=shutil.ignore_patterns(*CASE_META))
    return target


def bundle_file(case: Path, path: str) -> tuple[Path, bool]:
    """The file of a case that an evidence path names, and whether the path is
    a section of it. Evidence paths start inside the folders that wrap the
    whole bundle (a fixture's single host folder is such a wrapper), and a
    collector's stream (docker compose, kubectl --prefix, yarn logs) is split
    into one section per container, named <stream path>/<container>/<file>."""
    parts = Path(path).parts
    for cut in range(len(parts), 0, -1):
        head = Path(*parts[:cut]).as_posix()
        found = [p for p in case.rglob(parts[cut - 1]) if p.is_file()
                 and (p.relative_to(case).as_posix() == head or p.as_posix().endswith("/" + head))]
        if found:
            (file,) = found
            return file, cut < len(parts)
    raise FileNotFoundError(f"{path} in {case}")


def case_id(case: Path) -> str:
    return str(case.relative_to(FIXTURES))


# A fixture case's SOURCE.md says in its first lines where its lines come from
# (tests/fixtures/README.md; tests/runbooks/test_provenance.py checks every case).
PROVENANCE = re.compile(r"^Provenance: (real|synthetic|reproduced)$", re.MULTILINE)
PROVENANCE_LINES = 3


def provenance(case: Path) -> str | None:
    """'real', 'synthetic', 'reproduced' or None (no marker in the first lines of SOURCE.md)."""
    source = case / "SOURCE.md"
    if not source.exists():
        return None
    head = "\n".join(source.read_text(encoding="utf-8").split("\n")[:PROVENANCE_LINES])
    found = PROVENANCE.search(head)
    return found.group(1) if found else None
