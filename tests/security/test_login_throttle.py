"""Issue 17 (3.): login throttling by django-axes, in process. The lockout counts failures
per username and per client address separately; the real-server run of the issue's
attack (60 wrong passwords, then the right one) is in test_production_server.py."""

from __future__ import annotations

import pytest
from django.test import Client, RequestFactory

from kb.login_throttle import client_ip

LIMIT = 5


@pytest.fixture(autouse=True)
def _limit(settings):
    settings.AXES_FAILURE_LIMIT = LIMIT


def _login(ip: str, username: str, password: str, path: str = "/accounts/login/"):
    return Client(REMOTE_ADDR=ip).post(path, {"username": username, "password": password})


def test_one_user_guessed_from_many_addresses_is_locked(alice, bob):
    for i in range(LIMIT):
        assert _login(f"10.0.0.{i + 1}", "alice", f"wrong-{i}").status_code in (200, 429)
    locked = _login("10.9.9.9", "alice", "pw-alice")
    assert locked.status_code == 429
    assert "Login locked" in locked.content.decode()
    assert "sessionid" not in locked.cookies
    # Another user, from an address that never failed, is not affected.
    assert _login("10.9.9.9", "bob", "pw-bob").status_code == 302


def test_many_users_guessed_from_one_address_lock_that_address(alice, bob):
    for i in range(LIMIT):
        _login("10.1.1.1", f"guess-{i}", "wrong")
    assert _login("10.1.1.1", "alice", "pw-alice").status_code == 429
    assert _login("10.2.2.2", "alice", "pw-alice").status_code == 302


def test_the_admin_login_is_throttled_too(carol):
    for i in range(LIMIT):
        _login("10.3.3.3", "carol", f"wrong-{i}", "/admin/login/")
    response = _login("10.4.4.4", "carol", "pw-carol", "/admin/login/")
    assert response.status_code == 429 and "Login locked" in response.content.decode()


def test_a_success_before_the_limit_clears_the_count(alice):
    for i in range(LIMIT - 1):
        _login("10.5.5.5", "alice", f"wrong-{i}")
    assert _login("10.5.5.5", "alice", "pw-alice").status_code == 302
    for i in range(LIMIT - 1):
        _login("10.5.5.5", "alice", f"wrong-again-{i}")
    assert _login("10.5.5.5", "alice", "pw-alice").status_code == 302


def test_behind_proxies_the_address_is_the_one_the_nearest_proxy_saw(settings):
    """KB_PROXY_COUNT=1 (nginx appends the client's address): the last X-Forwarded-For entry
    counts; entries the client wrote itself further left cannot move it to a fresh address."""
    factory = RequestFactory()
    forged = factory.post("/accounts/login/", REMOTE_ADDR="127.0.0.1",
                          HTTP_X_FORWARDED_FOR="1.2.3.4, 203.0.113.7")
    assert client_ip(forged) == "127.0.0.1"          # no proxy configured: the header is ignored
    settings.KB_PROXY_COUNT = 1
    assert client_ip(forged) == "203.0.113.7"
    settings.KB_PROXY_COUNT = 2
    assert client_ip(forged) == "1.2.3.4"
    assert client_ip(factory.post("/", REMOTE_ADDR="127.0.0.1")) == "127.0.0.1"   # header missing
