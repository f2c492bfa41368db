"""A real HTTP receiver for webhooks (on loopback, a thread of the test process) and the channels that name it."""

from __future__ import annotations

import pytest

from tests.fixtures.webhooks import Receiver


@pytest.fixture
def webhook(settings):
    """A receiver registered as webhook channel `oncall` (mail goes to Django's locmem outbox in tests)."""
    receiver = Receiver()
    settings.ALERT_WEBHOOKS = f"oncall={receiver.url}"
    yield receiver
    receiver.close()
