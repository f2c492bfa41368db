"""Kafka Connect from the shell, with the pages' services and guarantees: list and describe connectors, create
(Connect's validation first), edit, pause, resume, stop, restart, delete, and view, alter, reset or revert their
offsets (KIP-875; a preview first, STOPPED connectors only, audited). Without --yes nothing changes and the
command says what would. --format json prints what Connect's REST API answers for the same state."""

from __future__ import annotations

import sys

from django.core.management.base import CommandError

from connect import registration, services
from connect.config_file import check_not_secret, read_config_file
from connect.masking import mask_config
from connect.selectors import connector_row, declared_secrets, filter_rows
from connect.shell_output import (
    connect_clusters_json, describe_lines, dumps, list_lines, masked_entries, masked_info, table,
)
from connect.management.commands._connect_offsets import OffsetsCommands
from console.accounts.commands import ActorCommand
from console.accounts.roles import Role
from console.shell import shared_argument

MSG_PAIR = "'{item}' is not KEY=VALUE."
MSG_NAME_OR_MATCH = "Name a connector, or select several with --match/--state/--type (or --all)."


def config_pairs(items: list[str]) -> dict[str, str]:
    """--config KEY=VALUE arguments; a secret among them is refused (connect/config_file.py)."""
    pairs = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise CommandError(MSG_PAIR.format(item=item.partition("=")[0][:80]))
        check_not_secret(key.strip(), value)
        pairs[key.strip()] = value
    return pairs


class Command(OffsetsCommands, ActorCommand):
    help = __doc__
    stealth_options = ("stdin",)  # call_command(..., stdin=...): what --config-file - reads

    def _common(self, parser, *, fmt: bool = True) -> None:
        shared_argument(parser, "--connect", default="", help="the Connect cluster (default: the cluster's only one)")
        if fmt:
            self.add_format_argument(parser, help="table or json (what Connect's REST API answers)")

    def add_arguments(self, parser):
        sub = self.add_subcommands(parser)
        listing = sub.add_parser("list", help="connectors with state and tasks (GET /connectors?expand=...)")
        listing.add_argument("--match", default="", help="name, plugin or topic containing this text")
        listing.add_argument("--state", default="")
        listing.add_argument("--type", default="", choices=["", "source", "sink"])
        self._common(listing)
        self._common(sub.add_parser("plugins", help="installed connector plugins (GET /connector-plugins)"))
        describe = sub.add_parser("describe", help="a connector's configuration, tasks and topics")
        describe.add_argument("name")
        self._common(describe)
        for verb, text in (("create", "a new connector, after Connect validated its configuration"),
                           ("edit", "change a connector's configuration (a diff first)")):
            change = sub.add_parser(verb, help=text)
            change.add_argument("name")
            change.add_argument("--config-file", metavar="PATH", default="",
                                help="settings as KEY=VALUE lines or a JSON object, from a file only its owner may "
                                     "read (chmod 600), or '-' for standard input: the way to give secrets")
            change.add_argument("--config", action="append", default=[], metavar="KEY=VALUE",
                                help="one setting that is not a secret (repeat; after --config-file's); edit merges "
                                     "them onto the running configuration")
            if verb == "edit":
                change.add_argument("--unset", action="append", default=[], metavar="KEY")
                change.add_argument("--if-unchanged", metavar="FINGERPRINT",
                                    help="refuse if the running configuration differs from the diff's")
            self._common(change)
            self.add_yes_argument(change)
            self.add_actor_arguments(change, required=False)
        for verb in services.ACTIONS:
            action = sub.add_parser(verb, help=f"{verb} a connector, or every connector a filter selects")
            action.add_argument("name", nargs="?")
            action.add_argument("--match", default="")
            action.add_argument("--state", default="")
            action.add_argument("--type", default="", choices=["", "source", "sink"])
            action.add_argument("--all", action="store_true", help="every connector of the Connect cluster")
            if verb == "restart":
                action.add_argument("--include-tasks", action="store_true")
                action.add_argument("--only-failed", action="store_true")
                action.add_argument("--task", type=int)
            self._common(action)
            self.add_yes_argument(action)
            self.add_actor_arguments(action, required=False)
        delete = sub.add_parser("delete", help="delete a connector (its offsets stay in Kafka)")
        delete.add_argument("name")
        self._common(delete)
        self.add_yes_argument(delete)
        self.add_actor_arguments(delete, required=False)
        self.add_offsets_parser(sub)
        clusters = sub.add_parser("clusters", help="the Connect clusters registered beside the Kafka cluster")
        self.add_format_argument(clusters)
        register = sub.add_parser("register", help="register (or change) a Connect cluster (admin)")
        register.add_argument("connect_name", metavar="NAME")
        register.add_argument("--url", required=True)
        for option in ("--username", "--password-env", "--ca-file", "--cert-file", "--key-file", "--description"):
            register.add_argument(option, default="")
        register.add_argument("--operator-plugin", action="append", default=[], metavar="CLASS",
                              help="a connector plugin operators may use here (repeat); none: admins only")
        register.add_argument("--operator-setting", action="append", default=[], metavar="KEY",
                              help="a setting operators may write beyond the plugin's and Kafka's basic ones "
                                   "(repeat; 'prefix.*' for every name under it)")
        register.add_argument("--file-dir", action="append", default=[], metavar="FOLDER",
                              help="a folder on the worker's host where operators' connectors may read and write "
                                   "files (repeat)")
        self.add_actor_arguments(register)
        unregister = sub.add_parser("unregister", help="forget a Connect cluster (Connect is not touched; admin)")
        unregister.add_argument("connect_name", metavar="NAME")
        self.add_yes_argument(unregister)
        self.add_actor_arguments(unregister)

    def handle(self, *args, **options):
        getattr(self, "_" + options["subcommand"].replace("-", "_"))(options)

    def _client(self, options):
        found = registration.connect_cluster_only(options["cluster"], options.get("connect"))
        return found, registration.connect_client(found)

    def _print(self, lines: list[str]) -> None:
        for line in lines:
            self.stdout.write(line)

    # -- reads -----------------------------------------------------------------------------------------------

    def _list(self, options) -> None:
        found, client = self._client(options)
        entries = masked_entries(client, client.connectors_rest())
        chosen = self._select(found.name, client, options) if any(
            options[k] for k in ("match", "state", "type")) else set(entries)
        entries = {name: entry for name, entry in entries.items() if name in chosen}
        if options["format"] == "json":
            self.stdout.write(dumps(entries))
        else:
            self._print(list_lines(entries))

    def _select(self, connect: str, client, options) -> set[str]:
        overviews = client.connectors()
        rows = [connector_row(connect, overview, client.topics(name) if options["match"] else [])
                for name, overview in overviews.items()]
        return {row.name for row in filter_rows(rows, query=options["match"], state=options["state"],
                                                type=options["type"])}

    def _plugins(self, options) -> None:
        _, client = self._client(options)
        plugins = client.plugins_rest()
        if options["format"] == "json":
            self.stdout.write(dumps(plugins))
        else:
            self._print(table(["CLASS", "TYPE", "VERSION"], [[p["class"], p.get("type"), p.get("version")]
                                                             for p in plugins]))

    def _describe(self, options) -> None:
        _, client = self._client(options)
        name = options["name"]
        info = client.connector(name)
        status = client.status(name)
        if options["format"] == "json":
            self.stdout.write(dumps({"info": masked_info(client, info.rest), "status": status.rest}))
            return
        self._print(describe_lines(info.rest, status.rest, client.topics(name), declared_secrets(client, info.plugin)))

    def _clusters(self, options) -> None:
        found = registration.connect_clusters(options["cluster"])
        rows = connect_clusters_json(found)
        if options["format"] == "json":
            self.stdout.write(dumps(rows))
        else:
            self._print(table(["NAME", "URL", "USER", "PASSWORD-ENV"],
                              [[r["name"], r["url"], r["username"], r["password_env"]] for r in rows]))

    # -- changes ---------------------------------------------------------------------------------------------

    def _settings(self, options) -> dict[str, str]:
        """--config-file's settings, then --config's."""
        given = {}
        if options["config_file"]:
            given = read_config_file(options["config_file"], options.get("stdin") or sys.stdin)
        return {**given, **config_pairs(options["config"])}

    def _create(self, options) -> None:
        found, client = self._client(options)
        config = self._settings(options)
        name = options["name"]
        if not options["yes"]:
            validation = client.validate(config.get("connector.class", ""), {**config, "name": name})
            if validation.error_count:
                raise services.ConfigInvalid(validation)
            self.stdout.write(f"Connect validated the configuration of {name}: no problem. Nothing created; "
                              f"--yes creates it.")
            return
        actor, reason = self.acting(options, role=Role.OPERATOR, reason_required=False)
        # The service waits until Connect has started the connector, so what is printed has its tasks.
        services.connector_create(actor=actor, cluster=options["cluster"], connect=found.name, name=name,
                                  config=config, reason=reason)
        self._show_info(client, name, options, f"Created connector {name}.")

    def _show_info(self, client, name: str, options, text: str) -> None:
        if options["format"] == "json":
            self.stdout.write(dumps(masked_info(client, client.connector(name).rest)))
        else:
            self.stdout.write(text)

    def _edit(self, options) -> None:
        found, client = self._client(options)
        name = options["name"]
        current = client.connector(name).config
        new = {**mask_config(current, declared_secrets(client, current.get("connector.class", ""))),
               **self._settings(options)}
        for key in options["unset"]:
            new.pop(key, None)
        diff = services.connector_edit_preview(cluster=options["cluster"], connect=found.name, name=name, config=new)
        if not options["yes"]:
            self._print(table(["KEY", "BEFORE", "AFTER", "CHANGE"],
                              [[c.key, c.before, c.after, c.kind] for c in diff.changes]))
            self.stdout.write(f"Nothing changed. To apply exactly this diff: --yes --if-unchanged {diff.fingerprint}")
            return
        actor, reason = self.acting(options, role=Role.OPERATOR)
        services.connector_edit(actor=actor, cluster=options["cluster"], connect=found.name, name=name, config=new,
                                reason=reason, expected_fingerprint=options["if_unchanged"])
        self._show_info(client, name, options, f"Configuration of {name} changed.")

    def _chosen(self, found, client, options) -> list[str]:
        if options["name"]:
            return [options["name"]]
        if not (options["all"] or options["match"] or options["state"] or options["type"]):
            raise CommandError(MSG_NAME_OR_MATCH)
        return sorted(self._select(found.name, client, options))

    def _act(self, options) -> None:
        found, client = self._client(options)
        action = options["subcommand"]
        names = self._chosen(found, client, options)
        if not options["yes"]:
            states = {name: client.status(name).state for name in names}
            self._print(table(["CONNECTOR", "STATE"], [[n, s] for n, s in states.items()]))
            self.stdout.write(f"Would {action} {len(names)} connector(s); nothing changed. --yes does it.")
            return
        actor, reason = self.acting(options, role=Role.OPERATOR, reason_required=len(names) > 1)
        for name in names:
            services.connector_action(
                actor=actor, cluster=options["cluster"], connect=found.name, name=name, action=action, reason=reason,
                include_tasks=options.get("include_tasks", False) or (action == "restart" and len(names) > 1),
                only_failed=options.get("only_failed", False), task=options.get("task"))
        if options["format"] == "json":
            statuses = {name: client.status(name).rest for name in names}
            self.stdout.write(dumps(statuses[names[0]] if options["name"] else statuses))
        else:
            self._print(table(["CONNECTOR", "STATE"], [[n, client.status(n).state] for n in names]))

    _pause = _resume = _stop = _restart = _act

    def _delete(self, options) -> None:
        found, client = self._client(options)
        name = options["name"]
        if not options["yes"]:
            info = client.connector(name)
            self.stdout.write(f"Would delete connector {name} ({info.type}, {info.plugin}); its offsets stay in "
                              f"Kafka. Nothing changed; --yes deletes it.")
            return
        actor, reason = self.acting(options, role=Role.ADMIN)
        services.connector_delete(actor=actor, cluster=options["cluster"], connect=found.name, name=name,
                                  confirm=name, reason=reason)
        if options["format"] == "json":
            self.stdout.write(dumps(client.connector_names()))
        else:
            self.stdout.write(f"Deleted connector {name}.")

    def _register(self, options) -> None:
        actor, reason = self.acting(options, role=Role.ADMIN, reason_required=False)
        registration.connect_cluster_register(
            actor=actor, cluster=options["cluster"], name=options["connect_name"], url=options["url"],
            username=options["username"], password_env=options["password_env"], ca_file=options["ca_file"],
            cert_file=options["cert_file"], key_file=options["key_file"], description=options["description"],
            operator_plugins=options["operator_plugin"], operator_settings=options["operator_setting"],
            file_dirs=options["file_dir"], reason=reason)
        self.stdout.write(f"Connect cluster {options['connect_name']} registered on {options['cluster']}.")

    def _unregister(self, options) -> None:
        found = registration.connect_cluster_get(options["cluster"], options["connect_name"])
        if not options["yes"]:
            self.stdout.write(f"Would forget Connect cluster {found.name} ({found.url}) and what the console saw "
                              f"of its connectors; Connect itself is not touched. --yes does it.")
            return
        actor, reason = self.acting(options, role=Role.ADMIN, reason_required=False)
        registration.connect_cluster_remove(actor=actor, cluster=options["cluster"], name=found.name, reason=reason)
        self.stdout.write(f"Connect cluster {found.name} unregistered.")

