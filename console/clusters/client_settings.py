"""What a cluster registration may carry: an allowlist of client settings, the folders certificate files may come
from, and the environment variables secrets may be read from.

Whoever may register a cluster chooses the brokers the console talks to, so every setting is a way to make the
console do something on that person's behalf: load code (librdkafka's `ssl.providers`, `plugin.library.paths`),
read any file it can (a "certificate" that is the database), or send its own secrets (`sasl.password` from
SECRET_KEY) to a broker that logs them. Only what is listed here passes, and it is checked twice: when a
registration is saved (Cluster.clean, which the page and the shell both reach through cluster_register) and
whenever a connection is built (cluster_connection), so a row stored before these rules, or a symbolic link that
moved since, is refused as well.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping

from django.conf import settings

REGISTRY_PREFIX = "schema.registry."  # these settings go to the schema registry client, never to librdkafka

MSG_UNKNOWN_SETTING = ("'{key}' is not a client setting the console supports for a cluster connection (see the "
                       "README, 'Cluster settings and secrets'); it is refused.")
MSG_UNSAFE_CONFIG = "'{key}' would let the cluster's settings run commands or load code in the console; it is refused."
MSG_SECRET_IN_CONFIG = "'{key}' is a secret: give the name of an environment variable in secret_env instead."
MSG_NOT_A_SECRET = "'{key}' is not a secret: give its value as a client setting, not in secret_env."
MSG_ENV_NAME = "'{key}' must map to an environment variable name."
MSG_ENV_NOT_FOR_CLUSTERS = ("The environment variable '{env}' (for {key}) is not one meant for cluster secrets: "
                            "only names starting with '{prefix}' (CONSOLE_SECRET_ENV_PREFIX) or listed in "
                            "CONSOLE_SECRET_ENV_ALLOW may be sent to a cluster.")
MSG_ENV_CONSOLES_OWN = ("The environment variable '{env}' (for {key}) holds one of the console's own secrets or "
                        "addresses; it is never sent to a cluster, whatever CONSOLE_SECRET_ENV_PREFIX and "
                        "CONSOLE_SECRET_ENV_ALLOW say.")
MSG_VALUE_IS_CONSOLES = ("The environment variable '{env}' (for {key}) holds the same value as one of the console's "
                         "own secrets; it is not sent to a cluster.")
MSG_NOT_PAIRS = "Client settings and secrets are each a set of key=value pairs."
MSG_BAD_VALUE = "'{key}' must be {expected}."
MSG_FILE_RELATIVE = "'{key}' must be an absolute path inside one of CONSOLE_CLUSTER_CERT_DIRS ({dirs})."
MSG_FILE_OUTSIDE = ("'{key}' names '{path}', which is outside the folders the console reads certificates from "
                    "(CONSOLE_CLUSTER_CERT_DIRS: {dirs}); a symbolic link counts where it leads.")


class SettingRefused(ValueError):
    """A registration's setting that is not allowed; `field` is client_config or secret_env."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field, self.message = field, message


# -- kinds of value ----------------------------------------------------------------------------------------------

_INT = re.compile(r"-?[0-9]{1,10}")
_CLIENT_ID = re.compile(r"[A-Za-z0-9._-]{1,255}")
_PRINTABLE = re.compile(r"[\x21-\x7e][\x20-\x7e]{0,254}")  # user names, scopes: ASCII without controls
_CIPHERS = re.compile(r"[A-Za-z0-9_:+!@.,=-]{1,2000}")
_VERSION = re.compile(r"[0-9]{1,3}(\.[0-9]{1,3}){1,3}")
_URL = re.compile(r"https?://[\x21-\x7e]{1,2000}")

Check = Callable[[str, str], None]


def _matching(pattern: re.Pattern, expected: str) -> Check:
    def check(key: str, value: str) -> None:
        if not pattern.fullmatch(value):
            raise SettingRefused("client_config", MSG_BAD_VALUE.format(key=key, expected=expected))

    return check


def _one_of(*choices: str, case_sensitive: bool = False) -> Check:
    def check(key: str, value: str) -> None:
        known = choices if case_sensitive else tuple(c.lower() for c in choices)
        if (value if case_sensitive else value.lower()) not in known:
            expected = "one of " + ", ".join(choices)
            raise SettingRefused("client_config", MSG_BAD_VALUE.format(key=key, expected=expected))

    return check


def _file(key: str, value: str) -> None:
    dirs = cert_dirs()
    shown = ", ".join(dirs) or "none set"
    if any(ord(ch) < 32 for ch in value) or not os.path.isabs(value):
        raise SettingRefused("client_config", MSG_FILE_RELATIVE.format(key=key, dirs=shown))
    real = os.path.realpath(value)
    for folder in dirs:
        root = os.path.realpath(folder)
        if os.path.commonpath([real, root]) == root:
            return
    raise SettingRefused("client_config", MSG_FILE_OUTSIDE.format(key=key, path=value, dirs=shown))


_number = _matching(_INT, "a whole number")
_boolean = _one_of("true", "false")
_text = _matching(_PRINTABLE, "printable ASCII text")

# librdkafka settings for reaching and authenticating to a cluster. Each has a meaning in Kafka's Java clients too
# (gateway/kafka/java/config.py carries them over for Spark, Kafka's tools and the Java Admin bridge) or only tunes
# librdkafka's own sockets. SASL mechanisms are those gateway/kafka/java/config.py can log in with; GSSAPI is absent
# because librdkafka runs a kinit shell command built from the principal and keytab settings.
CLIENT_SETTINGS: dict[str, Check] = {
    "security.protocol": _one_of("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"),
    "sasl.mechanism": _one_of("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", case_sensitive=True),
    "sasl.mechanisms": _one_of("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", case_sensitive=True),
    "sasl.username": _text,
    "ssl.ca.location": _file,
    "ssl.certificate.location": _file,
    "ssl.key.location": _file,
    "ssl.endpoint.identification.algorithm": _one_of("none", "https"),
    "ssl.cipher.suites": _matching(_CIPHERS, "a list of cipher names"),
    "client.id": _matching(_CLIENT_ID, "letters, digits, '.', '_' and '-'"),
    "client.dns.lookup": _one_of("use_all_dns_ips", "resolve_canonical_bootstrap_servers_only"),
    "broker.address.family": _one_of("any", "v4", "v6"),
    "broker.address.ttl": _number,
    "socket.timeout.ms": _number,
    "socket.connection.setup.timeout.ms": _number,
    "socket.keepalive.enable": _boolean,
    "socket.nagle.disable": _boolean,
    "socket.send.buffer.bytes": _number,
    "socket.receive.buffer.bytes": _number,
    "connections.max.idle.ms": _number,
    "request.timeout.ms": _number,
    "metadata.max.age.ms": _number,
    "topic.metadata.refresh.interval.ms": _number,
    "reconnect.backoff.ms": _number,
    "reconnect.backoff.max.ms": _number,
    "retry.backoff.ms": _number,
    "retry.backoff.max.ms": _number,
    "api.version.request": _boolean,
    "api.version.request.timeout.ms": _number,
    "api.version.fallback.ms": _number,
    "broker.version.fallback": _matching(_VERSION, "a Kafka version such as 2.8.0"),
    # The schema registry client's settings (confluent_kafka.schema_registry), under the prefix.
    REGISTRY_PREFIX + "ssl.ca.location": _file,
    REGISTRY_PREFIX + "ssl.certificate.location": _file,
    REGISTRY_PREFIX + "ssl.key.location": _file,
    REGISTRY_PREFIX + "bearer.auth.credentials.source": _one_of("STATIC_TOKEN", "OAUTHBEARER", case_sensitive=True),
    REGISTRY_PREFIX + "bearer.auth.logical.cluster": _text,
    REGISTRY_PREFIX + "bearer.auth.identity.pool.id": _text,
    REGISTRY_PREFIX + "bearer.auth.client.id": _text,
    REGISTRY_PREFIX + "bearer.auth.scope": _text,
    REGISTRY_PREFIX + "bearer.auth.issuer.endpoint.url": _matching(_URL, "an http:// or https:// address"),
}
# Settings that carry secrets: they may only be given as environment variable names (secret_env).
SECRET_CONFIG_KEYS = frozenset({
    "sasl.password", "ssl.key.password",
    REGISTRY_PREFIX + "basic.auth.user.info", REGISTRY_PREFIX + "bearer.auth.token",
    REGISTRY_PREFIX + "bearer.auth.client.secret", REGISTRY_PREFIX + "ssl.key.password",
})
# Not on the list either way; named only so the refusal says why (librdkafka runs a command or loads code).
CODE_LOADING_KEYS = frozenset({
    "sasl.kerberos.kinit.cmd", "plugin.library.paths", "ssl.providers", "ssl.engine.location", "ssl.engine.id",
    "ssl_engine_callback_data", "interceptors", "opaque", REGISTRY_PREFIX + "bearer.auth.custom.provider.function",
})

# The console's own secrets and the addresses of its stores. Sent to a broker, they would be logged or kept by
# whoever runs it, so no allow setting or prefix lets a cluster have them.
CONSOLE_OWN_ENV = frozenset({
    "SECRET_KEY", "AUDIT_HASH_KEY", "DATABASE_URL", "REDIS_URL", "REDIS_PASSWORD", "OIDC_RP_CLIENT_SECRET",
    "CONSOLE_METRICS_TOKEN",
    "EMAIL_URL", "CONSOLE_ALERT_WEBHOOKS", "DJANGO_SUPERUSER_PASSWORD", "POSTGRES_PASSWORD",
    "REPLAY_S3_ACCESS_KEY", "REPLAY_S3_SECRET_KEY", "CONSOLE_SECRET_ENV_PREFIX", "CONSOLE_SECRET_ENV_ALLOW",
    "SPARK_AUTHENTICATE_SECRET",
})
CONSOLE_OWN_ENV_PREFIXES = ("CELERY_", "DJANGO_", "OIDC_", "AWS_", "AXES_")


def check_cert_file(key: str, value: str) -> None:
    """A certificate file another setting names (a JMX agent's CA): under the same rule as a cluster's files."""
    _file(key, value)


def cert_dirs() -> list[str]:
    return [str(d) for d in settings.CONSOLE_CLUSTER_CERT_DIRS if str(d)]


def _consoles_own(env_name: str) -> bool:
    named = {settings.REPLAY_S3_ACCESS_KEY_ENV, settings.REPLAY_S3_SECRET_KEY_ENV}
    return env_name in CONSOLE_OWN_ENV or env_name in named or env_name.startswith(CONSOLE_OWN_ENV_PREFIXES)


def check_secret_env_name(key: str, env_name: object) -> None:
    if not isinstance(env_name, str) or not env_name.isidentifier():
        raise SettingRefused("secret_env", MSG_ENV_NAME.format(key=key))
    if _consoles_own(env_name):
        raise SettingRefused("secret_env", MSG_ENV_CONSOLES_OWN.format(env=env_name, key=key))
    prefix = settings.CONSOLE_SECRET_ENV_PREFIX
    if not ((prefix and env_name.startswith(prefix)) or env_name in settings.CONSOLE_SECRET_ENV_ALLOW):
        raise SettingRefused("secret_env", MSG_ENV_NOT_FOR_CLUSTERS.format(env=env_name, key=key, prefix=prefix))


def _refuse_unknown(field: str, key: str) -> None:
    if key in CODE_LOADING_KEYS or key.endswith("_cb") or key.startswith("ssl.engine."):
        raise SettingRefused(field, MSG_UNSAFE_CONFIG.format(key=key))
    raise SettingRefused(field, MSG_UNKNOWN_SETTING.format(key=key))


def check_registration(client_config: Mapping, secret_env: Mapping) -> None:
    """Raises SettingRefused for the first setting, value, file or variable name the rules above do not allow."""
    if not isinstance(client_config, Mapping) or not isinstance(secret_env, Mapping):
        raise SettingRefused("client_config", MSG_NOT_PAIRS)
    for key, value in client_config.items():
        key = str(key)
        if key in SECRET_CONFIG_KEYS:
            raise SettingRefused("client_config", MSG_SECRET_IN_CONFIG.format(key=key))
        if key not in CLIENT_SETTINGS:
            _refuse_unknown("client_config", key)
        CLIENT_SETTINGS[key](key, setting_text(value))
    for key, env_name in secret_env.items():
        key = str(key)
        if key in CLIENT_SETTINGS:
            raise SettingRefused("secret_env", MSG_NOT_A_SECRET.format(key=key))
        if key not in SECRET_CONFIG_KEYS:
            _refuse_unknown("secret_env", key)
        check_secret_env_name(key, env_name)


def check_secret_value(key: str, env_name: str, value: str) -> None:
    """A variable meant for clusters that holds a copy of one of the console's own secrets (set from it by
    mistake) is refused too: the name rules alone cannot see that."""
    if value and value in _console_secret_values():
        raise SettingRefused("secret_env", MSG_VALUE_IS_CONSOLES.format(env=env_name, key=key))


def _console_secret_values() -> set[str]:
    values = {settings.SECRET_KEY, settings.AUDIT_HASH_KEY, settings.OIDC_RP_CLIENT_SECRET, settings.METRICS_TOKEN,
              settings.DATABASES["default"].get("PASSWORD") or ""}
    values.update(os.environ.get(name, "") for name in CONSOLE_OWN_ENV)
    return {str(v) for v in values if v}


def setting_text(value: object) -> str:
    """A stored setting's value as the client gets it."""
    if isinstance(value, bool):  # JSON true/false, as librdkafka spells them
        return "true" if value else "false"
    return str(value)
