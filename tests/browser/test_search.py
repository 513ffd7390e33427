"""Search in Chromium over the shipped catalog: words come back ranked with the
matching part highlighted, and seed 003's pasted RegionServer excerpt (all its
symptoms shared) lists hdfs-pipeline-recovery-no-good-datanode first among the
candidates. Screenshots: search-words.png, search-pasted-candidates.png."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import login
from tests.helpers import SEED_BUNDLES

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), pytest.mark.timeout(180)]

EXCERPT = SEED_BUNDLES / "003-hbase-rs-abort-pipeline-recovery" / "c1-hd-dn18" / "hbase-regionserver.log"


@pytest.fixture
def reader(transactional_db):
    from django.contrib.auth import get_user_model

    from tests.celery_harness import sync_real_runbooks

    sync_real_runbooks()
    get_user_model().objects.create_user("reader", password="pw-reader-browser")


def test_words_and_a_pasted_excerpt(live_server, page, reader, screenshot, dialogs):
    base = live_server.url
    login(page, base, "reader", "pw-reader-browser")

    page.goto(base + "/search/?q=pipeline+datanode")
    first = page.locator("ol.hits > li").first
    expect(first.locator("a").first).to_have_text(
        "HDFS write-pipeline recovery finds no good DataNode to replace a bad one")
    expect(first.locator("mark").first).to_be_visible()
    expect(page.locator("details.weak-hits summary")).to_contain_text("weaker match")
    screenshot("search-words")

    page.fill("textarea[name=log]", EXCERPT.read_text(encoding="utf-8"))
    page.click("button:has-text('Match against the runbooks')")
    expect(page.locator("#candidates")).to_have_text("Candidates, ranked by shared evidence")
    top = page.locator("ol.candidates > li").first
    expect(top).to_contain_text("hdfs-pipeline-recovery-no-good-datanode")
    expect(top).to_contain_text("shows 5 of its 10 symptoms")
    expect(top).to_contain_text("Would be confirmed by: Pipeline recovery could not add a working replacement "
                                "DataNode hdfs-pipeline-datanode-replacement-failed")
    screenshot("search-pasted-candidates")
    assert dialogs == []
