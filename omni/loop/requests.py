"""One request for the next action: the conversation's messages, the tools on offer, and the guard's
sampling options; on a context overflow, older turns are condensed and the request sent again."""

from __future__ import annotations

import json

from omni.box.toolbox import Toolbox
from omni.errors import ContextLengthExceeded, ModelError
from omni.loop.conversation import Conversation
from omni.loop.guard import RequestOptions
from omni.model.client import Reply
from omni.protocols import Events, Model
from omni.results import Action


def ask(model: Model, conversation: Conversation, prompt: str, toolbox: Toolbox, options: RequestOptions,
        events: Events):
    messages = conversation.messages(prompt)
    # The tools are the same in every request, a withheld one included: on llama.cpp they are part of the
    # prompt's start, and a list one tool short makes the server read the whole prompt again (minutes on a
    # CPU). The step prompt says which tool is withheld and the guard refuses the repeated call.
    tools = toolbox.schemas()
    while True:
        try:
            return model.complete(messages, tools, temperature=options.temperature)
        except ContextLengthExceeded as exc:
            if not conversation.condense():
                raise ModelError(f"the request does not fit the model's context window: {exc}") from exc
            condensed = conversation.messages(prompt)
            if condensed == messages:  # never send the same request twice
                raise ModelError("the context window is too small even after condensing") from exc
            events.emit("condensed", turns=len(conversation.turns))
            messages = condensed


def chosen_by_omni(action: Action, tool_mode: str) -> Reply:
    """An action omni takes itself, as the reply that would have asked for it: it joins the history like
    the model's own calls (in text mode, written the way the model is asked to write one)."""
    text = "" if tool_mode == "native" else "```tool_call\n" + json.dumps({"name": action.name,
                                                                          "arguments": action.args}) + "\n```"
    return Reply(text=text, actions=[action])
