"""manage.py messages read|search|produce: the message pages in the shell, on the same search and services."""

from __future__ import annotations

import json
import sys
import time
from contextlib import contextmanager
from pathlib import Path

from django.core.management.base import CommandError

from console.accounts.commands import ActorCommand
from console.accounts.roles import Role
from console.shell import shared_argument
from gateway.kafka.records_io.filters import check_filter
from gateway.kafka.types import ScanFilter
from masking.apply import check_search, mask_rows
from masking.selectors import masker_for
from records import services
from records.export import export_begin, records_export
from records.export_formats import FORMATS
from records.import_parse import KINDS as IMPORT_KINDS, kind_of_file
from records.imports import import_preview, records_import
from records.search import (
    SearchSpec, SearchState, ending_text, parse_bound, parse_fields, parse_partitions, parse_time_ms,
)
from records.serializers import STEP_S, scan_records, scan_summary_json, written_json

ACTOR_READ_HELP = "who reads (masking rules apply by their role; without it, every masking rule applies)"
FORMAT_LINES_HELP = "table, or json: one object per line for each record, then one with the counts"


def _range_arguments(parser) -> None:
    parser.add_argument("--topic", required=True)
    parser.add_argument("--partitions", default="", help="e.g. 0,2 (default: all)")
    parser.add_argument("--from", dest="start", default="earliest",
                        help="earliest, an offset, or a time such as 2026-11-21T03:00:00Z")
    parser.add_argument("--to", dest="end", default="latest", help="latest, an offset, or a time")
    parser.add_argument("--newest-first", action="store_true")
    parser.add_argument("--isolation", choices=["read_committed", "read_uncommitted"], default="read_committed")
    parser.add_argument("--max-seconds", type=float, default=300.0, help="time budget (default 300)")


def _filter_arguments(parser) -> None:
    parser.add_argument("--key", default="", help="key contains")
    parser.add_argument("--key-regex", default="")
    parser.add_argument("--value", default="", help="value contains (decoded JSON for registry records)")
    parser.add_argument("--value-regex", default="")
    parser.add_argument("--field", action="append", default=[], metavar="PATH=VALUE",
                        help="decoded value's field equals, repeatable (customer.country=NO)")
    parser.add_argument("--jsonpath", default="", help="finds at least one node in the decoded value")
    parser.add_argument("--header", default="", metavar="NAME[=CONTAINS]")
    parser.add_argument("--since", default="", help="skip records with a timestamp before this time")
    parser.add_argument("--until", default="", help="skip records with a timestamp after this time")
    parser.add_argument("--max-records", type=int, default=100_000_000, help="records budget")


@contextmanager
def _opened(path: str):
    """The file in binary: the import reads text formats as UTF-8 itself, and Avro as bytes."""
    if path == "-":
        yield sys.stdin.buffer
        return
    try:
        handle = open(path, "rb")  # noqa: SIM115
    except OSError as exc:
        raise CommandError(f"--file {path}: {exc.strerror}.") from exc
    with handle:
        yield handle


class Command(ActorCommand):
    help = "Read, search (no consumer group, nothing committed) or produce records."

    def add_arguments(self, parser):
        sub = self.add_subcommands(parser)
        read = sub.add_parser("read", help="records of a range, all partitions or chosen ones")
        _range_arguments(read)
        self.add_format_argument(read, help=FORMAT_LINES_HELP)
        read.add_argument("--limit", type=int, default=50, help="records to print (default 50)")
        shared_argument(read, "--actor", default="", help=ACTOR_READ_HELP)
        search = sub.add_parser("search", help="the records of a range that pass the filters")
        _range_arguments(search)
        self.add_format_argument(search, help=FORMAT_LINES_HELP)
        _filter_arguments(search)
        search.add_argument("--limit", type=int, default=1000, help="matches to print at most (default 1000)")
        shared_argument(search, "--actor", default="", help=ACTOR_READ_HELP)
        export = sub.add_parser("export", help="the records of a range that pass the filters, into a file")
        _range_arguments(export)
        _filter_arguments(export)
        export.add_argument("--as", dest="file_format", choices=list(FORMATS), default="jsonl",
                            help="jsonl, csv or avro (an Avro object container file)")
        export.add_argument("--output", default="-", help="the file to write (default: standard output)")
        export.add_argument("--limit", type=int, default=100_000, help="records to export at most (default 100000)")
        self.add_actor_arguments(export)
        imports = sub.add_parser("import", help="records of a JSON-lines or CSV file (operator); a preview "
                                                "unless --yes")
        imports.add_argument("--topic", required=True)
        imports.add_argument("--file", required=True, help="the file ('-' reads standard input)")
        imports.add_argument("--as", dest="file_format", choices=list(IMPORT_KINDS), default=None,
                             help="default: csv for a .csv file, avro for a .avro file, else jsonl")
        imports.add_argument("--key-subject", default="", help="encode keys (JSON) with this registry subject")
        imports.add_argument("--value-subject", default="", help="encode values (JSON) with this subject")
        imports.add_argument("--rate", type=int, default=1000, help="records per second at most (default 1000)")
        imports.add_argument("--skip-bad", action="store_true",
                             help="write the good lines after a bad one (every bad line is reported either way)")
        imports.add_argument("--repartition", action="store_true",
                             help="leave the file's partitions aside: the key's hash chooses (another partition count)")
        imports.add_argument("--new-timestamps", action="store_true",
                             help="leave the file's timestamps aside: records get the time they are written")
        self.add_format_argument(imports)
        self.add_yes_argument(imports, help="write the records; without --yes, only the preview")
        self.add_actor_arguments(imports)
        produce = sub.add_parser("produce", help="send one record (operator)")
        produce.add_argument("--topic", required=True)
        produce.add_argument("--partition", type=int, default=None, help="default: by the key's hash")
        produce.add_argument("--key", default=None, help="the key as text (default: null)")
        produce.add_argument("--value", default=None, help="the value as text; '-' reads standard input")
        produce.add_argument("--null-value", action="store_true", help="a tombstone")
        produce.add_argument("--key-subject", default="", help="encode the key (JSON) with this registry subject")
        produce.add_argument("--value-subject", default="", help="encode the value (JSON) with this subject")
        produce.add_argument("--value-version", type=int, default=None, help="subject version (default latest)")
        produce.add_argument("--header", action="append", default=[], metavar="NAME=VALUE")
        self.add_format_argument(produce)
        self.add_actor_arguments(produce)

    def handle(self, *args, **options):
        if options["subcommand"] == "produce":
            return self._produce(options)
        if options["subcommand"] == "export":
            return self._export(options)
        if options["subcommand"] == "import":
            return self._import(options)
        return self._scan(options)

    def _spec(self, options) -> SearchSpec:
        searching = options["subcommand"] in ("search", "export")
        header = options.get("header", "") if searching else ""
        name, _, contains = header.partition("=")
        scan_filter = ScanFilter()
        if searching:
            scan_filter = ScanFilter(
                key_contains=options["key"], key_regex=options["key_regex"], value_contains=options["value"],
                value_regex=options["value_regex"], value_fields=parse_fields(options["field"]),
                value_jsonpath=options["jsonpath"], header_name=name, header_contains=contains,
                ts_from_ms=parse_time_ms(options["since"], f"--since '{options['since']}' is not a time.")
                if options["since"] else None,
                ts_to_ms=parse_time_ms(options["until"], f"--until '{options['until']}' is not a time.")
                if options["until"] else None)
            check_filter(scan_filter)
        if options["limit"] < 1:
            raise CommandError("--limit must be 1 or more.")
        return SearchSpec(
            topic=options["topic"], partitions=parse_partitions(options["partitions"]),
            start=parse_bound(options["start"], "earliest"), end=parse_bound(options["end"], "latest"),
            filter=scan_filter, newest_first=options["newest_first"], isolation=options["isolation"],
            max_records=options.get("max_records") or 100_000_000, max_seconds=options["max_seconds"],
            max_matches=options["limit"])

    def _reader(self, options):
        """Who reads, for the masking rules: --actor's user (any role), or None, which every rule masks."""
        if not options.get("actor"):
            return None
        actor, _ = self.acting(options, role=Role.VIEWER, reason_required=False)
        return actor.user

    def _scan(self, options) -> None:
        spec = self._spec(options)
        masker = masker_for(options["cluster"], spec.topic, self._reader(options))
        check_search(masker, spec.filter)
        as_json = options["format"] == "json"
        if not as_json:
            self.stdout.write(f"{'PARTITION':<10} {'OFFSET':<12} {'TIMESTAMP':<14} {'KEY':<24} VALUE")
        for found in scan_records(options["cluster"], spec, masker, step_s=STEP_S):
            if isinstance(found, SearchState):
                state = found
            elif as_json:
                self.stdout.write(json.dumps(found.as_json(), ensure_ascii=False, default=str))
            else:
                key = found.key.text.replace("\n", " ")[:24]
                value = found.value.text.replace("\n", " ")
                kind = f"[{found.value.kind}] " if found.value.kind not in ("text", "json") else ""
                self.stdout.write(f"{found.partition:<10} {found.offset:<12} {found.timestamp or '-':<14} "
                                  f"{key:<24} {kind}{value}")
        if as_json:
            self.stdout.write(json.dumps({"summary": scan_summary_json(state)}))
        else:
            self.stdout.write(f"{state.matched} record(s) matched; {state.scanned} scanned of {state.total} offsets "
                              f"in {state.elapsed:.1f} s ({state.rate} records/s). {ending_text(state)}")

    def _export(self, options) -> None:
        """The file of the page's export; a line of progress on stderr per step, the summary last."""
        actor, reason = self.acting(options, role=Role.VIEWER, reason_required=False)
        spec = self._spec(options)
        masker = masker_for(options["cluster"], spec.topic, actor.user)
        check_search(masker, spec.filter)
        state = export_begin(options["cluster"], spec, options["file_format"])

        def progress(state, written: int) -> None:
            self.stderr.write(f"{written} record(s) written; {state.covered} of {state.total} offsets "
                              f"({state.percent}%)")

        stream = records_export(actor=actor, state=state, fmt=options["file_format"], reason=reason,
                                progress=progress, masker=masker)
        if options["output"] == "-":
            for chunk in stream:
                sys.stdout.buffer.write(chunk)
            sys.stdout.buffer.flush()
            return
        # Written beside the target and renamed at the end, so a cut export never looks like a whole file.
        unfinished = Path(options["output"] + ".part")
        with open(unfinished, "wb") as out:
            for chunk in stream:
                out.write(chunk)
        unfinished.replace(options["output"])

    def _import(self, options) -> None:
        actor, reason = self.acting(options, role=Role.OPERATOR, reason_required=bool(options["yes"]))
        path = options["file"]
        kind = options["file_format"] or kind_of_file(path)
        common = dict(cluster=options["cluster"], topic=options["topic"], kind=kind,
                      key_subject=options["key_subject"], value_subject=options["value_subject"],
                      keep_partitions=not options["repartition"], keep_timestamps=not options["new_timestamps"])
        as_json = options["format"] == "json"

        def progress(report) -> None:
            self.stderr.write(f"{report.records} record(s) written ({report.seconds:.1f} s)")

        with _opened(path) as source:
            if options["yes"]:
                report = records_import(**common, actor=actor, source=source, rate=options["rate"],
                                        skip_bad=options["skip_bad"], reason=reason, file_name=path,
                                        progress=progress)
            else:
                report = import_preview(**common, source=source)
        if as_json:
            body = report.as_json()
            if not options["yes"]:
                body["preview"] = [{"line": r.line, "partition": r.partition, "key": r.key, "value": r.value}
                                   for r in report.first]
            self.stdout.write(json.dumps(body, ensure_ascii=False))
            return
        if not options["yes"]:
            for r in report.first:
                target = "any" if r.partition is None else r.partition
                self.stdout.write(f"line {r.line:<8} partition {target!s:<5} {r.key!s:<24.24} {r.value!s:.80}")
        for bad in report.bad:
            self.stdout.write(f"line {bad.line}: {bad.reason}")
        verb = "written" if options["yes"] else "to write (preview: add --yes to write them)"
        self.stdout.write(f"{report.records} record(s) {verb}; {report.bad_count} bad line(s)"
                          + (f"; stopped at line {report.stopped_at}" if report.stopped_at else "") + ".")

    def _produce(self, options) -> None:
        actor, reason = self.acting(options, role=Role.OPERATOR)
        value = options["value"]
        if value == "-":
            value = sys.stdin.read()
        if options["null_value"]:
            value = None
        elif value is None:
            raise CommandError("Give --value (or '-' for standard input), or --null-value for a tombstone.")
        headers = []
        for pair in options["header"]:
            name, sep, text = pair.partition("=")
            if not sep or not name:
                raise CommandError(f"--header '{pair}' is not NAME=VALUE.")
            headers.append((name, text))
        started = time.monotonic()
        written = services.record_produce(
            actor=actor, cluster=options["cluster"], topic=options["topic"],
            key=services.Payload(options["key"], subject=options["key_subject"]),
            value=services.Payload(value, subject=options["value_subject"], version=options["value_version"]),
            headers=headers, partition=options["partition"], reason=reason)
        if options["format"] == "json":
            self.stdout.write(json.dumps(written_json(written)))
            return
        self.stdout.write(f"Record written to {written.topic} partition {written.partition} at offset "
                          f"{written.offset} ({time.monotonic() - started:.2f} s).")
