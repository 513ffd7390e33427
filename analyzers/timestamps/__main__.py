"""python -m analyzers.timestamps: a rough per-line cost of parse_header and is_record_start."""

from __future__ import annotations

import time
import timeit

from analyzers.timestamps import is_record_start, parse_header

samples = {
    "log4j": "2019-04-23 17:39:19,323 INFO [main] org.apache.hadoop.hdfs.DFSClient: "
             "Exception in createBlockOutputStream",
    "flink": "[INFO ] 2019-04-23 17:39:19,323(437903235) --> [flink-akka.actor.default-dispatcher-18]"
             " org.apache.flink.runtime.executiongraph.Execution.transitionState(Execution.java:1318):"
             " Sink (1/1) switched from RUNNING to FAILED.",
    "zookeeper": "2015-07-29 17:41:44,747 - INFO  [QuorumPeer[myid=1]/0:0:0:0:0:0:0:0:2181:"
                 "FastLeaderElection@774] - Notification time out: 3200",
    "syslog": "Apr 23 17:39:19 hadoop-080-037 kernel: NMI watchdog: BUG: soft lockup",
    "kafka": "[2021-03-04 10:11:12,345] WARN Attempting to send response (kafka.network.Processor)",
    "spark": "17/06/09 20:10:40 INFO executor.Executor: Running task 0.0 in stage 1.0",
    "frame": "\tat org.apache.flink.runtime.taskexecutor.TaskExecutor.closeJobManagerConnection"
             "(TaskExecutor.java:1167)",
    "frame8": "        at org.apache.hadoop.net.SocketIOWithTimeout.doIO(SocketIOWithTimeout.java:164)",
    "caused": "Caused by: java.io.IOException: Connection reset by peer",
    "exception": "java.io.IOException: Got error, status message , ack with firstBadLink",
    "more": "\t... 16 more",
}
n = 50_000
clock = time.process_time       # CPU time: robust when other processes share the machine
totals: dict[bool, list[float]] = {True: [], False: []}
for name, s in samples.items():
    per = min(timeit.repeat(lambda: parse_header(s), number=n, repeat=3, timer=clock)) / n * 1e6
    per2 = min(timeit.repeat(lambda: is_record_start(s), number=n, repeat=3, timer=clock)) / n * 1e6
    h = parse_header(s)
    totals[h is not None].append(per)
    print(f"{name:10s} parse_header {per:5.2f} us   is_record_start {per2:5.2f} us   -> {h}")
for matched, v in totals.items():
    print(f"mean parse_header, {'record starts' if matched else 'continuations'}: "
          f"{sum(v) / len(v):.2f} us")
