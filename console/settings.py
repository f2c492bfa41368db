"""Settings come from the environment (12-factor); see README.md for every variable."""

import os
from datetime import timedelta
from pathlib import Path
from urllib.parse import quote

import environ
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()
# `make` writes .env once for development (DJANGO_DEBUG=1 and a generated SECRET_KEY), so the shell works in a new
# terminal; the real environment always wins. DJANGO_ENV_FILE names another file, or none when empty.
_env_file = os.environ.get("DJANGO_ENV_FILE", str(BASE_DIR / ".env"))
if _env_file:
    environ.Env.read_env(_env_file, overwrite=False)

DEBUG = env.bool("DJANGO_DEBUG", default=False)
# Development (make run, make test) sets DJANGO_DEBUG=1; anything else must bring its own key.
SECRET_KEY = env("SECRET_KEY", default="dev-only-insecure-key" if DEBUG else environ.Env.NOTSET)
ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS", default=["127.0.0.1", "localhost"])
CSRF_TRUSTED_ORIGINS = env.list("DJANGO_CSRF_TRUSTED_ORIGINS", default=[])

DJANGO_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
]
THIRD_PARTY_APPS = ["django_htmx", "axes", "ninja"]  # ninja: the API explorer's static files and template
LOCAL_APPS = [
    "console.accounts",
    "console.audit",
    "console.clusters",
    "console.tokens",
    "topics",
    "offsets",
    "sparkjobs",
    "transactions",
    "access",
    "replication",
    "records",
    "alerts",
    "connect", "brokers", "masking",
    "config_as_code",
    "changes",
    "api",
]
INSTALLED_APPS = DJANGO_APPS + THIRD_PARTY_APPS + LOCAL_APPS

MIDDLEWARE = [
    "console.timing.ServerTimingMiddleware",  # first: the session's and the user's queries count too
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.auth.middleware.LoginRequiredMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "console.accounts.middleware.SsoRecheckMiddleware",  # after messages: a re-check that ends a session says why
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "console.errors.ConsoleErrorMiddleware",
    "axes.middleware.AxesMiddleware",  # last, as django-axes asks
]
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",  # refuses a locked-out login before any password check
    "django.contrib.auth.backends.ModelBackend",
]

if not DEBUG:
    # Production serves its collected static files itself; runserver does it in development.
    MIDDLEWARE.insert(MIDDLEWARE.index("django.middleware.security.SecurityMiddleware") + 1,
                      "whitenoise.middleware.WhiteNoiseMiddleware")

# The first handler refuses an upload as it streams past IMPORT_MAX_BYTES (console/uploads.py); Django's own store it.
FILE_UPLOAD_HANDLERS = [
    "console.uploads.BoundedUploadHandler",
    "django.core.files.uploadhandler.MemoryFileUploadHandler",
    "django.core.files.uploadhandler.TemporaryFileUploadHandler",
]

ROOT_URLCONF = "console.urls"
WSGI_APPLICATION = "console.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "console.context_processors.console",
            ],
            "libraries": {"console_tags": "console.templatetags.console_tags"},
        },
    },
]

(BASE_DIR / ".data").mkdir(exist_ok=True)  # SQLite files (and the test database) live here
DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{BASE_DIR / '.data' / 'console.sqlite3'}")}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # IMMEDIATE avoids "database is locked" when the web, worker and recorder write at once.
    DATABASES["default"].setdefault("OPTIONS", {}).update({"transaction_mode": "IMMEDIATE", "timeout": 20})
    # A file (not :memory:) so Celery workers started by the tests can see the test database.
    DATABASES["default"]["TEST"] = {"NAME": str(BASE_DIR / ".data" / "test-console.sqlite3")}
# Production keeps each process's database connection between requests (a new PostgreSQL connection per page
# load was about 8 % of the web workers' request time in bench/scale.py); checked before reuse, so a database
# restart costs one reconnect, not an error page.
DATABASES["default"]["CONN_MAX_AGE"] = env.int("DATABASE_CONN_MAX_AGE", default=0 if DEBUG else 60)
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "clusters:list"
LOGOUT_REDIRECT_URL = "login"

# Single sign-on with the company's OpenID Connect provider, on when OIDC_RP_CLIENT_ID is set (see the README).
# The client secret comes only from the environment. Roles come from one claim (a dotted path such as
# realm_access.roles works), mapped value by value: "kafka-admins=admin,kafka-oncall=operator,staff=viewer".
OIDC_RP_CLIENT_ID = env("OIDC_RP_CLIENT_ID", default="")
SSO_ENABLED = bool(OIDC_RP_CLIENT_ID)
OIDC_RP_CLIENT_SECRET = env("OIDC_RP_CLIENT_SECRET", default="")
OIDC_OP_AUTHORIZATION_ENDPOINT = env("OIDC_OP_AUTHORIZATION_ENDPOINT", default="")
OIDC_OP_TOKEN_ENDPOINT = env("OIDC_OP_TOKEN_ENDPOINT", default="")
OIDC_OP_USER_ENDPOINT = env("OIDC_OP_USER_ENDPOINT", default="")
OIDC_OP_JWKS_ENDPOINT = env("OIDC_OP_JWKS_ENDPOINT", default="")
OIDC_OP_LOGOUT_ENDPOINT = env("OIDC_OP_LOGOUT_ENDPOINT", default="")  # end_session_endpoint; optional
OIDC_OP_ISSUER = env("OIDC_OP_ISSUER", default="")  # when set, id tokens from any other issuer are refused
OIDC_RP_SIGN_ALGO = env("OIDC_RP_SIGN_ALGO", default="RS256")
OIDC_RP_SCOPES = env("OIDC_RP_SCOPES", default="openid email profile")
OIDC_USE_PKCE = True
OIDC_STORE_ID_TOKEN = True  # the id token is the hint the provider's logout wants
# Every call to the provider (token, userinfo, keys) waits this long at most, so a provider that is down gives
# a clear page within seconds instead of holding a worker.
OIDC_TIMEOUT = env.int("OIDC_TIMEOUT_S", default=4)
LOGIN_REDIRECT_URL_FAILURE = "/accounts/login/"
CONSOLE_SSO_NAME = env("CONSOLE_SSO_NAME", default="single sign-on")
CONSOLE_SSO_ROLE_CLAIM = env("CONSOLE_SSO_ROLE_CLAIM", default="groups")
CONSOLE_SSO_ROLE_MAP = env("CONSOLE_SSO_ROLE_MAP", default="")
CONSOLE_SSO_USERNAME_CLAIM = env("CONSOLE_SSO_USERNAME_CLAIM", default="preferred_username")
# An SSO session's claims are asked again (refresh token, then userinfo) at most this often, so a role taken away
# at the provider ends in the console within this bound; a re-check that fails ends the session.
CONSOLE_SSO_RECHECK_S = env.int("CONSOLE_SSO_RECHECK_S", default=300)
# Local accounts are the break-glass path when the provider is down; a deployment can switch them off.
CONSOLE_LOCAL_LOGIN = env.bool("CONSOLE_LOCAL_LOGIN", default=True)
if SSO_ENABLED:
    missing = [name for name in ("OIDC_RP_CLIENT_SECRET", "OIDC_OP_AUTHORIZATION_ENDPOINT", "OIDC_OP_TOKEN_ENDPOINT",
                                 "OIDC_OP_USER_ENDPOINT", "OIDC_OP_JWKS_ENDPOINT", "OIDC_OP_ISSUER",
                                 "CONSOLE_SSO_ROLE_MAP")
                if not globals()[name]]
    if missing:
        raise ImproperlyConfigured(f"OIDC_RP_CLIENT_ID is set, so single sign-on also needs {', '.join(missing)}.")
    AUTHENTICATION_BACKENDS.append("console.accounts.sso.ConsoleOIDCBackend")
if not CONSOLE_LOCAL_LOGIN:
    if not SSO_ENABLED:
        raise ImproperlyConfigured("CONSOLE_LOCAL_LOGIN is off but single sign-on is not configured: nobody could log in.")
    AUTHENTICATION_BACKENDS.remove("django.contrib.auth.backends.ModelBackend")

# API tokens (console/tokens), for the REST API and the MCP server: the longest life a token may be given.
API_TOKEN_MAX_DAYS = env.int("API_TOKEN_MAX_DAYS", default=365)
# The calls one token may make a minute, counted in Redis across the web processes; past it, 429 with Retry-After.
API_RATE_LIMIT_PER_MINUTE = env.int("API_RATE_LIMIT_PER_MINUTE", default=600)
# A single sign-on access token sent to the API or MCP is checked with the provider's userinfo endpoint at most this
# often per token and web process (a token the provider revoked works here for up to this long).
API_SSO_TOKEN_CACHE_S = env.float("API_SSO_TOKEN_CACHE_S", default=60.0)
# A record read or search through the API is one HTTP request: its time budget stays below the web workers' timeout.
API_SCAN_MAX_SECONDS = env.float("API_SCAN_MAX_SECONDS", default=25.0)

# Django's own admin (/admin/) edits rows past the console's role checks; on in development only by default.
CONSOLE_DJANGO_ADMIN = env.bool("CONSOLE_DJANGO_ADMIN", default=DEBUG)

LANGUAGE_CODE = "en-gb"
TIME_ZONE = env("TIME_ZONE", default="UTC")
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = env("DJANGO_STATIC_ROOT", default=str(BASE_DIR / ".data" / "static"))
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage" if not DEBUG
                    else "django.contrib.staticfiles.storage.StaticFilesStorage"},
}

SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SECURE = env.bool("DJANGO_SECURE_COOKIES", default=not DEBUG)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
X_FRAME_OPTIONS = "DENY"
# A session lasts a working day at most and ends with the browser.
SESSION_COOKIE_AGE = env.int("SESSION_COOKIE_AGE_S", default=8 * 3600)
SESSION_EXPIRE_AT_BROWSER_CLOSE = True

# Content-Security-Policy on every response (Django's own middleware): scripts only from our static files, so
# markup that reached a page through a name cannot run. Inline style attributes stay allowed (chart swatches,
# htmx's indicator style); they cannot run code.
SECURE_CSP = {
    "default-src": ["'self'"],
    "script-src": ["'self'"],
    "style-src": ["'self'", "'unsafe-inline'"],
    "img-src": ["'self'", "data:"],
    "connect-src": ["'self'"],
    "object-src": ["'none'"],
    "base-uri": ["'none'"],
    "form-action": ["'self'"],
    "frame-ancestors": ["'none'"],
}
if OIDC_OP_LOGOUT_ENDPOINT:
    # Logging out is a POST answered with a redirect to the provider's logout page, which form-action governs.
    from urllib.parse import urlsplit

    _idp = urlsplit(OIDC_OP_LOGOUT_ENDPOINT)
    SECURE_CSP["form-action"].append(f"{_idp.scheme}://{_idp.netloc}")

# Login throttling (django-axes): after AXES_FAILURE_LIMIT failures for one username from one address, that
# pair is locked out for AXES_COOLOFF_MINUTES; the lockout and each failure are logged.
AXES_FAILURE_LIMIT = env.int("AXES_FAILURE_LIMIT", default=5)
AXES_COOLOFF_TIME = timedelta(minutes=env.int("AXES_COOLOFF_MINUTES", default=15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_VERBOSE = False
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
AXES_IPWARE_PROXY_COUNT = env.int("DJANGO_PROXY_COUNT", default=0)

# Behind a TLS-terminating proxy (production): trust its X-Forwarded-Proto, redirect plain HTTP, and ask browsers
# to use HTTPS only (HSTS). Development (DJANGO_DEBUG=1) serves plain HTTP.
if env.bool("DJANGO_BEHIND_TLS_PROXY", default=False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env.bool("DJANGO_SSL_REDIRECT", default=False)
SECURE_HSTS_SECONDS = env.int("DJANGO_HSTS_SECONDS", default=0 if DEBUG else 31_536_000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("DJANGO_HSTS_INCLUDE_SUBDOMAINS", default=False)
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"

# The local Redis of `make run` asks for the password `make` wrote to .env (devstack/redis.py).
REDIS_URL = env("REDIS_URL", default=(f"redis://:{quote(env('REDIS_PASSWORD'), safe='')}@127.0.0.1:6379/0"
                                      if env("REDIS_PASSWORD", default="") else "redis://127.0.0.1:6379/0"))
CELERY_BROKER_URL = env("CELERY_BROKER_URL", default=REDIS_URL)
CELERY_RESULT_BACKEND = env("CELERY_RESULT_BACKEND", default=REDIS_URL)
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# A web request that enqueues a task must not hang when Redis is down.
CELERY_BROKER_TRANSPORT_OPTIONS = {"socket_connect_timeout": 2, "socket_timeout": 2, "max_retries": 1}
# Lag history: a sweep every LAG_SAMPLE_INTERVAL_S; raw samples rolled up into 5-minute and hourly buckets, each
# kept as long as LAG_RETENTION_S says; a status looks at the last LAG_STATUS_WINDOW samples of each partition.
LAG_SAMPLE_INTERVAL_S = env.int("LAG_SAMPLE_INTERVAL_S", default=30)
LAG_STATUS_WINDOW = env.int("LAG_STATUS_WINDOW", default=10)
# What one sweep may take: past it the groups not asked yet (the quietest: the rest go first) are skipped, and said.
LAG_SWEEP_BUDGET_S = env.float("LAG_SWEEP_BUDGET_S", default=0.8 * LAG_SAMPLE_INTERVAL_S)
# A cluster's next sweep waits while one is running, unless that one started this long ago (its worker died).
LAG_SWEEP_CLAIM_S = env.float("LAG_SWEEP_CLAIM_S", default=5 * LAG_SAMPLE_INTERVAL_S)
LAG_RETENTION_S = {
    0: int(env.float("LAG_RAW_RETENTION_HOURS", default=6) * 3600),
    300: int(env.float("LAG_5MIN_RETENTION_DAYS", default=3) * 86400),
    3600: int(env.float("LAG_HOURLY_RETENTION_DAYS", default=60) * 86400),
}
CELERY_BEAT_SCHEDULE: dict = {
    # A sample that waited longer than one interval for a free worker is dropped: the next one is due anyway.
    "sample-lag": {"task": "offsets.tasks.sample_lag", "schedule": float(LAG_SAMPLE_INTERVAL_S),
                   "options": {"expires": float(LAG_SAMPLE_INTERVAL_S)}},
    # A running replay whose worker died is failed, audited and its driver stopped (see replay_reap_orphans).
    "reap-replays": {"task": "sparkjobs.tasks.reap_replays", "schedule": 30.0, "options": {"expires": 30.0}},
}
REPLAY_HEARTBEAT_TIMEOUT_S = env.float("REPLAY_HEARTBEAT_TIMEOUT_S", default=60.0)
# Alerts (alerts/): rules are evaluated right after each lag sweep. Webhook URLs carry tokens, so they come only
# from the environment, each under a name rules refer to: "oncall=https://hooks.example/...,team=https://...".
ALERT_WEBHOOKS = env("CONSOLE_ALERT_WEBHOOKS", default="")
# Where links in alerts point: the console's address as people reach it.
CONSOLE_BASE_URL = env("CONSOLE_BASE_URL", default="http://127.0.0.1:8000")
# Alert email goes through EMAIL_URL (smtp://user:password@host:25, smtp+tls://…:587); development prints mail to
# the worker's output instead of sending it.
_mail = env.email_url("EMAIL_URL", default="consolemail://" if DEBUG else "smtp://localhost:25")
_smtp = _mail["EMAIL_BACKEND"].endswith("smtp.EmailBackend")
MAILERS = {"default": {"BACKEND": _mail["EMAIL_BACKEND"], "OPTIONS": {
    "host": _mail["EMAIL_HOST"], "port": _mail["EMAIL_PORT"], "username": _mail["EMAIL_HOST_USER"],
    "password": _mail["EMAIL_HOST_PASSWORD"], "use_tls": _mail.get("EMAIL_USE_TLS", False),
    "use_ssl": _mail.get("EMAIL_USE_SSL", False), "timeout": 10,  # a mail server that hangs must not stall alerts
} if _smtp else {}}}
DEFAULT_FROM_EMAIL = env("CONSOLE_ALERT_FROM", default="kafka-console@localhost")

# The `local` cluster is seeded from these on every migrate. `KAFKA_BROKERS=3 make run` starts three brokers on
# 9092, 9094, 9096 (devstack/kafka.py dev_cluster_ports) and the default names them all.
_KAFKA_PORT, KAFKA_BROKERS = env.int("KAFKA_PORT", default=9092), env.int("KAFKA_BROKERS", default=1)
KAFKA_BOOTSTRAP_SERVERS = env("KAFKA_BOOTSTRAP_SERVERS", default=",".join(
    f"127.0.0.1:{_KAFKA_PORT + 2 * i}" for i in range(max(1, KAFKA_BROKERS))))
KAFKA_LOCAL_CLUSTER_NAME = env("KAFKA_LOCAL_CLUSTER_NAME", default="local")
# The `local` cluster's schema registry (make run starts one on this port); empty leaves the registration alone.
SCHEMA_REGISTRY_URL = env("SCHEMA_REGISTRY_URL", default="")
# A registry that asks for a client certificate (make run's: devstack/registry_tls.py): the CA to check it
# by, and the console's certificate and key, stored on the `local` cluster with the URL (files in
# CONSOLE_CLUSTER_CERT_DIRS).
SCHEMA_REGISTRY_CA = env("SCHEMA_REGISTRY_CA", default="")
SCHEMA_REGISTRY_CLIENT_CERT = env("SCHEMA_REGISTRY_CLIENT_CERT", default="")
SCHEMA_REGISTRY_CLIENT_KEY = env("SCHEMA_REGISTRY_CLIENT_KEY", default="")
# What a cluster registration may name (console/clusters/client_settings.py). Secrets come only from environment
# variables meant for them (this prefix, or the names listed), so an admin cannot have the console send its own
# keys to a broker of their choosing; certificate and key files only from these folders (os.pathsep or commas).
CONSOLE_SECRET_ENV_PREFIX = env("CONSOLE_SECRET_ENV_PREFIX", default="CONSOLE_SECRET_")
CONSOLE_SECRET_ENV_ALLOW = env.list("CONSOLE_SECRET_ENV_ALLOW", default=[])
CONSOLE_CLUSTER_CERT_DIRS = [d.strip() for part in env("CONSOLE_CLUSTER_CERT_DIRS", default=str(
    BASE_DIR / ".data" / "certs")).split(os.pathsep) for d in part.split(",") if d.strip()]
# keep_running's status files (console/process_status.py): /health and the `local` cluster's page report a
# development process that keeps failing (say, the broker) with its last error.
PROCESS_STATUS_DIR = env("PROCESS_STATUS_DIR", default=str(BASE_DIR / ".data" / "processes"))
# Every admin call is bounded so a page answers within 5 s even with the cluster down.
KAFKA_REQUEST_TIMEOUT_S = env.float("KAFKA_REQUEST_TIMEOUT_S", default=3.0)
# After a cluster failed to answer, fail fast for this long instead of waiting again on each call.
KAFKA_UNREACHABLE_BACKOFF_S = env.float("KAFKA_UNREACHABLE_BACKOFF_S", default=5.0)
# Each cluster's librdkafka clients run in a client process of their own (gateway/kafka/sandbox/): a native abort
# in the client library then stops that cluster's calls, not the web process or worker serving every cluster. One
# such process per cluster serves every web and Celery process of the host, over Unix sockets in this private
# folder (0700, with the token every peer must present; a long path is swapped for a short one under /tmp).
KAFKA_CLIENT_ISOLATION = env.bool("KAFKA_CLIENT_ISOLATION", default=True)
KAFKA_CLIENT_SOCKET_DIR = env("KAFKA_CLIENT_SOCKET_DIR", default=str(BASE_DIR / ".data" / "kafka-clients"))
# Off: both lanes of a cluster (pages; lag sweeps and the shared tables' rebuilds) share its one client process,
# each with clients of its own (a process costs ~40 MiB per cluster). On: the background lane in a second client
# process per cluster, on the hosts that run such work, so pages' small calls never share a GIL with a sweep.
KAFKA_BACKGROUND_CLIENT_PROCESS = env.bool("KAFKA_BACKGROUND_CLIENT_PROCESS", default=False)
# The host's one JVM for Kafka's Java Admin client (gateway/kafka/java/host_jvm.py), shared by every cluster and
# process: its heap bound in MiB (it exits when full, and the next call starts another).
KAFKA_JAVA_BRIDGE_HEAP_MB = env.int("KAFKA_JAVA_BRIDGE_HEAP_MB", default=256)
# `manage.py record_groups` records every registered cluster in one process, a thread each. Above 1, it starts this
# many recorder processes instead and spreads the clusters over them by a hash of their names (a cluster stays in
# its process while the registry changes): for when one process's measured throughput does not keep up. A native
# abort then stops only the clusters of one process.
RECORDER_PROCESSES = env.int("RECORDER_PROCESSES", default=1)

# Kafka Connect (connect/): the `local` cluster's worker, registered as `local` on every migrate (empty: left alone).
# REST calls are bounded (reads, changes: Connect may rebalance or write offsets), 409s retried within that bound,
# a worker that did not answer is failed fast for a while; beat looks at every connector every interval.
CONNECT_URL = env("CONNECT_URL", default="")
CONNECT_REQUEST_TIMEOUT_S = env.float("CONNECT_REQUEST_TIMEOUT_S", default=5.0)
CONNECT_WRITE_TIMEOUT_S = env.float("CONNECT_WRITE_TIMEOUT_S", default=20.0)
CONNECT_REBALANCE_RETRIES = env.int("CONNECT_REBALANCE_RETRIES", default=4)
CONNECT_UNREACHABLE_BACKOFF_S = env.float("CONNECT_UNREACHABLE_BACKOFF_S", default=5.0)
CONNECT_OBSERVE_INTERVAL_S = env.float("CONNECT_OBSERVE_INTERVAL_S", default=15.0)
# make run's worker asks every caller for basic authentication (devstack/connect.py): make sets the NAME of
# the variable holding its password (which it writes to .env; a cluster secret, read at each call), and `local` is
# registered with this user and that name. Empty (CONNECT_URL given, no local worker): registered without.
CONNECT_LOCAL_USER = env("CONNECT_LOCAL_USER", default="console")
CONNECT_LOCAL_PASSWORD_ENV = env("CONNECT_LOCAL_PASSWORD_ENV", default="")
# The folder where operators' FileStream connectors of `local` may read and write files (its operator allowlist);
# the only folder inside the project's own that any Connect registration may name for files.
CONNECT_LOCAL_FILES_DIR = env("CONNECT_LOCAL_FILES_DIR", default=str(BASE_DIR / ".data" / "connect" / "files"))
CELERY_BEAT_SCHEDULE["observe-connectors"] = {
    "task": "connect.tasks.observe_connectors", "schedule": CONNECT_OBSERVE_INTERVAL_S,
    "options": {"expires": CONNECT_OBSERVE_INTERVAL_S}}

# Kafka's own command-line tools (for the few admin calls confluent-kafka-python lacks); make fetches them here.
KAFKA_TOOLS_LIBS = env("KAFKA_TOOLS_LIBS", default=str(BASE_DIR / ".cache" / "kafka-4.3.1" / "libs"))

# Replays: Spark master (local[*], spark://…, yarn, k8s://…), driver memory, and where file sinks write.
SPARK_MASTER = env("SPARK_MASTER", default="local[*]")
SPARK_DRIVER_MEMORY = env("SPARK_DRIVER_MEMORY", default="1g")
# With a Spark cluster (SPARK_MASTER spark://...), the spark.authenticate.secret its master and workers share: the
# driver takes no RPC without it (sparkjobs/runner.py). Local mode needs none (Spark makes one per driver).
SPARK_AUTHENTICATE_SECRET = env("SPARK_AUTHENTICATE_SECRET", default="")
# Replays run in one resident Spark driver per worker machine (sparkjobs/jobs/driver.py); it stops after this many
# idle seconds, or when the worker process that started it has gone.
REPLAY_DRIVER_IDLE_S = env.float("REPLAY_DRIVER_IDLE_S", default=1800.0)
REPLAY_DRIVER_PRESTART = env.bool("REPLAY_DRIVER_PRESTART", default=True)  # started as a worker comes up
REPLAY_DRIVER_START_TIMEOUT_S = env.float("REPLAY_DRIVER_START_TIMEOUT_S", default=180.0)
# A new driver runs a replay's write paths once over generated rows, so that the first replay finds them compiled
# (about 20 s of both cores on a 2-core machine, in the background).
REPLAY_DRIVER_WARM_UP = env.bool("REPLAY_DRIVER_WARM_UP", default=True)
REPLAY_OUTPUT_DIR = env("REPLAY_OUTPUT_DIR", default=str(BASE_DIR / ".data" / "replays"))
# File sinks may also write to s3a://BUCKET/PREFIX (the replay form's output location): a local folder on a
# standalone cluster would scatter the files over the workers. Keys only from the environment variables named here.
REPLAY_S3_ENDPOINT = env("REPLAY_S3_ENDPOINT", default="")  # empty: AWS S3; else an S3-compatible server's URL
REPLAY_S3_REGION = env("REPLAY_S3_REGION", default="us-east-1")
REPLAY_S3_PATH_STYLE = env.bool("REPLAY_S3_PATH_STYLE", default=bool(REPLAY_S3_ENDPOINT))
REPLAY_S3_ACCESS_KEY_ENV = env("REPLAY_S3_ACCESS_KEY_ENV", default="REPLAY_S3_ACCESS_KEY")
REPLAY_S3_SECRET_KEY_ENV = env("REPLAY_S3_SECRET_KEY_ENV", default="REPLAY_S3_SECRET_KEY")
# How long a replay waits on an unanswering broker (each request, each poll) before it fails with a reason:
# Spark's Kafka defaults (two minutes per poll, retried) would leave a replay of a dead cluster "running".
REPLAY_KAFKA_TIMEOUT_S = env.float("REPLAY_KAFKA_TIMEOUT_S", default=30.0)
# Fault switch for tests, honoured only with DJANGO_DEBUG: the first attempt of a topic sink's first task kills its
# Python worker after writing this many records, with its transaction open (Spark then retries the task).
REPLAY_FAULT_CRASH_AFTER = env.int("REPLAY_FAULT_CRASH_AFTER", default=0)

# Keyed hash for the audit chain: without the key, a forged row cannot carry a valid hash. In production it must be
# its own secret: SECRET_KEY is read by every process and often by more people (sessions, signed links), and
# whoever holds the hash key can forge rows and witness records alike. Development may share it.
MSG_AUDIT_HASH_KEY = ("AUDIT_HASH_KEY must be set, and differ from SECRET_KEY, outside development (DJANGO_DEBUG "
                      "off): it is the key of the audit chain and of the witness topic's records.")
AUDIT_HASH_KEY = env("AUDIT_HASH_KEY", default=SECRET_KEY if DEBUG else "")
# A database a development console wrote before `make run` ran without DEBUG has its chain keyed with SECRET_KEY;
# `make` names that key for it and says so (AUDIT_HASH_KEY_OF_DEVELOPMENT), rather than break the chain's check.
_SHARED_KEY_ALLOWED = env.bool("AUDIT_HASH_KEY_OF_DEVELOPMENT", default=False)
if not DEBUG and (not AUDIT_HASH_KEY or (AUDIT_HASH_KEY == SECRET_KEY and not _SHARED_KEY_ALLOWED)):
    raise ImproperlyConfigured(MSG_AUDIT_HASH_KEY)
# The audit witness (console/witness/): every audit event is published, in order, to one Kafka topic the
# database cannot rewrite, and audit_verify compares the two. Cluster: a registered cluster's name; empty means
# the `local` cluster, or the first registered one. Retention 0 keeps the topic's records forever.
AUDIT_WITNESS_ENABLED = env.bool("AUDIT_WITNESS_ENABLED", default=True)
AUDIT_WITNESS_CLUSTER = env("AUDIT_WITNESS_CLUSTER", default="")
AUDIT_WITNESS_TOPIC = env("AUDIT_WITNESS_TOPIC", default="_kafka_console_audit")
AUDIT_WITNESS_RETENTION_DAYS = env.int("AUDIT_WITNESS_RETENTION_DAYS", default=0)
AUDIT_WITNESS_INTERVAL_S = env.float("AUDIT_WITNESS_INTERVAL_S", default=5.0)
AUDIT_WITNESS_BATCH = env.int("AUDIT_WITNESS_BATCH", default=500)
# /health and the audit page call the witness lagging when an event waits longer than this to be published.
AUDIT_WITNESS_LAG_ALERT_S = env.float("AUDIT_WITNESS_LAG_ALERT_S", default=120.0)
# Change requests (changes/) that no one decided in time become expired (CHANGE_REQUEST_TTL_HOURS, changes/conf.py).
CELERY_BEAT_SCHEDULE["expire-change-requests"] = {
    "task": "changes.tasks.expire_change_requests", "schedule": 300.0, "options": {"expires": 300.0}}
CELERY_BEAT_SCHEDULE["publish-audit-witness"] = {
    "task": "console.audit.tasks.publish_witness", "schedule": AUDIT_WITNESS_INTERVAL_S,
    "options": {"expires": AUDIT_WITNESS_INTERVAL_S}}
# /metrics (Prometheus) answers only scrapers that send this as a bearer token; unset, /metrics is off (404).
METRICS_TOKEN = env("CONSOLE_METRICS_TOKEN", default="")
# Every web process serves the same rendering of /metrics for this long (shared in Redis; 0: rendered per scrape).
METRICS_CACHE_S = env.float("METRICS_CACHE_S", default=10.0)
# Anonymous /health answers from a snapshot this old at most (per web process), so no caller without a login or the
# metrics token makes the console ask every cluster and the Celery workers (console/health.py).
HEALTH_ANONYMOUS_CACHE_S = env.float("HEALTH_ANONYMOUS_CACHE_S", default=10.0)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", default="INFO")},
    "loggers": {
        "django.db.backends": {"level": "WARNING"},
        "axes": {"level": "WARNING"},  # a line per login otherwise; lockouts are warnings
        "mcp": {"level": "WARNING"},  # the MCP SDK logs each stateless request's start and end at INFO
        # Connection failures already reach people as ClusterUnavailable; librdkafka would repeat them every 100 ms.
        "gateway.kafka.librdkafka": {"level": env("LIBRDKAFKA_LOG_LEVEL", default="CRITICAL")},
        # DEBUG: how long each batch of a lag sweep took to ask (OffsetFetch, then ListOffsets), and the whole sweep.
        "offsets.lag.observe": {"level": env("LAG_SWEEP_LOG_LEVEL", default="INFO")},
        "offsets.lag.sampler": {"level": env("LAG_SWEEP_LOG_LEVEL", default="INFO")},
        # DEBUG: what each rebuild of a topic table asked and how long each part took.
        "topics.listing": {"level": env("TOPIC_SNAPSHOT_LOG_LEVEL", default="INFO")},
    },
}
# Topic lists read one snapshot per cluster in Redis (topics/table.py), rebuilt every TOPIC_SNAPSHOT_INTERVAL_S by
# beat, one process per cluster at a time (a lock that expires after TOPIC_SNAPSHOT_LOCK_S); each Kafka call of a
# rebuild may take TOPIC_SNAPSHOT_TIMEOUT_S (a page's take KAFKA_REQUEST_TIMEOUT_S), and its offsets are read
# TOPIC_SNAPSHOT_WINDOW partitions per leader at a time.
TOPIC_SNAPSHOT_INTERVAL_S = env.float("TOPIC_SNAPSHOT_INTERVAL_S", default=15.0)
# Sizes on disk (DescribeLogDirs of every broker, topics/disk.py) change slowly and cost the most to read.
DISK_SNAPSHOT_INTERVAL_S = env.float("DISK_SNAPSHOT_INTERVAL_S", default=60.0)
# A shared table is rebuilt no more often than its last build took divided by this share: on a big cluster the
# list is refreshed less often (the page says how old it is) instead of taking the pages' CPU (console/shared_table).
SNAPSHOT_REBUILD_SHARE = env.float("SNAPSHOT_REBUILD_SHARE", default=0.1)
TOPIC_SNAPSHOT_TIMEOUT_S = env.float("TOPIC_SNAPSHOT_TIMEOUT_S", default=30.0)
TOPIC_SNAPSHOT_LOCK_S = env.float("TOPIC_SNAPSHOT_LOCK_S", default=10 * TOPIC_SNAPSHOT_TIMEOUT_S)
TOPIC_SNAPSHOT_WINDOW = env.int("TOPIC_SNAPSHOT_WINDOW", default=2000)
# A rebuild reads again the log starts of one topic in TOPIC_SNAPSHOT_START_ROUNDS (besides new and changed ones,
# topics/log_starts.py): retention's deletions show within that many rebuilds.
TOPIC_SNAPSHOT_START_ROUNDS = env.int("TOPIC_SNAPSHOT_START_ROUNDS", default=8)
# How long the topic list shows a topic's cleanup.policy and retention without asking Kafka again (topics/config_cache.py);
# the console's own changes show at once, other clients' within this.
TOPIC_LIST_CONFIGS_S = env.float("TOPIC_LIST_CONFIGS_S", default=60.0)
CELERY_BEAT_SCHEDULE["refresh-topic-snapshots"] = {
    "task": "topics.tasks.refresh_topic_snapshots", "schedule": TOPIC_SNAPSHOT_INTERVAL_S,
    "options": {"expires": TOPIC_SNAPSHOT_INTERVAL_S}}
# Groups lists read one snapshot per cluster in Redis too (offsets/group_table.py): the lag sweep's task rewrites it
# after each sweep, and beat rebuilds, every GROUP_SNAPSHOT_INTERVAL_S, any cluster's snapshot older than 1.5 times
# that (a sweep failing or switched off); each Kafka call of a rebuild may take GROUP_SNAPSHOT_TIMEOUT_S.
GROUP_SNAPSHOT_INTERVAL_S = env.float("GROUP_SNAPSHOT_INTERVAL_S", default=float(LAG_SAMPLE_INTERVAL_S))
GROUP_SNAPSHOT_TIMEOUT_S = env.float("GROUP_SNAPSHOT_TIMEOUT_S", default=30.0)
GROUP_SNAPSHOT_LOCK_S = env.float("GROUP_SNAPSHOT_LOCK_S", default=10 * GROUP_SNAPSHOT_TIMEOUT_S)
CELERY_BEAT_SCHEDULE["refresh-group-snapshots"] = {
    "task": "offsets.tasks.refresh_group_snapshots", "schedule": GROUP_SNAPSHOT_INTERVAL_S,
    "options": {"expires": GROUP_SNAPSHOT_INTERVAL_S}}
