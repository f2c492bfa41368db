"""Long-running: records every group's rebalance history from `__consumer_offsets` (or by sampling).

Without --cluster it records every registered cluster in this one process, a thread per cluster, following the
registry (offsets/history/supervisor.py); with RECORDER_PROCESSES above 1, in that many processes."""

import re
import signal

from django.conf import settings
from django.core.management.base import CommandError

from console.commands import ConsoleCommand
from console.clusters.selectors import cluster_get
from console.errors import ConsoleError
from gateway.kafka.errors import KafkaGatewayError
from offsets.history import recorder
from offsets.history.processes import RecorderProcesses
from offsets.history.supervisor import RecorderSupervisor

MSG_BAD_SHARD = "--shard takes K/N with 0 <= K < N (which of N recorder processes this is), not {value!r}."
MSG_SHARD_ALONE = "--until-caught-up and --sample need --cluster; --shard goes without them."
MSG_BAD_PROCESSES = "RECORDER_PROCESSES must be at least 1, not {value}."


def parse_shard(value: str) -> tuple[int, int]:
    match = re.fullmatch(r"(\d{1,4})/(\d{1,4})", value)
    if not match or not int(match[1]) < int(match[2]):
        raise CommandError(MSG_BAD_SHARD.format(value=value[:40]))
    return int(match[1]), int(match[2])


class Command(ConsoleCommand):
    help = __doc__

    def add_arguments(self, parser):
        self.add_cluster_argument(parser, default=None,
                                  help="record this cluster only (default: every registered cluster)")
        parser.add_argument("--sample", action="store_true", help="poll DescribeGroups instead of the internal topic")
        parser.add_argument("--until-caught-up", action="store_true", help="stop at the end of the backlog")
        parser.add_argument("--shard", metavar="K/N",
                            help="record the clusters of process K of N only (what RECORDER_PROCESSES starts)")

    def handle(self, *args, **options):
        stopping = []
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: stopping.append(True))
        if not options["cluster"]:
            if options["until_caught_up"] or options["sample"]:
                raise CommandError(MSG_SHARD_ALONE)
            if options["shard"]:
                shard = parse_shard(options["shard"])
                self.stdout.write(f"Recording group history of the clusters of process {shard[0]}/{shard[1]} "
                                  "(a thread each). Ctrl-C stops.")
                RecorderSupervisor(shard=shard).run(should_stop=lambda: bool(stopping))
                return
            if settings.RECORDER_PROCESSES < 1:
                raise CommandError(MSG_BAD_PROCESSES.format(value=settings.RECORDER_PROCESSES))
            if settings.RECORDER_PROCESSES > 1:
                self.stdout.write(f"Recording group history of every registered cluster in "
                                  f"{settings.RECORDER_PROCESSES} processes. Ctrl-C stops.")
                RecorderProcesses(settings.RECORDER_PROCESSES).run(should_stop=lambda: bool(stopping))
                return
            self.stdout.write("Recording group history of every registered cluster (a thread each). Ctrl-C stops.")
            RecorderSupervisor().run(should_stop=lambda: bool(stopping))
            return
        if options["shard"]:
            raise CommandError(MSG_SHARD_ALONE)
        try:
            cluster_get(options["cluster"])
            if options["until_caught_up"]:
                read = recorder.record_from_topic(options["cluster"], should_stop=lambda: bool(stopping),
                                                  until_caught_up=True)
                self.stdout.write(f"Read {read} records of {recorder.OFFSETS_TOPIC}; caught up.")
                return
            self.stdout.write(f"Recording group history of cluster '{options['cluster']}'. Ctrl-C stops.")
            recorder.run(options["cluster"], should_stop=lambda: bool(stopping), force_sampling=options["sample"])
        except (ConsoleError, KafkaGatewayError) as exc:
            raise CommandError(exc.message) from exc
