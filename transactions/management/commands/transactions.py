"""Transactions from the shell, as `kafka-transactions` shows them: list, describe, describe-producers,
find-hanging, and abort a hanging transaction (admin only, previewed, confirmed by the producer id, audited).
The table columns are the tool's; --format json gives the same values with snake_case keys."""

from __future__ import annotations

import json

from console.accounts.commands import ActorCommand
from console.accounts.roles import Role
from transactions import selectors, services
from transactions.serializers import hanging_json, producers_json, transaction_json, transactions_json


def _table(headers: list[str], rows: list[list]) -> list[str]:
    """The tool's layout: each cell padded to its column's width, then a tab."""
    cells = [[str(c) for c in row] for row in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]
    return ["".join(text.ljust(width) + "\t" for text, width in zip(line, widths)) for line in [headers, *cells]]


def _none(value) -> str:
    return "None" if value is None else str(value)


class Command(ActorCommand):
    help = __doc__

    def add_arguments(self, parser):
        sub = self.add_subcommands(parser)
        listing = sub.add_parser("list", help="every transactional id the coordinators know")
        describe = sub.add_parser("describe", help="one transactional id's state")
        describe.add_argument("--transactional-id", required=True)
        producers = sub.add_parser("describe-producers", help="a partition's active producers")
        producers.add_argument("--topic", required=True)
        producers.add_argument("--partition", type=int, help="default: every partition of the topic")
        producers.add_argument("--broker-id", type=int, help="ask this replica instead of the leader")
        hanging = sub.add_parser("find-hanging", help="open transactions no coordinator will end")
        hanging.add_argument("--topic")
        hanging.add_argument("--partition", type=int)
        hanging.add_argument("--broker-id", type=int)
        hanging.add_argument("--max-transaction-timeout", type=int,
                             default=selectors.DEFAULT_MAX_TRANSACTION_TIMEOUT_MIN, metavar="MINUTES")
        abort = sub.add_parser("abort", help="abort a hanging transaction (admin)")
        abort.add_argument("--topic", required=True)
        abort.add_argument("--partition", type=int, required=True)
        abort.add_argument("--start-offset", type=int, required=True)
        abort.add_argument("--max-transaction-timeout", type=int,
                           default=selectors.DEFAULT_MAX_TRANSACTION_TIMEOUT_MIN, metavar="MINUTES")
        abort.add_argument("--confirm", default="", metavar="PRODUCER_ID",
                           help="the producer id shown by the preview; without it, only the preview is printed")
        self.add_actor_arguments(abort, required=False)
        for command in (listing, describe, producers, hanging, abort):
            self.add_format_argument(command)

    def handle(self, *args, **options):
        handler = getattr(self, "_" + options["subcommand"].replace("-", "_"))
        handler(options["cluster"], options)

    def _emit(self, options, headers: list[str], rows: list[list], records: list[dict]) -> None:
        if options["format"] == "json":
            self.stdout.write(json.dumps(records, indent=2))
        else:
            for line in _table(headers, rows):
                self.stdout.write(line)

    def _list(self, cluster: str, options) -> None:
        found = selectors.transactions_list(cluster)
        self._emit(options, ["TransactionalId", "Coordinator", "ProducerId", "TransactionState"],
                   [[t.transactional_id, t.coordinator, t.producer_id, t.state] for t in found],
                   transactions_json(found))

    def _describe(self, cluster: str, options) -> None:
        info = selectors.transaction_describe(cluster, options["transactional_id"])
        now = selectors.now_ms()
        duration = None if info.start_time_ms is None else now - info.start_time_ms
        partitions = ",".join(f"{r.topic}-{r.partition}" for r in info.partitions)
        self._emit(options, ["CoordinatorId", "TransactionalId", "ProducerId", "ProducerEpoch", "TransactionState",
                             "TransactionTimeoutMs", "CurrentTransactionStartTimeMs", "TransactionDurationMs",
                             "TopicPartitions"],
                   [[info.coordinator, info.transactional_id, info.producer_id, info.producer_epoch, info.state,
                     info.timeout_ms, _none(info.start_time_ms), _none(duration), partitions]],
                   transaction_json(info, now_ms=now))

    def _describe_producers(self, cluster: str, options) -> None:
        found = selectors.producers_describe(cluster, options["topic"], options["partition"],
                                             broker=options["broker_id"])
        rows = [[p.producer_id, p.producer_epoch, p.coordinator_epoch, p.last_sequence, p.last_timestamp,
                 _none(p.transaction_start_offset)] for _, states in sorted(found.items()) for p in states]
        records = producers_json(found)
        self._emit(options, ["ProducerId", "ProducerEpoch", "LatestCoordinatorEpoch", "LastSequence",
                             "LastTimestamp", "CurrentTransactionStartOffset"], rows, records)

    def _find_hanging(self, cluster: str, options) -> None:
        at = selectors.now_ms()
        found = selectors.find_hanging(cluster, topic=options["topic"], partition=options["partition"],
                                       broker=options["broker_id"],
                                       max_timeout_minutes=options["max_transaction_timeout"], at_ms=at)
        self._emit(options, ["Topic", "Partition", "ProducerId", "ProducerEpoch", "CoordinatorEpoch", "StartOffset",
                             "LastTimestamp", "Duration(min)"],
                   [[h.ref.topic, h.ref.partition, h.producer.producer_id, h.producer.producer_epoch,
                     h.producer.coordinator_epoch, h.producer.transaction_start_offset, h.producer.last_timestamp,
                     h.duration_ms(at) // 60_000] for h in found],
                   hanging_json(found, at_ms=at))

    def _abort(self, cluster: str, options) -> None:
        arguments = dict(cluster=cluster, topic=options["topic"], partition=options["partition"],
                         start_offset=options["start_offset"], max_timeout_minutes=options["max_transaction_timeout"])
        if not options["confirm"]:
            preview = services.transaction_abort_preview(**arguments)
            if options["format"] == "json":
                self.stdout.write(json.dumps(preview.as_json(), indent=2))
                return
            p = preview.producer
            self.stdout.write(
                f"Would abort the hanging transaction of producer {p.producer_id} (epoch {p.producer_epoch}) on "
                f"{preview.ref.topic}-{preview.ref.partition}, open since offset {preview.start_offset} "
                f"(last write {preview.open_for_ms // 60_000} min ago). read_committed readers wait behind "
                f"{preview.waiting_records} offsets (last stable offset {preview.last_stable}, log end "
                f"{preview.log_end}).\nRun again with --confirm {p.producer_id} --actor NAME --reason TEXT.")
            return
        actor, reason = self.acting(options, role=Role.ADMIN)
        after = services.transaction_abort(actor=actor, confirm=options["confirm"], reason=reason, **arguments)
        if options["format"] == "json":
            self.stdout.write(json.dumps(after, indent=2))
        else:
            self.stdout.write(f"Aborted. Last stable offset now {after['last_stable_offset']} "
                              f"(log end {after['log_end_offset']}).")
