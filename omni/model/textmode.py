"""Actions written as text, for models or servers without native tool calling.

The prompt asks for one ```tool_call block holding {"name": ..., "arguments": {...}}. Parsing is
lenient about the wrapper, because small models drift: ```json fences, <tool_call> tags, a bare
JSON object, "tool"/"args"/"parameters" keys. It is strict about the content: one JSON object
with a tool name and an object of arguments.
"""

from __future__ import annotations

import json
from typing import Any

from omni.results import Action

_NAME_KEYS = ("name", "tool", "tool_name", "function")
_ARG_KEYS = ("arguments", "args", "parameters", "input")


class TextFormatError(ValueError):
    pass


def _fences(text: str) -> list[tuple[str, str]]:
    """(language, body) of each ``` fenced block, left to right. A scan with str.find, linear in the reply's length:
    a backtracking pattern took seconds on a fence or tag followed by thousands of spaces, and a reply has 4,096
    tokens to spend on that."""
    found, at = [], 0
    while (start := text.find("```", at)) != -1:
        i = start + 3
        while i < len(text) and text[i] in " \t":
            i += 1
        lang_start = i
        while i < len(text) and (text[i].isascii() and (text[i].isalpha() or text[i] == "_")):
            i += 1
        lang = text[lang_start:i]
        while i < len(text) and text[i] in " \t":
            i += 1
        if i >= len(text) or text[i] != "\n":
            at = start + 3  # not an opening fence: look on
            continue
        end = text.find("```", i + 1)
        if end == -1:
            break
        found.append((lang, text[i + 1:end]))
        at = end + 3
    return found


def _tags(text: str, opening: str = "<tool_call>", closing: str = "</tool_call>") -> list[str]:
    """The body of each <tool_call>...</tool_call>, stripped; linear, like _fences."""
    found, at = [], 0
    while (start := text.find(opening, at)) != -1:
        end = text.find(closing, start + len(opening))
        if end == -1:
            break
        found.append(text[start + len(opening):end].strip())
        at = end + len(closing)
    return found


def _candidates(text: str) -> list[str]:
    found = [body for lang, body in _fences(text) if lang.lower() in ("tool_call", "json", "")]
    found += _tags(text)
    if not found:
        start = text.find("{")
        if start != -1:
            found.append(text[start:])
    return found


def _to_action(obj: Any, index: int) -> Action:
    if not isinstance(obj, dict):
        raise TextFormatError("the tool call must be a JSON object")
    if isinstance(obj.get("function"), dict):  # OpenAI-shaped {"function": {"name", "arguments"}}
        obj = obj["function"]
    name = next((obj[k] for k in _NAME_KEYS if isinstance(obj.get(k), str)), None)
    if not name:
        raise TextFormatError('the tool call has no "name"')
    args: Any = next((obj[k] for k in _ARG_KEYS if k in obj), {})
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except json.JSONDecodeError as exc:
            raise TextFormatError(f'"arguments" is a string that is not valid JSON: {exc}') from exc
    if not isinstance(args, dict):
        raise TextFormatError('"arguments" must be a JSON object')
    return Action(name=name, args=args, call_id=f"text_{index}")


def parse_actions(text: str) -> list[Action]:
    """Every tool call found in a reply, in order. Raises TextFormatError when there is none."""
    decoder = json.JSONDecoder()
    actions: list[Action] = []
    problems: list[str] = []
    for chunk in _candidates(text):
        chunk = chunk.strip()
        try:
            obj, _ = decoder.raw_decode(chunk)
        except json.JSONDecodeError as exc:
            problems.append(f"invalid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})")
            continue
        try:
            actions.append(_to_action(obj, len(actions)))
        except TextFormatError as exc:
            problems.append(str(exc))
    if actions:
        return actions
    if problems:
        raise TextFormatError("; ".join(problems))
    raise TextFormatError("the reply contains no ```tool_call block")


def json_object(text: str) -> Any:
    """The JSON object in a reply that should hold one (from the first '{' to the last '}').
    Raises ValueError, or json.JSONDecodeError (a ValueError) when it does not parse."""
    start, end = text.find("{"), text.rfind("}")
    if start == -1 or end < start:
        raise ValueError("no JSON object in the reply")
    return json.loads(text[start:end + 1])


def code_of(reply: str) -> str:
    """The candidate's code: the (last) fenced block of a reply, else the reply if it starts with def or class."""
    blocks = [body for lang, body in _fences(reply) if lang.lower() in ("python", "py", "")]
    if blocks:
        return blocks[-1].strip("\n")
    text = reply.strip()
    return text if text.startswith(("def ", "async def ", "class ", "@")) else ""
