"""Base for management commands that change something: they act as a named, role-checked user."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import CommandError

from console.accounts.roles import Role, require_role
from console.audit.actor import Actor
from console.commands import ConsoleCommand
from console.errors import ConsoleError
from console.shell import shared_argument

MSG_UNKNOWN_ACTOR = "Unknown or inactive user '{username}' given as --actor."
MSG_REASON_REQUIRED = "--reason is required: say why, it goes into the audit log."


class ActorCommand(ConsoleCommand):
    """Adds --actor and --reason (before or after a subcommand, as every shared option) and resolves them into
    an Actor (source "cli") and a reason; the role is checked here, in the command, whatever else checks it."""

    def add_actor_arguments(self, parser, *, required: bool = True) -> None:
        shared_argument(parser, "--actor", required=required,
                        help="username of the person acting (checked against the role)")
        shared_argument(parser, "--reason", default="", help="why: recorded in the audit log")

    def acting(self, options, *, role: Role, reason_required: bool = True) -> tuple[Actor, str]:
        user_model = get_user_model()
        if not options.get("actor"):
            raise CommandError("--actor is required for a change.")
        try:
            user = user_model.objects.get(username=options["actor"], is_active=True)
        except user_model.DoesNotExist as exc:
            raise CommandError(MSG_UNKNOWN_ACTOR.format(username=options["actor"])) from exc
        try:
            require_role(user, role)
        except ConsoleError as exc:
            raise CommandError(exc.message) from exc
        reason = (options.get("reason") or "").strip()
        if reason_required and not reason:
            raise CommandError(MSG_REASON_REQUIRED)
        return Actor(user=user, source="cli"), reason
