"""Session services: one real Kafka broker, one Redis and (on demand) one Celery worker, on free ports."""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import tempfile
import threading
import sys
import time
import uuid
from pathlib import Path

import pytest
from django.conf import settings

from console.devstack.kafka import KafkaNode, free_port
from console.devstack.paths import PROJECT_DIR
from console.devstack.redis import RedisNode
from console.kafka.client import forget_clients


# Broker tests whose point is what they store (lag samples and statuses, history, audit and its witness, alerts,
# metrics, resets' audit trail, cluster rows): the PostgreSQL pass runs them too. Elsewhere a broker test's database
# use is an audit row that the tests here already cover on PostgreSQL.
POSTGRES_BROKER_TESTS = ("tests/offsets/lag/", "tests/offsets/history/", "tests/offsets/test_services.py",
                         "tests/console/audit/", "tests/console/metrics/", "tests/console/clusters/", "tests/alerts/")


def pytest_collection_modifyitems(items):
    """Marks every test that touches the database, so CI can re-run them on PostgreSQL (-m database), and the
    broker tests among them that matter there (postgres)."""
    db_fixtures = {"db", "transactional_db", "django_db_setup", "django_user_model", "admin_user"}
    for item in items:
        if item.get_closest_marker("django_db") or db_fixtures & set(getattr(item, "fixturenames", ())):
            item.add_marker("database")
            if item.nodeid.startswith(POSTGRES_BROKER_TESTS):
                item.add_marker("postgres")


@pytest.fixture(scope="session")
def kafka_node(tmp_path_factory) -> KafkaNode:
    home = tmp_path_factory.mktemp("kafka")
    node = KafkaNode(home=home, port=free_port(), controller_port=free_port(), heap=("-Xms256m", "-Xmx768m"),
                     log_level="WARN")
    with open(home / "broker.log", "w") as log:
        node.start(stdout=log)
        try:
            node.wait_ready()
        except Exception:
            node.stop()
            raise RuntimeError(f"Kafka did not start; see {home / 'broker.log'}") from None
    settings.KAFKA_BOOTSTRAP_SERVERS = os.environ["KAFKA_BOOTSTRAP_SERVERS"] = node.bootstrap
    yield node
    node.stop()


# Named with the prefix the console reads cluster secrets from (CONSOLE_SECRET_ENV_PREFIX).
SECURED_PASSWORD_ENV = "CONSOLE_SECRET_TEST_SECURED_KAFKA_PASSWORD"
LIMITED_PASSWORD_ENV = "CONSOLE_SECRET_TEST_LIMITED_KAFKA_PASSWORD"  # a SCRAM user with only the ACLs a test gives it
# Made for the session before anything starts, so every process the session starts (a Celery worker running a
# replay on the secured cluster, a web server) finds them in its environment, whenever the broker itself starts.
os.environ.setdefault(SECURED_PASSWORD_ENV, secrets.token_urlsafe(16))
os.environ.setdefault(LIMITED_PASSWORD_ENV, secrets.token_urlsafe(16))
# The session's certificates (secured_kafka) live here, and clusters may only name files in CONSOLE_CLUSTER_CERT_DIRS:
# the folder joins the setting now, in this process and in the environment every process the session starts gets.
TEST_CERT_DIR = Path(tempfile.gettempdir()) / f"console-test-certs-{os.getpid()}"


def _allow_test_cert_dir() -> None:
    known = [d for d in os.environ.get("CONSOLE_CLUSTER_CERT_DIRS", "").split(os.pathsep) if d]
    if str(TEST_CERT_DIR) not in known:
        os.environ["CONSOLE_CLUSTER_CERT_DIRS"] = os.pathsep.join([*known, str(TEST_CERT_DIR)])
    if str(TEST_CERT_DIR) not in settings.CONSOLE_CLUSTER_CERT_DIRS:
        settings.CONSOLE_CLUSTER_CERT_DIRS = [*settings.CONSOLE_CLUSTER_CERT_DIRS, str(TEST_CERT_DIR)]


_allow_test_cert_dir()
# keep_running's status files of a `make run` on this machine describe its processes, not the session's: /health
# and the `local` cluster's page read an empty folder of the session's own unless a test points them elsewhere.
os.environ["PROCESS_STATUS_DIR"] = settings.PROCESS_STATUS_DIR = str(
    Path(tempfile.gettempdir()) / f"console-test-processes-{os.getpid()}")
# The Kafka client processes the session's processes share (tests, web servers, Celery workers) listen in a folder
# of the session's own, so no test reaches a `make run`'s client processes; _kafka_client_processes stops them.
os.environ["KAFKA_CLIENT_SOCKET_DIR"] = settings.KAFKA_CLIENT_SOCKET_DIR = str(
    Path(tempfile.gettempdir()) / f"console-test-kafka-clients-{os.getpid()}")
# Until a test starts the session's Redis (redis_node), Redis is a port where nothing listens: without this, the
# default REDIS_URL (with the password `make` wrote to .env) would reach a `make run` Redis on this machine, and
# tests would queue tasks into it or write topic tables there.
_NO_REDIS = f"redis://127.0.0.1:{free_port()}/0"
os.environ["REDIS_URL"] = settings.REDIS_URL = settings.CELERY_BROKER_URL = settings.CELERY_RESULT_BACKEND = _NO_REDIS

def _no_redis_for_celery() -> None:
    from console.celery import app

    app.conf.broker_url = app.conf.result_backend = _NO_REDIS


_no_redis_for_celery()


@pytest.fixture(scope="session")
def secured_kafka_node(tmp_path_factory) -> KafkaNode:
    """A second broker, started on first use: SASL_SSL (SCRAM-SHA-512) and mTLS listeners with certificates
    made for this session, SCRAM users whose passwords only the environment holds (`console`, a super user like
    the mTLS client, and `limited`, with no rights until a test grants some), and Kafka's StandardAuthorizer.
    Tests may stop and start it."""
    from console.devstack.kafka import BrokerSecurity
    from console.devstack.tls import make_tls_files

    home = tmp_path_factory.mktemp("kafka-secured")
    password, limited = os.environ[SECURED_PASSWORD_ENV], os.environ[LIMITED_PASSWORD_ENV]
    tls = make_tls_files(TEST_CERT_DIR / "secured")
    security = BrokerSecurity(sasl_ssl_port=free_port(), mtls_port=free_port(), tls=tls,
                              scram_users={"console": password, "limited": limited},
                              super_users=("User:ANONYMOUS", "User:console", "User:CN=console-client"))
    node = KafkaNode(home=home, port=free_port(), controller_port=free_port(), heap=("-Xms128m", "-Xmx512m"),
                     security=security)
    with open(home / "broker.log", "a") as log:
        node.start(stdout=log)
    try:
        node.wait_ready()
    except Exception:
        node.stop()
        raise RuntimeError(f"The secured Kafka did not start; see {home / 'broker.log'}") from None
    yield node
    node.stop()
    shutil.rmtree(TEST_CERT_DIR, ignore_errors=True)


@pytest.fixture
def secured_kafka(secured_kafka_node) -> KafkaNode:
    """The session's secured broker, running when the test starts: a test that stops it and fails before it
    starts it again must not fail every test after it."""
    if secured_kafka_node.process is None or secured_kafka_node.process.poll() is not None:
        start_broker(secured_kafka_node)
    return secured_kafka_node


@pytest.fixture(scope="module")
def three_brokers(tmp_path_factory):
    """A three-node KRaft cluster (each node broker and controller, racks rack-a..c) for the replication tests,
    which live in one module: it stops with that module, so its three JVMs do not slow the rest of the session.
    Tests may stop one node at a time and must start it again."""
    from console.devstack.kafka import KafkaCluster

    cluster = KafkaCluster(tmp_path_factory.mktemp("kafka-three"))
    cluster.start()
    try:
        cluster.wait_ready()
    except Exception:
        cluster.stop()
        raise RuntimeError(f"The three-broker cluster did not start; see {cluster.nodes[0].home}/broker.log") from None
    yield cluster
    cluster.stop(kill=True)


@pytest.fixture
def outsider(kafka_node):
    """Another client changing the cluster (topics, groups) behind the console's back."""
    from confluent_kafka.admin import AdminClient

    return AdminClient({"bootstrap.servers": kafka_node.bootstrap})


def forget_shared_table(table, cluster: str = "local") -> None:
    """What Redis and this process hold of a cluster's shared table (console/shared_table.py) is dropped, once
    any rebuild this process started has ended: the test sees only the snapshots it makes."""
    from console import shared_table

    shared_table.forget_redis_state()
    table.wait_for_refresh(cluster)
    table.invalidate(cluster)


def restart_broker(node: KafkaNode) -> None:
    """Stops a broker with SIGTERM and starts it again on the same ports and data."""
    node.stop()
    with open(node.home / "broker.log", "a") as log:
        node.start(stdout=log)
    node.wait_ready()


def kill_broker(node: KafkaNode) -> None:
    """SIGKILL, as a crashed machine would: no controlled shutdown, nothing flushed."""
    node.process.kill()
    node.process.wait(20)


def start_broker(node: KafkaNode) -> None:
    with open(node.home / "broker.log", "a") as log:
        node.start(stdout=log)
    node.wait_ready()


@pytest.fixture
def fragile(secured_kafka, operator, admin):
    """The secured broker's plaintext listener registered as cluster `fragile`, which a test may kill; it is
    started again afterwards for the tests that follow."""
    from console.clusters.models import Cluster

    Cluster.objects.update_or_create(name="fragile", defaults={"bootstrap_servers": secured_kafka.bootstrap})
    yield secured_kafka
    if secured_kafka.process is None or secured_kafka.process.poll() is not None:
        start_broker(secured_kafka)


def retry_as_a_person_would(change, attempts: int = 3):
    """Right after a broker restart, librdkafka's own assertion can still abort a client process (see the README's
    notes on Kafka clients); the console then says so and the next request gets a fresh one. Each try is audited."""
    from console.kafka.errors import ClusterUnavailable

    for attempt in range(attempts):
        try:
            return change()
        except ClusterUnavailable as exc:
            if "client process" not in exc.message or attempt == attempts - 1:
                raise


def secured_settings(node: KafkaNode, listener: str = "sasl_ssl", user: str = "console") -> dict:
    """Cluster registration fields for the secured broker: secrets by environment variable name, files by path."""
    tls = node.security.tls
    if listener == "sasl_ssl":
        return {"bootstrap_servers": node.security.sasl_ssl_bootstrap,
                "client_config": {"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512",
                                  "sasl.username": user, "ssl.ca.location": str(tls.ca)},
                "secret_env": {"sasl.password": SECURED_PASSWORD_ENV if user == "console" else LIMITED_PASSWORD_ENV}}
    return {"bootstrap_servers": node.security.mtls_bootstrap,
            "client_config": {"security.protocol": "SSL", "ssl.ca.location": str(tls.ca),
                              "ssl.certificate.location": str(tls.client_cert),
                              "ssl.key.location": str(tls.client_key)},
            "secret_env": {}}


@pytest.fixture(scope="session")
def identity_provider(tmp_path_factory):
    """One OpenID Connect provider for the session (console.devstack.identity), started on first use."""
    from console.devstack.identity import IdentityProvider

    provider = IdentityProvider(home=tmp_path_factory.mktemp("identity"), port=free_port())
    provider.start()
    try:
        provider.wait_ready()
    except Exception:
        provider.stop()
        raise
    yield provider
    provider.stop()


@pytest.fixture(scope="session")
def schema_registry(tmp_path_factory):
    """One schema registry for the session (console.devstack.registry: Apicurio's Confluent-compatible API)."""
    from console.devstack.registry import SchemaRegistry

    registry = SchemaRegistry(home=tmp_path_factory.mktemp("registry"), port=free_port())
    registry.start()
    try:
        registry.wait_ready()
    except Exception:
        registry.stop()
        raise
    yield registry
    registry.stop()


@pytest.fixture
def registry_cluster(local_cluster, schema_registry):
    """The `local` cluster with the session's schema registry."""
    local_cluster.schema_registry_url = schema_registry.url
    local_cluster.save(update_fields=["schema_registry_url"])
    yield local_cluster
    local_cluster.schema_registry_url = ""
    local_cluster.save(update_fields=["schema_registry_url"])


SSO_CLIENT_ID = "kafka-console"
SSO_ROLE_MAP = "kafka-admins=admin,kafka-oncall=operator,staff=viewer"


@pytest.fixture
def sso(identity_provider, settings):
    """The console configured for single sign-on with the session's provider, as the README's variables do."""
    from urllib.parse import urlsplit

    endpoints = identity_provider.endpoints()
    for name, value in endpoints.items():
        setattr(settings, name, value)
    settings.SSO_ENABLED, settings.OIDC_RP_CLIENT_ID = True, SSO_CLIENT_ID
    settings.OIDC_RP_CLIENT_SECRET = "not-checked-by-the-test-provider"
    settings.OIDC_OP_ISSUER = identity_provider.issuer
    settings.CONSOLE_SSO_ROLE_MAP, settings.CONSOLE_SSO_ROLE_CLAIM = SSO_ROLE_MAP, "groups"
    settings.CONSOLE_SSO_NAME = "Corp SSO"
    settings.AUTHENTICATION_BACKENDS = [*settings.AUTHENTICATION_BACKENDS, "console.accounts.sso.ConsoleOIDCBackend"]
    idp = urlsplit(endpoints["OIDC_OP_LOGOUT_ENDPOINT"])
    settings.SECURE_CSP = {**settings.SECURE_CSP,
                           "form-action": [*settings.SECURE_CSP["form-action"], f"{idp.scheme}://{idp.netloc}"]}
    return identity_provider


@pytest.fixture(scope="session")
def redis_node(tmp_path_factory) -> RedisNode:
    """Started only by tests that need it; points the settings and the Celery app at it."""
    from console.celery import app

    node = RedisNode(home=tmp_path_factory.mktemp("redis"), port=free_port())
    node.start()
    settings.REDIS_URL = settings.CELERY_BROKER_URL = settings.CELERY_RESULT_BACKEND = node.url
    app.conf.broker_url = app.conf.result_backend = node.url
    os.environ["REDIS_URL"] = node.url
    yield node
    node.stop()


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker, kafka_node):
    """After pytest-django made the test database, aim the seeded `local` cluster at the session broker."""
    from console.clusters.models import Cluster

    with django_db_blocker.unblock():
        Cluster.objects.update_or_create(name="local", defaults={"bootstrap_servers": kafka_node.bootstrap,
                                                                  "schema_registry_url": ""})
    yield


@pytest.fixture
def local_cluster(db, kafka_node):
    """The `local` cluster row, recreated if a transactional test flushed it."""
    from console.clusters.models import Cluster

    return Cluster.objects.update_or_create(name="local", defaults={"bootstrap_servers": kafka_node.bootstrap,
                                                                     "schema_registry_url": ""})[0]


@pytest.fixture
def topic_factory(kafka_node):
    """Creates uniquely named topics straight through the gateway (not the services under test)."""
    import uuid

    from console.kafka.admin import KafkaAdmin
    from console.kafka.types import ClusterConnection

    admin = KafkaAdmin(ClusterConnection("fixture", kafka_node.bootstrap), timeout=10)

    def create(prefix: str = "t", partitions: int = 1, configs: dict | None = None) -> str:
        name = f"{prefix}-{uuid.uuid4().hex[:10]}"
        admin.create_topic(name, partitions=partitions, replication_factor=1, configs=configs or {})
        return name

    return create


@pytest.fixture
def produce(kafka_node):
    """produce(topic, [(partition, key, value, headers)...]) with a real producer; returns after delivery."""
    from confluent_kafka import Producer

    def send(topic: str, records: list[tuple]) -> None:
        producer = Producer({"bootstrap.servers": kafka_node.bootstrap, "linger.ms": 5})
        for partition, key, value, headers in records:
            while True:
                try:
                    producer.produce(topic, key=key, value=value, partition=partition, headers=headers or None)
                    break
                except BufferError:  # a large batch fills the local queue: wait for deliveries
                    producer.poll(0.1)
        assert producer.flush(30) == 0

    return send


def begin_transaction(bootstrap: str, topic: str, values: list[bytes], *, partitions: int = 1,
                      transactional_id: str | None = None, timeout_ms: int = 300_000):
    """A real transactional producer with a transaction left open over `values` (record i on partition
    i % partitions), flushed into the log; the caller ends it (abort_transaction)."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "transaction.timeout.ms": timeout_ms,
                         "transactional.id": transactional_id or f"open-{uuid.uuid4().hex}"})
    producer.init_transactions(15)
    producer.begin_transaction()
    for i, value in enumerate(values):
        producer.produce(topic, value=value, partition=i % partitions)
    producer.flush(15)
    return producer


@pytest.fixture
def commit(kafka_node):
    """commit(group, {(topic, partition): offset}) as a real consumer that then leaves: the group ends up Empty."""
    from confluent_kafka import Consumer, TopicPartition

    def run(group: str, offsets: dict[tuple[str, int], int]) -> None:
        consumer = Consumer({"bootstrap.servers": kafka_node.bootstrap, "group.id": group,
                             "enable.auto.commit": False})
        consumer.commit(offsets=[TopicPartition(t, p, o) for (t, p), o in offsets.items()], asynchronous=False)
        consumer.close()

    return run


@pytest.fixture
def silent_server():
    """Accepts TCP connections and never answers: the worst case for a client without timeouts."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept_forever():
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                accepted.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept_forever, daemon=True)
    thread.start()
    yield f"127.0.0.1:{server.getsockname()[1]}"
    stop.set()
    thread.join(2)
    for conn in accepted:
        conn.close()
    server.close()


@pytest.fixture(scope="session", autouse=True)
def _kafka_client_processes():
    """The session leaves no Kafka client process behind (they are detached, so nothing else would stop them)."""
    yield
    from console.kafka.sandbox import stop_host_processes

    stop_host_processes()
    shutil.rmtree(settings.KAFKA_CLIENT_SOCKET_DIR, ignore_errors=True)


@pytest.fixture(autouse=True)
def _fresh_kafka_clients():
    """A test that saw a cluster down must not make the next one fail fast."""
    forget_clients()
    yield
    forget_clients()


# The test workers' replay folder, where their resident Spark driver keeps its state: the session's own, so a
# console running on the same machine (make run) never lends the tests its driver.
WORKER_REPLAY_DIR = Path(tempfile.gettempdir()) / f"console-test-replays-{os.getpid()}"


def celery_env(redis_node, kafka_node) -> dict[str, str]:
    """Environment for a Celery subprocess: the session Redis and broker, and the test database."""
    from django.db import connection

    env = {**os.environ, "DJANGO_DEBUG": "1", "REDIS_URL": redis_node.url,
           "KAFKA_BOOTSTRAP_SERVERS": kafka_node.bootstrap, "REPLAY_OUTPUT_DIR": str(WORKER_REPLAY_DIR)}
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        env["DATABASE_URL"] = f"sqlite:///{db['NAME']}"
    else:
        env["DATABASE_URL"] = f"postgres://{db['USER']}:{db['PASSWORD']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"
    return env


@pytest.fixture(scope="session")
def celery_worker_process(django_db_setup, redis_node, kafka_node, tmp_path_factory):
    """A real `celery worker` subprocess on the session Redis and the test database."""
    env = celery_env(redis_node, kafka_node)
    log = open(tmp_path_factory.mktemp("celery") / "worker.log", "w")
    process = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "console", "worker", "--pool=solo", "--loglevel=INFO",
         f"--hostname=test-worker-{os.getpid()}@%h"],
        cwd=PROJECT_DIR, env=env, stdout=log, stderr=subprocess.STDOUT,
    )
    from console.celery import app

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"celery worker exited with {process.returncode}; see {log.name}")
        if app.control.ping(timeout=0.5):
            break
    else:
        process.kill()
        raise RuntimeError(f"celery worker did not answer a ping; see {log.name}")
    yield process
    process.terminate()
    try:
        process.wait(20)
    except subprocess.TimeoutExpired:
        process.kill()
    log.close()


@pytest.fixture
def make_user(db, django_user_model):
    from django.contrib.auth.models import Group

    def make(username: str, role: str | None) -> object:
        user = django_user_model.objects.create_user(username=username, password="pw-" + username)
        if role:
            # get_or_create: a transactional test (the browser one) flushes the data migration's groups.
            user.groups.add(Group.objects.get_or_create(name=role)[0])
        return user

    return make


@pytest.fixture
def viewer(make_user):
    return make_user("vera", "viewer")


@pytest.fixture
def operator(make_user):
    return make_user("otto", "operator")


@pytest.fixture
def admin(make_user):
    return make_user("ada", "admin")


@pytest.fixture
def client_for(client):
    def login(user):
        client.force_login(user)
        return client

    return login


CHROMIUM_ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="session")
def browser():
    """Debian's chromium driven by Playwright (which cannot download its own browsers here)."""
    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # Playwright's sync API runs an event loop
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def logged_in_page(browser, live_server):
    """A page logged in as the given user through the real login form."""
    contexts = []

    def open_as(user):
        context = browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 900})
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(15_000)
        page.goto("/accounts/login/")
        page.fill("input[name=username]", user.username)
        page.fill("input[name=password]", "pw-" + user.username)
        page.click("button[type=submit]")
        page.wait_for_url("**/clusters/")
        return page

    yield open_as
    for context in contexts:
        context.close()


class WebServer:
    """A real web process (runserver or gunicorn) on the test database, and a logged-in HTTP session for it."""

    def __init__(self, command: list[str], env: dict, log_path, port: int) -> None:
        self.port, self.log_path = port, log_path
        self.url = f"http://127.0.0.1:{port}"
        self._log = open(log_path, "w")
        self.process = subprocess.Popen(command, cwd=PROJECT_DIR, env=env, stdout=self._log,
                                        stderr=subprocess.STDOUT, start_new_session=True)
        import requests

        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"web server exited with {self.process.returncode}; see {log_path}")
            try:
                requests.get(self.url + "/health/live", timeout=2)
                return
            except requests.ConnectionError:
                time.sleep(0.3)
        raise RuntimeError(f"web server did not answer; see {log_path}")

    def session(self, username: str, password: str):
        import requests

        session = requests.Session()
        session.get(self.url + "/accounts/login/", timeout=10)
        response = session.post(self.url + "/accounts/login/", timeout=10, data={
            "username": username, "password": password, "csrfmiddlewaretoken": session.cookies["csrftoken"]},
            headers={"Referer": self.url + "/accounts/login/"})
        assert response.url.rstrip("/").endswith("/clusters"), response.url
        return session

    def log(self) -> str:
        self._log.flush()
        return open(self.log_path).read()

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, 15)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, 9)
                self.process.wait()
        self._log.close()


@pytest.fixture
def web_server(redis_node, kafka_node, tmp_path):
    """web_server(kind="runserver"|"gunicorn") starts a real web process on a free port against the test DB."""
    servers = []

    def start(kind: str = "runserver", **extra_env: str) -> WebServer:
        port = free_port()
        env = {**celery_env(redis_node, kafka_node), **extra_env}
        if kind == "gunicorn":
            command = [str(Path(sys.executable).parent / "gunicorn"), "console.wsgi", "--bind", f"127.0.0.1:{port}",
                       "--workers", "1", "--threads", "8", "--timeout", "60"]
        else:
            command = [sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"]
        server = WebServer(command, env, tmp_path / f"{kind}-{port}.log", port)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()
