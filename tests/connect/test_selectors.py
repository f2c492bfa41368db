"""connect/selectors.py: what the connector pages read, here the failure traces shown without the configuration's
secrets (a task's exception may quote a URL with its credentials, or a value)."""

from connect.masking import MASK
from connect.selectors import scrubbed_status
from gateway.kafka_connect.types import ConnectorState, TaskState


def test_traces_lose_the_configurations_secrets_and_any_url_credentials():
    config = {"connection.password": "pw-quoted-77", "connection.url": "jdbc:postgresql://app:url-pw-55@db/x"}
    status = ConnectorState(
        name="n", type="sink", state="FAILED", worker_id="w", trace="login as app with pw-quoted-77 failed",
        tasks=(TaskState(0, "FAILED", "w", "cannot reach jdbc:postgresql://app:url-pw-55@db/x"),
               TaskState(1, "RUNNING", "w", "")))
    scrubbed = scrubbed_status(status, config, frozenset())
    assert scrubbed.trace == f"login as app with {MASK} failed"
    assert "url-pw-55" not in scrubbed.tasks[0].trace and "@db/x" in scrubbed.tasks[0].trace
    assert scrubbed.tasks[1] == status.tasks[1] and scrubbed.state == "FAILED"


def test_a_urls_credentials_quoted_alone_are_masked_too():
    config = {"backup.url": "https://bob:alone-pw-66@backup.example/x"}
    status = ConnectorState(name="n", type="sink", state="FAILED", worker_id="w",
                            trace="user bob:alone-pw-66 refused; password alone-pw-66 expired", tasks=())
    assert "alone-pw-66" not in scrubbed_status(status, config, frozenset()).trace
