"""A group's lag history over a range (per topic, oldest first) and its current OK/WARN/ERR/STOP status."""

import json

from django.core.management.base import CommandError

from console.commands import ConsoleCommand
from console.clusters.selectors import cluster_get
from console.errors import ConsoleError
from offsets.lag.selectors import RANGES, group_lag_history


class Command(ConsoleCommand):
    help = __doc__

    def add_arguments(self, parser):
        parser.add_argument("group")
        self.add_cluster_argument(parser)
        parser.add_argument("--range", choices=list(RANGES), default="6h")
        self.add_format_argument(parser, help="table or json")

    def handle(self, *args, **options):
        try:
            cluster_get(options["cluster"])
        except ConsoleError as exc:
            raise CommandError(exc.message) from exc
        history = group_lag_history(options["cluster"], options["group"], options["range"])
        if options["format"] == "json":
            self.stdout.write(json.dumps(history, indent=2))
            return
        self.stdout.write(f"{history['group']}: {history['status'] or '-'} ({history['reason']})")
        self.stdout.write(f"{'TIME (UTC)':<22} {'TOPIC':<30} {'LAG':>12} {'COMMITTED':>14} {'END':>14}")
        for s in history["samples"]:
            self.stdout.write(f"{s['time'][:19] + 'Z':<22} {s['topic']:<30} {s['lag']:>12,} {s['committed']:>14,} {s['end']:>14,}")
        if not history["samples"]:
            self.stdout.write(f"no samples in the last {history['range']}")
