"""Leads (issue 12): on real lines of every format, the record to look at first comes back as a
lead with its host, line and timestamp; findings keep what they explain; a baseline subtracts.

Format fixtures: tests/fixtures/leads-formats/ (provenance in tests/fixtures/README.md) and
fixture cases already in the repository (their SOURCE.md). They are analysed without runbooks,
so that no finding explains the line under test: what is checked is the candidate collection
and the record (a trace is one record), not the catalog.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from analyzers.engine import analyze_paths
from analyzers.leads import MAX_LEADS, record_key
from analyzers.template_key import template_key
from tests.helpers import FIXTURES, SEED_BUNDLES, bundle_cases, bundle_copy, case_id, runbook_metas, runbook_specs

LEADS_FORMATS = FIXTURES / "leads-formats"
# Syslog and klog lines carry no year: the engine takes the bundle's year, else the current one.
YEARLESS = "yearless:"

# (bundle, path, line, host, timestamp, kind, words of the record's headline or text)
FORMATS = [
    ("leads-formats/python-traceback", "client-1/producer.log", 1, "client-1", None, "traceback",
     "kafka.errors.NoBrokersAvailable"),
    ("leads-formats/go-panic-journal", "journal.log", 2, "0b04f612c4d4826f", YEARLESS + "10-05T01:45:32", "panic",
     "panic: runtime error"),
    ("leads-formats/librdkafka", "producer-1/app.log", 1, "producer-1", "2014-12-11T12:16:31.571", "error",
     "|FAIL|rdkafka#producer-0|"),
    ("leads-formats/fluentd", "fluentd-1/fluentd.log", 1, "fluentd-1", "2017-08-07T18:58:38", "error",
     "[error]: #0"),
    ("leads-formats/logrus", "kafka-exporter-1/kafka_exporter.log", 1, "kafka-exporter-1", "2019-08-12T16:52:22",
     "error", "level=error"),
    ("leads-formats/klog", "kafka-exporter-2/docker.log", 3, "kafka-exporter-2", YEARLESS + "12-28T10:49:07.961",
     "error", "E1228 10:49:07.961168"),
    ("leads-formats/kernel-oops", "sunxi-1/kern.log", 1, "sunxi-1", YEARLESS + "05-19T08:25:02", "kernel",
     "Internal error: Oops"),
    ("leads-formats/kernel-oom-kill", "kern.log", 1, "wordpress-nyc", YEARLESS + "04-15T20:56:15", "kernel",
     "Out of memory: Kill process"),
    ("leads-formats/kernel-gpf", "dmesg", 1, None, None, "kernel", "general protection fault: 0000 [#1] SMP"),
    ("leads-formats/kernel-warn", "stahl2/kern.log", 1, "stahl2", YEARLESS + "04-18T08:58:32", "kernel",
     "WARNING: CPU: 5 PID: 0 at net/core/stream.c:212"),
    ("leads-formats/hadoop-ipc-retry", "job-client.log", 3, None, "2018-05-22T20:28:56", "error",
     "Retrying connect to server: hadoop-master/192.168.10.1:8032"),
    ("leads-formats/compose-prefix", "compose.log/kafka1_1/kafka1_1.log", 2, "kafka1_1", None, "error",
     "Socket error occurred: zoo1/172.19.0.2:2181: Connection refused"),
    ("leads-formats/go-log", "consumer-1/sarama.log", 4, "consumer-1", "2020-12-28T21:34:14", "error",
     "got error from broker -1 while fetching metadata: read tcp"),
    ("leads-formats/compose-exit", "compose.log/kafka_1/kafka_1.log", 9, "kafka_1", None, "stop",
     "[Configuring] 'log.dirs' in '/opt/kafka/config/server.properties'\nkafka-nodejs-tutorial_kafka_1 exited with code 139"),
    ("leads-formats/warn-with-exception", "devicehive-1/devicehive.log", 1, "devicehive-1",
     "2016-11-13T11:40:15.929", "exception", "java.net.ConnectException: Connection refused"),
    ("seed-bundles/000-flink-hdfs-openforwrite-after-soft-lockup", "hadoop-080-037/kern.log", 1, "hadoop-080-037",
     YEARLESS + "04-23T17:39:19", "kernel", "BUG: soft lockup"),
    ("cases/kernel-hung-task-io-stall/positive", "logstash-1/kern.log", 1, "logstash-1", None, "kernel",
     "INFO: task jbd2/vda1-8:404 blocked for more than 120 seconds."),
    ("cases/hive-guava-version-conflict/positive", "bench-1/bench.log", 6, "bench-1", None, "exception",
     'Exception in thread "main" java.lang.NoSuchMethodError'),
    ("cases/zookeeper-sasl-jaas-missing/positive", "kafka-0/server.log", 5, "kafka-0", "2019-03-08T08:31:30.812",
     "exception", "SASL configuration failed: javax.security.auth.login.LoginException"),
    ("cases/kerberos-server-principal-not-found/positive", "kafka-1/kafka-server.log", 1, "kafka-1", None,
     "exception", "KrbException: Server not found in Kerberos database"),
    ("cases/flink-zk-suspended-lost-leadership/near-miss", "hadoop-080-037/flink-jobmanager.log",
     37, "hadoop-080-037", "2019-04-23T17:39:19.857", "state", "State change: SUSPENDED"),
    ("cases/disk-full/near-miss", "rm-1/yarn-resourcemanager.log", 5, "rm-1", "2016-03-24T10:10:43.398",
     "state", "Node Transitioned from RUNNING to UNHEALTHY"),
    ("cases/flink-insufficient-network-buffers/positive", "jm-1/flink-flink-standalonesession-0-jm-1.log", 2,
     "jm-1", "2022-11-08T10:05:17.431", "exception", "switched from DEPLOYING to FAILED on tm-4"),
    ("cases/hbase-regionserver-session-expired/positive", "rs-hdps01/hbase-regionserver.log", 1,
     "rs-hdps01", "2017-05-23T06:59:22.173", "exception", "ABORTING region server"),
    ("cases/mapreduce-task-timeout/positive", "client-1/job-client.log", 5, "client-1", "2016-03-16T11:16:52",
     "stop", "Container exited with a non-zero exit code 143"),
]


def _analyze(bundle: Path, tmp_path: Path, runbooks=None, **kw) -> dict:
    return analyze_paths([str(bundle_copy(bundle, tmp_path))], runbooks or [], **kw)


@pytest.mark.parametrize("row", FORMATS, ids=[f"{r[0].split('/')[-1]}:{r[6][:30]}" for r in FORMATS])
def test_each_format_yields_a_lead_with_its_host_line_and_timestamp(row, tmp_path):
    bundle, path, line, host, stamp, kind, words = row
    result = _analyze(FIXTURES / bundle, tmp_path)
    leads = result["leads"]
    assert 0 < len(leads) <= MAX_LEADS and [lead["rank"] for lead in leads] == list(range(1, len(leads) + 1))
    found = [lead for lead in leads if lead["path"] == path and lead["line"] == line]
    assert found, f"no lead at {path}:{line}; got {[(lead['path'], lead['line']) for lead in leads]}"
    (lead,) = found
    assert lead["host"] == host and lead["kind"] == kind
    assert words in lead["text"]
    if stamp is not None and stamp.startswith(YEARLESS):
        assert lead["timestamp"] and lead["timestamp"][5:] == stamp[len(YEARLESS):]
    else:
        assert lead["timestamp"] == stamp
    assert lead["reason"] and "\n" not in lead["reason"] and lead["count"] >= 1 and lead["template"]


def test_a_stack_trace_is_one_record_headed_by_its_deepest_cause(tmp_path):
    result = _analyze(FIXTURES / "cases/hdfs-openforwrite-after-interrupted-close/positive", tmp_path)
    traces = [lead for lead in result["leads"] if "\n\tat " in lead["text"]]
    assert traces
    for lead in traces:
        lines = lead["text"].split("\n")
        causes = [ln for ln in lines if ln.startswith("Caused by:")]
        assert lead["headline"] == (causes[-1].strip() if causes else lines[0].strip())
        assert not any(other["path"] == lead["path"] and lead["line"] < other["line"] < lead["line"] + len(lines)
                       for other in result["leads"]), "a line inside a trace came back as its own lead"


def test_a_traceback_is_one_record_ending_with_its_exception(tmp_path):
    (lead,) = _analyze(LEADS_FORMATS / "python-traceback", tmp_path)["leads"]
    assert lead["text"].split("\n")[0] == "Traceback (most recent call last):"
    assert lead["text"].split("\n")[-1] == "kafka.errors.NoBrokersAvailable" == lead["headline"]


def test_a_kernel_report_over_many_syslog_lines_is_one_record(tmp_path):
    (lead,) = _analyze(LEADS_FORMATS / "kernel-oops", tmp_path)["leads"]
    assert len(lead["text"].split("\n")) == 8 and "PC is at release_resource" in lead["text"]


def test_a_kernel_report_in_dmesg_is_one_record_and_a_warn_block_is_headed_by_its_warning(tmp_path):
    (gpf,) = _analyze(LEADS_FORMATS / "kernel-gpf", tmp_path)["leads"]
    assert len(gpf["text"].split("\n")) == 8 and "EIP is at compute_score" in gpf["text"]
    (warn,) = _analyze(LEADS_FORMATS / "kernel-warn", tmp_path)["leads"]
    assert "[ cut here ]" in warn["text"].split("\n")[0] and "Hardware name: Red Hat KVM" in warn["text"]
    assert "] WARNING: CPU: 5 PID: 0 at net/core/stream.c:212" in warn["headline"]


def test_boot_lines_and_jvm_warnings_are_not_kernel_leads(tmp_path):
    # dmesg's "NX ... protection: active" and the JVM's "WARNING: An illegal reflective access"
    # lines look like the kernel's fault and WARN() reports, but are not.
    leads = _analyze(LEADS_FORMATS / "kernel-near-miss", tmp_path)["leads"]
    assert not [lead for lead in leads if lead["kind"] == "kernel" or lead["path"].endswith("dmesg")
                or lead["line"] < 5]


def test_an_ipc_client_retrying_at_info_leads_but_its_connecting_line_does_not(tmp_path):
    leads = _analyze(LEADS_FORMATS / "hadoop-ipc-retry", tmp_path)["leads"]
    assert [lead["line"] for lead in leads] == [3]     # not "Connecting to ResourceManager at ..." (lines 1, 2)


def test_a_go_log_line_leads_when_it_says_error_and_its_neighbours_do_not(tmp_path):
    leads = _analyze(LEADS_FORMATS / "go-log", tmp_path)["leads"]
    assert [lead["line"] for lead in leads] == [4]     # not "Connected to broker", "Closed connection", ...


def test_a_compose_service_that_exits_non_zero_leads_with_its_last_line_and_exit_zero_does_not(tmp_path):
    # compose v1 names the project's container in its note ("kafka-nodejs-tutorial_kafka_1"): it goes to kafka_1
    leads = _analyze(LEADS_FORMATS / "compose-exit", tmp_path)["leads"]
    assert leads[0]["headline"] == "[Configuring] 'log.dirs' in '/opt/kafka/config/server.properties'"
    # the same service's same last lines, then "exited with code 0" (another thread): no lead
    assert [lead for lead in leads if lead["path"].startswith("compose-exit-zero.log")] == []


def test_the_process_stopping_right_after_is_the_reason_given(tmp_path):
    result = _analyze(LEADS_FORMATS / "go-panic-journal", tmp_path)
    assert result["leads"][0]["kind"] == "panic"
    assert "stopped right after (journal.log:3)" in result["leads"][0]["reason"]


# --- findings keep what they explain ---------------------------------------------------------

CASES = bundle_cases()


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_records_a_finding_explains_are_not_leads(case, tmp_path):
    result = _analyze(case, tmp_path, runbook_specs())
    evidence = {(ev["path"], ev["line"]) for f in result["findings"] for ev in f["evidence"]}
    explained_keys = {template_key(_message(ev["text"])) for f in result["findings"] for ev in f["evidence"]}
    for lead in result["leads"]:
        span = range(lead["line"], lead["line"] + lead["text"].count("\n") + 1)
        assert not any(path == lead["path"] and ln in span for path, ln in evidence), lead
        assert not {template_key(_message(t)) for t in lead["text"].split("\n")} & explained_keys, lead


def _message(text: str) -> str:
    from analyzers.template_key import message_part

    return message_part(text)


def test_a_finding_explains_what_would_otherwise_lead(tmp_path):
    bundle = SEED_BUNDLES / "000-flink-hdfs-openforwrite-after-soft-lockup"
    without = _analyze(bundle, tmp_path / "a")
    with_catalog = _analyze(bundle, tmp_path / "b", runbook_specs())
    assert any("soft lockup" in lead["text"] for lead in without["leads"])
    assert with_catalog["findings"] and not any("soft lockup" in lead["text"] for lead in with_catalog["leads"])


# --- baseline diff ----------------------------------------------------------------------------

NAMENODE_LOG = FIXTURES / "cases/hdfs-journalnode-quorum-lost/near-miss/cdh-nn/hadoop-cmf-hdfs-NAMENODE.log"


def _split_bundles(tmp_path: Path) -> tuple[Path, Path]:
    """The same NameNode's log: its first half as the healthy bundle, the whole as the incident."""
    lines = NAMENODE_LOG.read_text(encoding="utf-8").splitlines(keepends=True)
    healthy, incident = tmp_path / "healthy" / "cdh-nn", tmp_path / "incident" / "cdh-nn"
    healthy.mkdir(parents=True)
    incident.mkdir(parents=True)
    (healthy / NAMENODE_LOG.name).write_text("".join(lines[:len(lines) // 2]), encoding="utf-8")
    shutil.copy(NAMENODE_LOG, incident / NAMENODE_LOG.name)
    return healthy.parent, incident.parent


def test_a_bundle_against_itself_has_no_leads(tmp_path):
    _, incident = _split_bundles(tmp_path)
    alone = analyze_paths([str(incident)], runbook_specs())
    against_itself = analyze_paths([str(incident)], runbook_specs(), baseline=str(incident))
    assert alone["leads"] and against_itself["leads"] == [] and against_itself["unmatched"] == []
    assert against_itself["baseline"]["dropped"] >= len(alone["leads"]) and "baseline" not in alone


def test_against_a_healthy_bundle_only_the_new_templates_lead(tmp_path):
    from analyzers.baseline import baseline_of

    healthy, incident = _split_bundles(tmp_path)
    alone = analyze_paths([str(incident)], runbook_specs())
    diffed = analyze_paths([str(incident)], runbook_specs(), baseline=str(healthy))
    known = baseline_of([str(healthy)], runbook_metas()).templates

    def key(lead):
        return record_key(lead["text"].split("\n")[0], lead["headline"])

    kept = {(lead["path"], lead["line"]) for lead in diffed["leads"]}
    assert diffed["leads"] and len(diffed["leads"]) < len(alone["leads"])
    assert all(key(lead) not in known for lead in diffed["leads"])
    for lead in alone["leads"]:
        assert ((lead["path"], lead["line"]) in kept) == (key(lead) not in known), lead
    assert diffed["findings"] == alone["findings"]


def test_an_unusable_baseline_is_a_clear_error(tmp_path):
    from analyzers.model import BundleError

    with pytest.raises(BundleError, match="missing"):
        analyze_paths([str(LEADS_FORMATS / "fluentd")], [], baseline=str(tmp_path / "missing"))


# --- both engines: pieces of a range keep the records one scan keeps --------------------------

@pytest.mark.parametrize("case", sorted(p for p in LEADS_FORMATS.iterdir() if p.is_dir()) + [
    FIXTURES / "cases/hdfs-openforwrite-after-interrupted-close/positive",
    SEED_BUNDLES / "000-flink-hdfs-openforwrite-after-soft-lockup"], ids=lambda p: p.name)
def test_pieces_cut_inside_records_merge_into_the_records_of_one_scan(case):
    """What the Spark runner does (analyzers/spark/runner.py), without a JVM: a file scanned in
    pieces of a few hundred bytes (cutting traces, tracebacks and kernel reports) merges into
    exactly the lead records one scan of the file keeps."""
    from analyzers import timestamps
    from analyzers.scan import plan_ranges, scan_range
    from analyzers.signatures import matcher_for, signatures_from_runbooks
    from analyzers.spark.runner import merge_pieces

    matcher = matcher_for(signatures_from_runbooks(runbook_metas()))
    files = [p for p in case.rglob("*") if p.is_file() and p.name not in ("SOURCE.md", "expected.json")]
    assert files
    kept = 0
    for f in files:
        size = f.stat().st_size
        whole = scan_range(f.name, str(f), 0, size, matcher, 1 << 20, timestamps.is_record_start)
        for piece in (97, 300, 1024):
            parts = [scan_range(f.name, str(f), s, e, matcher, 1 << 20, timestamps.is_record_start)
                     for s, e in plan_ranges(size, piece)]
            merged = merge_pieces(f.name, 0, parts)
            assert merged.leads == whole.leads and merged.stops == whole.stops, (f, piece)
        kept += len(whole.leads)
    assert kept, "the case should have lead records"


def test_a_result_with_leads_and_a_baseline_fits_the_typed_result(tmp_path):
    from analyzers.result import Result
    from tests.analyzers.test_result_schema import problems

    healthy, incident = _split_bundles(tmp_path)
    result = analyze_paths([str(incident)], runbook_specs(), baseline=str(healthy))
    assert result["leads"] and "baseline" in result
    assert problems(result, Result) == []
