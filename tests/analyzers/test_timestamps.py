"""Record headers (analyzers/timestamps/).

Every line below is either written here in the layout of the named system, or
quoted from tests/fixtures/seed-bundles (marked "seed").  No line is copied
from any third-party log collection.
"""

from __future__ import annotations

import datetime
import re
import subprocess
import sys
from pathlib import Path

import pytest

from analyzers.model import Header
from analyzers.timestamps import infer_year, is_record_start, parse_header

SEEDS = Path(__file__).resolve().parents[1] / "fixtures" / "seed-bundles"
ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{3})?$")


def H(ts, level=None, logger=None, thread=None, host=None):
    return Header(ts, level, logger, thread, host)


# (id, line, default_year, expected Header)
CASES = [
    # ---- log4j / Hadoop / HBase / YARN --------------------------------------------------
    ("log4j-hdfs-seed",
     "2016-08-06 03:44:22,981 INFO org.apache.hadoop.hdfs.server.datanode.DataNode: Exception for "
     "BP-360285305-10.130.1.11-1444619256876:blk_1124743217_51010856",
     None, H("2016-08-06T03:44:22.981", "INFO", "org.apache.hadoop.hdfs.server.datanode.DataNode")),
    ("log4j-hbase-fatal-seed",
     "2016-08-06 03:45:42,547 FATAL [regionseerver/c1-hd-dn18.bdp.idc/10.130.1.37:16020.logRoller] "
     "regionserver.HRegionServer: ABORTING region server c1-hd-dn18.bdp.idc,16020,1469772903345: "
     "Failed log close in log roller",
     None, H("2016-08-06T03:45:42.547", "FATAL", "regionserver.HRegionServer",
             "regionseerver/c1-hd-dn18.bdp.idc/10.130.1.37:16020.logRoller")),
    ("log4j-hbase-thread-with-spaces",
     "2021-02-11 08:15:02,004 WARN  [DataStreamer for file /hbase/WALs/rs7.example,16020,1/wal.1 "
     "block BP-1-10.0.0.1-1:blk_42_7] hdfs.DataStreamer: Error Recovery for block blk_42_7",
     None, H("2021-02-11T08:15:02.004", "WARN", "hdfs.DataStreamer",
             "DataStreamer for file /hbase/WALs/rs7.example,16020,1/wal.1 block BP-1-10.0.0.1-1:blk_42_7")),
    ("log4j-mapreduce-thread",
     "2018-01-09 11:02:33,120 ERROR [RMCommunicator Allocator] "
     "org.apache.hadoop.mapreduce.v2.app.rm.RMContainerAllocator: ERROR IN CONTACTING RM.",
     None, H("2018-01-09T11:02:33.120", "ERROR",
             "org.apache.hadoop.mapreduce.v2.app.rm.RMContainerAllocator", "RMCommunicator Allocator")),
    ("log4j-yarn-warning",
     "2018-01-09 11:02:33,120 WARNING org.apache.hadoop.yarn.server.nodemanager.NodeStatusUpdaterImpl: "
     "Node is out of sync with ResourceManager",
     None, H("2018-01-09T11:02:33.120", "WARN",
             "org.apache.hadoop.yarn.server.nodemanager.NodeStatusUpdaterImpl")),
    ("log4j-class-and-line",
     "2018-01-09 11:02:33,120 DEBUG RetryInvocationHandler:134 - Exception while invoking call",
     None, H("2018-01-09T11:02:33.120", "DEBUG", "RetryInvocationHandler")),
    ("log4j-no-logger",
     "2018-01-09 11:02:33,120 INFO Starting the service now",
     None, H("2018-01-09T11:02:33.120", "INFO")),
    ("logback-thread-first",
     "2018-01-09 11:02:33.120 [pool-2-thread-5] ERROR com.example.ingest.Writer - flush failed",
     None, H("2018-01-09T11:02:33.120", "ERROR", "com.example.ingest.Writer", "pool-2-thread-5")),
    ("timestamp-only",
     "2018-01-09 11:02:33 something happened",
     None, H("2018-01-09T11:02:33")),
    # ---- Flink ---------------------------------------------------------------------------
    ("flink-default-seed",
     "2020-10-16 17:05:05,939 WARN org.apache.flink.shaded.zookeeper.org.apache.zookeeper.ClientCnxn - "
     "Client session timed out, have not heard from server in 29068ms for sessionid 0x30135fa8005449f",
     None, H("2020-10-16T17:05:05.939", "WARN",
             "org.apache.flink.shaded.zookeeper.org.apache.zookeeper.ClientCnxn")),
    ("flink-1.13-padded-mdc",
     "2022-03-08 14:20:11,502 INFO  org.apache.flink.runtime.jobmaster.JobMaster                  [] - "
     "Disconnect TaskExecutor container_e02_1_0042_01_000003 because: heartbeat timed out",
     None, H("2022-03-08T14:20:11.502", "INFO", "org.apache.flink.runtime.jobmaster.JobMaster")),
    ("flink-bracket-level-seed",
     "[WARN ] 2019-04-23 17:39:19,323(437903235) --> [main-SendThread(172.20.76.3:17711)] "
     "org.apache.flink.shaded.zookeeper.org.apache.zookeeper.ClientCnxn$SendThread.run(ClientCnxn.java:1108): "
     "Client session timed out, have not heard from server in 129565",
     None, H("2019-04-23T17:39:19.323", "WARN",
             "org.apache.flink.shaded.zookeeper.org.apache.zookeeper.ClientCnxn$SendThread",
             "main-SendThread(172.20.76.3:17711)")),
    ("flink-bracket-level-seed-tm",
     "[INFO ] 2019-04-23 17:38:05,586(437798687) --> [flink-akka.actor.default-dispatcher-2] "
     "org.apache.flink.runtime.taskmanager.Task.transitionState(Task.java:940): Sink: BucketingTableSink",
     None, H("2019-04-23T17:38:05.586", "INFO", "org.apache.flink.runtime.taskmanager.Task",
             "flink-akka.actor.default-dispatcher-2")),
    ("flink-bracket-level-lambda",
     "[ERROR] 2019-04-23 17:40:01,002(437945914) --> [flink-akka.actor.default-dispatcher-5] "
     "org.apache.flink.runtime.taskexecutor.TaskExecutor.lambda$onFatalError$2(TaskExecutor.java:1508): x",
     None, H("2019-04-23T17:40:01.002", "ERROR", "org.apache.flink.runtime.taskexecutor.TaskExecutor",
             "flink-akka.actor.default-dispatcher-5")),
    ("bracket-level-then-log4j",
     "[WARN] 2019-04-23 17:40:01,002 [main] org.example.Job: restarting",
     None, H("2019-04-23T17:40:01.002", "WARN", "org.example.Job", "main")),
    # ---- ISO 8601 ------------------------------------------------------------------------
    ("iso-z", "2020-10-16T17:05:05.939Z ERROR [main] org.example.App: boom",
     None, H("2020-10-16T17:05:05.939", "ERROR", "org.example.App", "main")),
    ("iso-offset-colon", "2020-10-16T17:05:05.939+08:00 INFO org.example.App - up",
     None, H("2020-10-16T17:05:05.939", "INFO", "org.example.App")),
    ("iso-comma-hive", "2020-10-16T17:05:05,939 INFO  [main] conf.HiveConf: Found configuration file",
     None, H("2020-10-16T17:05:05.939", "INFO", "conf.HiveConf", "main")),
    ("iso-micros-trimmed", "2020-10-16T17:05:05.939871-0700 WARN org.example.App - slow",
     None, H("2020-10-16T17:05:05.939", "WARN", "org.example.App")),
    ("iso-nanos-trimmed", "2020-10-16T17:05:05.939871555Z",
     None, H("2020-10-16T17:05:05.939")),
    ("iso-one-digit-fraction", "2020-10-16 17:05:05.9 INFO x.Y: z",
     None, H("2020-10-16T17:05:05.900", "INFO", "x.Y")),
    ("iso-rsyslog-host-tag",
     "2019-04-23T17:39:19.323456+08:00 hadoop-080-037 kernel: [437903.2] watchdog: BUG: soft lockup",
     None, H("2019-04-23T17:39:19.323", None, "kernel", None, "hadoop-080-037")),
    # ---- syslog --------------------------------------------------------------------------
    ("syslog-kern-seed",
     "Apr 23 17:39:19 hadoop-080-037 kernel: NMI watchdog: BUG: soft lockup - CPU#12 stuck for 22s! "
     "[java:1527146]",
     2019, H("2019-04-23T17:39:19", None, "kernel", None, "hadoop-080-037")),
    ("syslog-kern-call-trace-is-a-record",      # each syslog line has its own prefix
     "Apr 23 17:39:19 hadoop-080-037 kernel: Call Trace:",
     2019, H("2019-04-23T17:39:19", None, "kernel", None, "hadoop-080-037")),
    ("syslog-linux-pam-tag",
     "Sep  2 03:11:40 gateway sshd(pam_unix)[8812]: session opened for user ops by (uid=0)",
     2005, H("2005-09-02T03:11:40", None, "sshd(pam_unix)", None, "gateway")),
    ("syslog-openssh",
     "Jan 17 22:05:13 bastion-2 sshd[41177]: Failed password for invalid user test from 198.51.100.7 "
     "port 50122 ssh2",
     2017, H("2017-01-17T22:05:13", None, "sshd", None, "bastion-2")),
    ("syslog-mac",
     "Aug  4 10:22:31 studio-mbp-7 com.apple.xpc.launchd[1] (com.example.agent[902]): Service exited",
     2017, H("2017-08-04T10:22:31", None, "com.apple.xpc.launchd", None, "studio-mbp-7")),
    ("syslog-no-host",
     "Aug  4 10:22:31 kernel: eth0: link down",
     2017, H("2017-08-04T10:22:31", None, "kernel")),
    ("syslog-pri-3164",
     "<12>Feb  9 01:02:03 dn-4 datanode: disk failure on /data/3",
     2021, H("2021-02-09T01:02:03", "WARN", "datanode", None, "dn-4")),
    ("syslog-rfc5424",
     "<131>1 2021-06-30T23:59:58.123456+02:00 nn-1.example.org hdfs 4242 ID7 - NameNode safe mode ON",
     None, H("2021-06-30T23:59:58.123", "ERROR", "hdfs", None, "nn-1.example.org")),
    ("syslog-rfc5424-nil-fields",
     "<14>1 2021-06-30T23:59:58Z - - - - - hello",
     None, H("2021-06-30T23:59:58", "INFO")),
    ("syslog-rfc5424-no-pri",
     "1 2021-06-30T23:59:58.1Z zk-3 zookeeper - - - quorum lost",
     None, H("2021-06-30T23:59:58.100", None, "zookeeper", None, "zk-3")),
    # ---- dmesg ---------------------------------------------------------------------------
    ("dmesg-uptime", "[873421.552019] INFO: task java:1527146 blocked for more than 120 seconds.",
     None, H(None)),
    ("dmesg-uptime-padded", "[    4.120880] EXT4-fs (sda2): mounted filesystem with ordered data mode",
     None, H(None)),
    ("dmesg-T", "[Tue Apr 23 17:39:19 2019] Out of memory: Killed process 31337 (java)",
     None, H("2019-04-23T17:39:19")),
    ("dmesg-T-space-padded-day", "[Wed Jan  2 03:04:05 2019] watchdog: BUG: soft lockup",
     None, H("2019-01-02T03:04:05")),
    # ---- HDFS (yyMMdd HHmmss), Spark/YARN (yy/MM/dd), Go (yyyy/MM/dd) ---------------------
    ("hdfs-yymmdd",
     "090312 071502 3311 WARN dfs.DataNode$DataXceiver: 10.0.0.5:50010:Got exception while serving "
     "blk_-1 to /10.0.0.9",
     None, H("2009-03-12T07:15:02", "WARN", "dfs.DataNode$DataXceiver")),
    ("spark-yy-slash",
     "19/11/02 06:41:09 ERROR executor.Executor: Exception in task 3.0 in stage 7.0 (TID 88)",
     None, H("2019-11-02T06:41:09", "ERROR", "executor.Executor")),
    ("spark3-short-logger",
     "23/02/14 10:00:01 WARN TaskSetManager: Lost task 0.0 in stage 1.0",
     None, H("2023-02-14T10:00:01", "WARN", "TaskSetManager")),
    ("yarn-yy-slash-thread",
     "19/11/02 06:41:09 INFO [main] client.RMProxy: Connecting to ResourceManager",
     None, H("2019-11-02T06:41:09", "INFO", "client.RMProxy", "main")),
    ("go-yyyy-slash", "2019/11/02 06:41:09.250341 http: TLS handshake error from 10.1.1.1:5",
     None, H("2019-11-02T06:41:09.250")),
    # ---- ZooKeeper -----------------------------------------------------------------------
    ("zookeeper",
     "2016-03-01 12:00:09,015 - WARN  [QuorumPeer[myid=2]/0:0:0:0:0:0:0:0:2181:Follower@89] - "
     "Exception when following the leader",
     None, H("2016-03-01T12:00:09.015", "WARN", "Follower", "QuorumPeer[myid=2]/0:0:0:0:0:0:0:0:2181")),
    ("zookeeper-myid",
     "2016-03-01 12:00:09,015 [myid:2] - ERROR [CommitProcessor:2:NIOServerCnxn@360] - Unexpected",
     None, H("2016-03-01T12:00:09.015", "ERROR", "NIOServerCnxn", "CommitProcessor:2")),
    ("zookeeper-listener",
     "2016-03-01 12:00:09,015 - INFO  [/10.0.0.3:3888:QuorumCnxManager$Listener@541] - Received",
     None, H("2016-03-01T12:00:09.015", "INFO", "QuorumCnxManager$Listener", "/10.0.0.3:3888")),
    # ---- Kafka, Airflow, Elasticsearch ---------------------------------------------------
    ("kafka",
     "[2021-03-04 10:11:12,345] WARN [ReplicaFetcher replicaId=3, leaderId=1, fetcherId=0] "
     "Error in response for fetch request (kafka.server.ReplicaFetcherThread)",
     None, H("2021-03-04T10:11:12.345", "WARN", "kafka.server.ReplicaFetcherThread")),
    ("kafka-no-trailing-logger", "[2021-03-04 10:11:12,345] INFO starting",
     None, H("2021-03-04T10:11:12.345", "INFO")),
    ("airflow", "[2021-03-04 10:11:12,345] {taskinstance.py:1482} ERROR - Task failed with exception",
     None, H("2021-03-04T10:11:12.345", "ERROR", "taskinstance.py")),
    ("elasticsearch",
     "[2021-03-04T10:11:12,345][WARN ][o.e.m.j.JvmGcMonitorService] [es-data-3] [gc][88] overhead",
     None, H("2021-03-04T10:11:12.345", "WARN", "o.e.m.j.JvmGcMonitorService")),
    # ---- GC logs -------------------------------------------------------------------------
    ("gc-jdk8-datestamp",
     "2019-04-23T17:39:19.323+0800: 1234.567: [GC (Allocation Failure) [PSYoungGen: 6144K->512K(7168K)] "
     "6144K->1200K(23552K), 0.0031 secs]",
     None, H("2019-04-23T17:39:19.323")),
    ("gc-jdk8-uptime-only", "1234.567: [Full GC (Ergonomics)  20480K->10240K(40960K), 0.2101 secs]",
     None, H(None)),
    ("gc-unified",
     "[2019-04-23T17:39:19.323+0800][info][gc] GC(12) Pause Young (Normal) (G1 Evacuation Pause) "
     "812M->301M(1024M) 31.402ms",
     None, H("2019-04-23T17:39:19.323", "INFO", "gc")),
    ("gc-unified-with-uptime",
     "[2019-04-23T17:39:19.323+0800][1234.567s][warning][gc,alloc] GC(13) To-space exhausted",
     None, H("2019-04-23T17:39:19.323", "WARN", "gc,alloc")),
    ("gc-unified-uptime-only", "[12.345s][info][gc] Using G1",
     None, H(None, "INFO", "gc")),
    ("gc-unified-uptime-millis", "[1234ms][debug][gc,heap] Heap region size: 1M",
     None, H(None, "DEBUG", "gc,heap")),
    # ---- Android, Apache, glog, Cassandra ------------------------------------------------
    ("android",
     "05-02 09:14:07.402  1311  1422 W ActivityManager: Slow operation: 62ms so far, now at startProcess",
     2017, H("2017-05-02T09:14:07.402", "WARN", "ActivityManager", "1422")),
    ("android-verbose", "05-02 09:14:07.402  1311  1311 V Launcher: onResume",
     2017, H("2017-05-02T09:14:07.402", "TRACE", "Launcher", "1311")),
    ("android-error", "05-02 09:14:07.402 22010 22010 E AndroidRuntime: FATAL EXCEPTION: main",
     2017, H("2017-05-02T09:14:07.402", "ERROR", "AndroidRuntime", "22010")),
    ("apache-2.2", "[Mon Mar 07 11:20:01 2005] [error] [client 192.0.2.44] Directory index forbidden",
     None, H("2005-03-07T11:20:01", "ERROR")),
    ("apache-2.2-notice", "[Mon Mar 07 11:20:01 2005] [notice] Apache configured -- resuming",
     None, H("2005-03-07T11:20:01", "INFO")),
    ("apache-2.4",
     "[Mon Mar 07 11:20:01.604183 2016] [proxy:warn] [pid 2211:tid 140377] AH01144: No protocol handler",
     None, H("2016-03-07T11:20:01.604", "WARN", "proxy", "140377")),
    ("glog-k8s",
     "E0705 13:01:02.123456   40117 reflector.go:138] failed to list *v1.Pod: connection refused",
     2022, H("2022-07-05T13:01:02.123", "ERROR", "reflector.go", "40117")),
    ("cassandra",
     "WARN  [GossipTasks:1] 2019-04-23 17:39:19,323 Gossiper.java:1011 - Node /10.0.0.7 has restarted",
     None, H("2019-04-23T17:39:19.323", "WARN", "Gossiper", "GossipTasks:1")),
    # ---- BGL, Thunderbird, HPC (supercomputer logs) --------------------------------------
    ("bgl-non-alert",
     "- 1120000000 2005.06.28 R11-M0-N3-C:J05-U01 2005-06-28-16.06.40.123456 R11-M0-N3-C:J05-U01 "
     "RAS KERNEL INFO 2 ddr errors(s) detected and corrected on rank 0",
     None, H("2005-06-28T16:06:40.123", "INFO", "KERNEL", None, "R11-M0-N3-C:J05-U01")),
    ("bgl-alert",
     "KERNPAN 1120000000 2005.06.28 R11-M0-N3-C:J05-U01 2005-06-28-16.06.40.000001 R11-M0-N3-C:J05-U01 "
     "RAS KERNEL FATAL kernel panic",
     None, H("2005-06-28T16:06:40.000", "FATAL", "KERNEL", None, "R11-M0-N3-C:J05-U01")),
    ("bgl-severe",
     "- 1120000000 2005.06.28 NULL 2005-06-28-16.06.40.654321 NULL RAS MMCS SEVERE idoproxy lost",
     None, H("2005-06-28T16:06:40.654", "ERROR", "MMCS", None, "NULL")),
    ("thunderbird",
     "- 1140000000 2006.02.15 bn431 Feb 15 02:40:00 bn431/bn431 kernel: ib0: multicast join failed",
     None, H("2006-02-15T02:40:00", None, "kernel", None, "bn431")),
    ("thunderbird-year-boundary",
     "- 1136073600 2006.01.01 dn12 Dec 31 23:59:59 dn12/dn12 crond[77]: (root) CMD (run-parts)",
     None, H("2005-12-31T23:59:59", None, "crond", None, "dn12")),
    ("hpc-epoch-utc",
     "4211 node-12 unix.hw state_change.available 1100000000 1 Component State Change: ok",
     None, H("2004-11-09T11:33:20", None, "unix.hw", None, "node-12")),
    # ---- HealthApp, OpenStack, Proxifier, Windows ----------------------------------------
    ("healthapp", "20180101-08:30:12:045|Step_StandStepCounter|30002312|flush sensor data",
     None, H("2018-01-01T08:30:12.045", None, "Step_StandStepCounter")),
    ("healthapp-unpadded", "20180101-8:3:2:45|Step_LSC|30002312|onStandStepChanged 12",
     None, H("2018-01-01T08:03:02.045", None, "Step_LSC")),
    ("openstack-file-prefix",
     "nova-compute.log.2017-05-16_13:55:31 2017-05-16 00:07:44.871 2931 WARNING "
     "nova.compute.resource_tracker [req-6c0a] Instance not found",
     None, H("2017-05-16T00:07:44.871", "WARN", "nova.compute.resource_tracker")),
    ("openstack-plain",
     "2017-05-16 00:07:44.871 2931 ERROR oslo_messaging.rpc.server [-] Exception during message handling",
     None, H("2017-05-16T00:07:44.871", "ERROR", "oslo_messaging.rpc.server")),
    ("proxifier", "[11.02 09:05:51] firefox.exe *64 - www.example.org:443 close, 2301 bytes sent",
     2016, H("2016-11-02T09:05:51", None, "firefox.exe")),
    ("windows-cbs",
     "2016-10-01 11:04:17, Error                 CSI    000000aa (F) Hydration failed [HRESULT = 0x8]",
     None, H("2016-10-01T11:04:17", "ERROR", "CSI")),
    ("windows-cbs-info", "2016-10-01 11:04:17, Info                  CBS    Session: 1 initialized",
     None, H("2016-10-01T11:04:17", "INFO", "CBS")),
    # ---- Python logging, Storm -----------------------------------------------------------
    ("python-logging", "2019-04-23 17:39:19,323 - kafka.conn - WARNING - connection lost",
     None, H("2019-04-23T17:39:19.323", "WARN", "kafka.conn")),
    ("storm", "2019-04-23 17:39:19.323 o.a.s.d.worker Thread-5 [ERROR] worker died",
     None, H("2019-04-23T17:39:19.323", "ERROR", "o.a.s.d.worker", "Thread-5")),
    ("bom-first-line", "\ufeff2019-04-23 17:39:19,323 INFO a.B: c",
     None, H("2019-04-23T17:39:19.323", "INFO", "a.B")),
]


@pytest.mark.parametrize("line, year, expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_parse_header(line, year, expected):
    assert parse_header(line, default_year=year) == expected
    assert is_record_start(line) is True


CONTINUATIONS = [
    "\tat org.apache.hadoop.hdfs.DFSOutputStream$DataStreamer.run(DFSOutputStream.java:502)",
    "        at org.apache.hadoop.net.SocketIOWithTimeout.doIO(SocketIOWithTimeout.java:164)",
    "at java.lang.Thread.run(Thread.java:748)",
    "Caused by: java.io.IOException: x",
    "\t... 16 more",
    "... 6 more",
    "java.io.IOException: x",
    "java.net.SocketTimeoutException: 60000 millis timeout while waiting for channel to be ready for read.",
    "org.apache.flink.util.FlinkException: JobManager responsible for x lost the leadership.",
    "AsynchronousException{java.lang.Exception: Could not materialize checkpoint 302995}",
    "BP-360285305-10.130.1.11-1444619256876:blk_1124743217_51012555 to 10.130.a.b:50010 got",
    "\t- locked <0x000000073f9f2168> (a java.util.LinkedList)",
    "   java.lang.Thread.State: TIMED_WAITING (on object monitor)",
    '"main" #1 prio=5 os_prio=0 tid=0x00007f0 nid=0x1 waiting on condition [0x00007f0]',
    "Exception in thread \"main\" java.lang.NullPointerException",
    "WARNING: An illegal reflective access operation has occurred",
    "INFO: plain text",
    "[main] ERROR x",
    "[1, 2, 3]",
    "{\"ts\": \"2019-04-23T17:39:19\"}",
    "12345 is a number",
    "2019-04-23 is a date",
    "17:39:19 no date",
    "Heap",
    " PSYoungGen      total 1234K, used 12K",
    "Apr is a month",
    "Apr 23 17:39:19",                   # syslog needs a host after the time
    "nova.log is a file name",
    "",
    "\n",
]


@pytest.mark.parametrize("line", CONTINUATIONS)
def test_continuation_lines(line):
    assert parse_header(line) is None
    assert parse_header(line, 2020) is None
    assert is_record_start(line) is False


def test_yearless_layouts_default_to_current_year():
    year = datetime.date.today().year
    h = parse_header("Apr 23 17:39:19 hadoop-080-037 kernel: NMI watchdog")
    assert h.timestamp in (f"{year}-04-23T17:39:19", f"{year + 1}-04-23T17:39:19")
    h = parse_header("05-02 09:14:07.402  1311  1422 W ActivityManager: x")
    assert h.timestamp[:4] in (str(year), str(year + 1))


def test_default_year_is_used_only_without_a_year_in_the_line():
    assert parse_header("Apr 23 17:39:19 h kernel: x", 2011).timestamp == "2011-04-23T17:39:19"
    assert parse_header("2019-04-23 17:39:19,323 INFO a.B: c", 2011).timestamp == "2019-04-23T17:39:19.323"


def test_year_zero_marks_yearless_lines():
    assert parse_header("Apr 23 17:39:19 h kernel: x", 0).timestamp == "0000-04-23T17:39:19"
    assert parse_header("2019-04-23 17:39:19,323 INFO a.B: c", 0).timestamp == "2019-04-23T17:39:19.323"


@pytest.mark.parametrize("line, expected", [
    ("2019-04-23 17:39:19,323 INFO org.example.Foo:\r", H("2019-04-23T17:39:19.323", "INFO", "org.example.Foo")),
    ("2019-04-23 17:39:19,323 INFO [main]\r", H("2019-04-23T17:39:19.323", "INFO", None, "main")),
    ("[2021-03-04 10:11:12,345] WARN x (kafka.log.Log)\r\n", H("2021-03-04T10:11:12.345", "WARN", "kafka.log.Log")),
    ("Apr 23 17:39:19 h kernel: x\r", H("2019-04-23T17:39:19", None, "kernel", None, "h")),
])
def test_line_endings_left_on_the_line(line, expected):
    assert parse_header(line, 2019) == expected


@pytest.mark.parametrize("word, level", [
    ("WARNING", "WARN"), ("warning", "WARN"), ("Warn", "WARN"), ("SEVERE", "ERROR"),
    ("error", "ERROR"), ("Info", "INFO"), ("notice", "INFO"), ("debug", "DEBUG"),
    ("TRACE", "TRACE"), ("FATAL", "FATAL"), ("CRITICAL", "FATAL"), ("FINE", "DEBUG"),
    ("FINEST", "TRACE"), ("CONFIG", "INFO"),
])
def test_level_words(word, level):
    h = parse_header(f"2019-04-23 17:39:19,323 {word} org.example.Foo: message")
    assert h.level == level
    assert h.logger == "org.example.Foo"


@pytest.mark.parametrize("letter, level", [
    ("V", "TRACE"), ("D", "DEBUG"), ("I", "INFO"), ("W", "WARN"), ("E", "ERROR"), ("F", "FATAL"),
])
def test_android_letters(letter, level):
    h = parse_header(f"11-30 23:59:59.999  100  200 {letter} Tag: m", 2018)
    assert h == H("2018-11-30T23:59:59.999", level, "Tag", "200")


@pytest.mark.parametrize("pri, level", [
    (0, "FATAL"), (2, "FATAL"), (3, "ERROR"), (4, "WARN"), (5, "INFO"), (6, "INFO"), (7, "DEBUG"),
    (8 + 3, "ERROR"), (8 * 23 + 4, "WARN"),
])
def test_syslog_pri_severity(pri, level):
    assert parse_header(f"<{pri}>Jun  1 00:00:00 h app: m", 2020).level == level


# ---- the seed bundles -----------------------------------------------------------------------

def _seed_lines():
    for p in sorted(SEEDS.rglob("*")):
        if p.is_file() and p.suffix in (".log", ".txt"):
            for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
                yield p.relative_to(SEEDS).as_posix(), i, line


def test_seed_bundle_lines_are_consistent():
    n = starts = 0
    for path, i, line in _seed_lines():
        n += 1
        h = parse_header(line, 2019)
        assert is_record_start(line) is (h is not None), (path, i, line)
        if h is not None:
            starts += 1
            assert h.timestamp is None or ISO.match(h.timestamp), (path, i, h)
            assert h.level in (None, "TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL")
        else:
            assert not re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", line), (path, i, line)
    assert n > 200 and starts > 50


def _starts(rel):
    lines = (SEEDS / rel).read_text(encoding="utf-8").splitlines()
    return [i for i, line in enumerate(lines, 1) if parse_header(line, 2019)], len(lines)


def test_seed_kern_log_every_line_is_a_record():
    starts, n = _starts("000-flink-hdfs-openforwrite-after-soft-lockup/hadoop-080-037/kern.log")
    assert len(starts) == n == 24


def test_seed_stack_traces_are_not_records():
    # the jstack dump and a file that opens mid-record have no header at all
    assert _starts("000-flink-hdfs-openforwrite-after-soft-lockup/hadoop-081-159/jstack-taskmanager.txt")[0] == []
    assert _starts("004-flink-tm-heartbeat-timeout-buckets/flink-jobmanager/jobmanager.log")[0] == []
    assert _starts("001-flink-checkpoint-hdfs-not-enough-replicas/flink-taskmanager/taskmanager.log")[0] == []
    starts, _ = _starts("003-hbase-rs-abort-pipeline-recovery/dn2/hadoop-hdfs-datanode.log")
    assert starts[:2] == [1, 7]


def test_seed_flink_jobmanager_headers():
    lines = (SEEDS / "000-flink-hdfs-openforwrite-after-soft-lockup/hadoop-080-037/flink-jobmanager.log"
             ).read_text(encoding="utf-8").splitlines()
    headers = [parse_header(line) for line in lines]
    first = headers[0]
    assert first == H("2019-04-23T17:39:19.323", "WARN",
                      "org.apache.flink.shaded.zookeeper.org.apache.zookeeper.ClientCnxn$SendThread",
                      "main-SendThread(172.20.76.3:17711)")
    assert all(h is None for line, h in zip(lines, headers) if line.startswith(("\t", "java.")))


# ---- infer_year, purity -------------------------------------------------------------------

def test_infer_year():
    assert infer_year(["2019-04-23T17:39:19.323", "2020-01-01T00:00:00"]) == 2019
    assert infer_year([
        "\tat a.B.c(B.java:1)",
        "Apr 23 17:39:19 h kernel: yearless, skipped",
        "05-02 09:14:07.402  1311  1422 W Tag: yearless, skipped",
        "[INFO ] 2018-04-23 17:39:19,323(1) --> [t] a.B.c(B.java:1): x",
    ]) == 2018
    assert infer_year(["19/11/02 06:41:09 INFO a.B: c"]) == 2019
    assert infer_year(["Apr 23 17:39:19 h kernel: x", "plain"]) is None
    assert infer_year([]) is None


def test_header_is_a_real_header():
    h = parse_header("2019-04-23 17:39:19,323 INFO a.B: c")
    assert type(h) is Header
    assert h == Header("2019-04-23T17:39:19.323", "INFO", "a.B", None, None)
    assert hash(h) == hash(Header("2019-04-23T17:39:19.323", "INFO", "a.B", None, None))
    with pytest.raises(AttributeError):
        h.level = "ERROR"


def test_no_django_or_kb_import():
    code = ("import sys, analyzers.timestamps; "
            "bad = [m for m in sys.modules if m.split('.')[0] in ('django', 'kb')]; "
            "assert not bad, bad")
    root = Path(__file__).resolve().parents[2]
    subprocess.run([sys.executable, "-c", code], cwd=root, check=True)
