"""The run's usage meter: tokens and cost of every request, whoever made it (a step, the plan, the review, the
candidates of verified repair), summed and sent as events."""

from __future__ import annotations

from omni.results import Usage


class UsageMeter:
    """Tokens and cost of every request of a run, whoever made it (step, plan, review), as events."""

    def __init__(self, events, cost_kind: str = ""):
        # cost_kind: how the run's models are costed, where they agree; a run that makes no request (verified
        # repair's own round did the work) still says so rather than a bare $0
        self.events = events
        self.total = Usage(cost_kind=cost_kind)

    def count(self, usage: Usage, purpose: str, text: str = "") -> None:
        self.total.add(usage)
        self.events.emit("usage", purpose=purpose, call=usage.model_dump(), total=self.total.model_dump())
        if text:
            self.events.emit("model_text", text=text)
