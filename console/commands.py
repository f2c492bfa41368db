"""Base for every management command: an error is one line on stderr and a non-zero exit, never a traceback
(unless --traceback asks for one), and the shell's one grammar (console/shell.py): a command's subcommands and
the options every command means the same way, --cluster, --format and --yes, accepted before or after the
subcommand."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError
from django.db import DatabaseError

from console.errors import ConsoleError
from gateway.errors import GatewayError
from console.shell import ShellParser, Subcommands, add_subcommands, keyword_options, shared_argument

MSG_DATABASE = "The console's database cannot be used ({detail}); has `make migrate` run against DATABASE_URL?"
MSG_UNEXPECTED = "Unexpected {kind}: {detail} (run again with --traceback for the details)"
CLUSTER_HELP = "the registered cluster to use (default: local)"
FORMAT_HELP = "table (the columns Kafka's own tool prints) or json"
YES_HELP = "do it; without --yes, only say what would change"


class ConsoleCommand(BaseCommand):
    def create_parser(self, prog_name, subcommand, **kwargs):
        add_arguments = self.add_arguments

        def with_one_line_errors(parser):
            parser.__class__ = ShellParser  # before any sub-parser copies the class
            add_arguments(parser)

        self.add_arguments = with_one_line_errors
        try:
            return super().create_parser(prog_name, subcommand, **kwargs)
        finally:
            del self.add_arguments

    def add_subcommands(self, parser, *, dest: str = "subcommand", cluster: bool = True) -> Subcommands:
        """With `cluster`, every subcommand takes --cluster, before or after its name."""
        return add_subcommands(parser, dest=dest,
                               cluster={"default": "local", "help": CLUSTER_HELP} if cluster else None)

    def add_cluster_argument(self, parser, *, default: str = "local", help: str = CLUSTER_HELP) -> None:
        shared_argument(parser, "--cluster", default=default, help=help)

    def add_format_argument(self, parser, *, also: tuple[str, ...] = (), help: str = FORMAT_HELP) -> None:
        """`also`: names a command had for its table before the grammar was one (acls' and users' "kafka")."""
        shared_argument(parser, "--format", choices=["table", "json", *also], default="table", help=help)

    def add_yes_argument(self, parser, *, help: str = YES_HELP, confirm: bool = False) -> None:
        """`confirm`: a subcommand that had a bare --confirm keeps it, as another name of --yes (options["confirm"])."""
        flags = ("--yes", "--confirm") if confirm else ("--yes",)
        shared_argument(parser, *flags, dest="confirm" if confirm else "yes", action="store_true", default=False,
                        help=help)

    def execute(self, *args, **options):
        options = keyword_options(options)
        try:
            return super().execute(*args, **options)
        except CommandError:
            raise
        except (ConsoleError, GatewayError) as exc:
            raise CommandError(exc.message) from exc
        except DatabaseError as exc:
            if options.get("traceback"):
                raise
            raise CommandError(MSG_DATABASE.format(detail=str(exc).splitlines()[0] if str(exc) else type(exc).__name__)) from exc
        except Exception as exc:
            if options.get("traceback"):
                raise
            raise CommandError(MSG_UNEXPECTED.format(kind=type(exc).__name__, detail=exc)) from exc
