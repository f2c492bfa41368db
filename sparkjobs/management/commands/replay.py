"""Replays an offset range with Spark: `replay --topic T --start ... --end ... --sink ...`."""

from __future__ import annotations

import json
import sys
import time

from django.core.management.base import CommandError

from changes.proposals import proposed_output
from console.accounts.commands import ActorCommand
from console.accounts.roles import Role
from console.errors import ConsoleError
from gateway.kafka.errors import KafkaGatewayError
from sparkjobs.asking import replay_proposal
from sparkjobs.models import ReplayJob
from sparkjobs.serializers import replay_json
from sparkjobs.services import replay_submit

MSG_BAD_SINK = "--sink is files:jsonl, files:parquet or topic:NAME[@CLUSTER], not '{sink}'."


def parse_sink(text: str) -> dict:
    kind, _, rest = text.partition(":")
    if kind == "files" and rest in ("jsonl", "parquet"):
        return {"sink": rest}
    if kind == "topic" and rest:
        name, _, cluster = rest.partition("@")
        return {"sink": "topic", "sink_topic": name, "sink_cluster": cluster}
    raise CommandError(MSG_BAD_SINK.format(sink=text))


class Command(ActorCommand):
    help = __doc__

    def add_arguments(self, parser):
        self.add_cluster_argument(parser)
        parser.add_argument("--topic", required=True)
        parser.add_argument("--start", required=True,
                            help="earliest | offsets:P=O,... | timestamp:ISO | group:G | reset:AUDIT_EVENT_ID")
        parser.add_argument("--end", default="latest", help="latest | offsets:P=O,... | timestamp:ISO")
        parser.add_argument("--sink", required=True, help="files:jsonl | files:parquet | topic:NAME[@CLUSTER]")
        parser.add_argument("--output", default="", help="files: s3a://BUCKET/PREFIX (default: REPLAY_OUTPUT_DIR)")
        parser.add_argument("--partitions", default="", help="P,P (default: all)")
        parser.add_argument("--keep-partitions", action="store_true", help="topic sink: same partition numbers")
        parser.add_argument("--isolation", choices=["read_committed", "read_uncommitted"], default="read_committed",
                            help="read_uncommitted also replays aborted transactional records (forensics only)")
        parser.add_argument("--filter", default="", help="Spark SQL boolean expression over key, value, headers, ...")
        parser.add_argument("--wait", action="store_true", help="wait for the end; print one JSON line")
        parser.add_argument("--timeout", type=float, default=3600, help="with --wait: give up after this many s")
        self.add_actor_arguments(parser)

    def handle(self, *args, **options):
        actor, reason = self.acting(options, role=Role.OPERATOR)
        try:
            partitions = [int(p) for p in options["partitions"].split(",") if p.strip()] or None
        except ValueError as exc:
            raise CommandError("--partitions takes numbers separated by commas") from exc
        try:
            change = replay_proposal(actor=actor, cluster=options["cluster"], topic=options["topic"],
                                     partitions=partitions, start=options["start"], end=options["end"],
                                     keep_partitions=options["keep_partitions"], filter_expr=options["filter"],
                                     isolation=options["isolation"], reason=reason, **parse_sink(options["sink"]))
            if change is not None:
                proposed_output(self, options, change)
                return
            job = replay_submit(actor=actor, cluster=options["cluster"], topic=options["topic"], partitions=partitions,
                                start=options["start"], end=options["end"], keep_partitions=options["keep_partitions"],
                                filter_expr=options["filter"], isolation=options["isolation"], output_uri=options["output"],
                                reason=reason, **parse_sink(options["sink"]))
        except (ConsoleError, KafkaGatewayError) as exc:
            raise CommandError(exc.message) from exc
        if options["isolation"] == "read_uncommitted":
            self.stderr.write("Warning: read_uncommitted replays records of aborted transactions too.")
        self.stdout.write(str(job.pk))
        if not options["wait"]:
            return
        deadline = time.monotonic() + options["timeout"]
        while not job.finished and time.monotonic() < deadline:
            time.sleep(1)
            job.refresh_from_db()
        self.stdout.write(json.dumps(replay_json(job)))
        if job.state != ReplayJob.State.SUCCEEDED:
            self.stderr.write(job.error or f"Replay #{job.pk} did not finish within {options['timeout']:g} s.")
            sys.exit(1)
