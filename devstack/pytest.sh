#!/usr/bin/env bash
# Runs pytest and turns its exit code 5 ("no tests collected") into a clear failure: a run that tested
# nothing proves nothing. Set TEST_ALLOW_EMPTY=1 for a selection that may legitimately be empty.
set -u
"$@"
rc=$?
if [ "$rc" -eq 5 ]; then
  if [ "${TEST_ALLOW_EMPTY:-0}" = "1" ]; then echo "pytest collected no tests (allowed for this selection)"; exit 0; fi
  echo "pytest collected no tests: failing, since a run that tests nothing proves nothing" >&2
  exit 1
fi
exit "$rc"
