"""The session's real servers (brokers, Redis, a Celery worker, the registry, the identity provider, chromium, web
processes), each in its component's module under tests/fixtures/, and the markers CI selects tests by."""

from __future__ import annotations

# Importing them here, at collection, runs what each module sets in the session's environment (secrets, folders,
# no Redis yet) before the first server starts. A module comes after those it imports, so that pytest rewrites the
# assertions of each.
pytest_plugins = [
    "tests.fixtures.kafka",
    "tests.fixtures.faults",
    "tests.fixtures.secured_kafka",
    "tests.fixtures.kafka_cluster",
    "tests.fixtures.redis",
    "tests.fixtures.celery",
    "tests.fixtures.identity",
    "tests.fixtures.registry",
    "tests.fixtures.connect",
    "tests.fixtures.clusters",
    "tests.fixtures.users",
    "tests.fixtures.browser",
    "tests.fixtures.web",
]

# Broker tests whose point is what they store (lag samples and statuses, history, audit and its witness, alerts,
# metrics, resets' audit trail, cluster rows): the PostgreSQL pass runs them too. Elsewhere a broker test's database
# use is an audit row that the tests here already cover on PostgreSQL.
POSTGRES_BROKER_TESTS = ("tests/offsets/lag/", "tests/offsets/history/", "tests/offsets/test_services.py",
                         "tests/console/audit/", "tests/console/metrics/", "tests/console/clusters/", "tests/alerts/",
                         "tests/connect/test_alerts.py", "tests/connect/test_metrics.py")


def pytest_collection_modifyitems(items):
    """Marks every test that touches the database, so CI can re-run them on PostgreSQL (-m database), and the
    broker tests among them that matter there (postgres)."""
    db_fixtures = {"db", "transactional_db", "django_db_setup", "django_user_model", "admin_user"}
    for item in items:
        if item.get_closest_marker("django_db") or db_fixtures & set(getattr(item, "fixturenames", ())):
            item.add_marker("database")
            if item.nodeid.startswith(POSTGRES_BROKER_TESTS):
                item.add_marker("postgres")
