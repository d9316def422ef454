"""Fixtures of the `playground ui` tests: a headless Chromium per test module (skipped, with the reason, where
it cannot run), and a page of it per test."""
from __future__ import annotations

import pytest

from tests.playground.ui.browser import chromium, skip_reason


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    reason = skip_reason()
    if reason:
        pytest.skip(reason)
    with chromium(tmp_path_factory.mktemp("chromium-profile")) as context:
        yield context


@pytest.fixture
def page(browser):
    """A new tab; a script error on the page fails the test."""
    tab = browser.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda error: errors.append(str(error)))
    yield tab
    tab.close()
    assert errors == [], f"the page's scripts failed: {errors}"
