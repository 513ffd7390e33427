"""Collector outputs (tests/fixtures/layouts, real output; see its SOURCE.md files) come out as
files of the right hosts, containers and components, with the collector's prefix stripped."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from analyzers.bundle import stage_bundle
from analyzers.engine import analyze_paths
from analyzers.timestamps import parse_header
from tests.helpers import CASE_META, CASES, FIXTURES, SEED_BUNDLES, expected, runbook_metas

LAYOUTS = FIXTURES / "layouts"


def _staged(tmp_path: Path, *paths: Path):
    files = stage_bundle([str(p) for p in paths], str(tmp_path)).files
    return {f.path: f for f in files}


def _text(f) -> str:
    return Path(f.disk_path).read_text(encoding="utf-8")


def test_yarn_logs_hadoop3_becomes_one_file_per_container_log_of_its_host(tmp_path):
    src = LAYOUTS / "yarn-logs-hadoop3" / "application_1756057717712_0001.log"
    files = _staged(tmp_path, src)
    assert {f.host for f in files.values()} == {"hadoopnode"}
    stream = src.read_text(encoding="utf-8")
    # Hadoop says how long every log is: each staged section must be exactly that long
    lengths = re.findall(r"^Container: (\S+) on \S+\n(?:.*\n){2}LogType:(\S+)\nLogLastModifiedTime:.*\nLogLength:(\d+)$",
                         stream, re.M)
    assert len(lengths) == 21
    for container, logtype, length in lengths:
        path = f"{src.name}/hadoopnode/{container}/{logtype}"
        if int(length) == 0:
            assert path not in files
        else:
            assert files[path].size == int(length), path
    am = files[f"{src.name}/hadoopnode/container_1756057717712_0001_01_000001/syslog"]
    task = files[f"{src.name}/hadoopnode/container_1756057717712_0001_01_000002/syslog"]
    assert (am.component, task.component) == ("mapreduce-am", "mapreduce-task")
    assert "End of LogType" not in _text(am) and "LogContents:" not in _text(task)
    assert _text(task).startswith("2025-08-24 ")


def test_yarn_logs_hadoop2_keeps_the_client_lines_and_no_empty_logs(tmp_path):
    files = _staged(tmp_path, LAYOUTS / "yarn-logs-hadoop2" / "yarn-logs.txt")
    assert list(files) == ["yarn-logs.txt/yarn-logs-client.log"]
    assert _text(files["yarn-logs.txt/yarn-logs-client.log"]).startswith("16/02/24 02:17:39 INFO impl.TimelineClientImpl")


def _yarn_stream(seed: Path, hadoop3: bool) -> str:
    """What `yarn logs` prints for the seed's files, each file a container log on its host
    (the wording of Hadoop 3's LogToolUtils or Hadoop 2's AggregatedLogFormat)."""
    out = ["23/06/01 10:00:00 INFO client.RMProxy: Connecting to ResourceManager at rm1/10.0.0.1:8032\n"]
    files = sorted(f for f in seed.rglob("*") if f.is_file() and f.name not in CASE_META)
    for n, f in enumerate(files, 2):
        host = f.parent.name if f.parent != seed else "nm-1"
        content = f.read_bytes().decode("utf-8")
        header = f"Container: container_1685613600000_0001_01_{n:06d} on {host}_8041\n"
        if hadoop3:
            out += [header, "LogAggregationType: AGGREGATED\n", "=" * (len(header) - 1) + "\n",
                    f"LogType:{f.name}\n", "LogLastModifiedTime:Thu Jun 01 10:00:00 +0000 2023\n",
                    f"LogLength:{len(content.encode())}\n", "LogContents:\n", content,
                    f"\nEnd of LogType:{f.name}\n", "*" * (len(f.name) + 65) + "\n\n"]
        else:
            out += [header, "=" * (len(header) - 1) + "\n", f"LogType:{f.name}\n",
                    "Log Upload Time:Thu Jun 01 10:00:00 +0000 2023\n",
                    f"LogLength:{len(content.encode())}\n", "Log Contents:\n", content, "\n"]
    return "".join(out)


SEEDS = sorted(p for p in SEED_BUNDLES.iterdir() if (p / "expected.json").exists())


def _evidence(result: dict) -> list:
    return [(f["runbook"], sorted((e["host"] or "", e["timestamp"] or "", e["text"]) for e in f["evidence"]))
            for f in result["findings"]]


@pytest.mark.parametrize("hadoop3", [True, False], ids=["hadoop3", "hadoop2"])
@pytest.mark.parametrize("seed", SEEDS, ids=[s.name for s in SEEDS])
def test_yarn_logs_of_a_seed_give_the_seeds_findings_on_the_right_hosts(seed, hadoop3, tmp_path):
    stream = tmp_path / "application_1685613600000_0001.log"
    stream.write_text(_yarn_stream(seed, hadoop3), encoding="utf-8")
    runbooks = runbook_metas()
    as_dir = analyze_paths([str(seed)], runbooks)
    as_yarn = analyze_paths([str(stream)], runbooks)
    want = expected(seed)
    found = [f["runbook"] for f in as_yarn["findings"]]
    assert set(want["expected"]) <= set(found) <= set(want["expected"]) | set(want.get("acceptable", []))
    hosts = {f.parent.name for f in seed.rglob("*") if f.is_file() and f.name not in CASE_META}
    assert {f["host"] for f in as_yarn["files"]} == hosts | {None}     # None: the client's own lines
    if all(f["host"] for f in as_dir["files"]):           # seeds with host folders: same evidence
        assert _evidence(as_yarn) == _evidence(as_dir)


def test_kubectl_prefix_gives_each_pod_its_own_host_and_strips_the_prefix(tmp_path):
    files = _staged(tmp_path, LAYOUTS / "kubectl-prefix" / "echo-req.log")
    assert {(f.host, p.rsplit("/", 1)[-1]) for p, f in files.items()} == {
        ("echo-req-7cfd7bf68f-nk5kr", "hello.log"), ("echo-req-7cfd7bf68f-dhrwd", "hello.log")}
    assert all(_text(f).startswith("172.17.0.1 - - [22/Nov/2020") for f in files.values())


def test_cluster_info_dump_gives_the_pod_as_host_without_the_markers(tmp_path):
    (f,) = _staged(tmp_path, LAYOUTS / "cluster-info-dump" / "cluster-info.txt").values()
    assert f.path == "cluster-info.txt/kube-system/kube-flannel-ds-j69g6/kube-flannel.log"
    assert f.host == "kube-flannel-ds-j69g6" and "====" not in _text(f)
    assert parse_header(_text(f).splitlines()[0]).timestamp.endswith("-02-18T06:23:21.796")


def test_compose_logs_give_each_service_its_host_and_component(tmp_path):
    files = _staged(tmp_path, LAYOUTS / "compose-logs" / "kafka-docker-30.log",
                    LAYOUTS / "compose-logs" / "kafka-docker-583.log")
    assert {(f.host, f.component) for f in files.values()} == {
        ("zookeeper_1", "zookeeper"), ("kafka", "kafka-broker"), ("zookeeper", "zookeeper")}
    zk = files["kafka-docker-30.log/zookeeper_1/zookeeper_1.log"]
    first = _text(zk).splitlines()[0]
    assert parse_header(first).timestamp == "2015-02-10T04:14:42.911"      # prefix gone before timestamps
    assert _text(files["kafka-docker-583.log/kafka/kafka.log"]).startswith("Excluding KAFKA_HOME")


def test_journalctl_short_iso_splits_by_host_and_unit_and_keeps_the_time(tmp_path):
    (f,) = _staged(tmp_path, LAYOUTS / "journald-short-iso" / "r710.log").values()
    assert (f.path, f.host) == ("r710.log/tarta/r710_fan_controller.sh.log", "tarta")
    lines = _text(f).splitlines()
    assert len(lines) == 10 and lines[0] == "2023-09-08T17:20:30+0200 Highest drive temperature: 43 Celcius."
    assert parse_header(lines[0]).timestamp == "2023-09-08T17:20:30"


def test_journalctl_json_gives_host_unit_and_utc_time(tmp_path):
    (f,) = _staged(tmp_path, LAYOUTS / "journald-json" / "docker-iseb00240.json").values()
    assert (f.path, f.host) == ("docker-iseb00240.json/iseb00240/docker.log", "iseb00240")
    line = _text(f).splitlines()[0]
    assert line.startswith('2016-12-08T18:53:30.387 {"@timestamp":"2016-12-08T18:53:30.386+00:00"')


def test_a_host_named_only_in_the_content_is_found(tmp_path):
    """Hadoop's STARTUP_MSG names the host when neither folders nor file name do."""
    src = CASES / "hdfs-block-missing" / "near-miss" / "dn8" / "hadoop-hdfs-datanode-dn8.log"
    bundle = tmp_path / "prod2-logs"
    bundle.mkdir()
    shutil.copy(src, bundle / "datanode.out.log")
    (tmp_path / "w").mkdir()
    (f,) = _staged(tmp_path / "w", bundle).values()
    assert (f.path, f.host, f.component) == ("datanode.out.log", "dn8.example.com", "hdfs-datanode")


def test_a_layout_lookalike_stays_one_file(tmp_path):
    """A log4j layout with the level where journald has the host is not a journal."""
    src = CASES / "hdfs-block-missing" / "near-miss" / "dn8" / "hadoop-hdfs-datanode-dn8.log"
    files = _staged(tmp_path, src)
    assert list(files) == ["hadoop-hdfs-datanode-dn8.log"]


def test_a_strimzi_report_gives_each_pod_log_its_pod_as_host(tmp_path):
    import zipfile

    root = LAYOUTS / "strimzi-report"
    report = tmp_path / "report-25-05-2020_14-50-00.zip"          # as report.sh names and zips it
    with zipfile.ZipFile(report, "w") as zf:
        for f in sorted(root.rglob("*")):
            if f.is_file() and f.name not in CASE_META:
                zf.write(f, f"./{f.relative_to(root)}")
    files = _staged(tmp_path, report)
    broker = files["podlogs/kafka-kafka-0-kafka.log"]              # reports/ wraps the report
    assert (broker.host, broker.component) == ("kafka-kafka-0", "kafka-broker")
    assert files["crs/kafkas.kafka.strimzi.io-fusion-base-services.yaml"].host is None


def test_a_podlogs_folder_alone_is_not_taken_for_a_strimzi_report(tmp_path):
    src = LAYOUTS / "strimzi-report" / "reports" / "podlogs"
    files = _staged(tmp_path, src.parent.parent / "reports" / "podlogs")
    assert files["kafka-kafka-0-kafka.log"].host is None


def test_a_jobmanager_log_downloaded_from_the_web_ui_is_known_by_its_content(tmp_path):
    """The Flink UI's log download is saved under whatever name the browser picks ("log")."""
    src = CASES / "flink-akka-ask-timeout" / "positive" / "jm-1" / "flink-flink-standalonesession-0-jm-1.log"
    shutil.copy(src, tmp_path / "log")
    (tmp_path / "w").mkdir()
    (f,) = _staged(tmp_path / "w", tmp_path / "log").values()
    assert (f.path, f.component) == ("log", "flink-jobmanager")


def test_kubectl_timestamps_before_a_log_line_are_no_journal():
    # Real lines: tests/fixtures/cases/kafka-consumer-group-rebalance-storm/positive (SOURCE.md):
    # `kubectl logs --timestamps` of a Strimzi broker. "2021-05-04" is a date, not a journald host.
    from analyzers.layouts import detect

    sample = (CASES / "kafka-consumer-group-rebalance-storm/positive/strimzi-kafka-0/server.log").read_text()
    assert detect(sample) is None
