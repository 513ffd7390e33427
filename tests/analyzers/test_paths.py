"""classify() on real-looking bundle paths; member-name safety and display escaping."""

import pytest

from analyzers.paths import classify, escape_name, fix_name, is_host_like, safe_member_path

CASES = [
    # the seed bundles
    ("hadoop-080-037/kern.log", ("hadoop-080-037", "kernel", "log")),
    ("hadoop-080-037/flink-jobmanager.log", ("hadoop-080-037", "flink-jobmanager", "log")),
    ("hadoop-081-159/flink-taskmanager.log", ("hadoop-081-159", "flink-taskmanager", "log")),
    ("hadoop-081-159/jstack-taskmanager.txt", ("hadoop-081-159", "flink-taskmanager", "jstack")),
    ("flink-taskmanager/taskmanager.log", (None, "flink-taskmanager", "log")),
    ("flink-jobmanager/jobmanager.log", (None, "flink-jobmanager", "log")),
    ("c1-hd-dn18/hbase-regionserver.log", ("c1-hd-dn18", "hbase-regionserver", "log")),
    ("dn-src/hadoop-hdfs-datanode.log", ("dn-src", "hdfs-datanode", "log")),
    ("dn2/hadoop-hdfs-datanode.log", ("dn2", "hdfs-datanode", "log")),
    # Flink daemon names: the host comes from the name when no directory gives one
    ("logs/flink-root-taskexecutor-0-worker7.log", ("worker7", "flink-taskmanager", "log")),
    ("flink-root-taskexecutor-2-hadoop-081-159.log.1", ("hadoop-081-159", "flink-taskmanager", "log")),
    ("log/flink-flink-taskmanager-0-tm-host-3.out", ("tm-host-3", "flink-taskmanager", "log")),
    ("flink-root-standalonesession-0-master1.log", ("master1", "flink-jobmanager", "log")),
    ("worker-7/flink-root-taskexecutor-0-other9.log", ("worker-7", "flink-taskmanager", "log")),
    ("var/log/flink/flink-yarn-jobmanager-1-nm3.example.com.log", ("nm3.example.com", "flink-jobmanager", "log")),
    ("flink-root-historyserver-0-hs1.log", ("hs1", "flink-historyserver", "log")),
    # the Hadoop family, rotated in every style
    ("hadoop-hdfs-datanode-hadoop-080-037.log", ("hadoop-080-037", "hdfs-datanode", "log")),
    ("hadoop-hdfs-namenode-nn1.log.2019-04-23", ("nn1", "hdfs-namenode", "log")),
    ("hadoop-hdfs-secondarynamenode-nn2.log", ("nn2", "hdfs-secondarynamenode", "log")),
    ("hadoop-hdfs-journalnode-jn1.log.3", ("jn1", "hdfs-journalnode", "log")),
    ("hadoop-hdfs-zkfc-nn1.log", ("nn1", "hdfs-zkfc", "log")),
    ("hadoop-cmf-hdfs-DATANODE-dn5.example.com.log.out", ("dn5.example.com", "hdfs-datanode", "log")),
    ("hadoop-hdfs-datanode-10-0-0-5.log.2.gz", ("10-0-0-5", "hdfs-datanode", "log")),
    ("yarn-yarn-nodemanager-c1-hd-dn18.log", ("c1-hd-dn18", "yarn-nodemanager", "log")),
    ("yarn-yarn-resourcemanager-rm1.log.2019-04-23-17", ("rm1", "yarn-resourcemanager", "log")),
    ("hbase-hbase-regionserver-rs12.log.1", ("rs12", "hbase-regionserver", "log")),
    ("hbase-hbase-master-hm1.out", ("hm1", "hbase-master", "log")),
    ("mapred-mapred-historyserver-hs2.log", ("hs2", "mapreduce-historyserver", "log")),
    # ZooKeeper, Kafka, Spark
    ("zk1/zookeeper.log", ("zk1", "zookeeper", "log")),
    ("zk-a/zookeeper.out.1", ("zk-a", "zookeeper", "log")),
    ("zookeeper-zk-server-zk3.out", ("zk3", "zookeeper", "log")),
    ("broker-1/server.log", ("broker-1", "kafka-broker", "log")),
    ("broker-1/server.log.2019-04-23-17", ("broker-1", "kafka-broker", "log")),
    ("broker2/controller.log", ("broker2", "kafka-controller", "log")),
    ("kafka/state-change.log", (None, "kafka-controller", "log")),
    ("worker3/app-20190423173919-0000/1/stderr", ("worker3", "spark-executor", "log")),
    ("userlogs/application_1556_0001/container_1556_0001_01_000001/stderr", (None, "spark-driver", "log")),
    ("spark/driver/stdout", (None, "spark-driver", "log")),
    ("spark-root-org.apache.spark.deploy.worker.Worker-1-w4.out", ("w4", "spark-worker", "log")),
    # OS and kernel
    ("dn3/dmesg", ("dn3", "kernel", "log")),
    ("dn3/dmesg.txt", ("dn3", "kernel", "log")),
    ("10.0.0.5/messages", ("10.0.0.5", "os", "log")),
    ("ip-10-0-0-5/syslog.1", ("ip-10-0-0-5", "os", "log")),
    ("hadoop-080-037/kern.log.2.gz", ("hadoop-080-037", "kernel", "log")),
    # GC logs
    ("hadoop-081-159/gc.log", ("hadoop-081-159", "jvm", "gc")),
    ("hadoop-081-159/gc.log.0.current", ("hadoop-081-159", "jvm", "gc")),
    ("dn2/gc-2019-04-23_17-38.log", ("dn2", "jvm", "gc")),
    ("dn2/namenode-gc.log.1", ("dn2", "hdfs-namenode", "gc")),
    ("tm1/taskmanager.gc", ("tm1", "flink-taskmanager", "gc")),
    ("flink-taskmanager/gc.log", (None, "flink-taskmanager", "gc")),
    # configs
    ("c1-hd-dn18/conf/hdfs-site.xml", ("c1-hd-dn18", "hdfs", "config")),
    ("conf/core-site.xml", (None, "hdfs", "config")),
    ("etc/hadoop/yarn-site.xml", (None, "yarn", "config")),
    ("hbase/conf/hbase-site.xml", (None, "hbase", "config")),
    ("flink/conf/flink-conf.yaml", (None, "flink", "config")),
    ("flink-1.19.1/conf/config.yaml", (None, "flink", "config")),
    ("zk1/conf/zoo.cfg", ("zk1", "zookeeper", "config")),
    ("broker-1/config/server.properties", ("broker-1", "kafka", "config")),
    ("spark/conf/spark-defaults.conf", (None, "spark", "config")),
    ("flink/conf/log4j.properties", (None, "flink", "config")),
    # netstat and thread dumps
    ("dn2/netstat-anp.txt", ("dn2", "os", "netstat")),
    ("dn2/ss-tanp.txt", ("dn2", "os", "netstat")),
    ("nn1/netstat.txt", ("nn1", "os", "netstat")),
    ("tm1/jstack.12345", ("tm1", "jvm", "jstack")),
    ("dn2/datanode-threaddump-1.txt", ("dn2", "hdfs-datanode", "jstack")),
    ("hadoop-081-159/taskmanager.tdump", ("hadoop-081-159", "flink-taskmanager", "jstack")),
    # wrappers that are not hosts; the host is further down
    ("incident-2019-04-23/hadoop-080-037/kern.log", ("hadoop-080-037", "kernel", "log")),
    ("bundle-20190423/dn2/hadoop-hdfs-datanode.log", ("dn2", "hdfs-datanode", "log")),
    ("logs/dn2/x.log", ("dn2", "unknown", "log")),
    ("dn2/flink-1.15.2/log/flink-root-taskexecutor-0-other.log", ("dn2", "flink-taskmanager", "log")),
    ("prod2-logs/2024-03-08/dn2/x.log", ("dn2", "unknown", "log")),
    ("nn1/flink-1.17.2/worker-7/taskmanager.log", ("worker-7", "flink-taskmanager", "log")),   # the deepest
    ("app.log", (None, "unknown", "log")),
    ("notes/readme.txt", (None, "unknown", "log")),
]


@pytest.mark.parametrize("path,want", CASES, ids=[c[0] for c in CASES])
def test_it_classifies_real_looking_paths(path, want):
    assert classify(path) == want


@pytest.mark.parametrize("name", ["dn2", "c1-hd-dn18", "hadoop-081-159", "worker-7", "worker7", "10.0.0.5",
                                  "dn-src", "zk-a", "nn1.example.com", "ip-10-0-0-5", "broker-1"])
def test_it_takes_host_like_directory_names_for_hosts(name):
    assert is_host_like(name)


@pytest.mark.parametrize("name", ["logs", "log", "var", "flink-taskmanager", "taskmanager", "conf", "hdfs",
                                  "2019-04-23", "flink-1.15.2", "hadoop-3.3.6", "kafka_2.13-3.5.0", "0",
                                  "container_1556_0001_01_000002", "application_1556_0001",
                                  "app-20190423173919-0000", "bundle-20190423", "nm-logs", "node", "workers",
                                  "prod2-logs", "diag-bundle-3", "case42_export", "support-2024", "ticket-4711"])
def test_it_does_not_take_layout_names_for_hosts(name):
    assert not is_host_like(name)


@pytest.mark.parametrize("name,want", [
    ("host1/logs/app.log", "host1/logs/app.log"),
    ("./a//b/./c.log", "a/b/c.log"),
    ("dir/", None),
    ("<img src=x onerror=alert(1)>.log", "<img src=x onerror=alert(1)>.log"),
    ("数据节点/日志.log", "数据节点/日志.log"),
])
def test_it_keeps_ordinary_member_names(name, want):
    assert safe_member_path(name) == want


@pytest.mark.parametrize("name,reason", [
    ("../../etc/passwd", "path traversal"),
    ("logs/../../x.log", "path traversal"),
    ("..\\..\\win.ini", "path traversal"),
    ("/etc/cron.d/x", "absolute path"),
    ("\\\\server\\share\\x.log", "absolute path"),
    ("C:\\Windows\\win.ini", "absolute path"),
    ("a\nb.log", "control character in name"),
    ("a\x00b.log", "control character in name"),
    ("evil\u202egol.exe", "control character in name"),
    ("x" * 256 + ".log", "name too long"),
    ("日" * 86 + ".log", "name too long"),          # 258 bytes in UTF-8
    ("/".join(["d" * 200] * 25), "name too long"),
])
def test_it_refuses_dangerous_member_names(name, reason):
    with pytest.raises(ValueError, match=reason):
        safe_member_path(name)


def test_it_escapes_names_for_display():
    assert escape_name("a\nb\x00c\u202ed.log") == "a\\x0ab\\x00c\\u202ed.log"
    assert escape_name("bad\udcffbyte") == "bad\\xffbyte"
    assert escape_name("日志 ok.log") == "日志 ok.log"
    assert escape_name("x" * 1000).endswith("...") and len(escape_name("x" * 1000)) == 303


def test_it_repairs_undecodable_names_as_gb18030_or_replacement():
    gbk = "数据节点.log".encode("gbk").decode("utf-8", "surrogateescape")
    assert fix_name(gbk) == "数据节点.log"
    assert fix_name("ok.log") == "ok.log"
    assert fix_name(b"\xff\xff.log".decode("utf-8", "surrogateescape")) == "\ufffd\ufffd.log"


@pytest.mark.parametrize("paths,depth", [
    (["prod2-logs/dn1/a.log", "prod2-logs/dn2/b.log"], 1),      # a top folder over hosts
    (["prod2-logs/a.log", "prod2-logs/b.log"], 1),              # a top folder over files
    (["a/b/rs4/x.log", "a/b/rs4/gc.log"], 2),                   # a chain ending in a host
    (["rs4/x.log"], 0), (["tsd-2/opentsdb.log"], 0), (["datanode/hadoop-datanode.log"], 0),
    (["flink-taskmanager/taskmanager.log"], 0),                 # a component folder keeps meaning
    (["2024-03-08/x.log"], 1), (["flink-1.17.2/log/x.log"], 2),
    (["dn1/a.log", "dn2/b.log"], 0), (["a.log"], 0),
])
def test_it_finds_the_folders_that_only_wrap_a_bundle(paths, depth):
    from analyzers.hosts import wrapper_depth

    assert wrapper_depth(paths) == depth
