"""Shared fixtures (the cast, in the spirit of healthchecks' hc/test.py):

- alice is a plain member of team Ops: she reads runbooks, never edits them.
- bob is an admin of team Ops: he may edit runbooks that have no owning team
  (the shipped catalog) and Ops' own runbooks.
- carol is staff: she may edit every runbook.
- mallory is in another team (Other) as admin: she may edit unowned runbooks
  but not Ops-owned ones.
- incident / analysis: alice's Ops incident with a done analysis of two
  findings; other_incident: mallory's, in team Other. What they are made of,
  and build_world (everything a team can own, for the access-control and
  rendering tests), are in tests/cast.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

# --run-chaos and the skipping of `chaos` tests without it (make chaos); a plugin,
# because only conftest files loaded at start-up may add command-line options.
pytest_plugins = ["tests.reliability.chaos_plugin"]

DISK_FULL = """\
---
slug: disk-full
title: A disk filled up and writes fail
summary: >-
  A local disk reached 100% and every write to it fails with "No space left
  on device".
components: [os, hdfs]
severity: high
symptoms:
  - id: no-space-left-on-device
    role: required
    weight: 0.7
knobs:
  - key: dfs.datanode.du.reserved
    component: hdfs-datanode
    file: hdfs-site.xml
    default: "0"
    defaults:
      - {versions: "<3.0", value: "0"}
    recommended: "10737418240"
    why: keeps room for the OS and the logs
fixes:
  - title: Find what filled the disk
    kind: diagnosis
    steps:
      - text: Show the fullest file systems.
        command: df -h /data
  - title: Free space now
    kind: mitigation
    steps:
      - text: Remove old container logs.
        command: find /data/yarn/logs -mtime +7 -delete
tickets:
  - id: HDFS-1234
    title: Reserve space for non-DFS use
    status: fixed
    affected: "<2.8.0"
    fixed_in: ["2.8.0"]
    url: https://issues.apache.org/jira/browse/HDFS-1234
references:
  - {title: "Linux df manual", url: "https://man7.org/linux/man-pages/man1/df.1.html"}
---
## Summary

The disk is full. See [the df manual](https://man7.org/linux/man-pages/man1/df.1.html).

## Resolution

Delete old logs, then add `dfs.datanode.du.reserved`.
"""

GC_PAUSE = """\
---
slug: jvm-long-gc-pause
title: Long stop-the-world GC pause stalls the JVM
summary: >-
  A garbage collection stopped the JVM for seconds; heartbeats time out.
components: [jvm, flink]
severity: medium
symptoms:
  - {id: jvm-pause-detected, role: required, weight: 0.6}
  - {id: flink-tm-heartbeat-timeout, role: supporting, weight: 0.1}
knobs:
  - key: taskmanager.memory.process.size
    component: flink
    file: flink-conf.yaml
    default: "1728m"
    recommended: "4096m"
    why: a bigger heap collects less often
fixes:
  - title: Give the heap room
    kind: permanent
    steps:
      - text: Raise the TaskManager memory.
        command: "echo 'taskmanager.memory.process.size: 4096m' >> flink-conf.yaml"
differential:
  - {slug: kernel-soft-lockup-stalls-jvm, how: "the kernel log shows a soft lockup; GC logs show no pause"}
---
## Summary

Garbage collection stopped the world.
"""

SOFT_LOCKUP = """\
---
slug: kernel-soft-lockup-stalls-jvm
title: Kernel soft lockups stall every JVM on the host
summary: >-
  The kernel hit soft lockups and every JVM on the host stalled.
components: [kernel]
severity: critical
symptoms:
  - {id: kernel-soft-lockup, role: required, weight: 0.6}
  - {id: flink-tm-heartbeat-timeout, role: supporting, weight: 0.1}
fixes:
  - title: Check the host
    kind: diagnosis
    steps:
      - text: Look for lockups in the kernel log.
        command: dmesg -T | grep -i 'soft lockup'
differential:
  - {slug: jvm-long-gc-pause, how: "GC logs show the pause"}
---
## Summary

The host kernel stalled.
"""

# The symptom library of the three runbooks (runbooks/symptoms/<id>.yaml).
SYMPTOM_TEXTS = {
    "no-space-left-on-device": """\
id: no-space-left-on-device
title: Write failed, no space left on device
patterns:
  - 'No space left on device'
level: ERROR
examples:
  - 'java.io.IOException: No space left on device'
""",
    "jvm-pause-detected": """\
id: jvm-pause-detected
title: JVM pause monitor saw a long stop
patterns:
  - 'Detected pause in JVM or host machine \\(eg GC\\): pause of approximately (?P<pause_ms>\\d+)ms'
captures: {pause_ms: ms}
examples:
  - 'WARN JvmPauseMonitor: Detected pause in JVM or host machine (eg GC): pause of approximately 12000ms'
""",
    "flink-tm-heartbeat-timeout": """\
id: flink-tm-heartbeat-timeout
title: Flink lost the heartbeat of a TaskManager
patterns:
  - 'Heartbeat of TaskManager with id \\S+ timed out'
examples:
  - 'java.util.concurrent.TimeoutException: Heartbeat of TaskManager with id tm-1 timed out.'
""",
    "kernel-soft-lockup": """\
id: kernel-soft-lockup
title: Kernel soft lockup
patterns:
  - 'BUG: soft lockup - CPU#(?P<cpu>\\d+) stuck for (?P<stuck_s>\\d+)s!'
captures: {cpu: int, stuck_s: s}
examples:
  - 'NMI watchdog: BUG: soft lockup - CPU#3 stuck for 23s! [java:1234]'
""",
}

RUNBOOK_TEXTS = {
    "disk-full": DISK_FULL,
    "jvm-long-gc-pause": GC_PAUSE,
    "kernel-soft-lockup-stalls-jvm": SOFT_LOCKUP,
}


@pytest.fixture
def runbook_texts() -> dict[str, str]:
    return dict(RUNBOOK_TEXTS)


@pytest.fixture
def symptom_texts() -> dict[str, str]:
    return dict(SYMPTOM_TEXTS)


@pytest.fixture
def runbooks_dir(tmp_path: Path) -> Path:
    """Three small valid runbook files (two share flink-tm-heartbeat-timeout)
    and their symptom library."""
    directory = tmp_path / "runbooks"
    (directory / "symptoms").mkdir(parents=True)
    for slug, text in RUNBOOK_TEXTS.items():
        (directory / f"{slug}.md").write_text(text, encoding="utf-8")
    for sid, text in SYMPTOM_TEXTS.items():
        (directory / "symptoms" / f"{sid}.yaml").write_text(text, encoding="utf-8")
    (directory / "README.md").write_text("# not a runbook\n", encoding="utf-8")
    return directory


@pytest.fixture
def synced(db, runbooks_dir: Path):
    """The runbooks of runbooks_dir loaded into the database."""
    from kb.services.sync import runbook_sync

    return runbook_sync(directory=runbooks_dir)


@pytest.fixture
def team(db):
    from kb.models import Team

    return Team.objects.create(name="Ops", slug="ops")


@pytest.fixture
def other_team(db):
    from kb.models import Team

    return Team.objects.create(name="Other", slug="other")


def _user(username: str, **extra):
    from django.contrib.auth import get_user_model

    return get_user_model().objects.create_user(username, password="pw-" + username, **extra)


@pytest.fixture
def alice(team):
    from kb.models import Membership

    user = _user("alice")
    Membership.objects.create(user=user, team=team, role=Membership.Role.MEMBER)
    return user


@pytest.fixture
def bob(team):
    from kb.models import Membership

    user = _user("bob")
    Membership.objects.create(user=user, team=team, role=Membership.Role.ADMIN)
    return user


@pytest.fixture
def carol(db):
    return _user("carol", is_staff=True)


@pytest.fixture
def mallory(other_team):
    from kb.models import Membership

    user = _user("mallory")
    Membership.objects.create(user=user, team=other_team, role=Membership.Role.ADMIN)
    return user


@pytest.fixture(scope="session", autouse=True)
def _own_var_dirs(tmp_path_factory):
    """The directories the app writes to by default (var/bundles, var/draft-fixtures) are
    this test process's own, under its basetemp: nothing lands in the checkout, and two
    pytest-xdist workers (make check) never write the same path. A test that sets them
    through the `settings` fixture still wins for its own duration."""
    from django.test import override_settings

    scratch = tmp_path_factory.mktemp("var")
    with override_settings(BUNDLES_DIR=scratch / "bundles", DRAFT_FIXTURES_DIR=scratch / "draft-fixtures"):
        yield


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    # PBKDF2 costs ~0.3 s per user; no test needs a strong hash. The default hashers
    # stay after it, so users a session-wide fixture made before (browser tests) still log in.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher", *settings.PASSWORD_HASHERS]


@pytest.fixture
def incident(team, alice):
    """An Ops incident of alice's (tests/cast.py)."""
    from tests.cast import make_incident

    return make_incident(team=team, user=alice)


@pytest.fixture
def analysis(incident, alice):
    """A done analysis of `incident` with two findings, disk-full and jvm-long-gc-pause."""
    from tests.cast import make_analysis

    return make_analysis(incident=incident, user=alice)


@pytest.fixture
def other_incident(other_team, mallory):
    """Mallory's incident in team Other, with an analysis of the same runbooks."""
    from tests.cast import make_analysis, make_incident

    incident = make_incident(team=other_team, user=mallory, title="Other team's disk problem")
    make_analysis(incident=incident, user=mallory)
    return incident


@pytest.fixture
def client_alice(client, alice):
    client.force_login(alice)
    return client


@pytest.fixture
def client_bob(client, bob):
    client.force_login(bob)
    return client
