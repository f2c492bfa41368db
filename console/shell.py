"""The shell's one grammar: `manage.py COMMAND [OPTIONS] SUBCOMMAND [ARGUMENTS] [OPTIONS]`.

A command's shared options (--cluster, --format, --actor, --reason, --yes) are declared once per subcommand,
through `shared_argument`, and are accepted before the subcommand as well as after it; so are Django's own
(--traceback, --verbosity, --no-color, ...). argparse alone cannot do this: a sub-parser's defaults overwrite
whatever the command's parser read before the subcommand. So a shared option is read twice, into a twin on the
command's parser and, without a default, on the subcommand's; once both are read, `ShellParser` settles them:
given before and after is an error, given before a subcommand that does not take it is an error, then the
subcommand's default fills the gap. Every error is one line and nothing has run yet."""

from __future__ import annotations

import copy
from argparse import SUPPRESS, Action, _SubParsersAction
from dataclasses import dataclass

from django.core.management.base import CommandError, CommandParser

MSG_NOT_FOR_SUBCOMMAND = "{option} is not an option of `{command} {subcommand}`."
MSG_GIVEN_TWICE = "{option} was given both before and after `{subcommand}`; give it once."
MSG_AFTER_SUBCOMMAND = "{option} is an option of `{command} {owners}`: give it after the subcommand."
MSG_OTHER_SUBCOMMAND = "{option} is an option of `{command} {owners}`, not of `{command} {subcommand}`."
MSG_INVALID_CHOICE = "argument {option}: invalid choice: '{value}' (choose from {choices})"
MSG_REQUIRED = "the following arguments are required: {option}"
MSG_UNRECOGNIZED = "unrecognized arguments: {arguments}"

# Django's own options, which argparse would otherwise take only before the subcommand.
DJANGO_ANYWHERE = ("verbosity", "settings", "pythonpath", "traceback", "no_color", "force_color", "skip_checks")
BEFORE = "shell_before_"
GRAMMAR_HELP = ("The options listed here go before or after the subcommand, where the subcommand takes them; "
                "`SUBCOMMAND --help` lists what it takes.")


@dataclass(frozen=True)
class Shared:
    action: Action
    default: object
    required: bool


class ShellParser(CommandParser):
    """The parser of every console command (and of its subcommands): one-line errors, and the grammar above."""

    subcommands: _SubParsersAction | None = None  # on a command's parser, once it has subcommands
    before: dict[str, Action] | None = None  # dest -> the twin that reads it before the subcommand
    top: ShellParser | None = None  # on a subcommand's parser: the command's parser
    shared: dict[str, Shared] | None = None  # on a subcommand's parser: dest -> how it was declared

    def error(self, message):
        # argparse prints the whole usage before an error; one line that names the way to help is enough.
        if self.called_from_command_line:
            self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")
        raise CommandError(f"Error: {message}")

    def parse_args(self, args=None, namespace=None):
        if self.missing_args_message and not args:
            self.error(self.missing_args_message)
        namespace, extras = self.parse_known_args(args, namespace)
        if extras:
            self.error(self._unrecognized(extras, namespace))
        return namespace

    def parse_known_args(self, args=None, namespace=None):
        if self.subcommands is not None:
            self._misplaced(list(args or []))
        namespace, extras = super().parse_known_args(args, namespace)
        if self.subcommands is not None and not extras:
            self._settle(namespace)
        return namespace, extras

    @property
    def command(self) -> str:
        return self.prog.strip()

    def _owners(self, option: str) -> list[str]:
        return [name for name, parser in self.subcommands.choices.items() if _resolve(parser, option) is not None]

    def _misplaced(self, args: list[str]) -> None:
        """A subcommand's own option before the subcommand: argparse would take its value for the subcommand's
        name and answer "invalid choice"."""
        values_left = 0
        for argument in args:
            if values_left:
                values_left -= 1
                continue
            if argument in self.subcommands.choices or argument == "--" or not argument.startswith("-"):
                return
            option = argument.split("=", 1)[0]
            resolved = _resolve(self, option)
            if resolved is not None:
                action, attached = resolved
                values_left = 0 if attached or "=" in argument or action.nargs == 0 else 1
            elif owners := self._owners(option):
                self.error(MSG_AFTER_SUBCOMMAND.format(option=option, command=self.command, owners="|".join(owners)))
            else:
                self.error(MSG_UNRECOGNIZED.format(arguments=argument))

    def _settle(self, namespace) -> None:
        name = getattr(namespace, self.subcommands.dest)
        chosen = self.subcommands.choices[name]
        for dest, twin in (self.before or {}).items():
            if not hasattr(namespace, BEFORE + dest):
                continue
            value = getattr(namespace, BEFORE + dest)
            delattr(namespace, BEFORE + dest)
            option = "/".join(twin.option_strings)
            declared = chosen.shared.get(dest)
            if declared is None:
                self.error(MSG_NOT_FOR_SUBCOMMAND.format(option=option, command=self.command, subcommand=name))
            if hasattr(namespace, dest):
                self.error(MSG_GIVEN_TWICE.format(option=option, subcommand=name))
            if declared.action.type is not None and isinstance(value, str):
                value = declared.action.type(value)
            if declared.action.choices is not None and value not in declared.action.choices:
                self.error(MSG_INVALID_CHOICE.format(option=option, value=value,
                                                     choices=", ".join(map(str, declared.action.choices))))
            setattr(namespace, dest, value)
        for dest, declared in chosen.shared.items():
            if hasattr(namespace, dest):
                continue
            if declared.required:
                self.error(MSG_REQUIRED.format(option="/".join(declared.action.option_strings)))
            setattr(namespace, dest, declared.default)

    def _unrecognized(self, extras: list[str], namespace) -> str:
        """Names the subcommand an option belongs to, when it does belong to one."""
        if self.subcommands is not None:
            chosen = getattr(namespace, self.subcommands.dest, None)
            for argument in extras:
                option = argument.split("=", 1)[0]
                if not option.startswith("-"):
                    continue
                owners = self._owners(option)
                if chosen in owners:
                    return MSG_AFTER_SUBCOMMAND.format(option=option, command=self.command, owners=chosen)
                if owners:
                    return MSG_OTHER_SUBCOMMAND.format(option=option, command=self.command, owners="|".join(owners),
                                                       subcommand=chosen)
        return MSG_UNRECOGNIZED.format(arguments=" ".join(extras))


def _resolve(parser, option: str) -> tuple[Action, bool] | None:
    """The action argparse would give `option` (exactly, by a unique prefix, or "-v2"), and whether it carries
    its value."""
    actions = parser._option_string_actions
    if option in actions:
        return actions[option], False
    if option.startswith("--"):
        found = {actions[name] for name in actions if name.startswith(option)}
        return (found.pop(), False) if len(found) == 1 else None
    if len(option) > 2 and option[:2] in actions:
        return actions[option[:2]], True
    return None


class Subcommands(_SubParsersAction):
    """Each subcommand's parser knows its command's parser, and takes Django's own options too."""

    top: ShellParser
    cluster: dict | None = None  # add_argument's keywords for --cluster, when every subcommand takes it

    def add_parser(self, name, **kwargs):
        parser = super().add_parser(name, **kwargs)
        parser.top, parser.shared = self.top, {}
        for action in self.top._actions:
            if action.dest in DJANGO_ANYWHERE:
                anywhere = copy.copy(action)
                anywhere.default, anywhere.help = SUPPRESS, SUPPRESS
                parser._add_action(anywhere)
        if self.cluster is not None:
            shared_argument(parser, "--cluster", **self.cluster)
        return parser


def add_subcommands(parser: ShellParser, *, dest: str = "subcommand", cluster: dict | None = None) -> Subcommands:
    """The command's subcommands; with `cluster` (add_argument's keywords), each of them takes --cluster."""
    sub = parser.add_subparsers(dest=dest, required=True, action=Subcommands)
    sub.top, sub.cluster = parser, cluster
    parser.subcommands, parser.before = sub, {}
    parser.epilog = GRAMMAR_HELP
    return sub


def keyword_options(options: dict) -> dict:
    """call_command(..., cluster="prod") names the twin (the parser's first option of that name): the same option."""
    return {key.removeprefix(BEFORE): value for key, value in options.items()}


def shared_argument(parser, *flags: str, default=None, required: bool = False, **kwargs) -> Action:
    """An option the subcommand takes after its name or before it; on a command without subcommands, a plain one."""
    top = getattr(parser, "top", None)
    if top is None:
        return parser.add_argument(*flags, default=default, required=required, **kwargs)
    action = parser.add_argument(*flags, default=SUPPRESS, **kwargs)
    parser.shared[action.dest] = Shared(action, default, required)
    if action.dest not in top.before:
        top.before[action.dest] = _twin(top, flags, action, kwargs)
    return action


def _twin(top: ShellParser, flags: tuple[str, ...], action: Action, kwargs: dict) -> Action:
    # The twin takes any value: the chosen subcommand's own choices are checked once it is known.
    options = {"dest": BEFORE + action.dest, "default": SUPPRESS, "help": kwargs.get("help")}
    if kwargs.get("action") in ("store_true", "store_false"):
        options["action"] = kwargs["action"]
    else:
        options["metavar"] = kwargs.get("metavar") or action.dest.upper()
    return top.add_argument(*flags, **options)
