"""Which daemon wrote a log, from the loggers in its first lines (when the path says nothing).

A docker/kubectl log named after a container, `app.log` or `output.txt` says nothing about its
writer, yet a daemon's own classes log under their class name from startup on and in its main
loop. Only the writing process logs under its own daemon classes: a client or another daemon
prints them at most inside a stack frame (`at ...HMaster.run(HMaster.java:1)`) or an exception
text, so a name counts only in logger position, followed by the layout's separator:

    2020-03-30 10:00:01,123 INFO  [main] master.HMaster: STARTING service HMaster   (HBase %c{2}: )
    2020-03-30 10:00:01,123 INFO org.apache.hadoop.hdfs.server.namenode.NameNode: ... (Hadoop %c: )
    [2020-03-30 10:00:01,123] INFO [KafkaServer id=1] started (kafka.server.KafkaServer)  (%m (%c))
    2020-03-30 10:00:01,123 [myid:1] - INFO  [main:QuorumPeerMain@127] - ...       ([%t:%C{1}@%L])

The class names and layouts were checked in upstream source:
    apache/hbase@07e63c83 conf/log4j.properties (%c{2}: );
      apache/hbase@6a6e3f46 hbase-server/src/main/java/org/apache/hadoop/hbase/master/HMaster.java,
      .../hbase/regionserver/HRegionServer.java (@50f3c957), HRegion.java (@540ede37),
      handler/CloseRegionHandler.java (@41e1677c)
    apache/kafka@3.6.2 config/log4j.properties ("%m (%c)"); core/src/main/scala/kafka/server/
      KafkaServer.scala, KafkaRaftServer.scala, KafkaConfig.scala, ReplicaManager.scala, BrokerServer.scala
    apache/zookeeper@release-3.8.4 conf/logback.xml, @release-3.4.14 conf/log4j.properties
      ([%t:%C{1}@%L]); zookeeper-server/src/main/java/org/apache/zookeeper/server/
      ZooKeeperServerMain.java, ZooKeeperServer.java, NIOServerCnxnFactory.java,
      quorum/QuorumPeerMain.java, quorum/QuorumPeer.java
    apache/hadoop 3.3.2 (copy bambrow/hadoop-3.3.2-src@20bd8ed8)
      hadoop-common-project/hadoop-common/src/main/conf/log4j.properties (%c: ); hadoop-hdfs/.../hdfs/server/namenode/NameNode.java, FSNamesystem.java,
      datanode/DataNode.java; hadoop-yarn-server-resourcemanager/.../resourcemanager/
      ResourceManager.java, RMAppManager.java, ResourceTrackerService.java;
      hadoop-yarn-server-nodemanager/.../nodemanager/NodeManager.java, DirectoryCollection.java,
      containermanager/ContainerManagerImpl.java
    apache/hive 2.3.9 (copy cqdxwjd/apache-hive-2.3.9-src@0954959)
      common/src/main/resources/hive-log4j2.properties (%c{2}: );
      service/src/java/org/apache/hive/service/server/HiveServer2.java,
      metastore/src/java/org/apache/hadoop/hive/metastore/HiveMetaStore.java
Flink's entry points and Spark's backends are read in analyzers/hosts.py (_MAIN_CLASSES).
"""

from __future__ import annotations

import re


def _logger(*classes: str) -> re.Pattern:
    """A class name in logger position: after a space, '[', '(' or ':' (ZooKeeper's [thread:Class@n]),
    with or without its package, and followed by ': ', ' - ', ')', ':<line>)', '@<line>' or
    ' (<thread>): ' (the %c (%t): layout of some Hadoop distributions)."""
    names = "|".join(classes)
    return re.compile(r"(?:^|[\s\[(:])(?:[\w$]+\.)*(?:" + names + r")(?=: | +- |\)|:\d+\)|@\d| \([^()]*\): )", re.M)


# First match wins. HBase before ZooKeeper: a standalone HMaster runs a ZooKeeper server in process;
# HMaster before HRegionServer: HMaster extends HRegionServer, so a master logs both.
# HiveServer2 before the metastore: HiveServer2 with an embedded metastore logs HiveMetaStore too.
DAEMON_LOGGERS: list[tuple[re.Pattern, str]] = [
    (_logger(r"master\.HMaster", r"master\.HMasterCommandLine"), "hbase-master"),
    # A region and its open/close handlers live in a regionserver (a 2.x master's own master:store
    # region logs HRegion too, hence HMaster first).
    (_logger(r"regionserver\.HRegionServer", r"regionserver\.HRegionServerCommandLine", r"regionserver\.HRegion",
             r"regionserver\.handler\.(?:Open|Close)RegionHandler"), "hbase-regionserver"),
    (_logger(r"kafka\.server\.KafkaServer", r"kafka\.server\.KafkaRaftServer", r"kafka\.server\.KafkaConfig",
             r"kafka\.server\.ReplicaManager", r"kafka\.server\.BrokerServer"), "kafka-broker"),
    (_logger(r"server\.HiveServer2"), "hive-server2"),
    (_logger(r"metastore\.HiveMetaStore"), "hive-metastore"),
    # Flink has its own resourcemanager package (org.apache.flink.runtime.resourcemanager).
    (_logger(r"(?<!runtime\.)resourcemanager\.(?:ResourceManager|RMAppManager|ResourceTrackerService)"),
     "yarn-resourcemanager"),
    (_logger(r"nodemanager\.NodeManager", r"containermanager\.ContainerManagerImpl", r"nodemanager\.DirectoryCollection"),
     "yarn-nodemanager"),
    (_logger(r"namenode\.NameNode", r"namenode\.FSNamesystem"), "hdfs-namenode"),
    (_logger(r"datanode\.DataNode"), "hdfs-datanode"),
    # The ZooKeeper layout prints the class without its package ([main:QuorumPeerMain@127]).
    (_logger(r"QuorumPeerMain", r"ZooKeeperServerMain", r"QuorumPeer", r"ZooKeeperServer",
             r"NIOServerCnxnFactory"), "zookeeper"),
]


def component_from_loggers(text: str) -> str | None:
    """The daemon whose own loggers the text holds, or None."""
    return next((component for rx, component in DAEMON_LOGGERS if rx.search(text)), None)
