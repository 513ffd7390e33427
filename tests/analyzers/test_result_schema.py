"""analyzers/result.py describes the result exactly: every golden result
(tests/golden/) fits it, with no key it does not name and no value of another
type, and so does the engine's result of a pasted excerpt."""

from __future__ import annotations

import json
import types
import typing
from pathlib import Path

import pytest
from typing_extensions import is_typeddict

from analyzers.engine import analyze_text
from analyzers.result import Result
from tests.helpers import runbook_metas

GOLDEN = sorted((Path(__file__).resolve().parent.parent / "golden").glob("*.json"))


def problems(value, kind, where: str = "result") -> list[str]:
    """Where `value` does not fit `kind` (a TypedDict, list[...], X | None, str, int, float, bool)."""
    if is_typeddict(kind):
        if not isinstance(value, dict):
            return [f"{where}: {type(value).__name__}, not an object"]
        hints = typing.get_type_hints(kind)
        out = [f"{where}.{k}: not in {kind.__name__}" for k in value if k not in hints]
        out += [f"{where}.{k}: missing" for k in kind.__required_keys__ if k not in value]
        for k, v in value.items():
            if k in hints:
                out += problems(v, hints[k], f"{where}.{k}")
        return out
    origin = typing.get_origin(kind)
    if origin in (typing.Union, types.UnionType):
        options = [problems(value, option, where) for option in typing.get_args(kind)]
        return [] if any(not p for p in options) else min(options, key=len)
    if origin is typing.NotRequired:
        return problems(value, typing.get_args(kind)[0], where)
    if origin is list:
        if not isinstance(value, list):
            return [f"{where}: {type(value).__name__}, not a list"]
        (item,) = typing.get_args(kind)
        return [p for i, v in enumerate(value) for p in problems(v, item, f"{where}[{i}]")]
    if kind is type(None):
        return [] if value is None else [f"{where}: {value!r}, not null"]
    if kind is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    elif kind is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    else:
        ok = isinstance(value, kind)
    return [] if ok else [f"{where}: {value!r}, not {kind.__name__}"]


@pytest.mark.parametrize("path", GOLDEN, ids=[p.stem for p in GOLDEN])
def test_every_golden_result_fits_the_schema(path):
    assert problems(json.loads(path.read_text(encoding="utf-8")), Result) == []


def test_a_key_or_a_type_the_schema_does_not_name_is_found():
    result = json.loads(GOLDEN[0].read_text(encoding="utf-8"))
    result["stats"]["surprise"] = 1
    result["stats"]["lines"] = "many"
    del result["notes"]
    assert sorted(problems(result, Result)) == ["result.notes: missing", "result.stats.lines: 'many', not int",
                                                "result.stats.surprise: not in Stats"]


def test_the_engine_result_of_a_pasted_excerpt_fits_the_schema():
    # The line of tests/kb/test_search.py's stack trace (a DataNode out of disk).
    result = analyze_text("java.io.IOException: No space left on device\n", runbook_metas())
    assert result["findings"] and problems(json.loads(json.dumps(result)), Result) == []
