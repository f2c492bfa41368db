"""Base for every management command: an error is one line on stderr and a non-zero exit, never a traceback
(unless --traceback asks for one)."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import DatabaseError

from console.errors import ConsoleError
from console.kafka.errors import KafkaGatewayError

MSG_DATABASE = "The console's database cannot be used ({detail}); has `make migrate` run against DATABASE_URL?"
MSG_UNEXPECTED = "Unexpected {kind}: {detail} (run again with --traceback for the details)"


class OneLineCommandParser(CommandParser):
    """argparse prints the whole usage before an error; one line that names the way to help is enough."""

    def error(self, message):
        if self.called_from_command_line:
            self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")
        raise CommandError(f"Error: {message}")


class ConsoleCommand(BaseCommand):
    def create_parser(self, prog_name, subcommand, **kwargs):
        add_arguments = self.add_arguments

        def with_one_line_errors(parser):
            parser.__class__ = OneLineCommandParser  # before any sub-parser copies the class
            add_arguments(parser)

        self.add_arguments = with_one_line_errors
        try:
            return super().create_parser(prog_name, subcommand, **kwargs)
        finally:
            del self.add_arguments

    def execute(self, *args, **options):
        try:
            return super().execute(*args, **options)
        except CommandError:
            raise
        except (ConsoleError, KafkaGatewayError) as exc:
            raise CommandError(exc.message) from exc
        except DatabaseError as exc:
            if options.get("traceback"):
                raise
            raise CommandError(MSG_DATABASE.format(detail=str(exc).splitlines()[0] if str(exc) else type(exc).__name__)) from exc
        except Exception as exc:
            if options.get("traceback"):
                raise
            raise CommandError(MSG_UNEXPECTED.format(kind=type(exc).__name__, detail=exc)) from exc
