"""URL slugs from titles."""
import re
import unicodedata

_NOT_WORD = re.compile(r"[^a-z0-9\s-]")
_SPACES = re.compile(r"\s")


def ascii_fold(text: str) -> str:
    """Accented letters as their plain ASCII letter; other non-ASCII characters dropped."""
    normalized = unicodedata.normalize("NFKD", text)
    return normalized.encode("ascii", "ignore").decode("ascii")


def slugify(title: str, max_length: int = 60) -> str:
    """A lowercase slug of ASCII letters, digits and single dashes, at most max_length long."""
    text = ascii_fold(title).lower()
    text = _NOT_WORD.sub("", text)
    text = _SPACES.sub("-", text.strip())
    if len(text) > max_length:
        text = text[:max_length].rsplit("-", 1)[0]
    return text.strip("-")
