"""What a connector configuration written by someone below admin may hold, on one Connect cluster: an allowlist the
cluster's admin keeps on its registration (plugins, extra settings, folders for files), Kafka's own settings that
neither load code nor reach past the worker's cluster, and no config provider references (the worker resolves
them with its own rights, so `${file:…}` in any setting would read any secret the worker may read). Pure: no
Django, no Connect; the Kafka-side rules (masked topics, topic creation, the witness) are connect/guards.py's."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass

from connect.masking import has_reference

FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
FILE_SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"
FILE_PLUGINS = frozenset({FILE_SOURCE, FILE_SINK})
# Kafka Connect's own connector settings an operator may write. Not here, on purpose: transforms and predicates
# (they load classes and can route records to any topic), producer/consumer/admin overrides (another cluster,
# another group's offsets, other credentials), topic.creation.* (topics past the topic policies), offsets and
# exactly-once settings (topics of their own), and errors.deadletterqueue.topic.replication.factor.
FRAMEWORK_SETTINGS = frozenset({
    "name", "connector.class", "tasks.max", "topics", "topics.regex", "key.converter", "value.converter",
    "header.converter", "key.converter.schemas.enable", "value.converter.schemas.enable", "errors.tolerance",
    "errors.retry.timeout", "errors.retry.delay.max.ms", "errors.log.enable", "errors.log.include.messages",
    "errors.deadletterqueue.topic.name", "errors.deadletterqueue.context.headers.enable",
})
CONVERTER_KEYS = frozenset({"key.converter", "value.converter", "header.converter"})
CONVERTERS = frozenset({
    "org.apache.kafka.connect.storage.StringConverter", "org.apache.kafka.connect.json.JsonConverter",
    "org.apache.kafka.connect.converters.ByteArrayConverter", "org.apache.kafka.connect.storage.SimpleHeaderConverter",
    *(f"org.apache.kafka.connect.converters.{kind}Converter" for kind in ("Double", "Float", "Integer", "Long",
                                                                         "Short", "Boolean")),
})
# Settings whose value is a file or folder on the worker's host.
PATH_KEY = re.compile(r"(^|\.)(file|filename|path|dir|directory|location)$")

MSG_PLUGIN = ("Plugin {plugin} is for admins on Connect cluster '{connect}': its admin has not allowed it to "
              "operators.")
MSG_SETTING = ("Setting '{key}' is for admins on Connect cluster '{connect}': operators may write the plugin's own "
               "settings, Kafka's basic connector settings (tasks, topics, converters, error handling) and those "
               "its admin allowed.")
MSG_CONVERTER = "Setting '{key}' must name one of Kafka's own converters, not {value}."
MSG_REFERENCE = ("Setting '{key}' holds a config provider reference (${{…}}): the worker would resolve it with its "
                 "own rights, so only admins may write one.")
MSG_FILE_REQUIRED = "Setting 'file' is required: without it a {plugin} reads the worker's input or writes its output."
MSG_NO_FOLDER = ("Setting '{key}' names a file on the worker's host, and Connect cluster '{connect}' has no folder "
                 "for connectors' files: only admins may name one.")
MSG_OUTSIDE = ("Setting '{key}' must be an absolute path inside a folder named for connectors' files on Connect "
               "cluster '{connect}' ({folders}), without '..': {value!r} is not.")


class RuleBroken(ValueError):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class OperatorPolicy:
    """A Connect cluster's allowlist for operators, as its registration keeps it."""

    connect: str
    plugins: frozenset[str] = frozenset()
    settings: tuple[str, ...] = ()  # exact names, or `prefix.*`: the name `prefix` and every name under it
    file_dirs: tuple[str, ...] = ()

    def allows_setting(self, key: str) -> bool:
        return any(key == allowed or (allowed.endswith(".*") and (key.startswith(allowed[:-1]) or key == allowed[:-2]))
                   for allowed in self.settings)


def inside(path: str, folder: str) -> bool:
    """Whether `path` lies strictly inside `folder`, as written and once symbolic links on this host resolve."""
    if not os.path.isabs(path) or ".." in path.split("/") or "\x00" in path:
        return False
    written, base = os.path.normpath(path), os.path.normpath(folder)
    resolved, resolved_base = os.path.realpath(written), os.path.realpath(base)
    return (written.startswith(base.rstrip("/") + "/")
            and resolved.startswith(resolved_base.rstrip("/") + "/"))


def check_paths(policy: OperatorPolicy, plugin: str, config: dict[str, str]) -> None:
    if plugin in FILE_PLUGINS and not config.get("file", "").strip():
        raise RuleBroken(MSG_FILE_REQUIRED.format(plugin=plugin.rsplit(".", 1)[-1]))
    for key, value in sorted(config.items()):
        if not PATH_KEY.search(key) or not value.strip():
            continue
        if not policy.file_dirs:
            raise RuleBroken(MSG_NO_FOLDER.format(key=key, connect=policy.connect))
        if not any(inside(value.strip(), folder) for folder in policy.file_dirs):
            raise RuleBroken(MSG_OUTSIDE.format(key=key, connect=policy.connect, folders=", ".join(policy.file_dirs),
                                                value=value))


def check_operator_config(policy: OperatorPolicy, *, plugin: str, declared: Iterable[str], config: dict[str, str],
                          changed: Iterable[str]) -> None:
    """Raises RuleBroken for the first thing an operator may not write. `changed`: the settings the operator
    writes (every one on create; on an edit those added or changed, so settings an admin wrote stay as they are),
    checked against the allowlist; the plugin and every path are checked whole."""
    if plugin not in policy.plugins:
        raise RuleBroken(MSG_PLUGIN.format(plugin=plugin or "(none)", connect=policy.connect))
    declared = frozenset(declared)
    for key in sorted(changed):
        value = config.get(key, "")
        if has_reference(value):
            raise RuleBroken(MSG_REFERENCE.format(key=key))
        if key not in FRAMEWORK_SETTINGS and key not in declared and not policy.allows_setting(key):
            raise RuleBroken(MSG_SETTING.format(key=key, connect=policy.connect))
        if key in CONVERTER_KEYS and value.strip() not in CONVERTERS:
            raise RuleBroken(MSG_CONVERTER.format(key=key, value=value[:200]))
    check_paths(policy, plugin, config)
