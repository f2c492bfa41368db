"""Config as code: `config export` writes a cluster's desired state as YAML; `config plan FILE` shows what applying
it would create, change and delete (deletes only with --delete) and the plan's fingerprint; `config apply FILE
--if-unchanged FINGERPRINT` applies exactly that plan through the console's services (admin), audited as one
change set."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from django.core.management.base import CommandError

from config_as_code.document import dump_document
from config_as_code.selectors import cluster_config, plan_for
from config_as_code.serializers import applied_json, plan_lines
from config_as_code.services import config_apply
from console.accounts.commands import ActorCommand
from console.accounts.roles import Role
from console.clusters.selectors import cluster_get

MSG_READ = "Cannot read {path}: {reason}."


def _text(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CommandError(MSG_READ.format(path=path, reason=getattr(exc, "strerror", None) or exc)) from exc


class Command(ActorCommand):
    help = __doc__

    def add_arguments(self, parser):
        sub = self.add_subcommands(parser)
        export = sub.add_parser("export", help="the cluster's configuration as YAML (no secrets)")
        export.add_argument("--output", default="-", help="the file to write (default: standard output)")
        plan = sub.add_parser("plan", help="what applying FILE would change, and the plan's fingerprint")
        apply = sub.add_parser("apply", help="apply FILE's plan (admin), if it is still the one planned")
        for command in (plan, apply):
            command.add_argument("file", help="the YAML file ('-': standard input)")
            command.add_argument("--delete", action="store_true",
                                 help="also delete what the cluster has and the file does not (in the sections the "
                                      "file names)")
            self.add_format_argument(command, help="table or json")
        apply.add_argument("--if-unchanged", required=True, metavar="FINGERPRINT",
                           help="the fingerprint `config plan` printed: refused if the plan is another now")
        self.add_actor_arguments(apply)

    def handle(self, *args, **options):
        getattr(self, "_" + options["subcommand"])(options)

    def _export(self, options) -> None:
        cluster_get(options["cluster"])
        text = dump_document(cluster_config(options["cluster"]))
        if options["output"] == "-":
            self.stdout.write(text, ending="")
            return
        Path(options["output"]).write_text(text, encoding="utf-8")
        self.stderr.write(f"Configuration of '{options['cluster']}' written to {options['output']}.")

    def _plan(self, options) -> None:
        cluster_get(options["cluster"])
        plan = plan_for(options["cluster"], _text(options["file"]), allow_deletes=options["delete"])
        if options["format"] == "json":
            self.stdout.write(json.dumps(plan.as_json(), indent=2, ensure_ascii=False))
            return
        for line in plan_lines(plan):
            self.stdout.write(line)

    def _apply(self, options) -> None:
        actor, reason = self.acting(options, role=Role.ADMIN)
        plan, applied = config_apply(actor=actor, cluster=options["cluster"], text=_text(options["file"]),
                                     expected_fingerprint=options["if_unchanged"], allow_deletes=options["delete"],
                                     reason=reason)
        if options["format"] == "json":
            self.stdout.write(json.dumps(applied_json(plan, applied), indent=2, ensure_ascii=False))
            return
        for line in plan_lines(plan):
            if not line.startswith("To apply"):
                self.stdout.write(line)
        self.stdout.write(f"Applied {applied.changes} change(s) as change set {applied.change_set}.")
