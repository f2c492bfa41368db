"""A group's rebalance history, oldest first: generations (classic) or epochs (consumer), joins, leaves."""

import json

from console.clusters.selectors import cluster_get
from console.commands import ConsoleCommand
from offsets.history.selectors import group_history


class Command(ConsoleCommand):
    help = __doc__

    def add_arguments(self, parser):
        parser.add_argument("group")
        self.add_cluster_argument(parser)
        self.add_format_argument(parser, help="table or json")

    def handle(self, *args, **options):
        cluster_get(options["cluster"])  # an unknown name is an error, not an empty history
        entries = group_history(options["cluster"], options["group"])
        if options["format"] == "json":
            self.stdout.write(json.dumps(entries, indent=2))
            return
        self.stdout.write(f"{'TIME (UTC)':<24} {'GEN/EPOCH':>9} {'PROTOCOL':<9} {'MEMBERS':>7}  CHANGES")
        for e in entries:
            number = e.get("generation", e.get("epoch"))
            changes = [f"+{m['client_id']}@{m['host']}" for m in e["joined"]]
            changes += [f"-{m['client_id']}@{m['host']}" for m in e["left"]]
            flags = (" [sampled]" if e["sampled"] else "") + (" [burst]" if e["burst"] else "")
            self.stdout.write(f"{e['time']:<24} {number:>9} {e['protocol']:<9} {len(e['members']):>7}  "
                              f"{' '.join(changes) or '-'} moved={e['moved']}{flags}")
