"""The messages sent to the model: system and goal first, then one turn per step (the prompt it answered,
the reply, the tool's answer), then the step prompt. A step's prompt stays in the history once answered, so
every request extends the one before it (a stable prefix for prompt caching: on llama.cpp a message changed
or dropped mid-history is read again from there to the end). Old observations and prompts are shortened
before anything else is; on a context overflow, older turns are condensed to one line each."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from omni.loop.failures import exact_error
from omni.prompts import Prompts
from omni.results import Action, ToolResult

KEEP_RECENT = 3
SHORT_CHARS = 300
# Once the history is over its budget, it is shortened down to this share of it, not just under it. Every
# shortening changes an old turn, and the server reads the prompt again from there to the end (the history
# is past its budget: thousands of tokens). Shortened just under the budget, it was over again after the
# next step, and every step of a long run paid that.
SHORTEN_TO = 0.5


@dataclass
class Turn:
    assistant: dict[str, Any]
    observation: str  # the tool's answer as the model reads it; "" for a reply without a call
    call_id: str | None  # native tool calls answer with a "tool" message
    summary: str  # one line for condensing
    signature: str = ""  # the call's name and arguments: refused repeats are taken out by it
    ok: bool = True
    shortened: bool = False
    prompt: str = ""  # the step prompt or correction this turn answered; "" for omni's own action


class Conversation:
    def __init__(self, prompts: Prompts, system: str, goal: str, native: bool, files: list[str] | None = None):
        self.prompts = prompts
        self.head = [{"role": "system", "content": system},
                     {"role": "user", "content": prompts.render("goal", goal=goal, files=files or [])}]
        self.native = native
        self.turns: list[Turn] = []
        self.condensed = ""
        self.summary: list[str] = []  # the condensed turns, one line each
        self.pinned = ""  # the goal and plan as last sent in a prompt: condensing keeps them in view

    def brief(self, text: str) -> None:
        """Add what was looked up before the first step to the goal message, so it stays in every request."""
        self.head[1] = {"role": "user", "content": self.head[1]["content"] + "\n\n" + text}

    def add(self, text: str, action: Action | None, observation: str, ok: bool, prompt: str = "") -> None:
        if action is not None and self.native:
            assistant = {"role": "assistant", "content": text or None, "tool_calls": [{
                "id": action.call_id, "type": "function",
                "function": {"name": action.name, "arguments": json.dumps(action.args)}}]}
            call_id = action.call_id
        else:
            assistant = {"role": "assistant", "content": text or "(empty reply)"}
            call_id = None
        first = (observation.strip().splitlines() or [""])[0][:120]
        what = action.compact(100) if action else "(no tool call)"
        self.turns.append(Turn(assistant, observation, call_id, f"{what} -> {'ok' if ok else 'FAILED'}: {first}",
                               action.signature() if action else "", ok, prompt=prompt))

    def record(self, text: str, action: Action | None, observation: str, result: ToolResult,
               prompt: str = "") -> None:
        """A step joins the history, with the prompt it answered. A refused repeat does not (a small model
        would copy it), and after repeated failures neither do the call's failed attempts; the correction
        names the call and why."""
        if result.failure != "repeated" or action is None:
            self.add(text, action, observation, result.success, prompt)
        elif result.details.get("failed_before"):
            self.forget(action.signature())

    def forget(self, signature: str) -> None:
        """Take a call's failed attempts out of the history. A small model copies its own earlier
        turns; the correction prompt still names the call and its error."""
        self.turns = [t for t in self.turns if t.ok or t.signature != signature]

    def shows(self, text: str) -> bool:
        """Whether the history holds this text in a kept prompt or the condensed turns (the plan as it is now)."""
        return text in self.condensed or self._in_prompts(text)

    def _in_prompts(self, text: str) -> bool:
        return any(text in turn.prompt for turn in self.turns)

    def pin(self, text: str) -> None:
        """The goal and plan as a prompt now sends them."""
        self.pinned = text

    def messages(self, step_prompt: str) -> list[dict[str, Any]]:
        out = [dict(m) for m in self.head]
        if self.condensed:  # folded into the goal message, so roles still alternate
            out[1] = {"role": "user", "content": out[1]["content"] + "\n\n" + self.condensed}
        for turn in self.turns:
            if turn.prompt:
                add_user(out, turn.prompt)
            out.append(turn.assistant)
            if turn.call_id:
                out.append({"role": "tool", "tool_call_id": turn.call_id, "content": turn.observation})
            else:
                out.append({"role": "user", "content": turn.observation})
        add_user(out, step_prompt)
        return out

    def size(self) -> int:
        return sum(len(t.observation) + len(t.prompt) + len(json.dumps(t.assistant))
                   for t in self.turns) + len(self.condensed)

    def fit(self, budget_chars: int) -> int:
        """Once the history is over budget_chars, shorten the oldest turns' observations and prompts (never
        the last few turns') until it is at SHORTEN_TO of it. Returns how many turns were shortened."""
        if self.size() <= budget_chars:
            return 0
        count = 0
        for turn in self.turns[:-KEEP_RECENT]:
            if self.size() <= budget_chars * SHORTEN_TO:
                break
            if not turn.shortened and max(len(turn.observation), len(turn.prompt)) > SHORT_CHARS:
                turn.observation = shorten(turn.observation, "output", "; run the tool again to see it")
                turn.prompt = shorten(turn.prompt, "prompt")
                turn.shortened = True
                count += 1
        return count

    def condense(self, keep: int = 2) -> bool:
        """Fold all but the last `keep` turns into one summary message. False if nothing could shrink."""
        if len(self.turns) <= keep:
            shrunk = False
            for turn in self.turns:  # last resort: the remaining observations themselves
                if len(turn.observation) > 2000:
                    turn.observation = turn.observation[:1000] + "\n[cut to fit the context window]\n" + \
                        turn.observation[-1000:]
                    shrunk = True
            return shrunk
        folded, self.turns = self.turns[:-keep], self.turns[-keep:]
        self.summary += [t.summary for t in folded]
        carried = self.pinned if self.pinned and not self._in_prompts(self.pinned) else ""
        self.condensed = self.prompts.render("condensed", summary="\n".join(self.summary), carried=carried)
        return True


def add_user(messages: list[dict[str, Any]], text: str) -> None:
    """Merge a user message into a trailing one: some chat templates reject two in a row."""
    if messages[-1]["role"] == "user":
        messages[-1] = {"role": "user", "content": messages[-1]["content"] + "\n\n" + text}
    else:
        messages.append({"role": "user", "content": text})


def shorten(text: str, what: str, then: str = "") -> str:
    """An old text cut to its start. A plan cut off this way goes out again in the next prompt (StepPrompts)."""
    if len(text) <= SHORT_CHARS:
        return text
    return text[:SHORT_CHARS] + f"\n[older {what} shortened by {len(text) - SHORT_CHARS} characters{then}]"


def observation_text(prompts: Prompts, action: Action | None, result: ToolResult, actions: list[Action],
                     interrupted: bool = False) -> str:
    """What the model reads of a step's result. A failure's error shows its first line only: the correction
    prompt that follows quotes the whole error, and once is enough tokens. The tool's name only, not a
    shortened copy of its arguments ("bytearr…"), which a small model copied back into its next call."""
    if result.success or interrupted:  # an interrupted call gets no correction: the whole error goes here
        body = (result.output if result.success else exact_error(result)) or "(no output)"
    else:
        body = (result.error.strip().splitlines() or ["(no message)"])[0][:200] + "\n(the exact error follows below)"
    text = prompts.render("observation", action=action.name if action else "your reply", success=result.success,
                          body=body)
    if len(actions) > 1:
        text += "\n\n" + prompts.render("extra_calls", count=len(actions), first=action.name,
                                         skipped=", ".join(a.compact(60) for a in actions[1:]))
    return text
