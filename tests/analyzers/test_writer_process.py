"""The writing process of a log whose path names none, from its loggers (analyzers/writer_process.py,
analyzers/hosts.py). Every line is real, copied from the fixture or thread named beside it."""

from __future__ import annotations

import pytest

from analyzers.hosts import describe_file
from analyzers.writer_process import component_from_loggers

REAL_LINES = [
    # tests/fixtures/cases/hbase-region-in-transition-stuck/near-miss/hm-1/hbase-hbase-master-hm-1.log
    ("2018-10-01 22:07:42,792 WARN org.apache.hadoop.hbase.master.HMaster: hbase:meta,,1.1588230740 is NOT "
     "online; state={1588230740 state=CLOSING, ts=1538456302300, server=ve1017.example.org,22101,1538449648131}",
     "hbase-master"),
    # pinpoint-apm/pinpoint#179 (HBase 0.94, %c{2})
    ("15/02/13 11:59:52 INFO master.HMaster: HMaster main thread exiting", "hbase-master"),
    # tests/fixtures/cases/hbase-hfile-corrupt/near-miss/rs-1/hbase-regionserver.log
    ("2016-07-29 14:49:52,211 INFO org.apache.hadoop.hbase.regionserver.HRegionServer: Open sn_log,"
     "2021310534_10608_16981548956709551452,1469630166524.6b3711cb0dfd408711ddbff640d06172.", "hbase-regionserver"),
    # AppScale/gts#265 (positive-zk-client-refused-regionserver)
    ("2013-01-17 20:19:26,508 DEBUG org.apache.hadoop.hbase.regionserver.HRegion: Closing -ROOT-,,0.70236052: "
     "disabling compactions & flushes", "hbase-regionserver"),
    # tests/fixtures/cases/disk-full/positive-strimzi-kafka-startup/kafka-2/kafka.log
    ("2022-10-14 22:52:00,580 ERROR [KafkaServer id=2] Fatal error during KafkaServer startup. Prepare to shutdown "
     "(kafka.server.KafkaServer) [main]", "kafka-broker"),
    # tachiyomiorg/tachiyomi-extensions#2364
    ("[2020-03-05 03:40:13,947] ERROR Fatal error during KafkaServer startup. Prepare to shutdown "
     "(kafka.server.KafkaServer)", "kafka-broker"),
    # tests/fixtures/cases/zookeeper-myid-missing/near-miss/zk-0/zookeeper.log
    ("2009-12-09 16:53:48,418 - FATAL [main:QuorumPeerMain@86] - Unexpected exception, exiting abnormally", "zookeeper"),
    # tests/fixtures/cases/zookeeper-adminserver-port-conflict/positive/zookeeper-0/zookeeper.log
    ("2023-11-30 15:18:34,413 [myid:1] - ERROR [main:ZooKeeperServerMain@86] - Unable to start AdminServer, "
     "exiting abnormally", "zookeeper"),
    # tests/fixtures/cases/kerberos-keytab-unreadable/positive/my-hdfs-namenode-1/hadoop-hdfs-namenode.log
    ("19/05/28 09:28:41 INFO namenode.NameNode: registered UNIX signal handlers for [TERM, HUP, INT]", "hdfs-namenode"),
    # tests/fixtures/cases/hdfs-datanode-failed-volumes/near-miss/hadoop-data-node/hadoop-data-node.log
    ("18/06/11 02:51:39 WARN datanode.DataNode: Ending block pool service for: Block pool <registering> "
     "(Datanode Uuid unassigned) service to /10.0.1.9:9000", "hdfs-datanode"),
    # a ResourceManager line of tests/fixtures/cases (ResourceTrackerService runs in the RM only)
    ("2016-03-24 10:10:43,361 INFO org.apache.hadoop.yarn.server.resourcemanager.ResourceTrackerService: NodeManager "
     "from node jh02-003(cmPort: 8041 httpPort: 8042) registered with capability: <memory:51200",
     "yarn-resourcemanager"),
    # a NodeManager line of tests/fixtures/cases (%c (%t): layout)
    ("2022-07-19 14:56:33,486 ERROR org.apache.hadoop.yarn.server.nodemanager.containermanager.ContainerManagerImpl "
     "(IPC Server handler 39 on 8041): Unauthorized request to start container.", "yarn-nodemanager"),
    # bitsondatadev/trino-getting-started#38 (the docker compose prefix left out)
    ("2024-02-02T21:27:54,105  INFO [main] metastore.HiveMetaStore: Started the new metaserver on port [9083]...",
     "hive-metastore"),
]


@pytest.mark.parametrize("line, component", REAL_LINES, ids=[c for _, c in REAL_LINES])
def test_each_daemon_is_known_by_its_own_logger(line, component):
    assert component_from_loggers(line) == component


@pytest.mark.parametrize("line", [
    # a daemon class in a stack frame or a message is not the writer (pinpoint-apm/pinpoint#179, flink fixture)
    "\tat org.apache.hadoop.hbase.master.HMaster.run(HMaster.java:123)",
    "2021-08-27 09:17:01,255 DEBUG org.apache.flink.runtime.resourcemanager.StandaloneResourceManager [] - "
    "Trigger heartbeat request.",
    # the ZooKeeper client is in every process (tachiyomiorg/tachiyomi-extensions#2364)
    "[2020-03-05 03:40:12,709] INFO Socket error occurred: 10.0.3.124/10.0.3.124:2181: Connection refused "
    "(org.apache.zookeeper.ClientCnxn)",
])
def test_a_class_outside_logger_position_or_a_shared_client_names_no_writer(line):
    assert component_from_loggers(line) is None


def _file(tmp_path, name, text):
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n", encoding="utf-8")
    return str(path)


def test_a_file_whose_path_names_nothing_takes_the_component_of_its_content(tmp_path):
    line, _ = REAL_LINES[3]
    disk = _file(tmp_path, "appscale-image0/hbase.log", line)
    assert describe_file("appscale-image0/hbase.log", disk) == ("appscale-image0", "hbase-regionserver", "log")


def test_the_path_wins_when_it_names_a_component(tmp_path):
    line, _ = REAL_LINES[0]                     # an HMaster line ...
    disk = _file(tmp_path, "rs4/hbase-hbase-regionserver-rs4.log", line)   # ... in a regionserver's file
    assert describe_file("rs4/hbase-hbase-regionserver-rs4.log", disk)[1] == "hbase-regionserver"


def test_an_unknown_file_stays_unknown(tmp_path):
    line = ("2018-07-27 17:19:31 [WARN ](o.a.z.ClientCnxn                   ) Session 0x0 for server null, "
            "unexpected error, closing socket connection and attempting reconnect")   # pinpoint-apm/pinpoint#4416
    disk = _file(tmp_path, "collector-1/app.log", line)
    assert describe_file("collector-1/app.log", disk)[1] == "unknown"


def test_a_where_on_component_reads_the_file_component_not_a_capture():
    from analyzers.conditions import all_hold
    from analyzers.runbook_spec import Condition

    hbase = (Condition("component", "matches", "^hbase-"),)
    assert all_hold(hbase, {}, "hbase-regionserver")
    assert not all_hold(hbase, {}, "kafka-broker")
    assert not all_hold(hbase, {"component": "hbase-master"}, None)   # never a capture of the line


def test_a_finding_on_the_weaker_alternative_says_whose_logs_and_what_was_not_seen():
    from pathlib import Path

    from analyzers.engine import analyze_paths
    from tests.helpers import runbook_specs

    cases = Path(__file__).parents[1] / "fixtures/cases/hbase-client-zookeeper-unreachable"
    positive = analyze_paths([str(cases / "positive-zk-client-refused-regionserver")], runbook_specs())
    [finding] = positive["findings"]
    assert ("+0.30 zk-client-connect-failed (1x, required; in hbase-regionserver logs, in place of "
            "hbase-zk-retries-exhausted, not seen)") in finding["explanation"]
    broker = analyze_paths([str(cases / "near-miss-kafka-broker-zk-refused")], runbook_specs())
    assert broker["findings"] == [] and {f["component"] for f in broker["files"]} >= {"kafka-broker"}
