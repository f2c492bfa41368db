"""The session's real servers (brokers, Redis, a Celery worker, the registry, the identity provider, chromium, web
processes), each in its component's module under tests/fixtures/, and the markers CI selects tests by."""

from __future__ import annotations

import pytest

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
    "tests.fixtures.java_members",
]

# Broker tests whose point is what they store (lag samples and statuses, history, audit and its witness, alerts,
# metrics, resets' audit trail, cluster rows): the PostgreSQL pass runs them too. Elsewhere a broker test's database
# use is an audit row that the tests here already cover on PostgreSQL (Connect's alerts go through the alert services
# that tests/alerts/ runs there, and would start a Connect worker for it).
POSTGRES_BROKER_TESTS = ("tests/offsets/lag/", "tests/offsets/history/", "tests/offsets/test_services.py",
                         "tests/console/audit/", "tests/console/metrics/", "tests/console/clusters/", "tests/alerts/",
                         "tests/connect/test_metrics.py")

# Tests whose database use is Django's own (logins, sessions, users) or a cluster row read by name, around what
# they are about (pages, client settings, health, supervision): nothing there differs between engines, so the
# PostgreSQL pass leaves them out (health's own database probe stays in it).
ENGINE_NEUTRAL_TESTS = ("tests/console/accounts/test_views.py", "tests/console/accounts/test_middleware.py",
                        "tests/console/accounts/test_sso.py", "tests/console/accounts/test_admin.py",
                        # Accounts, roles, registrations and pages over plain rows: each test's own setup on
                        # PostgreSQL (a second of table flushing) was most of their cost there.
                        "tests/console/accounts/test_roles.py", "tests/console/accounts/test_services.py",
                        "tests/console/accounts/test_commands.py", "tests/alerts/test_views.py",
                        "tests/alerts/test_command.py", "tests/console/audit/test_views.py",
                        "tests/console/clusters/test_lifecycle.py", "tests/connect/test_registration.py",
                        "tests/sparkjobs/test_services.py", "tests/sparkjobs/test_queue.py",
                        "tests/console/clusters/test_client_settings.py", "tests/console/clusters/test_clusters.py",
                        "tests/console/clusters/test_fan_out.py", "tests/devstack/test_keep_running.py",
                        "tests/console/metrics/test_views.py", "tests/topics/test_transactional_messages.py",
                        "tests/console/test_health.py::test_health_stays_200",
                        "tests/console/test_health.py::test_anonymous_callers",
                        "tests/console/test_health.py::test_people_and_the_scraper",
                        # The recorder's storage on PostgreSQL: the consumer script and the restart cover it.
                        "tests/offsets/history/test_recorder.py::test_a_share_group",
                        "tests/offsets/history/test_recorder.py::test_group_history_command",
                        "tests/offsets/history/test_recorder.py::test_recorded_history_matches_the_script[classic]",
                        # What these time or count is the console's, not the database's; what they store is what
                        # the sampler's other tests store there. Each started a server of its own (a secured broker,
                        # a restarted Redis) or a client in-process: about a minute of the CI's 35.
                        "tests/offsets/lag/test_sweep_clusters.py",
                        "tests/offsets/lag/test_sampler.py::test_a_sweep_makes_the_same_few_calls",
                        "tests/offsets/lag/test_sampler.py::test_a_down_cluster_fails_within_seconds",
                        "tests/console/test_health.py::test_health_is_503_within_seconds",
                        "tests/console/test_health.py::test_liveness_touches_nothing")


# Sessions side by side (make test: pytest-xdist --dist loadgroup) each get whole files, as with loadfile; the
# files that need one of these costly servers all go to the same session, so that the run starts it once: two
# three-broker clusters beside each other on two cores starve every election, a Connect worker is a big JVM, and the
# two-directory broker (log-dir cordoning, retention shares) need not start twice.
SHARED_SERVER_GROUPS = (("three_brokers", "three-brokers"), ("connect_worker", "connect"), ("jbod_kafka", "jbod"))


def _session_group(item, seen: dict[str, int]) -> str:
    """The item's group: a shared server's, else its file's; a file that sets SESSION_GROUPS = n (long,
    independent tests) is dealt round-robin into n groups, each starting the file's module fixtures once."""
    names = set(getattr(item, "fixturenames", ()))
    module = getattr(item, "module", None)
    shared = next((group for fixture, group in SHARED_SERVER_GROUPS if fixture in names),
                  getattr(module, "SESSION_GROUP", None))  # a file starting such servers itself names the group
    if shared:
        return shared
    path = item.nodeid.split("::")[0]
    split = getattr(module, "SESSION_GROUPS", 1)
    if split <= 1:
        return path
    index = seen.get(path, 0)
    seen[path] = index + 1
    return f"{path}#{index % split}"


def pytest_collection_modifyitems(items):
    """Marks every test that touches the database, so CI can re-run them on PostgreSQL (-m database), and the
    broker tests among them that matter there (postgres); and names the session group of each (above)."""
    db_fixtures = {"db", "transactional_db", "django_db_setup", "django_user_model", "admin_user"}
    seen: dict[str, int] = {}
    for item in items:
        item.add_marker(pytest.mark.xdist_group(_session_group(item, seen)))
        if item.get_closest_marker("django_db") or db_fixtures & set(getattr(item, "fixturenames", ())):
            item.add_marker("database")
            if item.nodeid.startswith(POSTGRES_BROKER_TESTS):
                item.add_marker("postgres")
            if item.nodeid.startswith(ENGINE_NEUTRAL_TESTS):
                item.add_marker("engine_neutral")


@pytest.fixture(autouse=True)
def _fresh_health_snapshot():
    """Anonymous /health answers from a snapshot a few seconds old (console/health.py): a test sees the state it
    made, not one an earlier test left."""
    yield
    from console.health import snapshot

    snapshot.forget()
