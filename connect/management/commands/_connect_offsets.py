"""`manage.py connect offsets NAME`: a connector's offsets (GET /connectors/{name}/offsets), and with a strategy,
--from-json, --reset or --revert the preview of a change; with --yes the change, with the pages' guarantees."""

from __future__ import annotations

import sys
from pathlib import Path

from django.core.management.base import CommandError

from changes.proposals import proposed_output
from connect import registration
from connect.connector_offsets.asking import offsets_change_proposal
from connect.connector_offsets import services as offsets
from connect.connector_offsets.preview import reset_offsets_preview, sink_offsets_preview, written_offsets_preview
from connect.connector_offsets.source_input import parse_source_offsets
from connect.shell_output import dumps, offsets_lines, offsets_preview_json, preview_lines
from console.accounts.roles import Role
from offsets.resets.strategy_input import scope_from, strategy_from

STRATEGIES = ("to-earliest", "to-latest", "to-offset", "shift-by", "to-datetime", "by-duration")


class OffsetsCommands:
    def add_offsets_parser(self, sub) -> None:
        parser = sub.add_parser("offsets", help="view, alter, reset or revert a connector's offsets (KIP-875)")
        parser.add_argument("name")
        change = parser.add_mutually_exclusive_group()
        for flag in ("to-earliest", "to-latest"):
            change.add_argument(f"--{flag}", action="store_true", help="a sink connector's partitions")
        change.add_argument("--to-offset", type=int)
        change.add_argument("--shift-by", type=int)
        change.add_argument("--to-datetime", metavar="YYYY-MM-DDTHH:mm:SS.sss[zone]")
        change.add_argument("--by-duration", metavar="PnDTnHnMnS")
        change.add_argument("--from-json", metavar="FILE", help="offsets as GET .../offsets prints them ('-': stdin)")
        change.add_argument("--reset", action="store_true", help="forget every offset (DELETE .../offsets)")
        change.add_argument("--revert", type=int, metavar="AUDIT_EVENT_ID", help="write back a change's 'before'")
        parser.add_argument("--topic", action="append", default=[], metavar="TOPIC[:P,P]")
        parser.add_argument("--if-unchanged", metavar="FINGERPRINT",
                            help="with --yes: refuse if the offsets differ from the preview's")
        self._common(parser)
        self.add_yes_argument(parser)
        self.add_actor_arguments(parser, required=False)

    def _offsets(self, options) -> None:
        found, client = self._client(options)
        cluster, name = options["cluster"], options["name"]
        preview = self._offsets_preview(cluster, found.name, name, options)
        if preview is None:
            current = client.offsets(name)
            if options["format"] == "json":
                self.stdout.write(dumps(current.rest))
            else:
                self._print(offsets_lines(current))
            return
        if not options["yes"] and options["format"] == "json":
            self.stdout.write(dumps(offsets_preview_json(preview)))
            return
        if not options["yes"]:
            self._print(preview_lines(preview))
            if not preview.allowed:
                self.stdout.write(offsets.MSG_NOT_STOPPED.format(name=name, state=preview.state)
                                  + f" (manage.py connect stop {name} --yes)")
            self.stdout.write(f"Dry run: nothing changed. To execute exactly this: --yes --if-unchanged "
                              f"{preview.fingerprint}")
            return
        actor, reason = self.acting(options, role=Role.OPERATOR)
        expected = options["if_unchanged"]
        change = offsets_change_proposal(actor=actor, cluster=cluster, preview=preview, reset=options["reset"],
                                         reason=reason, confirm=name, expected_fingerprint=expected,
                                         revert_of=options["revert"])
        if change is not None:
            proposed_output(self, options, change)
            return
        if options["reset"]:
            offsets.connector_offsets_reset(actor=actor, cluster=cluster, connect=found.name, name=name,
                                            reason=reason, confirm=name, expected_fingerprint=expected)
        elif options["revert"] is not None:
            offsets.connector_offsets_revert(actor=actor, seq=options["revert"], reason=reason, confirm=name,
                                             expected_fingerprint=expected)
        else:
            offsets.connector_offsets_alter(actor=actor, cluster=cluster, preview=preview, reason=reason,
                                            confirm=name, expected_fingerprint=expected)
        after = client.offsets(name)
        if options["format"] == "json":
            self.stdout.write(dumps(after.rest))
        else:
            self._print(offsets_lines(after))

    def _offsets_preview(self, cluster: str, connect: str, name: str, options):
        if options["reset"]:
            return reset_offsets_preview(cluster, connect, name)
        if options["revert"] is not None:
            event, preview = offsets.revert_preview(options["revert"])
            if (event.cluster, event.params.get("connect"), event.params.get("connector")) != (cluster, connect, name):
                raise CommandError(f"Audit event #{event.seq} changed {event.target}, not connector:{connect}/{name}.")
            return preview
        if options["from_json"]:
            source = options["from_json"]
            try:
                text = sys.stdin.read() if source == "-" else Path(source).read_text()
            except OSError as exc:
                raise CommandError(f"Cannot read --from-json {source}: {exc.strerror}") from exc
            try:
                writes = parse_source_offsets(text)
            except ValueError as exc:
                raise CommandError(str(exc)) from exc
            return written_offsets_preview(cluster, connect, name, writes)
        for strategy in STRATEGIES:
            value = options[strategy.replace("-", "_")]
            if value is None or value is False:
                continue
            scope = scope_from(not options["topic"], options["topic"])
            return sink_offsets_preview(cluster, connect, name, scope,
                                        strategy_from(cluster, strategy, None if value is True else str(value)))
        return None
