"""Durations written like 2h, 45m, 1h30m or 90s, in seconds."""
import re

_PART = re.compile(r"(\d+)([hms])")
_UNIT = {"h": 3600, "m": 3600, "s": 1}


def parse_duration(text: str) -> int:
    """Seconds in a duration such as "1h30m"; raises ValueError on anything else."""
    text = text.strip().lower()
    if not text or _PART.sub("", text):
        raise ValueError(f"not a duration: {text!r}")
    return sum(int(number) * _UNIT[unit] for number, unit in _PART.findall(text))


def format_duration(seconds: int) -> str:
    """The shortest way to write seconds: 5400 -> "1h30m"."""
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [f"{n}{u}" for n, u in ((hours, "h"), (minutes, "m"), (secs, "s")) if n]
    return "".join(parts) or "0s"
