from timekit.durations import format_duration, parse_duration

__all__ = ["format_duration", "parse_duration"]
