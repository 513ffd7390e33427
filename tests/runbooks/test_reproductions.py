"""Reproduced fixture cases are what the upstream code prints (tests/fixtures/reproductions/).

A runbook whose failure no public log shows may have a positive case whose lines were
printed here by an upstream release's own classes (the jars pyspark ships: Hadoop,
Hive, ZooKeeper), run by `tests/fixtures/reproductions/<name>/reproduce.py OUTDIR`. The
script writes the case's bundle files (same relative paths) into OUTDIR; its module
constant CASE names the case folder under tests/fixtures/cases/. This test runs each
script again and requires every line of the committed case to be a line of the fresh
output once numbers are masked (timestamps, ports, ids and sizes differ run to run), so
a hand-edited or invented line fails. Slow: each script starts a JVM.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import CASES, FIXTURES, bundle_files, provenance

REPRODUCTIONS = sorted((FIXTURES / "reproductions").glob("*/reproduce.py"))
NUMBER = re.compile(r"\d+")


def _case(script: Path) -> Path:
    """The CASE constant of a reproduce.py (read without importing it)."""
    for node in ast.parse(script.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "CASE" for t in node.targets):
            return CASES / ast.literal_eval(node.value)
    raise AssertionError(f"{script}: no CASE = '<slug>/<case>' constant")


def _lines(root: Path) -> dict[str, list[str]]:
    return {str(f.relative_to(root)): f.read_text(encoding="utf-8", errors="replace").splitlines()
            for f in bundle_files(root)}


def masked(line: str) -> str:
    return NUMBER.sub("N", line.rstrip())


def test_every_reproduced_case_has_its_script():
    reproduced = {p.parent for p in CASES.glob("*/*/SOURCE.md") if provenance(p.parent) == "reproduced"}
    assert reproduced == {_case(s) for s in REPRODUCTIONS}


def test_masking_keeps_words_and_drops_numbers():
    assert masked("2026-11-24 16:05:01,123 WARN ipc.Server: len 146629817 ") == "N-N-N N:N:N,N WARN ipc.Server: len N"
    assert masked("Requested data length") != masked("Requested data size")


@pytest.mark.slow
@pytest.mark.parametrize("script", REPRODUCTIONS, ids=lambda s: s.parent.name)
def test_the_committed_lines_are_what_the_upstream_code_prints(script, tmp_path):
    case = _case(script)
    run = subprocess.run([sys.executable, str(script), str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    fresh = {path: {masked(ln) for ln in lines} for path, lines in _lines(tmp_path).items()}
    for path, lines in _lines(case).items():
        assert path in fresh, f"{case.name}: the script wrote no {path}"
        foreign = [ln for ln in lines if ln.strip() and masked(ln) not in fresh[path]]
        assert not foreign, f"{case.name}/{path}: lines the code did not print: {foreign[:3]}"
