"""Small text helpers."""
from textkit.slug import slugify
from textkit.wrap import wrap_words

__all__ = ["slugify", "wrap_words"]
