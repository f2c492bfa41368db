"""Long-running: records every group's rebalance history from `__consumer_offsets` (or by sampling).

Without --cluster it records every registered cluster in this one process, a thread per cluster, following the
registry (offsets/history/supervisor.py)."""

import signal

from django.core.management.base import CommandError

from console.commands import ConsoleCommand
from console.clusters.selectors import cluster_get
from console.errors import ConsoleError
from gateway.kafka.errors import KafkaGatewayError
from offsets.history import recorder
from offsets.history.supervisor import RecorderSupervisor


class Command(ConsoleCommand):
    help = __doc__

    def add_arguments(self, parser):
        self.add_cluster_argument(parser, default=None,
                                  help="record this cluster only (default: every registered cluster)")
        parser.add_argument("--sample", action="store_true", help="poll DescribeGroups instead of the internal topic")
        parser.add_argument("--until-caught-up", action="store_true", help="stop at the end of the backlog")

    def handle(self, *args, **options):
        stopping = []
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: stopping.append(True))
        if not options["cluster"]:
            if options["until_caught_up"] or options["sample"]:
                raise CommandError("--until-caught-up and --sample need --cluster.")
            self.stdout.write("Recording group history of every registered cluster (a thread each). Ctrl-C stops.")
            RecorderSupervisor().run(should_stop=lambda: bool(stopping))
            return
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
