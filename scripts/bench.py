"""Benchmark of the two engines on generated bundles (`make bench`, or python -m scripts.bench).

    python -m scripts.bench [--local-mb 200] [--spark-mb 1000] [--rss-mb 100 1000]
                            [--skip-spark] [--master 'local[2]'] [--data-dir bench-data]

1. Generates, once, bundles of realistic log lines in ./bench-data/ (gitignored;
   reused when present): Flink jobmanager/taskmanager (log4j layout), HDFS
   datanode/namenode, HBase regionserver, ZooKeeper and kern.log (syslog)
   from several hosts, ~90% INFO, WARN and ERROR lines, Java stack traces
   with Caused-by chains, and every seed bundle's files (tests/fixtures/
   seed-bundles) sprinkled in under case-NNN/, at the same relative paths.
2. Measures, each in its own subprocess (so each has its own peak RSS):
   - the local engine, one core (run_ranges_local), on --local-mb;
   - the Spark engine on a warm session (--master, default local[2]): one
     analysis to warm (JVM, Python workers, Hyperscan databases), then the
     timed one, on --spark-mb;
   - peak RSS of the analyzing process for each --rss-mb size (local engine),
     and of the Spark driver plus its JVM and Python workers;
   - `grep -E -c` with every signature (as POSIX ERE, one alternation) over
     the same files, for a baseline;
   - the leads' share of the local analysis (issue 12): CPU time with leads
     against the same analysis without them, best of --catalog-runs
     (`--leads-only` prints just that row).
3. Checks that the findings on each generated bundle include the runbooks the
   sprinkled seed bundles expect.
4. Prints the calibration table on the fixture set (scripts/calibration.py):
   per confidence bin, mean predicted confidence against observed precision.
5. Prints issue 12's leads figure: on the real incidents of tests/fixtures/leads,
   how often the decisive line is among the first 5 leads (scripts/leads_eval.py;
   target >= 90 %).

Targets: local >= 100 MB/s on one core; leads <= 10 % of the analysis of the
largest bundle made (1 GB, as issue 12 sets it); the Spark engine's against ripgrep and the local engine: scripts/bench_spark.py.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import time
from multiprocessing import Pool
from pathlib import Path

from tests.helpers import CATALOG_SLUGS

ROOT = Path(__file__).resolve().parent.parent
SEEDS = ROOT / "tests" / "fixtures" / "seed-bundles"
RUNBOOKS = ROOT / "runbooks"
GEN_VERSION = 3
MB = 1_000_000
TARGET_LOCAL = 100.0   # MB/s, one core
TARGET_LEADS_SHARE = 0.10   # of the analysis' CPU time (issue 12)


# --- generated log lines --------------------------------------------------------------------------

def _hex(r: random.Random, n: int) -> str:
    return "%0*x" % (n, r.getrandbits(4 * n))


def _ip(r: random.Random) -> str:
    return f"10.{r.randrange(1, 40)}.{r.randrange(256)}.{r.randrange(1, 255)}"


def _blk(r: random.Random) -> str:
    b = r.randrange(1_073_741_824, 1_124_743_217)
    return f"BP-360285305-10.130.1.11-1444619256876:blk_{b}_{b - 1_073_000_000 + r.randrange(9999)}"


def _path(r: random.Random) -> str:
    return (f"/user/flink/warehouse/{r.choice(('orders', 'clicks', 'trades', 'events'))}/dt=2019-04-{r.randrange(1, 29):02d}"
            f"/part-{r.randrange(8)}-{r.randrange(5000)}")


TASKS = ("Source: Kafka(orders) -> Map", "Window(TumblingEventTimeWindows(60000)) -> Sink: hdfs",
         "Flat Map -> Filter", "Sink: BucketingSink(hdfs)", "KeyedProcess -> Sink: kafka")
TOPICS = ("orders", "clicks", "payments", "audit", "trades")
JAVA_NET = ["sun.nio.ch.FileDispatcherImpl.read0(Native Method)", "sun.nio.ch.SocketDispatcher.read(SocketDispatcher.java:39)",
            "sun.nio.ch.IOUtil.readIntoNativeBuffer(IOUtil.java:223)", "sun.nio.ch.IOUtil.read(IOUtil.java:197)",
            "sun.nio.ch.SocketChannelImpl.read(SocketChannelImpl.java:380)",
            "org.apache.hadoop.net.SocketInputStream$Reader.performIO(SocketInputStream.java:57)",
            "org.apache.hadoop.net.SocketIOWithTimeout.doIO(SocketIOWithTimeout.java:142)",
            "org.apache.hadoop.net.SocketInputStream.read(SocketInputStream.java:161)",
            "java.io.BufferedInputStream.fill(BufferedInputStream.java:246)",
            "java.io.DataInputStream.read(DataInputStream.java:149)"]
DN_FRAMES = JAVA_NET + ["org.apache.hadoop.io.IOUtils.readFully(IOUtils.java:199)",
                        "org.apache.hadoop.hdfs.protocol.datatransfer.PacketReceiver.doReadFully(PacketReceiver.java:213)",
                        "org.apache.hadoop.hdfs.server.datanode.BlockReceiver.receivePacket(BlockReceiver.java:528)",
                        "org.apache.hadoop.hdfs.server.datanode.BlockReceiver.receiveBlock(BlockReceiver.java:971)",
                        "org.apache.hadoop.hdfs.server.datanode.DataXceiver.writeBlock(DataXceiver.java:891)",
                        "org.apache.hadoop.hdfs.protocol.datatransfer.Receiver.opWriteBlock(Receiver.java:173)",
                        "org.apache.hadoop.hdfs.protocol.datatransfer.Receiver.processOp(Receiver.java:107)",
                        "org.apache.hadoop.hdfs.server.datanode.DataXceiver.run(DataXceiver.java:290)",
                        "java.lang.Thread.run(Thread.java:748)"]
FLINK_FRAMES = ["org.apache.flink.streaming.runtime.tasks.StreamTask.invokeProcessingTimeCallback(StreamTask.java:1238)",
                "org.apache.flink.streaming.runtime.tasks.SystemProcessingTimeService$TriggerTask.run(SystemProcessingTimeService.java:285)",
                "org.apache.flink.streaming.api.operators.AbstractStreamOperator.snapshotState(AbstractStreamOperator.java:402)",
                "org.apache.flink.streaming.runtime.tasks.StreamTask$CheckpointingOperation.checkpointStreamOperator(StreamTask.java:1113)",
                "org.apache.flink.streaming.runtime.tasks.StreamTask.performCheckpoint(StreamTask.java:701)",
                "org.apache.flink.streaming.runtime.io.BarrierBuffer.notifyCheckpoint(BarrierBuffer.java:380)",
                "org.apache.flink.streaming.runtime.io.StreamInputProcessor.processInput(StreamInputProcessor.java:207)",
                "org.apache.flink.streaming.runtime.tasks.OneInputStreamTask.run(OneInputStreamTask.java:104)",
                "org.apache.flink.streaming.runtime.tasks.StreamTask.invoke(StreamTask.java:306)",
                "org.apache.flink.runtime.taskmanager.Task.run(Task.java:703)", "java.lang.Thread.run(Thread.java:748)"]
KAFKA_FRAMES = ["org.apache.kafka.clients.consumer.internals.ConsumerNetworkClient.poll(ConsumerNetworkClient.java:265)",
                "org.apache.kafka.clients.consumer.internals.Fetcher.fetchOffsetsByTimes(Fetcher.java:512)",
                "org.apache.kafka.clients.consumer.KafkaConsumer.poll(KafkaConsumer.java:1247)",
                "org.apache.flink.streaming.connectors.kafka.internal.KafkaConsumerThread.run(KafkaConsumerThread.java:253)"]
HBASE_FRAMES = ["org.apache.hadoop.hbase.regionserver.HRegion.batchMutate(HRegion.java:3026)",
                "org.apache.hadoop.hbase.regionserver.RSRpcServices.doBatchOp(RSRpcServices.java:928)",
                "org.apache.hadoop.hbase.regionserver.RSRpcServices.doNonAtomicRegionMutation(RSRpcServices.java:856)",
                "org.apache.hadoop.hbase.regionserver.RSRpcServices.multi(RSRpcServices.java:2512)",
                "org.apache.hadoop.hbase.protobuf.generated.ClientProtos$ClientService$2.callBlockingMethod(ClientProtos.java:35014)",
                "org.apache.hadoop.hbase.ipc.RpcServer.call(RpcServer.java:2330)",
                "org.apache.hadoop.hbase.ipc.CallRunner.run(CallRunner.java:123)",
                "org.apache.hadoop.hbase.ipc.RpcExecutor$Handler.run(RpcExecutor.java:188)",
                "org.apache.hadoop.hbase.ipc.RpcExecutor$Handler.run(RpcExecutor.java:168)"]
ZK_FRAMES = ["org.apache.zookeeper.server.NIOServerCnxn.doIO(NIOServerCnxn.java:228)",
             "org.apache.zookeeper.server.NIOServerCnxnFactory.run(NIOServerCnxnFactory.java:208)",
             "java.lang.Thread.run(Thread.java:748)"]
NN_FRAMES = ["org.apache.hadoop.hdfs.server.namenode.INodesInPath.resolve(INodesInPath.java:219)",
             "org.apache.hadoop.hdfs.server.namenode.FSDirectory.getINodesInPath(FSDirectory.java:1688)",
             "org.apache.hadoop.hdfs.server.namenode.FSNamesystem.getBlockLocations(FSNamesystem.java:1938)",
             "org.apache.hadoop.hdfs.server.namenode.NameNodeRpcServer.getBlockLocations(NameNodeRpcServer.java:737)",
             "org.apache.hadoop.ipc.ProtobufRpcEngine$Server$ProtoBufRpcInvoker.call(ProtobufRpcEngine.java:616)",
             "org.apache.hadoop.ipc.RPC$Server.call(RPC.java:982)", "org.apache.hadoop.ipc.Server$Handler$1.run(Server.java:2217)",
             "java.security.AccessController.doPrivileged(Native Method)", "javax.security.auth.Subject.doAs(Subject.java:422)",
             "org.apache.hadoop.ipc.Server$Handler.run(Server.java:2211)"]


def _trace(r: random.Random, head: str, frames: list[str], cause: tuple[str, list[str]] | None = None) -> list[str]:
    start = r.randrange(max(1, len(frames) - 6))
    lines = [head] + ["\tat " + f for f in frames[start:]]
    if cause:
        lines.append("Caused by: " + cause[0])
        cut = r.randrange(2, max(3, len(cause[1])))
        lines += ["\tat " + f for f in cause[1][:cut]]
        lines.append(f"\t... {len(frames) - start} more")
    return lines


# Each template: (weight, level, logger, message(r) -> str, trace(r) -> list[str] | None).
T = tuple


def _flink_tm() -> list[T]:
    return [
        (30, "INFO", "org.apache.flink.streaming.api.functions.sink.filesystem.Buckets",
         lambda r: f"Subtask {r.randrange(8)} checkpointing for checkpoint with id={r.randrange(1, 90000)} (max part counter={r.randrange(5000)}).", None),
        (20, "INFO", "org.apache.flink.streaming.api.functions.sink.filesystem.Buckets",
         lambda r: f"Subtask {r.randrange(8)} received completion notification for checkpoint with id={r.randrange(1, 90000)}.", None),
        (12, "INFO", "org.apache.flink.runtime.taskmanager.Task",
         lambda r: f"{r.choice(TASKS)} ({r.randrange(1, 9)}/8) ({_hex(r, 32)}) switched from {r.choice(('CREATED to DEPLOYING', 'DEPLOYING to RUNNING', 'RUNNING to FINISHED'))}.", None),
        (12, "INFO", "org.apache.kafka.clients.consumer.internals.ConsumerCoordinator",
         lambda r: f"[Consumer clientId=consumer-{r.randrange(40)}, groupId=flink-{r.choice(TOPICS)}] Setting offset for partition {r.choice(TOPICS)}-{r.randrange(64)} to the committed offset FetchPosition{{offset={r.randrange(10**9)}, offsetEpoch=Optional.empty, currentLeader=LeaderAndEpoch{{leader=Optional[{_ip(r)}:9092 (id: {r.randrange(9)} rack: null)], epoch={r.randrange(40)}}}}}", None),
        (10, "INFO", "org.apache.flink.runtime.state.heap.HeapKeyedStateBackend",
         lambda r: f"Initializing heap keyed state backend with stream factory for {r.choice(TASKS)} ({r.randrange(1, 9)}/8).", None),
        (6, "INFO", "org.apache.hadoop.io.compress.CodecPool", lambda r: "Got brand-new compressor [.gz]", None),
        (5, "INFO", "org.apache.flink.runtime.taskexecutor.TaskExecutor",
         lambda r: f"Received task {r.choice(TASKS)} ({r.randrange(1, 9)}/8)#0 ({_hex(r, 32)}), deploy into slot with allocation id {_hex(r, 32)}.", None),
        (3, "WARN", "org.apache.kafka.clients.NetworkClient",
         lambda r: f"[Consumer clientId=consumer-{r.randrange(40)}, groupId=flink-{r.choice(TOPICS)}] Connection to node {r.randrange(9)} (kafka-{r.randrange(9)}/{_ip(r)}:9092) could not be established. Broker may not be available.", None),
        (1, "WARN", "org.apache.flink.streaming.runtime.tasks.StreamTask",
         lambda r: "Error while canceling task.",
         lambda r: _trace(r, "java.io.IOException: Stream closed.", FLINK_FRAMES)),
        (1, "ERROR", "org.apache.flink.streaming.connectors.kafka.internal.KafkaConsumerThread",
         lambda r: "Error while fetching offsets from Kafka.",
         lambda r: _trace(r, f"org.apache.kafka.common.errors.TimeoutException: Failed to get offsets by times in {r.randrange(30000, 60000)}ms", KAFKA_FRAMES)),
        (0.6, "ERROR", "org.apache.flink.streaming.runtime.tasks.StreamTask",
         lambda r: "Error during disposal of stream operator.",
         lambda r: _trace(r, f"java.io.IOException: Could not flush and close part file {_path(r)}", FLINK_FRAMES,
                          ("java.net.SocketException: Connection reset by peer", JAVA_NET))),
        (0.01, "WARN", "org.apache.hadoop.hdfs.DFSClient",
         lambda r: f"Slow ReadProcessor read fields took {r.randrange(30001, 90000)}ms (threshold=30000ms); ack: seqno: {r.randrange(9999)} reply: SUCCESS reply: SUCCESS downstreamAckTimeNanos: {r.randrange(10**7)}, targets: [DatanodeInfoWithStorage[{_ip(r)}:50010,DS-{_hex(r, 8)},DISK]]", None),
    ]


def _flink_jm() -> list[T]:
    return [
        (25, "INFO", "org.apache.flink.runtime.checkpoint.CheckpointCoordinator",
         lambda r: f"Triggering checkpoint {r.randrange(1, 90000)} (type=CHECKPOINT) @ {1556000000000 + r.randrange(10**8)} for job {_hex(r, 32)}.", None),
        (25, "INFO", "org.apache.flink.runtime.checkpoint.CheckpointCoordinator",
         lambda r: f"Completed checkpoint {r.randrange(1, 90000)} for job {_hex(r, 32)} ({r.randrange(10**6, 10**10)} bytes, checkpointDuration={r.randrange(50, 90000)} ms, finalizationTime={r.randrange(1, 40)} ms).", None),
        (15, "INFO", "org.apache.flink.runtime.executiongraph.ExecutionGraph",
         lambda r: f"{r.choice(TASKS)} ({r.randrange(1, 9)}/8) ({_hex(r, 32)}) switched from {r.choice(('SCHEDULED to DEPLOYING', 'DEPLOYING to INITIALIZING', 'INITIALIZING to RUNNING'))}.", None),
        (8, "INFO", "org.apache.flink.runtime.resourcemanager.slotmanager.DeclarativeSlotManager",
         lambda r: f"Received resource requirements from job {_hex(r, 32)}: [ResourceRequirement{{resourceProfile=ResourceProfile{{UNKNOWN}}, numberOfRequiredSlots={r.randrange(1, 64)}}}]", None),
        (5, "INFO", "org.apache.flink.yarn.YarnResourceManagerDriver", lambda r: f"Received {r.randrange(1, 9)} containers.", None),
        (3, "WARN", "org.apache.flink.runtime.checkpoint.CheckpointCoordinator",
         lambda r: f"Received late message for now expired checkpoint attempt {r.randrange(1, 90000)} from task {_hex(r, 32)} of job {_hex(r, 32)} at container_e02_1646703510000_0042_01_{r.randrange(1, 99):06d} @ worker-{r.randrange(20)} (dataPort={r.randrange(30000, 60000)}).", None),
        (0.5, "ERROR", "org.apache.flink.runtime.rest.handler.job.JobDetailsHandler",
         lambda r: "Unhandled exception.",
         lambda r: _trace(r, "java.util.concurrent.CancellationException", FLINK_FRAMES[-4:] + ["java.util.concurrent.CompletableFuture.cancel(CompletableFuture.java:2276)"])),
    ]


def _datanode() -> list[T]:
    return [
        (35, "INFO", "org.apache.hadoop.hdfs.server.datanode.DataNode.clienttrace",
         lambda r: f"src: /{_ip(r)}:{r.randrange(30000, 60000)}, dest: /{_ip(r)}:50010, bytes: {r.randrange(10**4, 134217728)}, op: HDFS_WRITE, cliID: DFSClient_NONMAPREDUCE_-{r.randrange(10**9)}_1, offset: 0, srvID: {_hex(r, 8)}-{_hex(r, 4)}-{_hex(r, 4)}-{_hex(r, 4)}-{_hex(r, 12)}, blockid: {_blk(r)}, duration(ns): {r.randrange(10**5, 10**10)}", None),
        (25, "INFO", "org.apache.hadoop.hdfs.server.datanode.DataNode",
         lambda r: f"Receiving {_blk(r)} src: /{_ip(r)}:{r.randrange(30000, 60000)} dest: /{_ip(r)}:50010", None),
        (25, "INFO", "org.apache.hadoop.hdfs.server.datanode.DataNode",
         lambda r: f"PacketResponder: {_blk(r)}, type={r.choice(('LAST_IN_PIPELINE', 'HAS_DOWNSTREAM_IN_PIPELINE'))} terminating", None),
        (8, "INFO", "org.apache.hadoop.hdfs.server.datanode.fsdataset.impl.FsDatasetAsyncDiskService",
         lambda r: f"Deleted BP-360285305-10.130.1.11-1444619256876 blk_{r.randrange(10**9, 2 * 10**9)}_{r.randrange(10**8)} file /data{r.randrange(1, 12)}/hdfs/current/BP-360285305-10.130.1.11-1444619256876/current/finalized/subdir{r.randrange(32)}/subdir{r.randrange(32)}/blk_{r.randrange(10**9, 2 * 10**9)}", None),
        (1, "INFO", "org.apache.hadoop.hdfs.server.datanode.DataNode",
         lambda r: f"Successfully sent block report 0x{_hex(r, 16)},  containing 1 storage report(s), of which we sent 1. The reports had {r.randrange(10**4, 10**6)} total blocks and used 1 RPC(s). This took {r.randrange(1, 90)} msec to generate and {r.randrange(5, 900)} msecs for RPC and NN processing.", None),
        (1.5, "ERROR", "org.apache.hadoop.hdfs.server.datanode.DataNode",
         lambda r: f"dn-{r.randrange(40)}:50010:DataXceiver error processing WRITE_BLOCK operation  src: /{_ip(r)}:{r.randrange(30000, 60000)} dst: /{_ip(r)}:50010",
         lambda r: _trace(r, "java.io.IOException: Connection reset by peer", DN_FRAMES)),
        (1, "INFO", "org.apache.hadoop.hdfs.server.datanode.DataNode",
         lambda r: f"Exception for {_blk(r)}",
         lambda r: _trace(r, "java.io.IOException: Premature EOF from inputStream", DN_FRAMES)),
        (0.02, "WARN", "org.apache.hadoop.hdfs.server.datanode.DataNode",
         lambda r: f"Slow BlockReceiver write data to disk cost:{r.randrange(300, 3000)}ms (threshold=300ms), volume=/data{r.randrange(1, 12)}/hdfs", None),
    ]


def _namenode() -> list[T]:
    return [
        (40, "INFO", "org.apache.hadoop.hdfs.server.namenode.FSNamesystem.audit",
         lambda r: f"allowed=true\tugi=flink (auth:SIMPLE)\tip=/{_ip(r)}\tcmd={r.choice(('getfileinfo', 'open', 'create', 'listStatus', 'mkdirs'))}\tsrc={_path(r)}\tdst=null\tperm=null\tproto=rpc", None),
        (20, "INFO", "org.apache.hadoop.hdfs.StateChange",
         lambda r: f"BLOCK* allocate blk_{r.randrange(10**9, 2 * 10**9)}_{r.randrange(10**8)}, replicas={_ip(r)}:50010, {_ip(r)}:50010, {_ip(r)}:50010 for {_path(r)}", None),
        (15, "INFO", "org.apache.hadoop.hdfs.StateChange",
         lambda r: f"DIR* completeFile: {_path(r)} is closed by DFSClient_NONMAPREDUCE_-{r.randrange(10**9)}_1", None),
        (8, "INFO", "org.apache.hadoop.hdfs.server.blockmanagement.BlockManager",
         lambda r: f"BLOCK* addToInvalidates: blk_{r.randrange(10**9, 2 * 10**9)}_{r.randrange(10**8)} {_ip(r)}:50010 {_ip(r)}:50010 {_ip(r)}:50010", None),
        (3, "INFO", "org.apache.hadoop.hdfs.server.namenode.FSEditLog",
         lambda r: f"Number of transactions: {r.randrange(10**4)} Total time for transactions(ms): {r.randrange(900)} Number of transactions batched in Syncs: {r.randrange(9000)} Number of syncs: {r.randrange(9000)} SyncTimes(ms): {r.randrange(900)} {r.randrange(900)}", None),
        (2, "WARN", "org.apache.hadoop.hdfs.server.blockmanagement.BlockPlacementPolicy",
         lambda r: "Failed to place enough replicas, still in need of 1 to reach 3 (unavailableStorages=[], storagePolicy=BlockStoragePolicy{HOT:7, storageTypes=[DISK], creationFallbacks=[], replicationFallbacks=[ARCHIVE]}, newBlock=true) For more information, please enable DEBUG log level on org.apache.hadoop.hdfs.server.blockmanagement.BlockPlacementPolicy", None),
        (1, "INFO", "org.apache.hadoop.ipc.Server",
         lambda r: f"IPC Server handler {r.randrange(200)} on 8020, call Call#{r.randrange(10**7)} Retry#0 org.apache.hadoop.hdfs.protocol.ClientProtocol.getBlockLocations from {_ip(r)}:{r.randrange(30000, 60000)}",
         lambda r: _trace(r, f"java.io.FileNotFoundException: File does not exist: {_path(r)}", NN_FRAMES)),
    ]


def _regionserver() -> list[T]:
    return [
        (25, "INFO", "[MemStoreFlusher.{t}] regionserver.HRegion",
         lambda r: f"Finished memstore flush of ~{r.randrange(1, 256)}.{r.randrange(100):02d} MB/{r.randrange(10**6, 2 * 10**8)}, currentsize=0 B/0 for region events,{_hex(r, 8)},{1469772903345 + r.randrange(10**8)}.{_hex(r, 32)}. in {r.randrange(40, 4000)}ms, sequenceid={r.randrange(10**9)}, compaction requested={r.choice(('true', 'false'))}", None),
        (20, "INFO", "[regionserver/rs/16020.logRoller] wal.FSHLog",
         lambda r: f"Rolled WAL /hbase/WALs/rs-{r.randrange(9)},16020,1469772903345/rs%2C16020%2C1469772903345.default.{1470426151350 + r.randrange(10**8)} with entries={r.randrange(10**5)}, filesize={r.randrange(1, 128)}.{r.randrange(10)} M; new WAL /hbase/WALs/rs,16020,1469772903345/rs%2C16020%2C1469772903345.default.{1470426151350 + r.randrange(10**8)}", None),
        (15, "INFO", "[regionserver/rs/16020-shortCompactions-{t}] regionserver.HStore",
         lambda r: f"Completed compaction of {r.randrange(2, 10)} (all) file(s) in d of events,{_hex(r, 8)},1469772903345.{_hex(r, 32)}. into {_hex(r, 32)}(size={r.randrange(1, 900)}.{r.randrange(10)} M), total size for store is {r.randrange(1, 9000)}.{r.randrange(10)} M. This selection was in queue for 0sec, and took {r.randrange(1, 90)}sec to execute.", None),
        (15, "INFO", "[LruBlockCacheStatsExecutor] hfile.LruBlockCache",
         lambda r: f"totalSize={r.randrange(1, 9)}.{r.randrange(100):02d} GB, freeSize={r.randrange(1, 9)}.{r.randrange(100):02d} GB, max={r.randrange(8, 16)}.00 GB, blockCount={r.randrange(10**6)}, accesses={r.randrange(10**9)}, hits={r.randrange(10**9)}, hitRatio={r.randrange(80, 100)}.{r.randrange(100):02d}%, , cachingAccesses={r.randrange(10**9)}, cachingHits={r.randrange(10**9)}, cachingHitsRatio={r.randrange(80, 100)}.{r.randrange(100):02d}%, evictions={r.randrange(10**5)}, evicted={r.randrange(10**7)}, evictedPerRun={r.randrange(100)}.{r.randrange(10**6)}", None),
        (5, "WARN", "[RpcServer.FifoWFPBQ.default.handler={t},queue=3,port=16020] ipc.RpcServer",
         lambda r: f"(responseTooSlow): {{\"call\":\"Multi(org.apache.hadoop.hbase.protobuf.generated.ClientProtos$MultiRequest)\",\"starttimems\":{1470426151350 + r.randrange(10**8)},\"responsesize\":{r.randrange(10**4)},\"method\":\"Multi\",\"processingtimems\":{r.randrange(10000, 90000)},\"client\":\"{_ip(r)}:{r.randrange(30000, 60000)}\",\"queuetimems\":0,\"class\":\"HRegionServer\"}}", None),
        (0.8, "ERROR", "[B.defaultRpcServer.handler={t},queue=0,port=16020] ipc.RpcServer",
         lambda r: "Unexpected throwable object ",
         lambda r: _trace(r, "java.lang.NullPointerException", HBASE_FRAMES)),
    ]


def _zookeeper() -> list[T]:
    return [
        (25, "INFO", "[NIOServerCxn.Factory:0.0.0.0/0.0.0.0:2181:NIOServerCnxnFactory@192]",
         lambda r: f"Accepted socket connection from /{_ip(r)}:{r.randrange(30000, 60000)}", None),
        (20, "INFO", "[NIOServerCxn.Factory:0.0.0.0/0.0.0.0:2181:ZooKeeperServer@928]",
         lambda r: f"Client attempting to establish new session at /{_ip(r)}:{r.randrange(30000, 60000)}", None),
        (20, "INFO", "[CommitProcessor:3:ZooKeeperServer@673]",
         lambda r: f"Established session 0x{_hex(r, 15)} with negotiated timeout 40000 for client /{_ip(r)}:{r.randrange(30000, 60000)}", None),
        (20, "INFO", "[NIOServerCxn.Factory:0.0.0.0/0.0.0.0:2181:NIOServerCnxn@1044]",
         lambda r: f"Closed socket connection for client /{_ip(r)}:{r.randrange(30000, 60000)} which had sessionid 0x{_hex(r, 15)}", None),
        (10, "INFO", "[ProcessThread(sid:3 cport:-1)::PrepRequestProcessor@487]",
         lambda r: f"Processed session termination for sessionid: 0x{_hex(r, 15)}", None),
        (4, "WARN", "[NIOServerCxn.Factory:0.0.0.0/0.0.0.0:2181:NIOServerCnxn@357]",
         lambda r: "caught end of stream exception",
         lambda r: _trace(r, f"EndOfStreamException: Unable to read additional data from client sessionid 0x{_hex(r, 15)}, likely client has closed socket", ZK_FRAMES)),
        (0.05, "INFO", "[SessionTracker:ZooKeeperServer@358]",
         lambda r: f"Expiring session 0x{_hex(r, 15)}, timeout of 40000ms exceeded", None),
    ]


def _kernel() -> list[T]:
    return [
        (20, "", "", lambda r: f"device veth{_hex(r, 7)} entered promiscuous mode", None),
        (20, "", "", lambda r: f"docker0: port {r.randrange(1, 30)}(veth{_hex(r, 7)}) entered {r.choice(('forwarding', 'blocking', 'disabled'))} state", None),
        (15, "", "", lambda r: f"TCP: request_sock_TCP: Possible SYN flooding on port {r.randrange(1024, 65535)}. Sending cookies.  Check SNMP counters.", None),
        (10, "", "", lambda r: f"perf: interrupt took too long ({r.randrange(2500, 9000)} > {r.randrange(2500, 9000)}), lowering kernel.perf_event_max_sample_rate to {r.randrange(10000, 40000)}", None),
        (10, "", "", lambda r: f"audit: type=1400 audit({1556000000 + r.randrange(10**6)}.{r.randrange(1000):03d}:{r.randrange(10**5)}): avc:  denied  {{ read }} for  pid={r.randrange(10**6)} comm=\"java\" name=\"{r.randrange(10**5)}\" dev=\"proc\" ino={r.randrange(10**7)} scontext=system_u:system_r:unconfined_service_t:s0 tcontext=system_u:system_r:kernel_t:s0 tclass=dir", None),
        (5, "", "", lambda r: f"CPU{r.randrange(48)}: Core temperature above threshold, cpu clock throttled (total events = {r.randrange(10**5)})", None),
        (2, "", "", lambda r: f"EXT4-fs (sd{chr(97 + r.randrange(12))}1): error count since last fsck: {r.randrange(20)}", None),
    ]


COMPONENTS = {
    "flink-taskmanager": (_flink_tm, "log4j", 3.0), "flink-jobmanager": (_flink_jm, "log4j", 1.0),
    "hdfs-datanode": (_datanode, "hadoop", 3.0), "hdfs-namenode": (_namenode, "hadoop", 2.0),
    "hbase-regionserver": (_regionserver, "hbase", 2.5), "zookeeper": (_zookeeper, "zookeeper", 0.7),
    "kernel": (_kernel, "syslog", 0.3),
}
# Hosts that carry only generated lines.
NOISE_FILES = [
    ("hadoop-090-001/hadoop-hdfs-namenode.log", "hdfs-namenode"),
    ("hadoop-090-011/hadoop-hdfs-datanode.log", "hdfs-datanode"),
    ("hadoop-090-012/hadoop-hdfs-datanode.log", "hdfs-datanode"),
    ("hadoop-090-013/hadoop-hdfs-datanode.log", "hdfs-datanode"),
    ("hadoop-090-011/kern.log", "kernel"), ("hadoop-090-012/kern.log", "kernel"),
    ("hadoop-090-020/flink-jobmanager.log", "flink-jobmanager"),
    ("hadoop-090-021/flink-taskmanager.log", "flink-taskmanager"),
    ("hadoop-090-022/flink-taskmanager.log", "flink-taskmanager"),
    ("rs-1/hbase-regionserver.log", "hbase-regionserver"), ("rs-2/hbase-regionserver.log", "hbase-regionserver"),
    ("zk-1/zookeeper.log", "zookeeper"), ("zk-2/zookeeper.log", "zookeeper"),
]
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
START_EPOCH = 1555891200   # 2019-04-22 00:00:00 UTC, the seed 000 incident's week


def _component_of(name: str) -> str | None:
    n = name.lower()
    for word, comp in (("kern", "kernel"), ("jobmanager", "flink-jobmanager"), ("taskmanager", "flink-taskmanager"),
                       ("regionserver", "hbase-regionserver"), ("datanode", "hdfs-datanode"),
                       ("namenode", "hdfs-namenode"), ("zookeeper", "zookeeper")):
        if word in n:
            return comp
    return None


class _Clock:
    """Timestamps that advance by about `step_ms` a line; strftime once per second."""

    def __init__(self, r: random.Random, step_ms: float):
        self.r, self.step = r, step_ms
        self.ms = (START_EPOCH + r.randrange(3600)) * 1000
        self._sec = -1
        self._tm: time.struct_time | None = None

    def tick(self) -> tuple[time.struct_time, int]:
        self.ms += int(self.r.random() * 2 * self.step)
        sec = self.ms // 1000
        if sec != self._sec:
            self._sec, self._tm = sec, time.gmtime(sec)
        return self._tm, self.ms % 1000   # type: ignore[return-value]


def _layout(kind: str, host: str, old_flink: bool):
    def log4j(tm, ms, level, logger, msg):
        if old_flink:
            return (f"[{level:<5}] {time.strftime('%Y-%m-%d %H:%M:%S', tm)},{ms:03d}({ms * 7919}) --> "
                    f"[flink-akka.actor.default-dispatcher-{ms % 40}] {logger}.run({logger.rsplit('.', 1)[-1]}.java:{ms % 900 + 50}): {msg}")
        return f"{time.strftime('%Y-%m-%d %H:%M:%S', tm)},{ms:03d} {level:<5} {logger} [] - {msg}"

    def hadoop(tm, ms, level, logger, msg):
        return f"{time.strftime('%Y-%m-%d %H:%M:%S', tm)},{ms:03d} {level} {logger}: {msg}"

    def hbase(tm, ms, level, logger, msg):
        return f"{time.strftime('%Y-%m-%d %H:%M:%S', tm)},{ms:03d} {level:<5} {logger.replace('{t}', str(ms % 30))}: {msg}"

    def zookeeper(tm, ms, level, logger, msg):
        return f"{time.strftime('%Y-%m-%d %H:%M:%S', tm)},{ms:03d} [myid:3] - {level:<5} {logger} - {msg}"

    def syslog(tm, ms, level, logger, msg):
        up = (time.mktime(tm) - START_EPOCH + 86400 * 40) + ms / 1000
        return f"{MONTHS[tm.tm_mon - 1]} {tm.tm_mday:2d} {time.strftime('%H:%M:%S', tm)} {host} kernel: [{up:12.6f}] {msg}"

    return {"log4j": log4j, "hadoop": hadoop, "hbase": hbase, "zookeeper": zookeeper, "syslog": syslog}[kind]


def _write_noise(out, r: random.Random, component: str, host: str, budget: int, clock: _Clock,
                 old_flink: bool = False) -> int:
    make, kind, _ = COMPONENTS[component]
    templates = make()
    fmt = _layout(kind, host, old_flink)
    weights, cum = [t[0] for t in templates], []
    total = 0.0
    for w in weights:
        total += w
        cum.append(total)
    written = draws = 0
    while written < budget:
        lines: list[str] = []
        per_draw = written / draws if draws else 400   # bytes a template adds, stack traces included
        k = max(1, min(4000, int((budget - written) / per_draw)))
        draws += k
        for _w, level, logger, msg, trace in r.choices(templates, cum_weights=cum, k=k):
            tm, ms = clock.tick()
            lines.append(fmt(tm, ms, level, logger, msg(r)))
            if trace is not None:
                lines.extend(trace(r))
        block = ("\n".join(lines) + "\n").encode()
        out.write(block)
        written += len(block)
    return written


def _generate_file(job: tuple) -> tuple[str, int]:
    target, rel, component, budget, seed_file, seed = job
    r = random.Random(seed)
    host = rel.split("/")[-2] if "/" in rel else "localhost"
    path = Path(target) / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    clock = _Clock(r, step_ms=2 * 86400 * 1000 / max(1, budget / 150))
    with open(path, "wb") as out:
        if seed_file is None:
            return rel, _write_noise(out, r, component, host, budget, clock)
        original = Path(seed_file).read_bytes()
        old_flink = original.startswith(b"[")
        before = int(budget * r.uniform(0.3, 0.7))
        n = _write_noise(out, r, component, host, before, clock, old_flink)
        out.write(original if original.endswith(b"\n") else original + b"\n")
        n += len(original)
        n += _write_noise(out, r, component, host, budget - before, clock, old_flink)
        return rel, n


def generate(target: Path, size_mb: int) -> dict:
    """A generated bundle of about size_mb MB in `target`, reused if complete and of this version."""
    marker = target / ".complete.json"
    if marker.exists():
        meta = json.loads(marker.read_text())
        if meta.get("version") == GEN_VERSION and meta.get("size_mb") == size_mb:
            return meta
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    expected: dict[str, list[str]] = {}
    log_files: list[tuple[str, str, str | None]] = []   # (rel, component, seed file)
    for seed_dir in sorted(p for p in SEEDS.iterdir() if p.is_dir()):
        case = f"case-{seed_dir.name[:3]}"
        exp = seed_dir / "expected.json"
        if exp.exists():
            expected[seed_dir.name] = json.loads(exp.read_text())["expected"]
        for f in sorted(seed_dir.rglob("*")):
            if not f.is_file() or f.name == "expected.json":
                continue
            rel = f"{case}/{f.relative_to(seed_dir).as_posix()}"
            comp = _component_of(f.name) if f.name.endswith(".log") else None
            if comp is None:
                (target / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(f, target / rel)
            else:
                log_files.append((rel, comp, str(f)))
    if size_mb:   # 0: the seed files alone, in the same layout (the reference for the check)
        log_files += [(rel, comp, None) for rel, comp in NOISE_FILES]
    weight = sum(COMPONENTS[c][2] for _, c, _ in log_files)
    jobs = [(str(target), rel, comp, int(size_mb * MB * COMPONENTS[comp][2] / weight), seed_file, 1000 + i)
            for i, (rel, comp, seed_file) in enumerate(log_files)]
    t0 = time.monotonic()
    with Pool(min(len(jobs), os.cpu_count() or 1)) as pool:
        sizes = dict(pool.map(_generate_file, sorted(jobs, key=lambda j: -j[3])))
    meta = {"version": GEN_VERSION, "size_mb": size_mb, "bytes": sum(sizes.values()), "files": len(sizes) + 1,
            "expected": expected, "generated_in_s": round(time.monotonic() - t0, 1)}
    marker.write_text(json.dumps(meta, indent=1))
    return meta


# --- grep baseline ------------------------------------------------------------------------------

_CLASS_ESC = {"d": "0-9", "w": "[:alnum:]_", "s": "[:space:]"}
_ERE_SPECIAL = set(".[]()*+?{}|^$\\")


def to_ere(pattern: str) -> str:
    """A Python regex (the catalog's subset) as a GNU ERE that matches the same lines.

    Named and non-capturing groups become plain groups, lazy quantifiers greedy
    (same lines match), \\d and class escapes POSIX classes. Raises ValueError
    on what has no ERE form (look-around and back-references the loader refuses anyway).
    """
    out, i, n = [], 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            e = pattern[i + 1]
            i += 2
            if e == "d":
                out.append("[0-9]")
            elif e == "D":
                out.append("[^0-9]")
            elif e in "wWsSbB":
                out.append("\\" + e)
            elif e == "t":
                out.append("\t")
            elif e.isalnum():
                raise ValueError(f"no ERE for \\{e}")
            else:
                out.append("\\" + e if e in _ERE_SPECIAL else e)
        elif c == "(" and pattern.startswith("(?", i):
            m = re.match(r"\(\?(?::|P<\w+>)", pattern[i:])
            if not m:
                raise ValueError(f"no ERE for {pattern[i:i + 4]}")
            out.append("(")
            i += m.end()
        elif c in "*+?}" and i + 1 < n and pattern[i + 1] == "?":
            out.append(c)
            i += 2
        elif c == "[":
            j, body, negate, close, dash, bracket = i + 1, [], False, False, False, False
            if j < n and pattern[j] == "^":
                negate, j = True, j + 1
            while pattern[j] != "]":
                ch = pattern[j]
                if ch == "\\":
                    e = pattern[j + 1]
                    if e in "DWS":
                        raise ValueError(f"no ERE for [\\{e}]")
                    if e == "]":
                        close = True
                    elif e == "-":
                        dash = True
                    elif e == "[":
                        bracket = True
                    else:
                        body.append(_CLASS_ESC.get(e) or ("\t" if e == "t" else e))
                    j += 2
                else:
                    if ch == "-" and (not body or pattern[j + 1] == "]"):
                        dash = True
                    elif ch == "[":
                        bracket = True
                    else:
                        body.append(ch)
                    j += 1
            # ERE brackets: a literal ] must come first, a literal - last; backslash is literal;
            # a literal [ goes last but the dash, so that it never opens "[=", "[." or "[:".
            out.append("[" + ("^" if negate else "") + ("]" if close else "") + "".join(body)
                       + ("[" if bracket else "") + ("-" if dash else "") + "]")
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def grep_count(files: list[Path], ere: str) -> tuple[int, float]:
    t0 = time.monotonic()
    out = subprocess.run(["grep", "-E", "-c", "-h", "-e", ere, "--", *map(str, files)],
                         capture_output=True, text=True, env=dict(os.environ, LC_ALL="C"))
    seconds = time.monotonic() - t0
    if out.returncode > 1:
        raise RuntimeError(out.stderr)
    return sum(int(x) for x in out.stdout.split()), seconds


# --- measurements (each in a subprocess) ----------------------------------------------------------

def _tree_hwm_kib(root: int) -> dict[int, tuple[str, int]]:
    """Peak RSS (VmHWM) of `root` and every descendant still alive, by pid."""
    parent: dict[int, int] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                stat = Path(f"/proc/{d}/stat").read_text()
            except OSError:
                continue
            parent[int(d)] = int(stat.rsplit(")", 1)[1].split()[1])
    tree, frontier = {root}, [root]
    while frontier:
        p = frontier.pop()
        kids = [c for c, pp in parent.items() if pp == p and c not in tree]
        tree.update(kids)
        frontier += kids
    out = {}
    for pid in tree:
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        name = re.search(r"^Name:\s*(\S+)", status, re.M).group(1)
        hwm = re.search(r"^VmHWM:\s*(\d+) kB", status, re.M)
        out[pid] = (name, int(hwm.group(1)) if hwm else 0)
    return out


def _tree_cpu_seconds(root: int) -> float:
    """User + system CPU of `root` and its live descendants (the JVM, the Python workers)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in _tree_hwm_kib(root):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / tick
    return total


# The catalog of the first build (tests/helpers.CATALOG_SLUGS): the scan speed with
# today's catalog is compared with the speed with these alone, on the same bundle.
TARGET_CATALOG_RATIO = 0.8  # the grown catalog scans at >= 80 % of the first wave's speed


def _without_leads() -> None:
    """This process analyses as before leads (issue 12): no lead pattern in the matcher, no
    candidate records collected (the error sample stays as it was)."""
    import analyzers.engine
    import analyzers.scan
    from analyzers.signatures import LEAD_KEY, signatures_from_runbooks

    analyzers.scan.MAX_LEAD_LINES = 0
    analyzers.engine.signatures_from_runbooks = lambda rbs: [s for s in signatures_from_runbooks(rbs)
                                                             if s.key != LEAD_KEY]


def measure(engine: str, bundle: str, master: str, first_wave: bool = False, leads: bool = True) -> dict:
    from analyzers.engine import analyze_paths, run_ranges_local
    from analyzers.runbooks import load_runbooks

    if not leads:
        _without_leads()

    runbooks = [rb.meta for rb in load_runbooks(RUNBOOKS).runbooks.values()
                if not first_wave or rb.slug in CATALOG_SLUGS]
    scan_seconds: list[float] = []
    scan_cpu: list[float] = []
    cpu = time.process_time if engine == "local" else (lambda: _tree_cpu_seconds(os.getpid()))

    def timed(runner):
        def run(tasks, signatures, max_line):
            t0, c0 = time.monotonic(), cpu()
            results = runner(tasks, signatures, max_line)
            scan_seconds.append(time.monotonic() - t0)
            scan_cpu.append(cpu() - c0)
            return results
        return run

    out: dict = {"engine": engine}
    if engine == "local":
        # Compile the Hyperscan databases first: a one-off per process, reported on its own.
        import analyzers.engine
        from analyzers.signatures import matcher_for

        t0 = time.monotonic()
        matcher = matcher_for(analyzers.engine.signatures_from_runbooks(runbooks))
        # Every database a big bundle needs (one-offs per process, like the first):
        matcher.candidates(b"", errors=False)
        if leads:
            matcher.candidates(b"", errors=True, leads=False)
        out["compile_seconds"] = time.monotonic() - t0
        t0, c0 = time.monotonic(), time.process_time()
        result = analyze_paths([bundle], runbooks, runner=timed(run_ranges_local))
        out["seconds"] = time.monotonic() - t0
        out["cpu_seconds"] = time.process_time() - c0
        out["leads"] = len(result.get("leads", []))
    else:
        from analyzers.runners import make_runner
        from analyzers.signatures import signatures_from_runbooks

        # A new session as the worker makes one (analyzers/spark/warmup.py): JVM start plus
        # warm-up with the catalog's signatures, reported as session start.
        runner = make_runner("spark", master=master, warm_signatures=signatures_from_runbooks(runbooks))
        out["startup_seconds"] = runner.startup_seconds
        t0 = time.monotonic()
        analyze_paths([bundle], runbooks, engine="spark", runner=timed(runner.run), range_bytes=runner.range_bytes)
        out["first_seconds"] = time.monotonic() - t0
        for _ in range(2):
            t0 = time.monotonic()
            result = analyze_paths([bundle], runbooks, engine="spark", runner=timed(runner.run),
                                   range_bytes=runner.range_bytes)
            out["seconds"] = time.monotonic() - t0
        out["first_scan_seconds"] = scan_seconds[0]
        out["first_scan_cpu_seconds"] = scan_cpu[0]
        best = min(range(1, len(scan_seconds)), key=lambda i: scan_seconds[i])
        out["warm_runs"] = [round(x, 2) for x in scan_seconds[1:]]
        scan_seconds.append(scan_seconds[best])
        scan_cpu.append(scan_cpu[best])
        tree = _tree_hwm_kib(os.getpid())
        out["tree_hwm_mib"] = round(sum(h for _, h in tree.values()) / 1024)
        out["tree"] = sorted(((name, round(h / 1024)) for name, h in tree.values()), key=lambda x: -x[1])
    out["scan_seconds"] = scan_seconds[-1]
    out["scan_cpu_seconds"] = scan_cpu[-1]
    out["load"] = os.getloadavg()[0]
    out["bytes"] = result["stats"]["bytes"]
    out["lines"] = result["stats"]["lines"]
    out["matcher"] = result["stats"]["matcher"]
    out["findings"] = [f["runbook"] for f in result["findings"]]
    out["hwm_mib"] = round(_tree_hwm_kib(os.getpid())[os.getpid()][1] / 1024)
    out["signatures"] = sum(len(s.get("patterns") or []) for s in
                            {s["id"]: s for rb in runbooks for s in rb["symptoms"]}.values())
    out["runbooks"] = len(runbooks)
    return out


def _run_measure(engine: str, bundle: Path, master: str, first_wave: bool = False, leads: bool = True) -> dict:
    cmd = [sys.executable, "-m", "scripts.bench", "--measure", engine, "--bundle", str(bundle), "--master", master]
    cmd += ["--first-wave"] if first_wave else []
    cmd += [] if leads else ["--no-leads"]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


# --- the report ------------------------------------------------------------------------------------

def _mbps(res: dict, key: str = "scan_seconds") -> float:
    return res["bytes"] / MB / res[key]


def _cores(res: dict) -> str:
    """CPU-seconds per second of the scan: below the cores asked for, other processes had the rest."""
    return f"{res['scan_cpu_seconds'] / res['scan_seconds']:.2f}"


def _verdict(value: float, target: float) -> str:
    return f"target >= {target:.0f}: {'MET' if value >= target else 'MISSED'}"


def _context_store_row(row, bundle: Path) -> None:
    """What the pipeline adds after the scan: the compressed, line-indexed copy of every
    file kept for the context view (kb/lib/line_store.py), and how small it is."""
    import tempfile

    from kb.lib.line_store import line_store_write

    files = sorted(p for p in bundle.rglob("*") if p.is_file())
    size = sum(p.stat().st_size for p in files)
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory() as out:
        stored = sum(line_store_write(p, Path(out) / str(i))[1] for i, p in enumerate(files))
    took = time.monotonic() - t0
    row(f"context store write, {size / MB:.0f} MB", f"{size / MB / took:6.1f} MB/s ({took:.2f} s), "
        f"{stored / MB:.1f} MB stored ({size / max(stored, 1):.1f}x smaller than the files)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--local-mb", type=int, default=200)
    ap.add_argument("--spark-mb", type=int, default=1000)
    ap.add_argument("--rss-mb", type=int, nargs="*", default=[100, 1000])
    ap.add_argument("--skip-spark", action="store_true")
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--data-dir", default=str(ROOT / "bench-data"))
    ap.add_argument("--measure", choices=["local", "spark"], help=argparse.SUPPRESS)
    ap.add_argument("--bundle", help=argparse.SUPPRESS)
    ap.add_argument("--first-wave", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--no-leads", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--leads-only", action="store_true", help="only the leads' share of the local analysis")
    ap.add_argument("--catalog-runs", type=int, default=3, help="runs per catalog for the catalog-growth ratio")
    args = ap.parse_args(argv)

    if args.measure:   # child process: one measurement, JSON on the last line of stdout
        print(json.dumps(measure(args.measure, args.bundle, args.master, args.first_wave, not args.no_leads)))
        return 0

    from analyzers.runbooks import load_runbooks
    from analyzers.signatures import signatures_from_runbooks, to_hyperscan

    catalog = load_runbooks(RUNBOOKS)
    runbooks = [rb.meta for rb in catalog.runbooks.values()]
    data = Path(args.data_dir)
    sizes = sorted({args.local_mb, *args.rss_mb, *([] if args.skip_spark else [args.spark_mb])})
    bundles, metas = {}, {}
    for mb in sizes:
        bundles[mb] = data / f"bundle-{mb}mb"
        t0 = time.monotonic()
        metas[mb] = generate(bundles[mb], mb)
        took = time.monotonic() - t0
        print(f"bundle {mb} MB: {metas[mb]['bytes'] / MB:.0f} MB in {metas[mb]['files']} files "
              f"({'generated in %.0f s' % took if took > 1 else 'reused'}) at {bundles[mb]}", flush=True)

    sigs = signatures_from_runbooks(runbooks)
    eres, skipped = [], []
    for s in sigs:
        try:
            eres.append(to_ere(to_hyperscan(s.pattern).decode()))
        except ValueError:
            skipped.append(s.pattern)
    ere = "|".join(f"({e})" for e in eres)
    print(f"\n{len(runbooks)} runbooks, {len(sigs)} signatures ({len(eres)} as ERE for grep"
          f"{', %d skipped' % len(skipped) if skipped else ''})\n", flush=True)

    failures: list[str] = []

    def row(label: str, value: str) -> None:
        print(f"{label:<48} {value}", flush=True)

    print(f"load average before measuring: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores "
          "(MB/s are wall clock; 'per CPU-s' discounts other processes' load)\n", flush=True)
    results: dict[str, dict] = {}
    # Issue 12's target is on a 1 GB bundle: the lead records are bounded per range, so their
    # share falls with size; measured on the largest bundle made (1000 MB unless told otherwise).
    share = _leads_share_row(row, bundles[max(bundles)], args.master, args.catalog_runs)
    if share > TARGET_LEADS_SHARE:
        failures.append(f"leads take {share:.0%} of the analysis")
    if args.leads_only:
        return 1 if failures else 0
    local = _run_measure("local", bundles[args.local_mb], args.master)
    results[f"local-{args.local_mb}"] = local
    row(f"local engine, 1 core, {local['bytes'] / MB:.0f} MB",
        f"{_mbps(local):6.1f} MB/s scan, {_mbps(local, 'scan_cpu_seconds'):.0f} MB per CPU-s "
        f"({local['scan_seconds']:.2f} s, {_cores(local)} cores busy; {local['seconds']:.2f} s end to end; {local['matcher']} compiled "
        f"in {local['compile_seconds']:.2f} s before; "
        f"load {local['load']:.1f}) {_verdict(_mbps(local), TARGET_LOCAL)}")
    _grep_row(row, bundles[args.local_mb], ere, local)
    _context_store_row(row, bundles[args.local_mb])
    ratio = _catalog_growth_row(row, bundles[args.local_mb], args.master, args.catalog_runs)
    if ratio < TARGET_CATALOG_RATIO:
        failures.append(f"catalog growth: the scan runs at {ratio:.2f}x the first wave's speed")

    if not args.skip_spark:
        from scripts import bench_spark

        print(f"\nthe Spark engine ({args.master}) against ripgrep and the local engine, same bundle:", flush=True)
        big = bundles[args.spark_mb]
        local_big = results.get(f"local-{args.spark_mb}") or _run_measure("local", big, args.master)
        results[f"local-{args.spark_mb}"] = local_big
        rg = bench_spark.ripgrep(big, [to_hyperscan(s.pattern).decode() for s in sigs])
        spark = _run_measure("spark", big, args.master)
        results[f"spark-{args.spark_mb}"] = spark
        rss = {args.spark_mb: spark}
        for mb in args.rss_mb:
            if mb not in rss:
                rss[mb] = results[f"spark-{mb}"] = _run_measure("spark", bundles[mb], args.master)
        bench_spark.report(row, rg, local_big, spark, rss)
        _grep_row(row, big, ere, spark)
        print(flush=True)

    for mb in args.rss_mb:
        res = results.get(f"local-{mb}") or _run_measure("local", bundles[mb], args.master)
        results[f"local-{mb}"] = res
        row(f"local engine peak RSS, {res['bytes'] / MB:.0f} MB",
            f"{res['hwm_mib']} MiB ({_mbps(res):.1f} MB/s scan, {_mbps(res, 'scan_cpu_seconds'):.0f} MB per CPU-s)")

    # The seeds are five incidents in one bundle, and a runbook's excluding symptoms are
    # bundle-wide: seed 000's soft lockup rightly explains seed 002's ZooKeeper suspension.
    # So the reference is what the seed lines give on their own, in the same layout.
    seeds_only = generate(data / "seeds-only", 0)
    from analyzers.engine import analyze_paths

    reference = [f["runbook"] for f in analyze_paths([str(data / "seeds-only")], runbooks)["findings"]]
    expected = sorted({slug for slugs in seeds_only["expected"].values() for slug in slugs if slug in catalog.runbooks})
    lost = [slug for slug in expected if slug not in reference]
    row("seed lines alone (no noise), findings", ", ".join(reference))
    if lost:
        row("  expected by a seed, lost to the other seeds", ", ".join(lost))
    for key, res in results.items():
        missing = [slug for slug in reference if slug not in res["findings"]]
        extra = [slug for slug in res["findings"] if slug not in reference]
        row(f"seed runbooks in findings ({key})",
            ("all found" if not missing else f"MISSING {', '.join(missing)}")
            + (f"; the noise adds {', '.join(extra)}" if extra else ""))
        if missing:
            failures.append(f"{key}: {', '.join(missing)}")
    _leads_row(row, failures)

    from scripts import calibration

    print("\n" + "\n".join(calibration.report(*calibration.measure())), flush=True)
    return 1 if failures else 0


def _leads_row(row, failures: list[str]) -> None:
    """Issue 12's accuracy figure: real incidents no runbook covers (tests/fixtures/leads),
    decisive line among the first 5 leads (scripts/leads_eval.py)."""
    from scripts.leads_eval import TARGET, evaluate, misses

    hits, total, per_case = evaluate()
    if not any(c.has_leads for c in per_case):
        row(f"leads, {total} real incidents", "the result has no `leads` key yet (issue 12)")
        return
    met = hits >= TARGET * total
    row(f"leads, {total} real incidents", f"decisive line in the first 5 for {hits}/{total} "
        f"({100.0 * hits / total:.0f} %); target >= {TARGET:.0%}: {'MET' if met else 'MISSED'}")
    if not met:
        print(misses(per_case), flush=True)
        failures.append(f"leads: {hits}/{total} in the first 5")


def _leads_share_row(row, bundle: Path, master: str, runs: int) -> float:
    """CPU time of the local analysis with leads against without (the scan's lead pattern and
    records, and the ranking), alternating runs; the best of each decides."""
    best: dict[bool, dict] = {}
    for _ in range(runs):
        for leads in (False, True):
            res = _run_measure("local", bundle, master, leads=leads)
            if leads not in best or res["cpu_seconds"] < best[leads]["cpu_seconds"]:
                best[leads] = res
    share = (best[True]["cpu_seconds"] - best[False]["cpu_seconds"]) / best[True]["cpu_seconds"]
    row(f"leads, share of the local analysis, {best[True]['bytes'] / MB:.0f} MB",
        f"{share:.1%} ({best[True]['cpu_seconds']:.2f} CPU-s with {best[True]['leads']} leads, "
        f"{best[False]['cpu_seconds']:.2f} without, best of {runs}); "
        f"target <= {TARGET_LEADS_SHARE:.0%}: {'MET' if share <= TARGET_LEADS_SHARE else 'MISSED'}")
    if best[True]["findings"] != best[False]["findings"]:
        row("  findings differ with leads", f"{best[True]['findings']} vs {best[False]['findings']}")
    return share


def _catalog_growth_row(row, bundle: Path, master: str, runs: int) -> float:
    """Scan speed with today's catalog against the first wave's, alternating
    runs on the same bundle; the best CPU time of each decides (on a shared
    machine wall clock measures the neighbours as much as the scan)."""
    best: dict[bool, dict] = {}
    for _ in range(runs):
        for first_wave in (True, False):
            res = _run_measure("local", bundle, master, first_wave)
            if first_wave not in best or res["scan_cpu_seconds"] < best[first_wave]["scan_cpu_seconds"]:
                best[first_wave] = res
    old, new = best[True], best[False]
    ratio = old["scan_cpu_seconds"] / new["scan_cpu_seconds"]
    row(f"catalog growth, local engine, {new['bytes'] / MB:.0f} MB",
        f"{new['runbooks']} runbooks / {new['signatures']} patterns {_mbps(new, 'scan_cpu_seconds'):.0f} MB per CPU-s "
        f"({_mbps(new):.1f} MB/s) vs the first wave's {old['runbooks']} runbooks / {old['signatures']} patterns "
        f"{_mbps(old, 'scan_cpu_seconds'):.0f} MB per CPU-s ({_mbps(old):.1f} MB/s), best of {runs}: "
        f"{ratio:.2f}x; target >= {TARGET_CATALOG_RATIO:.2f}: {'MET' if ratio >= TARGET_CATALOG_RATIO else 'MISSED'}")
    if new["findings"] != old["findings"]:
        row("  findings differ between the catalogs", f"first wave {old['findings']}, now {new['findings']}")
    return ratio


def _grep_row(row, bundle: Path, ere: str, res: dict) -> None:
    files = [p for p in bundle.rglob("*") if p.is_file() and not p.name.startswith(".")]
    before = os.times()
    count, secs = grep_count(files, ere)
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    row(f"grep -E -c, all signatures, {res['bytes'] / MB:.0f} MB",
        f"{res['bytes'] / MB / secs:6.1f} MB/s, {res['bytes'] / MB / max(cpu, 1e-9):.0f} MB per CPU-s ({secs:.2f} s, "
        f"{count} lines); engine/grep speed: {secs / res['scan_seconds']:.2f}x wall, "
        f"{cpu / res['scan_cpu_seconds']:.2f}x per CPU-s")


if __name__ == "__main__":
    sys.exit(main())
