"""`manage.py analyze --format text`: the candidates when there is no finding,
and why a linked finding ranks where it does."""

import os
import subprocess
import sys

from tests.helpers import CASES, ROOT, SEED_BUNDLES, bundle_copy


def analyze_text(path):
    env = {**os.environ, "KB_VAR_DIR": os.environ.get("KB_VAR_DIR", str(ROOT / "var"))}
    proc = subprocess.run([sys.executable, "manage.py", "analyze", str(path), "--format", "text"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def test_it_lists_candidates_with_their_next_step_when_there_is_no_finding(tmp_path):
    lines = analyze_text(bundle_copy(SEED_BUNDLES / "004-flink-tm-heartbeat-timeout-buckets", tmp_path))
    start = lines.index("no finding; candidate root causes, most likely first:")
    assert lines[start + 1].startswith("0.10? flink-filesink-too-many-buckets")
    assert lines[start + 2] == "      found: flink-tm-heartbeat-timeout"
    assert lines[start + 3] == "      missing: flink-filesink-bucket-objects-in-heap"
    assert lines[start + 4].startswith("      next step: Look for 'Heap histogram")
    assert lines[start + 5].startswith("      where: a class histogram of the TaskManager heap")


def test_it_says_why_a_linked_finding_ranks_where_it_does(tmp_path):
    lines = analyze_text(bundle_copy(CASES / "flink-filesink-too-many-buckets" / "positive", tmp_path))
    gc = next(i for i, line in enumerate(lines) if line.endswith("jvm-long-gc-pause  Long stop-the-world GC pause stalls the JVM"))
    assert lines[gc + 1].startswith("      ranked here: consequence of flink-filesink-too-many-buckets")
    assert not any(line.startswith("no finding") for line in lines)
