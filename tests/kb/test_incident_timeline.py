"""kb.lib.timeline: the SVG geometry and the trigger-first chain, as pure functions."""

from __future__ import annotations

import doctest

import kb.lib.timeline
import kb.lib.timeline_labels
from kb.lib.chain import chain_build
from kb.lib.timeline import (
    GREY,
    MAX_LANES,
    NO_HOST,
    OTHER_HOSTS,
    evidence_anchor,
    finding_colours,
    timeline_build,
)


def _item(host, ts, line=1, runbooks=(), path="a.log", symptom="s"):
    return {"path": path, "line": line, "host": host, "timestamp": ts, "symptom": symptom,
            "text": f"line {line}", "runbooks": list(runbooks)}


def test_it_passes_its_doctests():
    assert doctest.testmod(kb.lib.timeline).failed == 0
    assert doctest.testmod(kb.lib.timeline_labels).attempted and doctest.testmod(kb.lib.timeline_labels).failed == 0


def test_it_draws_a_single_timestamp_in_the_middle():
    tl = timeline_build([_item("h1", "2019-04-23T17:39:19")], colours={})

    assert len(tl["marks"]) == 1 and tl["marks"][0]["colour"] == GREY
    mid = (tl["plot_x0"] + tl["plot_x1"]) / 2
    assert abs(tl["marks"][0]["x"] - mid) < 1
    assert tl["ticks"] and all(tl["plot_x0"] <= t["x"] <= tl["plot_x1"] for t in tl["ticks"])


def test_it_lists_items_without_a_timestamp_separately():
    items = [_item("h1", None, line=3), _item("h1", "2019-04-23T17:39:19", line=4), _item("h2", "garbage", line=5)]

    tl = timeline_build(items, colours={})

    assert [i["line"] for i in tl["undated"]] == [3, 5]
    assert [m["href"] for m in tl["marks"]] == ["#" + evidence_anchor("a.log", 4)]


def test_it_draws_nothing_without_timestamps():
    tl = timeline_build([_item("h1", None)], colours={})
    assert tl["marks"] == [] and len(tl["undated"]) == 1


def test_it_gives_each_host_a_lane_and_folds_the_rest():
    hosts = [f"host-{n:03d}" for n in range(MAX_LANES + 5)]
    items = [_item(h, f"2020-01-01T10:00:{n % 60:02d}") for n, h in enumerate(hosts)] + [_item(None, "2020-01-01T10:00:00")]

    tl = timeline_build(items, colours={})

    lanes = [lane["host"] for lane in tl["lanes"]]
    assert len(lanes) == MAX_LANES + 1
    assert lanes[-2:] == [OTHER_HOSTS, NO_HOST]
    assert len(tl["marks"]) == len(items)
    assert tl["height"] > 30 * MAX_LANES


def test_it_puts_dates_on_the_axis_of_a_span_over_days():
    items = [_item("h1", "2020-01-01T10:00:00"), _item("h2", "2020-01-04T12:00:00")]

    tl = timeline_build(items, colours={})

    labels = [t["label"] for t in tl["ticks"]]
    assert 2 <= len(labels) <= 9
    assert any(label.startswith("Jan 02") for label in labels)
    assert tl["marks"][0]["x"] < tl["marks"][1]["x"]


def test_it_labels_sub_second_spans_in_milliseconds():
    items = [_item("h1", "2019-04-23T17:38:05.586"), _item("h1", "2019-04-23T17:38:05.591")]
    labels = [t["label"] for t in timeline_build(items, colours={})["ticks"]]
    assert labels and all(len(label) == len("17:38:05.586") for label in labels)


def test_it_colours_marks_by_their_best_ranked_finding():
    findings = [{"runbook": "b-first"}, {"runbook": "a-second"}]
    colours = finding_colours(findings)
    items = [_item("h", "2020-01-01T10:00:00", 1, ["a-second", "b-first"]),
             _item("h", "2020-01-01T10:00:05", 2, ["a-second"]),
             _item("h", "2020-01-01T10:00:09", 3, [])]

    marks = timeline_build(items, colours=colours)["marks"]

    assert [m["colour"] for m in marks] == [colours["b-first"], colours["a-second"], GREY]
    assert colours["b-first"] != colours["a-second"]
    assert [legend["runbook"] for legend in timeline_build(items, colours=colours)["legend"]] == ["b-first", "a-second", ""]


def test_it_fans_out_marks_at_the_same_instant():
    items = [_item("h", "2020-01-01T10:00:00", n) for n in range(7)]
    marks = timeline_build(items, colours={})["marks"]
    assert len({(m["x"], m["y"]) for m in marks}) == 7


def test_it_orders_the_chain_from_the_lower_layer():
    kernel = {"runbook": "kernel", "title": "K", "evidence": [{"path": "jm/kern.log", "timestamp": "2019-04-23T17:39:19"}],
              "chain": [{"path": "jm/kern.log", "line": 1, "host": "jm", "timestamp": "2019-04-23T17:39:19",
                         "symptom": "lockup"}]}
    close = {"runbook": "close", "title": "C", "evidence": [{"path": "tm/tm.log", "timestamp": "2019-04-23T17:38:05"}],
             "chain": [{"path": "tm/tm.log", "line": 2, "host": "tm", "timestamp": "2019-04-23T17:38:05",
                        "symptom": "lost-leader"},
                       {"path": "tm/tm.log", "line": 48, "host": "tm", "timestamp": "2019-04-23T17:38:05.591",
                        "symptom": "interrupted-close"}]}
    components = {"jm/kern.log": "kernel", "tm/tm.log": "flink-taskmanager"}

    [story] = chain_build([close, kernel], components=components, related=set())

    assert story["findings"] == ["kernel", "close"]
    assert [s["symptom"] for s in story["steps"]] == ["lockup", "lost-leader", "interrupted-close"]
    assert story["backwards"] == [1]
    assert story["steps"][1]["starts_finding"] and not story["steps"][2]["starts_finding"]


def test_it_keeps_unrelated_findings_apart():
    a = {"runbook": "a", "evidence": [{"path": "x", "line": 1, "timestamp": "2020-01-01T10:00:00", "symptom": "s1"}]}
    b = {"runbook": "b", "evidence": [{"path": "y", "line": 1, "timestamp": "2020-01-03T10:00:00", "symptom": "s2"}]}

    assert len(chain_build([a, b], components={}, related=set())) == 2
    assert len(chain_build([a, b], components={}, related={frozenset(("a", "b"))})) == 1
