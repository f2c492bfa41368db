from datetime import UTC, datetime

from django import template

register = template.Library()


@register.filter
def ms_utc(value) -> str:
    """Epoch milliseconds (Kafka's timestamps) as a UTC date and time to the millisecond."""
    try:
        moment = datetime.fromtimestamp(int(value) / 1000, UTC)
    except (TypeError, ValueError, OverflowError, OSError):
        return ""
    return moment.strftime("%Y-%m-%d %H:%M:%S.") + f"{moment.microsecond // 1000:03d}"


@register.filter
def get_item(mapping, key):
    """mapping[str(key)], or None: for dicts keyed by "topic-partition" looked up with a PartitionRef."""
    try:
        return mapping.get(str(key))
    except AttributeError:
        return None


@register.filter
def duration_s(value) -> str:
    """Seconds as a rough duration: 45 s, 12 min, 3 h."""
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        return ""
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.0f} h"


SHORT_ERROR_CHARS = 90


@register.filter
def short_error(text) -> str:
    """An error's first sentence or line, cut to a table cell's width: the whole text goes behind "details"."""
    text = str(text or "").strip()
    first = text.splitlines()[0] if text else ""
    for end in (". ", ": "):
        if end in first[20:]:
            first = first[:first.index(end, 20) + 1]
            break
    return first if len(first) <= SHORT_ERROR_CHARS else first[:SHORT_ERROR_CHARS - 1].rstrip() + "…"


@register.filter
def ms_iso(value) -> str:
    """Epoch milliseconds as ISO 8601 in UTC, for a <time datetime> (relative times are computed from it)."""
    try:
        moment = datetime.fromtimestamp(int(value) / 1000, UTC)
    except (TypeError, ValueError, OverflowError, OSError):
        return ""
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
