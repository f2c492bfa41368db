"""Where a group's total lag is going, worded from its status so that the two can never disagree (pure logic).

The status (offsets/lag/status.py) judges each partition; the trend sentence describes the total over the same
samples. Worded on its own, from the rates alone, a live group whose lag swings between 3 and 6 read "OK" beside
"not catching up": consuming exactly as fast as producers write is not falling behind, it is steady. So the status
decides which sentences are possible and the numbers only fill them in:
- OK: caught up, catching up (with an estimate), or steady within a band (and, with no status yet, rising);
- WARN: falling behind (the lag grew at every sample);
- ERR and STOP: not consuming; BLOCKED: waiting behind an open transaction;
- like the status, only the samples since the committed offsets last moved back (a reset) count; right after one
  there is no rate yet, and the sentence says it is re-checking.
"""

from __future__ import annotations

from dataclasses import dataclass

from offsets.lag.status import BLOCKED, ERR, OK, STOP, WARN
from offsets.lag.window import NONE, LagWindow

CAUGHT_UP, CATCHING_UP, STEADY = "caught-up", "catching-up", "steady"
FALLING_BEHIND, NOT_CONSUMING, WAITING, REWOUND = "falling-behind", "not-consuming", "waiting", "rewound"
RISING = "rising"  # only while there is no status yet: a few samples do not make a verdict
# The tone each kind is shown in; the status badge beside it has the same colour family.
TONES = {CAUGHT_UP: "ok", CATCHING_UP: "ok", STEADY: "ok", FALLING_BEHIND: "warn", NOT_CONSUMING: "bad",
         WAITING: "warn", REWOUND: "", RISING: ""}


@dataclass(frozen=True)
class LagSeries:
    """A group's totals at each sample, oldest first: lag, and the sums of committed and log end offsets."""

    times: tuple[float, ...]
    lags: tuple[int, ...]
    committed: tuple[int, ...]
    ends: tuple[int, ...]

    @classmethod
    def from_window(cls, window: LagWindow) -> LagSeries:
        """The totals of a status window, over the samples where every partition of it has a point (sums over
        partitions that come and go would read as consuming or producing)."""
        width = len(window.times)
        if not width or not window.keys:
            return cls((), (), (), ())
        series = [window.series(k) for k in range(len(window.keys))]
        times, lags, committed, ends = [], [], [], []
        for i in range(width):
            at = i * 3
            points = [(s[at], s[at + 1]) for s in series]
            if any(c == NONE for c, _ in points):
                continue
            times.append(window.times[i])
            lags.append(sum(max(0, e - c) for c, e in points))
            committed.append(sum(c for c, _ in points))
            ends.append(sum(e for _, e in points))
        return cls(tuple(times), tuple(lags), tuple(committed), tuple(ends))


@dataclass(frozen=True)
class Trend:
    kind: str
    text: str
    lag: int  # at the newest sample
    low: int
    high: int
    over_s: float
    consume_per_s: float | None  # None when the committed offsets moved back
    produce_per_s: float
    catch_up_s: float | None = None

    @property
    def tone(self) -> str:
        return TONES[self.kind]


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.0f} h"


def _rate(per_s: float) -> str:
    return f"{per_s:,.1f}"


def _since_rewind(series: LagSeries) -> tuple[LagSeries, bool]:
    """The samples from the last one whose committed offsets went back (a reset), as the status judges them; and
    whether there was one."""
    start = 0
    for i in range(1, len(series.committed)):
        if series.committed[i] < series.committed[i - 1]:
            start = i
    if not start:
        return series, False
    return LagSeries(series.times[start:], series.lags[start:], series.committed[start:], series.ends[start:]), True


def judge_trend(status: str, series: LagSeries) -> Trend | None:
    """The sentence for `series` under `status` (the group's status over the same samples; "" when not judged).
    None with fewer than two samples. Like the status, it looks at the samples since the last reset only."""
    series, rewound = _since_rewind(series)
    if not series.lags:
        return None
    lags = series.lags
    lag, low, high = lags[-1], min(lags), max(lags)
    if len(lags) < 2:
        if not rewound:
            return None
        return Trend(REWOUND, f"The committed offsets moved back at the last sample (a reset): the lag is {lag:,} "
                              "now; re-checking as samples come in.", lag=lag, low=low,
                     high=high, over_s=0.0, consume_per_s=None, produce_per_s=0.0)
    over_s = max(series.times[-1] - series.times[0], 1e-9)
    consume = (series.committed[-1] - series.committed[0]) / over_s
    produce = max(0, series.ends[-1] - series.ends[0]) / over_s
    common = dict(lag=lag, low=low, high=high, over_s=over_s, consume_per_s=consume, produce_per_s=produce)
    rates = f"consuming {_rate(consume)} records/s, producing {_rate(produce)} records/s"
    span = _duration(over_s)
    if status in (ERR, STOP):
        if consume <= 0:
            return Trend(NOT_CONSUMING, f"Not consuming: the committed offsets did not move in the last {span} while "
                                        f"producers wrote {_rate(produce)} records/s; the lag is {lag:,}.", **common)
        return Trend(NOT_CONSUMING, f"Stalled on the partitions named above, consuming elsewhere ({rates} over the "
                                    f"last {span}); the lag is {lag:,}.", **common)
    if status == BLOCKED:
        return Trend(WAITING, f"Waiting behind an open transaction; {rates}; the lag is {lag:,}.", **common)
    if status == WARN:
        return Trend(FALLING_BEHIND, f"Falling behind: the lag grew from {lags[0]:,} to {lag:,} in the last {span} "
                                     f"({rates}).", **common)
    # OK, or not judged yet: never "not catching up", whatever the rates.
    if lag == 0:
        return Trend(CAUGHT_UP, f"Caught up: no lag at the last sample ({rates} over the last {span}).", **common)
    if consume > produce and lag < lags[0]:
        catch_up = lag / (consume - produce)
        return Trend(CATCHING_UP, f"Catching up: {rates}, so the lag of {lag:,} is gone in about "
                                  f"{_duration(catch_up)}.", catch_up_s=catch_up, **common)
    if not status and lag > lags[0] and list(lags) == sorted(lags):
        return Trend(RISING, f"Rising: the lag went from {lags[0]:,} to {lag:,} in the last {span} ({rates}); the "
                             "status is judged once there are enough samples.", **common)
    band = f"at {lag:,}" if low == high else f"between {low:,} and {high:,}"
    return Trend(STEADY, f"Steady: the lag stays {band} over the last {span} ({rates}): the group keeps pace "
                         "with its producers.", **common)
