from django.core.management.base import CommandError

from console.audit.models import WitnessState
from console.audit.selectors import audit_chain_report
from console.witness.loss import lost_message
from console.witness.verify import audit_check_run
from console.commands import ConsoleCommand

MSG_INTACT = "Audit chain intact: {count} events."
MSG_WITNESS_AGREES = ("Witness agrees: topic '{topic}' on cluster '{cluster}' holds {records} events ({span}); "
                      "{unpublished} not published yet.")
MSG_WITNESS_UNREAD = "Witness could not be read: {error}"
MSG_BROKEN = "Audit log BROKEN: {chain} chain problem(s) and {findings} witness finding(s) in {count} events."


class Command(ConsoleCommand):
    help = ("Walks the audit hash chain and compares the database with the witness topic; exits non-zero if any "
            "event was altered, removed or inserted, or if the witness cannot be read. Each run is stored and shown "
            "on the audit page.")

    def add_arguments(self, parser):
        parser.add_argument("--chain-only", action="store_true",
                            help="only walk the chain in the database (stores nothing, asks no Kafka cluster)")

    def handle(self, *args, **options):
        if options["chain_only"]:
            report = audit_chain_report()
            for problem in report.problems:
                self.stderr.write(problem)
            if not report.ok:
                raise CommandError(MSG_BROKEN.format(chain=len(report.problems), findings=0, count=report.count))
            self.stdout.write(MSG_INTACT.format(count=report.count))
            return
        check = audit_check_run()
        for problem in check.chain_problems:
            self.stderr.write(problem)
        if not check.chain_problems:
            self.stdout.write(MSG_INTACT.format(count=check.events))
        for finding in check.findings:
            self.stderr.write(f"witness: {finding['message']}")
        state = WitnessState.objects.filter(cluster=check.witness_cluster, topic=check.witness_topic).first()
        if check.witness_cluster and state is not None and state.lost:
            self.stderr.write(f"witness: {lost_message(state)}")
        if check.witness_cluster and not check.findings and not check.witness_error:
            span = (f"#{check.witness_first_seq}-#{check.witness_last_seq}" if check.witness_records else "none yet")
            self.stdout.write(MSG_WITNESS_AGREES.format(topic=check.witness_topic, cluster=check.witness_cluster,
                                                        records=check.witness_records, span=span,
                                                        unpublished=check.unpublished))
        if check.chain_problems or check.findings:
            if check.witness_error:
                self.stderr.write(MSG_WITNESS_UNREAD.format(error=check.witness_error))
            raise CommandError(MSG_BROKEN.format(chain=len(check.chain_problems), findings=len(check.findings),
                                                 count=check.events))
        if check.witness_error:
            raise CommandError(MSG_WITNESS_UNREAD.format(error=check.witness_error))
