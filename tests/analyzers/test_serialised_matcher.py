"""A matcher serialised once (matcher_bytes) and loaded elsewhere (matcher_from_bytes)
finds exactly what a freshly compiled one finds: the Spark engine ships it to
its Python workers and the web process loads it at start."""

from __future__ import annotations

import pickle

import pytest

from analyzers import signatures as sigmod
from analyzers.serialised_matcher import matcher_bytes, matcher_from_bytes, signature_set_hash
from analyzers.signatures import Matcher, signatures_from_runbooks
from tests.helpers import SEED_BUNDLES, runbook_metas

pytestmark = pytest.mark.skipif(sigmod.hyperscan is None, reason="needs the hyperscan wheel")


def _seed_log_bytes() -> bytes:
    data = b"".join(p.read_bytes() for p in sorted(SEED_BUNDLES.rglob("*.log")))
    assert len(data) > 10_000
    return data[:data.rfind(b"\n") + 1]


@pytest.fixture(autouse=True)
def _fresh_cache():
    sigmod._CACHE.clear()
    yield
    sigmod._CACHE.clear()


def test_a_loaded_matcher_finds_what_a_compiled_one_finds():
    signatures = signatures_from_runbooks(runbook_metas())
    blob = matcher_bytes(signatures)
    data = _seed_log_bytes()
    compiled = Matcher(signatures)
    sigmod._CACHE.clear()
    loaded = matcher_from_bytes(signatures, blob)
    assert type(loaded).__name__ == "_LoadedMatcher" and loaded.engine == "hyperscan"
    for errors in (True, False):
        expected = compiled.candidates(data, errors=errors)
        assert expected, "the seed logs should give candidates"
        assert loaded.candidates(data, errors=errors) == expected
    # Once loaded it is this process's matcher: matcher_for hands the same one back.
    assert sigmod.matcher_for(signatures) is loaded


def test_every_database_is_serialised_so_a_worker_never_compiles(monkeypatch):
    signatures = signatures_from_runbooks(runbook_metas())
    blob = matcher_bytes(signatures)
    digest, databases = pickle.loads(blob)
    assert digest == signature_set_hash(signatures)
    assert len(databases) >= 3   # the full database, and those without the error-line or the lead patterns
    sigmod._CACHE.clear()

    def no_compiling(self, ids):
        raise AssertionError(f"compiled {len(ids)} patterns instead of loading them")

    monkeypatch.setattr(Matcher, "_compile", no_compiling)
    loaded = matcher_from_bytes(signatures, blob)
    loaded.candidates(_seed_log_bytes(), errors=False)
    loaded.candidates(_seed_log_bytes(), errors=True, leads=False)


def test_a_database_that_does_not_load_here_is_compiled_instead():
    signatures = signatures_from_runbooks(runbook_metas())
    digest, databases = pickle.loads(matcher_bytes(signatures))
    broken = pickle.dumps((digest, {ids: (b"not a hyperscan database", tables)
                                    for ids, (_, tables) in databases.items()}))
    sigmod._CACHE.clear()
    data = _seed_log_bytes()
    assert matcher_from_bytes(signatures, broken).candidates(data) == Matcher(signatures).candidates(data)


def test_bytes_of_another_signature_set_are_refused():
    signatures = signatures_from_runbooks(runbook_metas())
    blob = matcher_bytes(signatures[1:])
    sigmod._CACHE.clear()
    with pytest.raises(ValueError, match="not the one of these signatures"):
        matcher_from_bytes(signatures, blob)
    assert signature_set_hash(signatures) != signature_set_hash(signatures[1:])
