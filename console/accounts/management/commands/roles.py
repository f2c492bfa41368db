import json

from console.accounts.commands import ActorCommand
from console.accounts.forms import NO_ROLE, ROLE_CHOICES
from console.accounts.roles import Role
from console.accounts.selectors import user_roles_list
from console.accounts.services import user_role_set


class Command(ActorCommand):
    help = "List accounts with their console role, or set one's role (admin; audited as account.role.set)."

    def add_arguments(self, parser):
        sub = self.add_subcommands(parser, cluster=False)
        listing = sub.add_parser("list", help="every account and its role")
        self.add_format_argument(listing, help="table or json")
        setting = sub.add_parser("set", help="make ROLE the user's only role (none takes every role away)")
        setting.add_argument("username")
        setting.add_argument("role", choices=[value for value, _ in ROLE_CHOICES])
        self.add_actor_arguments(setting)

    def handle(self, *args, **options):
        if options["subcommand"] == "list":
            return self._list(options["format"])
        actor, reason = self.acting(options, role=Role.ADMIN)
        role = None if options["role"] == NO_ROLE else Role[options["role"].upper()]
        after = user_role_set(actor=actor, username=options["username"], role=role, reason=reason)
        self.stdout.write(f"{options['username']} now holds {after['role'] or 'no role'}.")

    def _list(self, fmt: str) -> None:
        rows = user_roles_list()
        if fmt == "json":
            self.stdout.write(json.dumps([row.as_json() for row in rows], indent=2))
            return
        self.stdout.write(f"{'USER':<32} {'ROLE':<9} {'SIGN-IN':<8} {'ACTIVE':<7} SUPERUSER")
        for row in rows:
            self.stdout.write(f"{row.username!s:<32} {row.role_name or '-':<9} {'sso' if row.sso else 'local':<8} "
                              f"{'yes' if row.active else 'no':<7} {'yes' if row.superuser else 'no'}")
