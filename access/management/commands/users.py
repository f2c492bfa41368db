"""SCRAM users and client quotas from the shell, worded as `kafka-configs --describe` words them: list users,
set a password (creates the user), delete a credential (admin only, audited), and list quotas. A password is
read from an environment variable or standard input, never from the command line."""

from __future__ import annotations

import json
import os
import sys
from decimal import Decimal

from django.core.management.base import CommandError

from access import selectors, services
from access.serializers import quotas_json, scram_users_json
from console.accounts.commands import ActorCommand
from console.accounts.roles import Role
from gateway.kafka.types import SCRAM_MECHANISMS

FORMAT_HELP = "table (as kafka-configs --describe words it; 'kafka' is the same) or json"
MSG_ONE_PASSWORD_SOURCE = "Give the password with exactly one of --password-env VAR or --password-stdin."
MSG_EMPTY_ENV = "Environment variable {name} is not set or empty."


def java_double(value: float) -> str:
    """A double as Java's Double.toString writes it (Kafka's tool prints quotas that way): 1048576.0, 1.048576E7."""
    if value == 0 or 1e-3 <= abs(value) < 1e7:
        return repr(float(value))
    sign, digits, exponent = Decimal(repr(float(value))).normalize().as_tuple()
    text = "".join(map(str, digits))
    power = exponent + len(text) - 1
    return f"{'-' if sign else ''}{text[0]}.{text[1:] or '0'}E{power}"


def _quota_entity(q) -> str:
    parts = []
    if q.user is not None or q.user_is_default:
        parts.append("the default user-principal" if q.user_is_default else f"user-principal '{q.user}'")
    if q.client_id is not None or q.client_id_is_default:
        parts.append("the default client-id" if q.client_id_is_default else f"client-id '{q.client_id}'")
    return ", ".join(parts)


class Command(ActorCommand):
    help = __doc__

    def add_arguments(self, parser):
        sub = self.add_subcommands(parser)
        listing = sub.add_parser("list", help="users with SCRAM credentials")
        quotas = sub.add_parser("quotas", help="client quotas by user and client id")
        setting = sub.add_parser("set-password", help="create a user's credential or replace its password (admin)")
        setting.add_argument("--user", required=True)
        setting.add_argument("--mechanism", default="SCRAM-SHA-512", choices=SCRAM_MECHANISMS)
        setting.add_argument("--iterations", type=int, default=services.MIN_ITERATIONS)
        setting.add_argument("--password-env", metavar="VAR", help="read the password from this variable")
        setting.add_argument("--password-stdin", action="store_true", help="read the password from standard input")
        delete = sub.add_parser("delete", help="delete one credential of a user (admin)")
        delete.add_argument("--user", required=True)
        delete.add_argument("--mechanism", required=True, choices=SCRAM_MECHANISMS)
        delete.add_argument("--confirm", default="", metavar="USER", help="the user name again")
        for command in (setting, delete):
            self.add_actor_arguments(command)
        for command in (listing, quotas):
            self.add_format_argument(command, also=("kafka",), help=FORMAT_HELP)

    def handle(self, *args, **options):
        getattr(self, "_" + options["subcommand"].replace("-", "_"))(options["cluster"], options)

    def _list(self, cluster: str, options) -> None:
        users = selectors.scram_users_list(cluster)
        if options["format"] == "json":
            self.stdout.write(json.dumps(scram_users_json(users), indent=2, ensure_ascii=False))
            return
        for u in users:
            described = ", ".join(f"{c.mechanism}=iterations={c.iterations}" for c in u.credentials)
            self.stdout.write(f"SCRAM credential configs for user-principal '{u.name}' are {described}")

    def _quotas(self, cluster: str, options) -> None:
        quotas = selectors.client_quotas_list(cluster)
        if options["format"] == "json":
            self.stdout.write(json.dumps(quotas_json(quotas), indent=2, ensure_ascii=False))
            return
        for q in quotas:
            values = ", ".join(f"{k}={java_double(v)}" for k, v in sorted(q.values.items()))
            self.stdout.write(f"Quota configs for {_quota_entity(q)} are {values}")

    def _password(self, options) -> str:
        if bool(options["password_env"]) == bool(options["password_stdin"]):
            raise CommandError(MSG_ONE_PASSWORD_SOURCE)
        if options["password_stdin"]:
            return sys.stdin.readline().rstrip("\n")
        value = os.environ.get(options["password_env"], "")
        if not value:
            raise CommandError(MSG_EMPTY_ENV.format(name=options["password_env"]))
        return value

    def _set_password(self, cluster: str, options) -> None:
        actor, reason = self.acting(options, role=Role.ADMIN)
        services.scram_credential_set(actor=actor, cluster=cluster, user=options["user"],
                                      mechanism=options["mechanism"], iterations=options["iterations"],
                                      password=self._password(options), reason=reason)
        self.stdout.write(f"{options['mechanism']} credential of '{options['user']}' set.")

    def _delete(self, cluster: str, options) -> None:
        actor, reason = self.acting(options, role=Role.ADMIN)
        services.scram_credential_delete(actor=actor, cluster=cluster, user=options["user"],
                                         mechanism=options["mechanism"], confirm=options["confirm"], reason=reason)
        self.stdout.write(f"{options['mechanism']} credential of '{options['user']}' deleted.")
