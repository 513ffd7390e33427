"""Fix steps filled with the incident's values (analyzers/fill.py): the seed
bundles analyzed by the local engine over the real runbooks, then each
finding's fix steps filled from its evidence with the runbook's `fill:` map."""

from __future__ import annotations

from functools import lru_cache

import pytest

from analyzers.engine import analyze_paths
from analyzers.fill import check_fill, fill_fixes, fill_text, first_path, record_captures, resolve
from tests.helpers import SEED_BUNDLES, bundle_copy, catalog, runbook_specs

SEED_000 = SEED_BUNDLES / "000-flink-hdfs-openforwrite-after-soft-lockup"
SEED_003 = SEED_BUNDLES / "003-hbase-rs-abort-pipeline-recovery"
SINK_FILE = "/data/BaseData/flinksql/TCFlyIntB2BTrade_flight_segment_info/2019/04/23/tmp-part-0-6.in-progress"
WAL = ("/hbase/WALs/c1-hd-dn18.bdp.idc,16020,1469772903345/"
       "c1-hd-dn18.bdp.idc%2C16020%2C1469772903345.default.1470426151350")


@lru_cache(maxsize=None)
def _result(seed, tmp):
    return analyze_paths([str(bundle_copy(seed, tmp))], runbook_specs())


def _filled(result: dict, slug: str) -> list[dict]:
    finding = next(f for f in result["findings"] if f["runbook"] == slug)
    records = finding["evidence"] + [e for f in result["findings"] for e in f["evidence"]]
    library = catalog().symptoms
    return fill_fixes(finding["fix_steps"], catalog().runbooks[slug].meta.get("fill"), records, library,
                      finding["knobs"], result["files"])


def _commands(fixes: list[dict]) -> list[str]:
    return [st["command"] for fix in fixes for st in fix["steps"] if st["command"]]


def _texts(fixes: list[dict]) -> list[str]:
    return [st["text"] for fix in fixes for st in fix["steps"]]


@pytest.fixture(scope="module")
def seed_000(tmp_path_factory):
    return _result(SEED_000, tmp_path_factory.mktemp("s000"))


@pytest.fixture(scope="module")
def seed_003(tmp_path_factory):
    return _result(SEED_003, tmp_path_factory.mktemp("s003"))


def test_seed_000_commands_name_the_part_file_its_jstack_shows_open(seed_000):
    fixes = _filled(seed_000, "hdfs-openforwrite-after-interrupted-close")
    commands = _commands(fixes)
    assert f"hdfs debug recoverLease -path {SINK_FILE} -retries 5" in commands
    assert f"hdfs fsck {SINK_FILE.rsplit('/', 1)[0]} -files -openforwrite" in commands
    assert not any("/path/to/" in c for c in commands)
    # the grep runs on the writer's own log file, and the restart names its host
    assert any(c.endswith("flink-taskmanager.log") and c.startswith("grep -n -A3") for c in commands)
    assert any("restart that TaskManager (on hadoop-081-159)" in t for t in _texts(fixes))
    filled = [p for fix in fixes for st in fix["steps"] for p in st["filled"]]
    assert {p["source"] for p in filled} >= {"hadoop-081-159/jstack-taskmanager.txt:1",
                                              "hadoop-081-159/flink-taskmanager.log:48"}


def test_seed_000_soft_lockup_steps_name_the_stalled_host_and_the_open_file(seed_000):
    fixes = _filled(seed_000, "kernel-soft-lockup-stalls-jvm")
    assert any("off the host (hadoop-080-037)" in t for t in _texts(fixes))
    assert f"hdfs debug recoverLease -path {SINK_FILE} -retries 5" in _commands(fixes)


def test_seed_003_commands_name_the_wal_and_the_aborted_regionserver(seed_003):
    fixes = _filled(seed_003, "hdfs-pipeline-recovery-no-good-datanode")
    commands = _commands(fixes)
    assert f"hdfs fsck {WAL} -files -blocks -locations" in commands
    assert f"hdfs debug recoverLease -path {WAL} -retries 5" in commands
    texts = _texts(fixes)
    assert any("Restart the aborted RegionServer (c1-hd-dn18.bdp.idc,16020,1469772903345)" in t for t in texts)
    assert any("transfer source every time (here dn-src)" in t for t in texts)


def test_a_placeholder_without_a_value_stays_and_is_marked():
    parts = fill_text("hdfs fsck /path/to/sink/dir -files; curl http://<namenode>:<http-port>/jmx",
                      {"/path/to/sink/dir": None})
    assert [p["text"] for p in parts if p.get("missing")] == ["/path/to/sink/dir", "<namenode>", "<http-port>"]
    assert "".join(p["text"] for p in parts) == "hdfs fsck /path/to/sink/dir -files; curl http://<namenode>:<http-port>/jmx"


def test_xml_tags_are_not_placeholders():
    command = "<property><name>dfs.client.block.write.locateFollowingBlock.retries</name><value>10</value></property>"
    assert not [p for p in fill_text(command, {}) if p.get("missing")]


def test_the_longest_declared_placeholder_wins():
    record = {"symptom": "s", "path": "h/a.log", "line": 3, "text": "x /data/sink/part-1 y"}
    fill = {"/path/to/sink/dir": {"symptom": "s", "take": "dir"}, "/path/to/sink/dir/part-0-6": {"symptom": "s", "take": "path"}}
    fixes = fill_fixes([{"title": "t", "kind": "diagnosis", "steps": [
        {"text": "a", "command": "fsck /path/to/sink/dir/part-0-6 and /path/to/sink/dir"}]}], fill, [record], {})
    assert fixes[0]["steps"][0]["command"] == "fsck /data/sink/part-1 and /data/sink"


def test_captures_come_from_the_result_when_it_has_them_else_from_the_patterns():
    line = "org.apache.hadoop.hbase.regionserver.wal.FailedLogCloseException: hdfs://ns1/hbase/WALs/rs,1/w.1, unflushedEntries=61"
    patterns = catalog().symptoms["hbase-wal-failed-log-close"]["patterns"]
    assert record_captures({"text": line}, patterns)["wal"] == "hdfs://ns1/hbase/WALs/rs,1/w.1"
    assert record_captures({"text": line, "captures": {"wal": "/x"}}, patterns) == {"wal": "/x"}
    assert first_path(line) == "/hbase/WALs/rs,1/w.1"
    src = [{"symptom": "nothing-seen", "field": "host"}, {"symptom": "w", "capture": "wal", "take": "name"}]
    assert resolve(src, [{"symptom": "w", "text": line, "path": "p", "line": 1}],
                   {"w": {"patterns": patterns}})[0] == "w.1"


def test_a_bad_fill_map_gets_every_problem_named():
    fixes = [{"steps": [{"text": "on <host>", "command": "fsck /path/to/dir"}]}]
    problems = check_fill({"<host>": {"symptom": "nope", "field": "hostname"},
                           "/path/to/dir": [{"symptom": "kernel-soft-lockup", "capture": "x", "field": "host"}],
                           "<unused>": {"symptom": "kernel-soft-lockup", "take": "dirname"}},
                          fixes, set(catalog().symptoms))
    text = "\n".join(f"{w}: {m}" for w, m in problems)
    assert "unknown symptom 'nope'" in text and "field must be one of" in text
    assert "give capture or field, not both" in text
    assert "fill['<unused>']: no fix step uses this placeholder" in text and "take must be one of" in text
    assert check_fill([], fixes, set()) and check_fill({}, fixes, set()) == []


def test_a_command_that_sets_a_knob_says_what_the_bundles_config_holds():
    knobs = [{"key": "dfs.client.block.write.locateFollowingBlock.retries", "file": "hdfs-site.xml", "found": "5"},
             {"key": "dfs.namenode.handler.count", "file": "hdfs-site.xml", "found": None}]
    files = [{"path": "nn1/conf/hdfs-site.xml", "kind": "config"}, {"path": "nn1/conf/core-site.xml", "kind": "config"},
             {"path": "nn1/hadoop-hdfs-namenode.log", "kind": "log"}]
    step = {"text": "Raise the retries", "command": "<property><name>dfs.client.block.write.locateFollowingBlock.retries"
                                                    "</name><value>10</value></property>"}
    [fix] = fill_fixes([{"title": "t", "kind": "mitigation", "steps": [step]}], None, [], {}, knobs, files)
    assert fix["steps"][0]["knob"] == ("dfs.client.block.write.locateFollowingBlock.retries is 5 in this bundle "
                                       "(nn1/conf/hdfs-site.xml)")
    assert fix["steps"][0]["missing"] == []


FILLED_BY_CASE = {
    "hdfs-block-missing": "hdfs fsck /warehouse/sales.db/orders/dt=2023-04-01/part-00007.orc -files -blocks -locations",
    "hdfs-namenode-storage-dir-missing": "findmnt -T /data/name",
    "hdfs-quota-exceeded": "hdfs dfs -count -q -h /user/user_name",
    "zookeeper-acl-noauth": "zkCli.sh -server <zk>:2181 getAcl /config/topics/test",
    "hdfs-lease-expired": "grep '/user/hive/warehouse/t1/.hive-staging_hive_2016-02-11_10-21-33_512_1/_task_tmp.-ext-10000/"
                          "_tmp.000003_0' hdfs-audit.log | grep -E 'cmd=(delete|rename|create)'",
}


@pytest.mark.parametrize("slug", sorted(FILLED_BY_CASE))
def test_each_runbooks_positive_case_fills_its_declared_placeholders(slug, tmp_path):
    from tests.helpers import CASES

    result = _result(CASES / slug / "positive", tmp_path)
    commands = _commands(_filled(result, slug))
    assert FILLED_BY_CASE[slug] in commands
    declared = set(catalog().runbooks[slug].meta["fill"])
    assert not [c for c in commands if any(key in c for key in declared)], commands


def test_given_the_library_the_validator_refuses_a_capture_the_symptom_does_not_have():
    fixes = [{"steps": [{"text": "t", "command": "zkCli.sh getAcl <path> <znode>"}]}]
    library = catalog().symptoms
    problems = check_fill({"<path>": {"symptom": "zk-noauth", "capture": "path"},
                           "<znode>": {"symptom": "zk-noauth", "capture": "znode"}}, fixes, library)
    assert problems == [("fill['<znode>']", "symptom 'zk-noauth' has no capture 'znode' (it has ['path'])")]
    # a fact symptom's captures are the declared ones (a jstack thread's line is its value)
    assert check_fill({"<path>": {"symptom": "hdfs-datastreamer-thread-alive", "capture": "value"}}, fixes, library) == []


def test_app_id_names_the_application_of_a_container_or_task_attempt():
    line = ("Diagnostics report from attempt_1465331659466_0626_m_000001_0: "
            "AttemptID:attempt_1465331659466_0626_m_000001_0 Timed out after 600 secs")
    src = {"symptom": "t", "capture": "attempt", "take": "app_id"}
    record = {"symptom": "t", "text": line, "path": "am/syslog", "line": 3}
    library = {"t": {"patterns": catalog().symptoms["mapreduce-task-attempt-timed-out"]["patterns"]}}
    assert resolve(src, [record], library)[0] == "application_1465331659466_0626"
    record["text"] = "containerID=container_e17_1456890000000_0212_01_000007] is running beyond physical memory limits"
    assert resolve({"symptom": "t", "take": "app_id"}, [record], {})[0] == "application_1456890000000_0212"
    assert resolve({"symptom": "t", "take": "container_id"}, [record], {})[0] == "container_e17_1456890000000_0212_01_000007"
    record["text"] = "Container killed by YARN for exceeding memory limits"
    assert resolve({"symptom": "t", "take": "app_id"}, [record], {}) is None
    assert resolve({"symptom": "t", "take": "container_id"}, [record], {}) is None


def test_a_log_file_at_the_top_of_the_bundle_is_named_too():
    records = [{"symptom": "s", "path": "client.log", "line": 1, "text": "x"},
               {"symptom": "h", "path": "broker-1/logs/server.log", "line": 1, "text": "x"}]
    assert resolve({"symptom": "s", "field": "path", "take": "name"}, records, {})[0] == "client.log"
    assert resolve({"symptom": "h", "field": "path", "take": "name"}, records, {})[0] == "server.log"
