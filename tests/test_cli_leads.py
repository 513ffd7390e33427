"""`manage.py analyze ... --baseline HEALTHY_PATH` and the "Leads" section of the text format
(docs/contract.md §2)."""

import json
import os
import subprocess
import sys

from tests.helpers import FIXTURES, ROOT

FORMATS = FIXTURES / "leads-formats"


def run(*args):
    env = {**os.environ, "KB_VAR_DIR": os.environ.get("KB_VAR_DIR", str(ROOT / "var"))}
    return subprocess.run([sys.executable, "manage.py", "analyze", *map(str, args)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)


def test_the_text_format_shows_the_first_leads_with_where_what_and_why():
    proc = run(FORMATS / "go-panic-journal", "--format", "text")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.splitlines()
    start = out.index("Leads")
    assert out[start + 1].startswith("  1. 0b04f612c4d4826f:journal.log:2  ")
    assert "panic: runtime error: invalid memory address" in out[start + 1]
    assert "the process stopped right after (journal.log:3)" in out[start + 2]


def test_baseline_of_the_same_bundle_leaves_no_leads():
    proc = run(FORMATS / "warn-with-exception", "--format", "json", "--baseline", FORMATS / "warn-with-exception")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["leads"] == [] and result["baseline"]["dropped"] == 1
    assert result["baseline"]["path"].endswith("warn-with-exception")


def test_a_missing_baseline_is_one_clear_line_and_exit_2(tmp_path):
    proc = run(FORMATS / "fluentd", "--baseline", tmp_path / "nowhere")
    assert proc.returncode == 2 and proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "nowhere" in lines[0] and "Traceback" not in proc.stderr
