"""Structured-file facts: configs, GC logs, netstat/ss, thread dumps (analyzers.facts)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from analyzers.facts import effective_config, extract_facts
from analyzers.model import BundleFile

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "seed-bundles"
SEED_000_JSTACK = (FIXTURES / "000-flink-hdfs-openforwrite-after-soft-lockup"
                   / "hadoop-081-159" / "jstack-taskmanager.txt")


def _file(tmp_path: Path, name: str, text: str, kind: str, component: str = "unknown",
          host: str | None = "hadoop-081-159", size: int | None = None) -> BundleFile:
    disk = tmp_path / name.replace("/", "__")
    disk.write_text(text, encoding="utf-8")
    return BundleFile(path=name, disk_path=str(disk), size=disk.stat().st_size if size is None else size,
                      host=host, component=component, kind=kind)


def _by_key(facts):
    return {f.captures["key"]: f for f in facts}


# ---------------------------------------------------------------- config: Hadoop XML

HDFS_SITE = """\
<?xml version="1.0" encoding="UTF-8"?>
<?xml-stylesheet type="text/xsl" href="configuration.xsl"?>
<!--
  Licensed under the Apache License, Version 2.0
-->
<configuration>
  <property>
    <name>dfs.replication</name>
    <value>3</value>
  </property>
  <property>
    <name>dfs.client.block.write.locateFollowingBlock.retries</name>
    <value>10</value>
    <description>Raised from 5 after "Unable to close file because the last block
      does not have enough number of replicas" during NameNode slowness.</description>
  </property>
  <property>
    <name>dfs.client.block.write.replace-datanode-on-failure.policy</name>
    <value>
      NEVER
    </value>
    <final>true</final>
  </property>
  <property><name>dfs.client.block.write.replace-datanode-on-failure.enable</name><value>true</value></property>
  <property>
    <name>dfs.namenode.handler.count</name>
    <value>100</value>
  </property>
</configuration>
"""


def test_hdfs_site_one_fact_per_property_with_name_line(tmp_path):
    f = _file(tmp_path, "hadoop-080-037/conf/hdfs-site.xml", HDFS_SITE, "config", "hdfs-namenode")
    facts = extract_facts(f)
    keys = _by_key(facts)
    assert [x.captures["key"] for x in facts] == [
        "dfs.replication",
        "dfs.client.block.write.locateFollowingBlock.retries",
        "dfs.client.block.write.replace-datanode-on-failure.policy",
        "dfs.client.block.write.replace-datanode-on-failure.enable",
        "dfs.namenode.handler.count",
    ]
    retries = keys["dfs.client.block.write.locateFollowingBlock.retries"]
    assert retries.name == "config"
    assert retries.captures == {"key": "dfs.client.block.write.locateFollowingBlock.retries", "value": "10"}
    assert retries.line == 12
    assert retries.path == "hadoop-080-037/conf/hdfs-site.xml"
    assert retries.host == "hadoop-081-159" and retries.component == "hdfs-namenode"
    assert keys["dfs.client.block.write.replace-datanode-on-failure.policy"].captures["value"] == "NEVER"
    assert keys["dfs.client.block.write.replace-datanode-on-failure.policy"].line == 18
    assert keys["dfs.client.block.write.replace-datanode-on-failure.enable"].line == 24
    assert keys["dfs.replication"].line == 8


def test_malformed_xml_gives_no_facts(tmp_path):
    broken = HDFS_SITE.replace("</configuration>", "").replace("<value>10</value>", "<value>10</valu>")
    notes: list[str] = []
    assert extract_facts(_file(tmp_path, "hdfs-site.xml", broken, "config"), notes) == []
    assert len(notes) == 1 and notes[0].startswith("hdfs-site.xml: not read as Hadoop XML config")
    assert extract_facts(_file(tmp_path, "core-site.xml", "", "config")) == []
    assert extract_facts(_file(tmp_path, "yarn-site.xml", "\x00\x01 not xml at all <<<", "config")) == []


def test_xxe_and_entity_bomb_are_refused(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-CONTENT")
    xxe = f"""<?xml version="1.0"?>
<!DOCTYPE configuration [
  <!ENTITY xxe SYSTEM "file://{secret}">
]>
<configuration>
  <property><name>fs.defaultFS</name><value>&xxe;</value></property>
</configuration>
"""
    facts = extract_facts(_file(tmp_path, "core-site.xml", xxe, "config"))
    assert facts == []
    bomb = """<?xml version="1.0"?>
<!DOCTYPE lolz [
  <!ENTITY lol "lol">
  <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
  <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
  <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
  <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
  <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
  <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
  <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
  <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<configuration><property><name>x</name><value>&lol9;</value></property></configuration>
"""
    t0 = time.monotonic()
    assert extract_facts(_file(tmp_path, "hbase-site.xml", bomb, "config")) == []
    assert time.monotonic() - t0 < 2
    # A DOCTYPE without entities is refused too: Hadoop files never carry one.
    plain_dtd = '<!DOCTYPE configuration SYSTEM "http://example.invalid/c.dtd">\n' + HDFS_SITE.split("\n", 5)[5]
    assert extract_facts(_file(tmp_path, "mapred-site.xml", plain_dtd, "config")) == []


def test_config_over_10_mb_is_ignored_and_noted(tmp_path):
    notes: list[str] = []
    f = _file(tmp_path, "hdfs-site.xml", HDFS_SITE, "config", size=11 * 1024**2)
    assert extract_facts(f, notes) == []
    assert len(notes) == 1 and "hdfs-site.xml" in notes[0]


# ---------------------------------------------------------------- config: Flink YAML

FLINK_CONF = """\
#==============================================================================
# Common
#==============================================================================
jobmanager.rpc.address: hadoop-080-037
jobmanager.rpc.port: 6123
taskmanager.numberOfTaskSlots: 8

# Fault tolerance and checkpointing
state.backend: rocksdb
state.checkpoints.dir: hdfs:///flink/checkpoints   # per-job sub-dirs
heartbeat.interval: 10000
heartbeat.timeout: 50000

high-availability: zookeeper
high-availability.zookeeper.quorum: zk1:2181,zk2:2181,zk3:2181
high-availability.zookeeper.client.session-timeout: 60000
env.java.opts: -XX:+UseG1GC -XX:MaxGCPauseMillis=100
this line has no separator
empty.value:
"""


def test_flink_conf_yaml_legacy_lines(tmp_path):
    f = _file(tmp_path, "flink/conf/flink-conf.yaml", FLINK_CONF, "config", "flink-jobmanager")
    keys = _by_key(extract_facts(f))
    assert keys["heartbeat.timeout"].captures["value"] == "50000"
    assert keys["heartbeat.timeout"].line == 12
    assert keys["high-availability.zookeeper.client.session-timeout"].captures["value"] == "60000"
    assert keys["high-availability.zookeeper.client.session-timeout"].line == 16
    # Flink's own parser drops everything after '#', and skips empty values.
    assert keys["state.checkpoints.dir"].captures["value"] == "hdfs:///flink/checkpoints"
    assert keys["env.java.opts"].captures["value"] == "-XX:+UseG1GC -XX:MaxGCPauseMillis=100"
    assert "empty.value" not in keys and "this line has no separator" not in keys
    assert len(keys) == 11


FLINK_119_CONFIG = """\
# Flink 1.19+ standard YAML
jobmanager:
  rpc:
    address: flink-jobmanager
    port: 6123
  memory:
    process:
      size: 1600m
taskmanager:
  numberOfTaskSlots: 4
  memory.process.size: 1728m
heartbeat:
  interval: 10000
  timeout: 50000
high-availability:
  type: kubernetes
  storageDir: s3://flink/ha
  zookeeper:
    quorum: zk-0.zk:2181,zk-1.zk:2181
    client:
      session-timeout: 60000
      connection-timeout: 15000
parallelism.default: 2
execution.checkpointing.unaligned: on
env.java.opts.all: "--add-exports=java.base/sun.net.util=ALL-UNNAMED"
pipeline.jars: [file:///opt/a.jar, file:///opt/b.jar]
state.backend.type: ~
"""


def test_flink_119_nested_config_yaml_is_flattened(tmp_path):
    f = _file(tmp_path, "flink/conf/config.yaml", FLINK_119_CONFIG, "config", "flink-jobmanager")
    keys = _by_key(extract_facts(f))
    assert keys["heartbeat.timeout"].captures["value"] == "50000"
    assert keys["heartbeat.timeout"].line == 14
    hz = keys["high-availability.zookeeper.client.session-timeout"]
    assert hz.captures["value"] == "60000" and hz.line == 21
    assert keys["jobmanager.memory.process.size"].captures["value"] == "1600m"
    assert keys["taskmanager.memory.process.size"].captures["value"] == "1728m"
    assert keys["high-availability.type"].captures["value"] == "kubernetes"
    # Scalars stay as written: no YAML 1.1 "on" -> True coercion, quotes removed.
    assert keys["execution.checkpointing.unaligned"].captures["value"] == "on"
    assert keys["env.java.opts.all"].captures["value"] == "--add-exports=java.base/sun.net.util=ALL-UNNAMED"
    assert keys["pipeline.jars"].captures["value"] == "[file:///opt/a.jar, file:///opt/b.jar]"
    assert "state.backend.type" not in keys          # null: not set


def test_rotated_or_backup_config_names(tmp_path):
    legacy = extract_facts(_file(tmp_path, "flink-conf.yaml.1", FLINK_CONF, "config"))
    assert _by_key(legacy)["state.checkpoints.dir"].captures["value"] == "hdfs:///flink/checkpoints"
    assert _by_key(extract_facts(_file(tmp_path, "zoo.cfg.bak", ZOO_CFG, "config")))["tickTime"].line == 2
    assert len(extract_facts(_file(tmp_path, "hdfs-site.xml.orig", HDFS_SITE, "config"))) == 5
    assert extract_facts(_file(tmp_path, "hadoop-env.sh", "export HADOOP_HEAPSIZE=4096\n", "config")) == []


def test_nested_yaml_under_the_old_name_is_still_flattened(tmp_path):
    f = _file(tmp_path, "flink-conf.yaml", "heartbeat:\n  timeout: 120000\n", "config")
    assert _by_key(extract_facts(f))["heartbeat.timeout"].captures["value"] == "120000"


def test_yaml_alias_fan_out_is_capped(tmp_path):
    lines = ["a0: &a0 {k: v}"]
    for i in range(1, 30):
        lines.append(f"a{i}: &a{i} {{x: *a{i - 1}, y: *a{i - 1}}}")
    t0 = time.monotonic()
    facts = extract_facts(_file(tmp_path, "config.yaml", "\n".join(lines) + "\n", "config"))
    assert time.monotonic() - t0 < 10
    assert 0 < len(facts) <= 100_000


# ---------------------------------------------------------------- config: properties

ZOO_CFG = """\
# The number of milliseconds of each tick
tickTime=2000
initLimit=10
syncLimit=5
dataDir=/data/zookeeper
clientPort=2181
# the maximum number of client connections.
maxClientCnxns=60
maxSessionTimeout = 40000
autopurge.snapRetainCount=3
server.1=zk1:2888:3888
server.2=zk2:2888:3888
server.3=zk3:2888:3888
"""


def test_zoo_cfg(tmp_path):
    f = _file(tmp_path, "zk1/conf/zoo.cfg", ZOO_CFG, "config", "zookeeper")
    keys = _by_key(extract_facts(f))
    assert keys["tickTime"].captures["value"] == "2000" and keys["tickTime"].line == 2
    assert keys["maxSessionTimeout"].captures["value"] == "40000" and keys["maxSessionTimeout"].line == 9
    assert keys["maxClientCnxns"].captures["value"] == "60" and keys["maxClientCnxns"].line == 8
    assert keys["server.2"].captures["value"] == "zk2:2888:3888"
    assert len(keys) == 11


SERVER_PROPERTIES = """\
############################# Server Basics #############################
broker.id=0
listeners = PLAINTEXT://0.0.0.0:9092
advertised.listeners=PLAINTEXT://kafka-1.example.com:9092
num.network.threads=3
! bang comments are comments too
log.dirs=/data1/kafka-logs,\\
         /data2/kafka-logs
log.retention.hours=168
zookeeper.connect=zk1:2181,zk2:2181,zk3:2181/kafka
zookeeper.session.timeout.ms=18000
zookeeper.connection.timeout.ms:6000
sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required \\
    username="admin" password="admin-secret";
key\\:with\\=escapes=v\\u00e9
log.cleaner.enable   true
"""


def test_kafka_server_properties(tmp_path):
    f = _file(tmp_path, "kafka-1/config/server.properties", SERVER_PROPERTIES, "config", "kafka")
    keys = _by_key(extract_facts(f))
    assert keys["broker.id"].captures["value"] == "0" and keys["broker.id"].line == 2
    assert keys["listeners"].captures["value"] == "PLAINTEXT://0.0.0.0:9092"
    assert keys["log.dirs"].captures["value"] == "/data1/kafka-logs,/data2/kafka-logs"
    assert keys["log.dirs"].line == 7
    assert keys["log.retention.hours"].line == 9
    assert keys["zookeeper.session.timeout.ms"].captures["value"] == "18000"
    assert keys["zookeeper.connection.timeout.ms"].captures["value"] == "6000"
    assert keys["key:with=escapes"].captures["value"] == "v\u00e9"
    assert keys["log.cleaner.enable"].captures["value"] == "true"
    assert keys["sasl.jaas.config"].line == 13


def test_effective_config_last_value_wins(tmp_path):
    a = extract_facts(_file(tmp_path, "dn1/hdfs-site.xml", HDFS_SITE, "config"))
    b = extract_facts(_file(tmp_path, "client/hdfs-site.xml", HDFS_SITE.replace(
        "<value>10</value>", "<value>20</value>"), "config"))
    z = extract_facts(_file(tmp_path, "zoo.cfg", ZOO_CFG + "tickTime=3000\n", "config"))
    gcf = extract_facts(_file(tmp_path, "gc.log", PARALLEL_GC, "gc"))
    eff = effective_config(a + b + z + gcf)
    assert eff["dfs.client.block.write.locateFollowingBlock.retries"] == "20"
    assert eff["dfs.client.block.write.replace-datanode-on-failure.policy"] == "NEVER"
    assert eff["tickTime"] == "3000"
    assert all(isinstance(v, str) for v in eff.values())


# ---------------------------------------------------------------- gc.pause

CMS_GC = """\
Java HotSpot(TM) 64-Bit Server VM (25.181-b13) for linux-amd64 JRE (1.8.0_181-b13), built on Jul  7 2018 00:56:38 by "java_re" with gcc 4.3.0 20080428 (Red Hat 4.3.0-8)
Memory: 4k page, physical 131746108k(2457464k free), swap 0k(0k free)
CommandLine flags: -XX:CMSInitiatingOccupancyFraction=70 -XX:+PrintGCApplicationStoppedTime -XX:+PrintGCDateStamps -XX:+PrintGCDetails -XX:+PrintGCTimeStamps -XX:+PrintTenuringDistribution -XX:+UseCMSInitiatingOccupancyOnly -XX:+UseConcMarkSweepGC -XX:+UseParNewGC
2019-04-23T17:39:19.323+0800: 1234.567: [GC (Allocation Failure) 2019-04-23T17:39:19.323+0800: 1234.567: [ParNew: 1887488K->209664K(1887488K), 0.1234567 secs] 3000000K->1500000K(8178944K), 0.1236789 secs] [Times: user=0.45 sys=0.01, real=0.12 secs] 
2019-04-23T17:39:19.450+0800: 1234.694: Total time for which application threads were stopped: 0.1245678 seconds, Stopping threads took: 0.0000456 seconds
2019-04-23T17:39:20.001+0800: 1235.245: [GC (CMS Initial Mark) [1 CMS-initial-mark: 5800000K(6291456K)] 5900000K(8178944K), 0.0123456 secs] [Times: user=0.03 sys=0.00, real=0.01 secs] 
2019-04-23T17:39:20.014+0800: 1235.258: [CMS-concurrent-mark-start]
2019-04-23T17:39:21.248+0800: 1236.492: [CMS-concurrent-mark: 1.234/1.234 secs] [Times: user=4.50 sys=0.10, real=1.23 secs] 
2019-04-23T17:39:21.248+0800: 1236.492: [CMS-concurrent-preclean-start]
2019-04-23T17:39:21.300+0800: 1236.544: [CMS-concurrent-preclean: 0.052/0.052 secs] [Times: user=0.10 sys=0.00, real=0.05 secs] 
2019-04-23T17:39:21.301+0800: 1236.545: [GC (CMS Final Remark) [YG occupancy: 123456 K (1887488 K)]2019-04-23T17:39:21.301+0800: 1236.545: [Rescan (parallel) , 0.0234567 secs]2019-04-23T17:39:21.325+0800: 1236.569: [weak refs processing, 0.0001234 secs]2019-04-23T17:39:21.325+0800: 1236.569: [class unloading, 0.0123456 secs]2019-04-23T17:39:21.337+0800: 1236.581: [scrub symbol table, 0.0045678 secs]2019-04-23T17:39:21.342+0800: 1236.586: [scrub string table, 0.0004567 secs][1 CMS-remark: 5800000K(6291456K)] 5923456K(8178944K), 0.0456789 secs] [Times: user=0.15 sys=0.00, real=0.05 secs] 
2019-04-23T17:39:21.347+0800: 1236.591: [CMS-concurrent-sweep-start]
2019-04-23T17:39:30.100+0800: 1245.344: [GC (Allocation Failure) 2019-04-23T17:39:30.100+0800: 1245.344: [ParNew
Desired survivor size 107347968 bytes, new threshold 6 (max 6)
- age   1:   12345678 bytes,   12345678 total
- age   2:    2345678 bytes,   14691356 total
: 1887488K->209664K(1887488K), 0.0987654 secs] 3100000K->1600000K(8178944K), 0.0989876 secs] [Times: user=0.38 sys=0.01, real=0.10 secs] 
2019-04-23T17:40:10.000+0800: 1285.244: [GC (Allocation Failure) 2019-04-23T17:40:10.000+0800: 1285.244: [ParNew: 1887488K->1887488K(1887488K), 0.0000345 secs]2019-04-23T17:40:10.000+0800: 1285.244: [CMS2019-04-23T17:40:12.500+0800: 1287.744: [CMS-concurrent-sweep: 5.123/9.456 secs] [Times: user=12.10 sys=0.20, real=9.46 secs] 
 (concurrent mode failure): 6000000K->5000000K(6291456K), 12.3456789 secs] 7887488K->5000000K(8178944K), [Metaspace: 65432K->65432K(1107968K)], 12.3457890 secs] [Times: user=12.30 sys=0.05, real=12.35 secs] 
2019-04-23T17:40:22.400+0800: 1297.644: Total time for which application threads were stopped: 12.3501234 seconds, Stopping threads took: 0.0000789 seconds
"""


def _pauses(facts):
    return [(f.line, f.captures["kind"], f.captures["value"]) for f in facts]


def test_jdk8_parnew_cms(tmp_path):
    facts = extract_facts(_file(tmp_path, "hbase/gc-regionserver.log", CMS_GC, "gc", "hbase-regionserver"))
    assert all(f.name == "gc.pause" for f in facts)
    assert _pauses(facts) == [
        (4, "young", 120.0),              # real= wins over the 0.1236789 secs of the record
        (5, "other", 124.5678),           # safepoint total
        (6, "initial-mark", 10.0),
        (11, "remark", 50.0),
        (13, "young", 100.0),             # record split by the tenuring distribution
        (18, "full", 12350.0),            # concurrent mode failure; not the sweep's real=9.46
        (20, "other", 12350.1234),
    ]
    first = facts[0]
    assert first.timestamp == "2019-04-23T17:39:19.323"
    assert first.captures["uptime"] == 1234.567
    assert first.captures["cause"] == "Allocation Failure"
    assert first.text.startswith("2019-04-23T17:39:19.323+0800: 1234.567: [GC (Allocation Failure)")
    assert first.host == "hadoop-081-159" and first.component == "hbase-regionserver"
    assert facts[2].captures["cause"] == "CMS Initial Mark"


PARALLEL_GC = """\
OpenJDK 64-Bit Server VM (25.212-b04) for linux-amd64 JRE (1.8.0_212-b04), built on Apr 19 2019 23:19:08 by "mockbuild" with gcc 4.8.5 20150623 (Red Hat 4.8.5-36)
CommandLine flags: -XX:InitialHeapSize=2147483648 -XX:MaxHeapSize=2147483648 -XX:+PrintGC -XX:+PrintGCDateStamps -XX:+PrintGCDetails -XX:+PrintGCTimeStamps -XX:+UseParallelGC
2019-04-23T17:39:19.323+0800: 1234.567: [GC (Allocation Failure) [PSYoungGen: 524800K->87039K(611840K)] 524800K->87047K(2010112K), 0.0523456 secs] [Times: user=0.17 sys=0.03, real=0.05 secs] 
2019-04-23T17:40:01.123+0800: 1276.367: [Full GC (Ergonomics) [PSYoungGen: 87039K->0K(611840K)] [ParOldGen: 1398080K->1200000K(1398272K)] 1485119K->1200000K(2010112K), [Metaspace: 50000K->50000K(1093632K)], 12.3456789 secs] [Times: user=40.12 sys=0.50, real=12.35 secs] 
2019-04-23T17:41:00.000+0800: 1335.244: [Full GC (System.gc()) [PSYoungGen: 1000K->0K(611840K)] [ParOldGen: 1200000K->1100000K(1398272K)] 1201000K->1100000K(2010112K), [Metaspace: 50000K->50000K(1093632K)], 3.2100000 secs] [Times: user=9.00 sys=0.10, real=3.21 secs] 
1400.125: [GC [PSYoungGen: 1000K->100K(2000K)] 5000K->4100K(10000K), 0,0100000 secs] [Times: user=0,01 sys=0,00, real=0,01 secs] 
[GC (Allocation Failure)  524800K->87047K(2010112K), 0.0523456 secs]
"""


def test_jdk8_parallel_full_gc_uses_real(tmp_path):
    facts = extract_facts(_file(tmp_path, "gc.log", PARALLEL_GC, "gc", "flink-taskmanager"))
    assert _pauses(facts) == [
        (3, "young", 50.0),
        (4, "full", 12350.0),
        (5, "full", 3210.0),
        (6, "young", 10.0),          # JDK 7 style, decimal commas of a de_DE locale
        (7, "young", 52.3456),       # -verbose:gc only: no [Times:], record secs
    ]
    full = facts[1]
    assert full.timestamp == "2019-04-23T17:40:01.123"
    assert full.captures["cause"] == "Ergonomics"
    assert facts[2].captures["cause"] == "System.gc()"
    assert facts[3].timestamp is None and facts[3].captures["uptime"] == 1400.125
    assert facts[4].timestamp is None and "uptime" not in facts[4].captures


G1_JDK8 = """\
2019-04-23T17:39:19.323+0800: 1234.567: [GC pause (G1 Evacuation Pause) (young), 0.0234567 secs]
   [Parallel Time: 20.1 ms, GC Workers: 8]
      [GC Worker Start (ms): Min: 1234567.8, Avg: 1234567.9, Max: 1234568.0, Diff: 0.2]
      [Ext Root Scanning (ms): Min: 1.0, Avg: 1.2, Max: 1.5, Diff: 0.5, Sum: 9.6]
      [GC Worker Other (ms): Min: 0.0, Avg: 0.1, Max: 0.2, Diff: 0.2, Sum: 0.8]
      [GC Worker Total (ms): Min: 19.8, Avg: 19.9, Max: 20.0, Diff: 0.2, Sum: 159.2]
   [Code Root Fixup: 0.0 ms]
   [Clear CT: 0.3 ms]
   [Other: 3.0 ms]
      [Choose CSet: 0.0 ms]
      [Ref Proc: 1.2 ms]
   [Eden: 100.0M(100.0M)->0.0B(90.0M) Survivors: 0.0B->10.0M Heap: 500.0M(1024.0M)->410.0M(1024.0M)]
 [Times: user=0.15 sys=0.01, real=0.02 secs] 
2019-04-23T17:39:25.000+0800: 1240.244: [GC pause (G1 Humongous Allocation) (young) (initial-mark), 0.0156789 secs]
   [Eden: 50.0M(90.0M)->0.0B(90.0M) Survivors: 10.0M->10.0M Heap: 600.0M(1024.0M)->550.0M(1024.0M)]
 [Times: user=0.10 sys=0.00, real=0.02 secs] 
2019-04-23T17:39:25.016+0800: 1240.260: [GC concurrent-root-region-scan-start]
2019-04-23T17:39:25.020+0800: 1240.264: [GC concurrent-root-region-scan-end, 0.0040000 secs]
2019-04-23T17:39:25.020+0800: 1240.264: [GC concurrent-mark-start]
2019-04-23T17:39:26.500+0800: 1241.744: [GC concurrent-mark-end, 1.4800000 secs]
2019-04-23T17:39:26.501+0800: 1241.745: [GC remark 2019-04-23T17:39:26.501+0800: 1241.745: [Finalize Marking, 0.0001234 secs] 2019-04-23T17:39:26.501+0800: 1241.745: [GC ref-proc, 0.0012345 secs] 2019-04-23T17:39:26.503+0800: 1241.747: [Unloading, 0.0034567 secs], 0.0123456 secs]
 [Times: user=0.05 sys=0.00, real=0.01 secs] 
2019-04-23T17:39:26.514+0800: 1241.758: [GC cleanup 900M->800M(1024M), 0.0012345 secs]
 [Times: user=0.00 sys=0.00, real=0.00 secs] 
2019-04-23T17:39:26.515+0800: 1241.759: [GC concurrent-cleanup-start]
2019-04-23T17:39:26.516+0800: 1241.760: [GC concurrent-cleanup-end, 0.0010000 secs]
2019-04-23T17:39:30.000+0800: 1245.244: [GC pause (G1 Evacuation Pause) (mixed) 1245.244: [G1Ergonomics (CSet Construction) start choosing CSet, _pending_cards: 1234, predicted base time: 5.00 ms]
 1245.245: [G1Ergonomics (CSet Construction) finish choosing CSet, eden: 45 regions, survivors: 5 regions, old: 12 regions]
, 0.0345678 secs]
   [Eden: 90.0M(90.0M)->0.0B(90.0M) Survivors: 10.0M->10.0M Heap: 800.0M(1024.0M)->600.0M(1024.0M)]
 [Times: user=0.20 sys=0.00, real=0.03 secs] 
2019-04-23T17:39:30.040+0800: 1245.284: Total time for which application threads were stopped: 0.0351234 seconds, Stopping threads took: 0.0000321 seconds
2019-04-23T17:40:00.000+0800: 1275.244: [Full GC (Allocation Failure)  1023M->900M(1024M), 5.1234567 secs]
   [Eden: 0.0B(51.0M)->0.0B(51.0M) Survivors: 0.0B->0.0B Heap: 1023.9M(1024.0M)->900.1M(1024.0M)], [Metaspace: 60000K->60000K(1103872K)]
 [Times: user=8.10 sys=0.02, real=5.12 secs] 
"""


def test_jdk8_g1_multiline_records(tmp_path):
    facts = extract_facts(_file(tmp_path, "flink/gc.log", G1_JDK8, "gc"))
    assert _pauses(facts) == [
        (1, "young", 20.0),               # real= from the [Times: line after the phase table
        (14, "initial-mark", 20.0),
        (21, "remark", 10.0),
        (23, "cleanup", 1.2345),          # real=0.00 would hide the pause: record secs kept
        (27, "mixed", 30.0),
        (32, "other", 35.1234),
        (33, "full", 5120.0),
    ]
    assert facts[0].captures["cause"] == "G1 Evacuation Pause"
    assert facts[1].captures["cause"] == "G1 Humongous Allocation"
    assert facts[-1].timestamp == "2019-04-23T17:40:00.000"


UNIFIED_G1 = """\
[2019-04-23T17:39:19.100+0800][info][gc,init] Version: 11.0.2+9 (release)
[2019-04-23T17:39:19.101+0800][info][gc     ] Using G1
[2019-04-23T17:39:19.323+0800][info][gc,start     ] GC(12) Pause Young (Normal) (G1 Evacuation Pause)
[2019-04-23T17:39:19.323+0800][info][gc,task      ] GC(12) Using 8 workers of 8 for evacuation
[2019-04-23T17:39:19.335+0800][info][gc,phases    ] GC(12)   Pre Evacuate Collection Set: 0.0ms
[2019-04-23T17:39:19.335+0800][info][gc,phases    ] GC(12)   Evacuate Collection Set: 10.9ms
[2019-04-23T17:39:19.335+0800][info][gc,heap      ] GC(12) Eden regions: 100->0(90)
[2019-04-23T17:39:19.335+0800][info][gc           ] GC(12) Pause Young (Normal) (G1 Evacuation Pause) 100M->20M(1024M) 12.345ms
[2019-04-23T17:39:19.335+0800][info][gc,cpu       ] GC(12) User=0.08s Sys=0.00s Real=0.01s
[2019-04-23T17:39:19.336+0800][info][safepoint    ] Total time for which application threads were stopped: 0.0130000 seconds, Stopping threads took: 0.0000500 seconds
[2019-04-23T17:39:25.000+0800][info][gc           ] GC(13) Pause Young (Concurrent Start) (G1 Humongous Allocation) 600M->550M(1024M) 8.500ms
[2019-04-23T17:39:25.001+0800][info][gc           ] GC(14) Concurrent Cycle
[2019-04-23T17:39:26.500+0800][info][gc,start     ] GC(14) Pause Remark
[2019-04-23T17:39:26.500+0800][info][gc           ] GC(14) Pause Remark 700M->650M(1024M) 3.456ms
[2019-04-23T17:39:26.600+0800][info][gc           ] GC(14) Pause Cleanup 650M->650M(1024M) 0.123ms
[2019-04-23T17:39:26.700+0800][info][gc           ] GC(14) Concurrent Cycle 1699.876ms
[2019-04-23T17:39:30.000+0800][info][gc           ] GC(15) Pause Young (Prepare Mixed) (G1 Evacuation Pause) 800M->700M(1024M) 15.000ms
[2019-04-23T17:39:31.000+0800][info][gc           ] GC(16) Pause Young (Mixed) (G1 Evacuation Pause) 750M->500M(1024M) 25.500ms
[2019-04-23T17:40:00.000+0800][info][gc           ] GC(17) Pause Full (Allocation Failure) 1023M->900M(1024M) 5123.456ms
[2019-04-23T17:41:00.000+0800][info][gc           ] GC(18) Pause Full (System.gc()) 900M->850M(1024M) 2345.600ms
"""


def test_unified_g1_with_dates(tmp_path):
    facts = extract_facts(_file(tmp_path, "kafka/kafkaServer-gc.log", UNIFIED_G1, "gc", "kafka"))
    assert _pauses(facts) == [
        (8, "young", 12.345),
        (10, "other", 13.0),
        (11, "initial-mark", 8.5),
        (14, "remark", 3.456),
        (15, "cleanup", 0.123),
        (17, "young", 15.0),
        (18, "mixed", 25.5),
        (19, "full", 5123.456),
        (20, "full", 2345.6),
    ]
    assert facts[0].timestamp == "2019-04-23T17:39:19.335"
    assert facts[0].captures["cause"] == "G1 Evacuation Pause"
    assert facts[-2].captures["cause"] == "Allocation Failure"
    assert facts[-1].captures["cause"] == "System.gc()"
    assert facts[3].captures.get("cause") is None


UNIFIED_UPTIME = """\
[0.012s][info][gc] Using Parallel
[12.345s][info][gc] GC(12) Pause Young (Allocation Failure) 100M->20M(1024M) 12.345ms
[15.001s][info][gc] GC(13) Pause Full (Ergonomics) 900M->700M(1024M) 812.5ms
[2019-04-23T17:39:19.323+0800][1234567ms][info][gc,phases   ] GC(3) Pause Mark Start 0.012ms
[2019-04-23T17:39:19.330+0800][1234574ms][info][gc,phases   ] GC(3) Pause Mark End 0.020ms
[2019-04-23T17:39:19.340+0800][1234584ms][info][gc,phases   ] GC(3) Pause Relocate Start 0.009ms
[2019-04-23T17:39:19.400+0800][1234644ms][info][gc          ] GC(3) Garbage Collection (Warmup) 100M(10%)->50M(5%)
[1300.001s][info][safepoint] Safepoint "G1CollectForAllocation", Time since last: 1000512549 ns, Reaching safepoint: 218234 ns, At safepoint: 12345678 ns, Total: 12563912 ns
"""


def test_unified_uptime_only_zgc_and_jdk17_safepoint(tmp_path):
    facts = extract_facts(_file(tmp_path, "gc.log", UNIFIED_UPTIME, "gc"))
    assert _pauses(facts) == [
        (2, "young", 12.345),
        (3, "full", 812.5),
        (4, "initial-mark", 0.012),
        (5, "remark", 0.02),
        (6, "other", 0.009),
        (8, "other", 12.563912),
    ]
    assert facts[0].timestamp is None and facts[0].captures["uptime"] == 12.345
    assert facts[2].timestamp == "2019-04-23T17:39:19.323" and facts[2].captures["uptime"] == 1234.567
    assert facts[-1].captures["cause"] == "G1CollectForAllocation"


UNIFIED_UNTAGGED = """\
[2022-05-03T02:41:33.118+0800][88412.331s] GC(3411) Pause Young (Normal) (G1 Evacuation Pause) 7821M->7790M(8192M) 412.337ms
[2022-05-03T02:41:58.672+0800][88437.885s] GC(3412) Pause Full (G1 Evacuation Pause) 8190M->7944M(8192M) 24881.904ms
GC(3413) Pause Full (G1 Evacuation Pause) 8191M->7960M(8192M) 26117.455ms
Pause reason: not a GC line 12ms
"""


def test_unified_without_tags_or_decorations(tmp_path):
    # -Xlog:gc:file=gc.log:time,uptime (no level, no tags) and -Xlog:gc:file=gc.log:none
    facts = extract_facts(_file(tmp_path, "flink-gc.out", UNIFIED_UNTAGGED, "log"))
    assert _pauses(facts) == [(1, "young", 412.337), (2, "full", 24881.904), (3, "full", 26117.455)]
    assert facts[1].timestamp == "2022-05-03T02:41:58.672" and facts[1].captures["uptime"] == 88437.885
    assert facts[2].timestamp is None and "uptime" not in facts[2].captures


def test_gc_log_under_kind_log_is_sniffed(tmp_path):
    f = _file(tmp_path, "flink-taskmanager-gc.log.0.current", CMS_GC, "log", "flink-taskmanager")
    assert len(extract_facts(f)) == 7
    plain = ("2019-04-23 17:39:19,323 INFO  org.apache.flink.runtime.taskexecutor.TaskExecutor"
             "  - Receive slot request\n") * 50
    assert extract_facts(_file(tmp_path, "taskmanager.log", plain, "log")) == []


def test_line_cap_is_noted(tmp_path, monkeypatch):
    from analyzers.facts import _util
    monkeypatch.setattr(_util, "MAX_LINES", 5)
    notes: list[str] = []
    facts = extract_facts(_file(tmp_path, "gc.log", PARALLEL_GC, "gc"), notes)
    assert [f.line for f in facts] == [3, 4, 5]
    assert notes == ["gc.log: facts read from the first 5 lines only"]


# ---------------------------------------------------------------- netstat.time_wait

NETSTAT_AN = """\
Active Internet connections (servers and established)
Proto Recv-Q Send-Q Local Address           Foreign Address         State      
tcp        0      0 0.0.0.0:8020            0.0.0.0:*               LISTEN     
tcp        0      0 10.81.159.12:8020       10.81.159.30:43512      ESTABLISHED
tcp        0      0 10.81.159.12:8020       10.81.159.31:51234      TIME_WAIT  
tcp        0      0 10.81.159.12:8020       10.81.159.32:51236      TIME_WAIT  
tcp6       0      0 10.81.159.12:50010      10.81.159.33:40000      TIME_WAIT  
tcp        0      0 10.81.159.12:22         10.1.1.1:55555          CLOSE_WAIT 
udp        0      0 0.0.0.0:123             0.0.0.0:*                          
Active UNIX domain sockets (servers and established)
Proto RefCnt Flags       Type       State         I-Node   Path
unix  2      [ ACC ]     STREAM     LISTENING     12345    /var/run/dbus/system_bus_socket
unix  3      [ ]         STREAM     CONNECTED     23456    
"""


def test_netstat_an_rows(tmp_path):
    facts = extract_facts(_file(tmp_path, "namenode/netstat-an.txt", NETSTAT_AN, "netstat"))
    assert len(facts) == 1
    f = facts[0]
    assert f.name == "netstat.time_wait"
    assert f.captures["value"] == 3 and f.captures["tcp"] == 6
    assert f.line == 5 and "TIME_WAIT" in f.text
    assert f.timestamp is None


SS_S = """\
Total: 101500 (kernel 101800)
TCP:   101234 (estab 1200, closed 99800, orphaned 12, synrecv 0, timewait 99790/0), ports 0

Transport Total     IP        IPv6
*         101800    -         -        
RAW       0         0         0        
UDP       8         5         3        
TCP       1434      1200      234      
INET      1442      1205      237      
FRAG      0         0         0        
"""


def test_ss_s_summary(tmp_path):
    facts = extract_facts(_file(tmp_path, "ss-s.txt", SS_S, "netstat"))
    assert [(f.line, f.captures["value"], f.captures["source"]) for f in facts] == [(2, 99790, "ss -s")]


SS_TAN = """\
State      Recv-Q Send-Q Local Address:Port               Peer Address:Port              
LISTEN     0      128          *:50010                    *:*                  
ESTAB      0      0      10.81.159.12:50010               10.81.159.40:38122              
TIME-WAIT  0      0      10.81.159.12:50010               10.81.159.41:38124              
TIME-WAIT  0      0      10.81.159.12:50010               10.81.159.42:38126              
"""


def test_ss_tan_rows(tmp_path):
    facts = extract_facts(_file(tmp_path, "ss-tan.txt", SS_TAN, "netstat"))
    assert [(f.line, f.captures["value"]) for f in facts] == [(4, 2)]


UNIQ_C = """\
SHUSHU:~ shushu$ netstat -an | awk '/tcp/ {print $6}' | sort | uniq -c
   1 CLOSED
  92 ESTABLISHED
   8 FIN_WAIT_2
  19 LISTEN
   6 SYN_SENT
  89 TIME_WAIT
   1 com.apple.network.tcp_ccdebug
"""


def test_uniq_c_summary_from_seed_001(tmp_path):
    facts = extract_facts(_file(tmp_path, "netstat-summary.txt", UNIQ_C, "netstat"))
    assert [(f.line, f.captures["value"], f.captures["source"]) for f in facts] == [(7, 89, "uniq -c")]
    no_tw = extract_facts(_file(tmp_path, "n2.txt", "  92 ESTABLISHED\n  19 LISTEN\n", "netstat"))
    assert [f.captures["value"] for f in no_tw] == [0]


def test_timestamped_snapshots_give_one_fact_each(tmp_path):
    rows = NETSTAT_AN.split("\n", 2)[2].split("Active UNIX")[0]
    text = ("Tue Apr 23 17:39:00 CST 2019\n" + rows
            + "Tue Apr 23 17:40:00 CST 2019\n" + rows.replace("TIME_WAIT", "ESTABLISHED", 2)
            + "=== 2019-04-23 17:41:00 ===\n" + UNIQ_C.split("\n", 1)[1])
    facts = extract_facts(_file(tmp_path, "netstat-loop.txt", text, "netstat"))
    assert [(f.timestamp, f.captures["value"], f.line) for f in facts] == [
        ("2019-04-23T17:39:00", 3, 1),
        ("2019-04-23T17:40:00", 1, 9),      # rows counted: the snapshot's date line
        ("2019-04-23T17:41:00", 89, 23),     # a summary: its own line
    ]


def test_netstat_file_without_sockets_gives_nothing(tmp_path):
    assert extract_facts(_file(tmp_path, "netstat.txt", "netstat: command not found\n", "netstat")) == []


# ---------------------------------------------------------------- jstack.thread

def test_seed_000_jstack():
    f = BundleFile(path="hadoop-081-159/jstack-taskmanager.txt", disk_path=str(SEED_000_JSTACK),
                   size=SEED_000_JSTACK.stat().st_size, host="hadoop-081-159",
                   component="flink-taskmanager", kind="jstack")
    facts = extract_facts(f)
    assert len(facts) == 1
    t = facts[0]
    assert t.name == "jstack.thread" and t.line == 1
    assert t.captures["value"] == ("DataStreamer for file /data/BaseData/flinksql/"
                                   "TCFlyIntB2BTrade_flight_segment_info/2019/04/23/tmp-part-0-6.in-progress")
    assert t.captures["state"] == "TIMED_WAITING"
    assert t.captures["state_detail"] == "on object monitor"
    assert t.captures["frames"] == ("java.lang.Object.wait(Native Method)\n"
                                    "org.apache.hadoop.hdfs.DFSOutputStream$DataStreamer.run(DFSOutputStream.java:502)")
    assert t.captures["locks"] == "- locked <0x000000073f9f2168> (a java.util.LinkedList)"
    assert t.captures["daemon"] is True and t.captures["nid"] == "0x28ab40"
    assert t.captures["status"] == "in Object.wait()"
    assert t.host == "hadoop-081-159" and t.component == "flink-taskmanager"


THREAD_DUMP = """\
2019-04-23 17:39:19
Full thread dump Java HotSpot(TM) 64-Bit Server VM (25.181-b13 mixed mode):

"Attach Listener" #107300 daemon prio=9 os_prio=0 tid=0x00007f1ea4001000 nid=0x28c1a2 waiting on condition [0x0000000000000000]
   java.lang.Thread.State: RUNNABLE

"Sink: Unnamed (3/8)" #107210 prio=5 os_prio=0 tid=0x00007f1e7c43f000 nid=0x28ab36 in Object.wait() [0x00007f1e3b5c6000]
   java.lang.Thread.State: TIMED_WAITING (on object monitor)
	at java.lang.Object.wait(Native Method)
	at org.apache.hadoop.hdfs.DataStreamer.waitForAckedSeqno(DataStreamer.java:835)
	- locked <0x000000073f9f2168> (a java.util.LinkedList)
	at org.apache.hadoop.hdfs.DFSOutputStream.flushInternal(DFSOutputStream.java:764)
	at org.apache.hadoop.hdfs.DFSOutputStream.closeImpl(DFSOutputStream.java:842)
	at org.apache.hadoop.hdfs.DFSOutputStream.close(DFSOutputStream.java:805)
	- locked <0x000000073f9f1f00> (a org.apache.hadoop.hdfs.DFSOutputStream)
	at org.apache.hadoop.fs.FSDataOutputStream$PositionCache.close(FSDataOutputStream.java:72)
	at org.apache.hadoop.fs.FSDataOutputStream.close(FSDataOutputStream.java:106)
	at org.apache.flink.streaming.connectors.fs.StreamWriterBase.close(StreamWriterBase.java:99)
	at org.apache.flink.streaming.connectors.fs.bucketing.BucketingSink.closeCurrentPartFile(BucketingSink.java:598)
	at org.apache.flink.streaming.connectors.fs.bucketing.BucketingSink.invoke(BucketingSink.java:458)
	at org.apache.flink.streaming.api.operators.StreamSink.processElement(StreamSink.java:56)
	at org.apache.flink.streaming.runtime.io.StreamInputProcessor.processInput(StreamInputProcessor.java:202)
	at org.apache.flink.streaming.runtime.tasks.OneInputStreamTask.run(OneInputStreamTask.java:105)
	at org.apache.flink.streaming.runtime.tasks.StreamTask.invoke(StreamTask.java:300)
	at org.apache.flink.runtime.taskmanager.Task.run(Task.java:711)
	at java.lang.Thread.run(Thread.java:748)

"Legacy BucketingSink (1/1)" #107211 prio=5 os_prio=0 tid=0x00007f1e7c441000 nid=0x28ab37 in Object.wait() [0x00007f1e3b4c5000]
   java.lang.Thread.State: WAITING (on object monitor)
	at java.lang.Object.wait(Native Method)
	at java.lang.Object.wait(Object.java:502)
	at org.apache.hadoop.hdfs.DFSOutputStream.waitForAckedSeqno(DFSOutputStream.java:2037)
	- locked <0x000000073fa00000> (a java.util.LinkedList)
	at org.apache.hadoop.hdfs.DFSOutputStream.flushInternal(DFSOutputStream.java:2018)
	at org.apache.hadoop.hdfs.DFSOutputStream.close(DFSOutputStream.java:2115)

   Locked ownable synchronizers:
	- None

"Checkpoint Timer" #60 daemon prio=5 os_prio=0 tid=0x00007f1e9c0c8800 nid=0x27f9a1 waiting for monitor entry [0x00007f1e41cfd000]
   java.lang.Thread.State: BLOCKED (on object monitor)
	at org.apache.flink.streaming.runtime.tasks.StreamTask.triggerCheckpoint(StreamTask.java:673)
	- waiting to lock <0x000000073f9f1f00> (a java.lang.Object)
	at org.apache.flink.runtime.taskmanager.Task$1.run(Task.java:1167)

"main" #1 prio=5 os_prio=0 cpu=1234.56ms elapsed=5678.90s tid=0x00007f1f2c00b800 nid=0x27f59f waiting on condition  [0x00007f1f33ffe000]
   java.lang.Thread.State: TIMED_WAITING (parking)
	at jdk.internal.misc.Unsafe.park(java.base@11.0.2/Native Method)
	- parking to wait for  <0x0000000080a0b0c0> (a java.util.concurrent.CompletableFuture$Signaller)
	at java.util.concurrent.locks.LockSupport.parkNanos(java.base@11.0.2/LockSupport.java:234)

"VM Thread" os_prio=0 tid=0x00007f1f2c0f3000 nid=0x27f5b0 runnable 

"GC task thread#0 (ParallelGC)" os_prio=0 tid=0x00007f1f2c01e800 nid=0x27f5a4 runnable 

"VM Periodic Task Thread" os_prio=0 tid=0x00007f1f2c14d000 nid=0x27f5c4 waiting on condition 

JNI global references: 1234


Found one Java-level deadlock:
=============================
"Thread-1":
  waiting to lock monitor 0x00007f1e5c003f08 (object 0x000000076ab62208, a java.lang.Object),
  which is held by "Thread-0"

Java stack information for the threads listed above:
===================================================
"Thread-1":
	at Deadlock.run(Deadlock.java:10)
	- waiting to lock <0x000000076ab62208> (a java.lang.Object)

Found 1 deadlock.
"""


def test_multi_thread_dump(tmp_path):
    facts = extract_facts(_file(tmp_path, "hadoop-081-159/jstack-tm.txt", THREAD_DUMP, "jstack",
                                "flink-taskmanager"))
    names = [f.captures["value"] for f in facts]
    assert names == ["Attach Listener", "Sink: Unnamed (3/8)", "Legacy BucketingSink (1/1)",
                     "Checkpoint Timer", "main", "VM Thread", "GC task thread#0 (ParallelGC)",
                     "VM Periodic Task Thread"]
    assert all(f.timestamp == "2019-04-23T17:39:19" for f in facts)
    by = {f.captures["value"]: f for f in facts}
    sink = by["Sink: Unnamed (3/8)"]
    assert sink.line == 7 and sink.text.startswith('"Sink: Unnamed (3/8)" #107210')
    assert sink.captures["state"] == "TIMED_WAITING"
    assert "org.apache.hadoop.hdfs.DataStreamer.waitForAckedSeqno(DataStreamer.java:835)" in sink.captures["frames"]
    assert len(sink.captures["frames"].split("\n")) == 16
    assert sink.captures["daemon"] is False
    legacy = by["Legacy BucketingSink (1/1)"]
    assert legacy.captures["state"] == "WAITING"
    assert legacy.captures["frames"].split("\n")[2] == \
        "org.apache.hadoop.hdfs.DFSOutputStream.waitForAckedSeqno(DFSOutputStream.java:2037)"
    assert by["Checkpoint Timer"].captures["state"] == "BLOCKED"
    assert "waiting to lock <0x000000073f9f1f00>" in by["Checkpoint Timer"].captures["locks"]
    assert by["main"].captures["status"] == "waiting on condition"
    assert by["VM Thread"].captures["state"] == "" and by["VM Thread"].captures["frames"] == ""
    assert by["VM Thread"].captures["status"] == "runnable"


TM_OUT = """\
log4j:WARN No appenders could be found for logger (org.apache.flink.configuration.GlobalConfiguration).
"quoted" line printed by user code nid=0x1 before any dump
Starting TaskManager with 8 slots
2019-04-23 17:39:19
Full thread dump OpenJDK 64-Bit Server VM (25.212-b04 mixed mode):

"DataStreamer for file /flink/part-0-6.in-progress" #107220 daemon prio=5 os_prio=0 tid=0x00007f1e7c450800 nid=0x28ab40 in Object.wait() [0x00007f1e3a4ba000]
   java.lang.Thread.State: TIMED_WAITING (on object monitor)
	at java.lang.Object.wait(Native Method)
	at org.apache.hadoop.hdfs.DataStreamer.run(DataStreamer.java:611)
	- locked <0x000000073f9f2168> (a java.util.LinkedList)

"VM Thread" os_prio=0 tid=0x00007f1f2c0f3000 nid=0x27f5b0 runnable 

JNI global references: 256

Heap
 par new generation   total 1887488K, used 123456K [0x00000005c0000000, 0x0000000640000000, 0x0000000640000000)
  eden space 1677824K,   7% used [0x00000005c0000000, 0x00000005c78e2c40, 0x0000000626680000)
2019-04-23 17:39:20,001 INFO  org.apache.flink.runtime.taskexecutor.TaskExecutor - still running
"""


def test_dump_embedded_in_out_file(tmp_path):
    facts = extract_facts(_file(tmp_path, "hadoop-081-159/taskmanager.out", TM_OUT, "log", "flink-taskmanager"))
    assert [(f.captures["value"], f.line) for f in facts] == [
        ("DataStreamer for file /flink/part-0-6.in-progress", 7), ("VM Thread", 13)]
    assert facts[0].timestamp == "2019-04-23T17:39:19"
    assert facts[0].captures["frames"].endswith("DataStreamer.run(DataStreamer.java:611)")


def test_dump_in_log_found_by_head_sniff(tmp_path):
    text = "2019-04-23 17:39:18,000 INFO  Main - dumping threads\n" + THREAD_DUMP
    facts = extract_facts(_file(tmp_path, "jvm-threads.log", text, "log"))
    assert len(facts) == 8
    raw = extract_facts(_file(tmp_path, "threads.log", SEED_000_JSTACK.read_text(), "log"))
    assert [f.captures["state"] for f in raw] == ["TIMED_WAITING"]


# ---------------------------------------------------------------- dispatch and robustness

@pytest.mark.parametrize("kind", ["config", "gc", "jstack", "netstat", "log"])
def test_empty_and_binary_files_never_raise(tmp_path, kind):
    name = {"config": "core-site.xml"}.get(kind, f"x.{kind}")
    assert extract_facts(_file(tmp_path, name, "", kind)) == []
    garbage = "\ufffd\x00[GC (\n\"\" nid=\n<property><name>\n" * 20
    assert isinstance(extract_facts(_file(tmp_path, name, garbage, kind)), list)


def test_missing_file_is_a_note_not_an_exception(tmp_path):
    f = BundleFile(path="gone/gc.log", disk_path=str(tmp_path / "nope"), size=0, host=None,
                   component="unknown", kind="gc")
    notes: list[str] = []
    assert extract_facts(f, notes) == []
    assert len(notes) == 1 and notes[0].startswith("gone/gc.log: no facts")


def test_analyzers_facts_does_not_import_django_or_kb():
    import ast
    pkg = Path(__file__).resolve().parents[2] / "analyzers" / "facts"
    for src in pkg.glob("*.py"):
        tree = ast.parse(src.read_text())
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            for name in names:
                assert name.split(".")[0] not in ("django", "kb"), f"{src.name} imports {name}"


def test_a_config_that_cannot_be_read_says_so_in_the_result_notes(tmp_path):
    from analyzers.engine import analyze_paths
    from tests.helpers import SEED_BUNDLES, runbook_specs

    bundle = tmp_path / "bundle" / "hadoop-080-037"
    (bundle / "conf").mkdir(parents=True)
    (bundle / "conf" / "hdfs-site.xml").write_text(HDFS_SITE.replace("<value>10</value>", "<value>10</valu>"))
    seed_kern = SEED_BUNDLES / "000-flink-hdfs-openforwrite-after-soft-lockup" / "hadoop-080-037" / "kern.log"
    (bundle / "kern.log").write_bytes(seed_kern.read_bytes())

    result = analyze_paths([str(bundle.parent)], runbook_specs())

    assert any(n.startswith("hadoop-080-037/conf/hdfs-site.xml: not read as Hadoop XML config")
               for n in result["notes"]), result["notes"]
