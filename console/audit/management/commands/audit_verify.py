from django.core.management.base import CommandError

from console.commands import ConsoleCommand
from console.audit.selectors import audit_chain_report


class Command(ConsoleCommand):
    help = "Walks the audit hash chain; exits non-zero if any event was altered, removed or inserted."

    def handle(self, *args, **options):
        report = audit_chain_report()
        if not report.ok:
            for problem in report.problems:
                self.stderr.write(problem)
            raise CommandError(f"Audit chain BROKEN: {len(report.problems)} problem(s) in {report.count} events.")
        self.stdout.write(f"Audit chain intact: {report.count} events.")
