"""The plan: a short natural-language to-do list kept as state the model can revise."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, Field

Status = Literal["pending", "in_progress", "done", "skipped"]
_ITEM = re.compile(r"^\s*(?:\d+\s*[.):]|[-*•]|step\s+\d+\s*[.:)]?)\s*(.+?)\s*$", re.IGNORECASE)
_MARK = re.compile(r"^(?:\[[ x>\-]\]\s*)+")  # status marks a model copies back from our rendering
MARKS = {"pending": " ", "in_progress": ">", "done": "x", "skipped": "-"}
MAX_STEPS = 6
STEP_CHARS = 110  # every step prompt repeats the plan; a small model writes paragraphs


def clean(text: str) -> str:
    text = _MARK.sub("", text.replace("**", "").strip()).strip()
    if len(text) > STEP_CHARS:
        text = text[:STEP_CHARS].rsplit(" ", 1)[0].rstrip(",;:") + "…"
    return text


class PlanStep(BaseModel):
    text: str
    status: Status = "pending"


class PlanReply(BaseModel):
    """A plan as structured output asks for it: the steps in order, each a short line."""

    steps: list[str] = Field(min_length=1, max_length=MAX_STEPS)


class Plan(BaseModel):
    steps: list[PlanStep]
    version: int = 1

    @classmethod
    def from_texts(cls, texts: list[str], version: int) -> Plan:
        """A plan the user typed, one step per entry."""
        plan = cls.parse("\n".join(f"{n}. {text}" for n, text in enumerate(texts, 1)))
        plan.version = version
        return plan

    @classmethod
    def parse(cls, text: str) -> Plan:
        """A numbered or bulleted list from a model's reply, or the JSON that structured output gives
        ({"steps": [...]}); the first step starts in progress."""
        steps = []
        lines = text.splitlines()
        if text.lstrip().startswith("{"):
            try:
                lines = [f"{n}. {step}" for n, step in enumerate(PlanReply.model_validate_json(text).steps, 1)]
            except ValueError:
                pass
        for line in lines:
            match = _ITEM.match(line)
            if match:
                item = clean(match.group(1))
                if item and not item.endswith(":"):
                    steps.append(PlanStep(text=item))
        plan = cls(steps=steps[:MAX_STEPS])
        if plan.steps:
            plan.steps[0].status = "in_progress"
        return plan

    def render(self) -> str:
        return "\n".join(f"{n}. [{MARKS[s.status]}] {s.text}" for n, s in enumerate(self.steps, 1))

    def current(self) -> int | None:
        for status in ("in_progress", "pending"):
            for n, step in enumerate(self.steps):
                if step.status == status:
                    return n
        return None

    def replaced(self, steps: list[dict]) -> Plan:
        new = Plan(steps=[PlanStep(**{**s, "text": clean(s["text"])}) for s in steps if clean(s["text"])],
                   version=self.version + 1)
        if new.current() is not None and not any(s.status == "in_progress" for s in new.steps):
            new.steps[new.current()].status = "in_progress"
        return new
