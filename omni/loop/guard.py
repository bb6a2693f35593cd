"""The repeat guard: every rule that keeps a small model from going round in circles, in one place.

A small model, at temperature 0, answers the same context with the same call. So the guard:
- refuses a read or a check that already ran while nothing has changed since (its output is above);
- lets a paged read_file asked again read on from where the last page ended, and a read_symbol of a long
  definition (shown in part) asked again read on through the definition's lines not shown, as a read_file;
- refuses a call that failed the same way twice;
- refuses update_plan right after update_plan (small models loop on plan edits instead of acting);
- withholds, for one step, the tool of a refused repeat: the step's prompt says so, and the refused call
  made again is refused again (warmer sampling, still withheld, and kept out of the history as every refused
  repeat is: 22 copies of one refused call in it held a small model for 22 of its 28 steps, dev run CJ); the
  same tool called another way runs. The tool list never changes: on llama.cpp it is the prompt's start, and a
  list one tool short made the server read the whole prompt again (187 s and 238 s in run I, 2 of 48 requests
  in run W);
- asks for warmer sampling after a refused repeat, an edit that re-sent the code as it already reads
  (until an edit lands), and a reply cut off at the token cap (mostly a loop of copied lines).

The loop asks it `before` a call, tells it what happened `after` the call and at the end of the step
(`observe`), and asks it for the next request's options.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from omni.box.toolbox import Toolbox, details
from omni.loop.failures import exact_error, failure_class
from omni.results import Action, ToolResult

SAME_FAILURES_BEFORE_REFUSAL = 2


@dataclass
class SeenCall:
    step: int  # the step it ran at
    workspace_version: int  # the workspace as it was then (see RepeatGuard.workspace_version)
    next_start_line: int | None = None  # a paged read goes on from here; None when it read to the end
    path: str = ""  # the file it reads on in
    end_line: int | None = None  # where reading on stops (a definition's last line); None: the file's end


@dataclass
class RequestOptions:
    temperature: float | None  # None: the configured one


class RepeatGuard:
    def __init__(self, toolbox: Toolbox, unstick_temperature: float):
        self.toolbox = toolbox
        self.unstick_temperature = unstick_temperature
        self.seen_calls: dict[str, SeenCall] = {}  # reads and checks by call signature
        self.workspace_version = 0  # bumped by every call that may have changed the workspace
        self.failed_attempts: dict[str, list[str]] = defaultdict(list)  # call signature -> each failure
        self.withheld: Action | None = None  # the refused repeat whose tool is withheld for the next step
        self.called_withheld = False  # this step's call was that call again
        self.refused_last_call = False
        self.edit_resent_code = False
        self.reply_cut_off = False
        self.last_tool = self.tool_before_last = ""
        self._read_on_note = ""

    # ---- the next request ---------------------------------------------------------------------------
    def request_options(self) -> RequestOptions:
        stuck = self.refused_last_call or self.edit_resent_code or self.reply_cut_off
        return RequestOptions(self.unstick_temperature if stuck else None)

    @property
    def withheld_tool(self) -> str | None:
        """The tool not to be called in the next step (its prompt says so)."""
        return self.withheld.name if self.withheld else None

    def replied(self, finish_reason: str | None) -> None:
        self.reply_cut_off = finish_reason == "length"

    # ---- one call -----------------------------------------------------------------------------------
    def before(self, action: Action, step: int, plan_step: str) -> Action | ToolResult:
        """The call to run (a paged read asked again reads on), or the refusal to answer with."""
        self._read_on_note = ""
        if self.withheld and action.signature() == self.withheld.signature():  # the step's prompt said not to
            self.called_withheld = True
            return ToolResult.fail("repeated", f"not run: this call was refused already; {action.name} is not "
                                   "offered for this step. Use another tool now.")
        failed = self.failed_attempts.get(action.signature(), [])
        if len(failed) >= SAME_FAILURES_BEFORE_REFUSAL and len(set(failed[-SAME_FAILURES_BEFORE_REFUSAL:])) == 1:
            return ToolResult.fail("repeated", f"not run: {action.compact(200)} already failed twice with:\n"
                                   f"{failed[-1][:1500]}", details={"failed_before": True})
        self.tool_before_last, self.last_tool = self.last_tool, action.name
        if action.name == "update_plan" and self.tool_before_last == "update_plan":
            return ToolResult.fail("tool_error", "not run: you just updated the plan. Act on it now with a tool "
                                   f"such as read_file, search or replace_in_file, for the step: {plan_step}")
        seen = self.seen_calls.get(action.signature())
        if not seen or seen.workspace_version != self.workspace_version:
            return action
        if not seen.next_start_line:  # small models re-read; on a slow model that costs minutes
            return ToolResult.fail("repeated", f"not run: {action.compact(100)} already ran at step {seen.step} "
                                   "and nothing has changed since; its output is above. Act on it instead.")
        # the same paged read again: a model that asks twice wants what it has not seen yet
        self._read_on_note = (f"(that read ran at step {seen.step}; its output is above. Reading on from line "
                              f"{seen.next_start_line}.)\n")
        end = {"end_line": seen.end_line} if seen.end_line else {}
        return Action(name="read_file", args={"path": seen.path, "start_line": seen.next_start_line, **end},
                      call_id=action.call_id)

    def after(self, asked: Action, ran: Action, result: ToolResult, step: int) -> ToolResult:
        """Record what a sandbox call did; a read that read on says so first."""
        unchanging = self.toolbox.read_only | self.toolbox.checks
        if ran.name in unchanging:
            self.seen_calls[ran.signature()] = SeenCall(step, self.workspace_version)
        elif result.success or ran.name not in self.toolbox.editing:
            self.workspace_version += 1  # a refused edit wrote nothing; anything else may have changed it
        if ran.name == "read_file" and result.success:
            end = ran.args.get("end_line")
            seen = SeenCall(step, self.workspace_version, details("read_file", result).next_start_line,
                            ran.args.get("path", ""), end)
            self.seen_calls[asked.signature()] = self.seen_calls[ran.signature()] = seen
        if ran.name == "read_symbol" and result.success and (part := details("read_symbol", result).read_on):
            self.seen_calls[ran.signature()] = SeenCall(step, self.workspace_version, part.start, part.path,
                                                        part.end)
        if self._read_on_note:
            result = result.model_copy(update={"output": self._read_on_note + result.output})
        return result

    # ---- the end of a step ----------------------------------------------------------------------------
    def observe(self, action: Action | None, result: ToolResult) -> None:
        kind = failure_class(result) if not result.success else ""
        called_withheld, self.called_withheld = self.called_withheld, False
        self.refused_last_call = kind == "repeated" or called_withheld  # the next request samples warmer
        if called_withheld:
            return  # still withheld for the next step
        if action is None:
            self.withheld = None
            return
        if kind and kind != "repeated":
            self.failed_attempts[action.signature()].append(f"[{kind}] {exact_error(result)}")
        if action.name in self.toolbox.editing:
            unchanged = details(action.name, result).unchanged
            self.edit_resent_code = unchanged or (self.edit_resent_code and not result.success)
        self.withheld = action if kind == "repeated" and action.name != "finish" else None
