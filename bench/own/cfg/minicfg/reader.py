"""A small reader of `key = value` files with [sections] and # comments."""


def _strip_comment(line: str) -> str:
    return line.split("#", 1)[0].strip()


def _entry(line: str) -> tuple[str, str]:
    parts = line.split("=")
    return parts[0].strip(), parts[1].strip()


def read_config(text: str) -> dict[str, dict[str, str]]:
    """{section: {key: value}}; keys before any [section] go to "" ."""
    config: dict[str, dict[str, str]] = {"": {}}
    section = ""
    for raw in text.splitlines():
        line = _strip_comment(raw)
        if not line:
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip()
            config.setdefault(section, {})
            continue
        key, value = _entry(line)
        config[section][key] = value
    return config
