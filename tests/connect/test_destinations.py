"""connect/destinations.py: which settings say where a connector connects."""

from connect.destinations import destination_changes, is_destination


def test_addresses_hosts_and_bootstrap_settings_are_destinations_by_name_or_value():
    for key in ("connection.url", "mongo.uri", "es.hosts", "bootstrap.servers", "target.cluster.bootstrap.servers",
                "http.api.endpoint", "db.port", "s3.bucket", "baseUrl", "redis.host"):
        assert is_destination(key, "x"), key
    assert is_destination("anything", "https://h.example/")
    for key in ("topics", "tasks.max", "connection.password", "file", "report.format"):
        assert not is_destination(key, "x"), key


def test_only_changed_destinations_are_named():
    current = {"connection.url": "https://a/", "connection.password": "p", "tasks.max": "1"}
    assert destination_changes(current, {**current, "tasks.max": "2"}) == []
    assert destination_changes(current, {**current, "connection.url": "https://b/"}) == ["connection.url"]
    assert destination_changes(current, {**current, "backup.host": "c"}) == ["backup.host"]
    assert destination_changes({"connector.class": "a.Sink"}, {"connector.class": "b.Sink"}) == ["connector.class"]
