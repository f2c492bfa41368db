from console.accounts.commands import ActorCommand
from console.accounts.roles import Role
from console.witness.reset import witness_alarm_reset

MSG_ACCEPTED = ("Accepted: the witness topic no longer holds {seqs} ({reason}). The database holds {held} of those "
                "{count} event(s); from now on they are checked by the hash chain alone, not against the topic.")
MSG_RESUMES = ("Publishing resumes after #{after}, chained to its hash; the lost events are not published again "
               "from the database, and nothing starts again from #1. This reset is itself an audit event.")


class Command(ActorCommand):
    help = ("Clears the audit witness alarm raised when its topic lost published records (purged, deleted or "
            "re-created). Needs the admin role, a reason, and the lost range typed exactly as the alarm names it "
            "(--accept '#A-#B'). It accepts that those events are no longer witnessed by the topic; it does not "
            "publish them again. Audited as audit.witness.reset.")

    def add_arguments(self, parser):
        self.add_actor_arguments(parser)
        parser.add_argument("--accept", required=True, metavar="#A-#B",
                            help="the lost range exactly as audit_verify or the audit page names it")

    def handle(self, *args, **options):
        actor, reason = self.acting(options, role=Role.ADMIN)
        outcome = witness_alarm_reset(actor=actor, accept=options["accept"], reason=reason)
        self.stdout.write(MSG_ACCEPTED.format(seqs=outcome.seqs, reason=outcome.lost_reason,
                                              held=outcome.held_in_database,
                                              count=outcome.last_seq - outcome.first_seq + 1))
        self.stdout.write(MSG_RESUMES.format(after=outcome.resume_after))
