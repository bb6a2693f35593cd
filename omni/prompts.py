"""Every text the model reads comes from a template file in prompts/, rendered strictly."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jinja2

from omni.resources import data_dir


class PromptError(Exception):
    """A template is missing, malformed, or was rendered without a variable it needs."""


class Prompts:
    def __init__(self, folder: Path | None = None):
        self.folder = folder or data_dir("prompts")
        self.env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(str(self.folder)),
            undefined=jinja2.StrictUndefined,
            keep_trailing_newline=False,
            trim_blocks=True,
            lstrip_blocks=True,
            autoescape=False,
        )
        # Check every template when loaded, so a broken file fails at start, not mid-run.
        self.names = sorted(p.relative_to(self.folder).as_posix() for p in self.folder.rglob("*.md"))
        for name in self.names:
            try:
                self.env.get_template(name)
            except jinja2.TemplateSyntaxError as exc:
                raise PromptError(f"prompts/{name}:{exc.lineno}: {exc.message}") from exc

    def render(self, name: str, **variables: Any) -> str:
        try:
            template = self.env.get_template(f"{name}.md")
        except jinja2.TemplateNotFound as exc:
            raise PromptError(f"no prompt template prompts/{exc.name}") from exc
        try:
            return template.render(**variables).strip()
        except jinja2.UndefinedError as exc:
            raise PromptError(f"prompts/{name}.md: {exc.message}") from exc
