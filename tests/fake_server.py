"""A scripted OpenAI-compatible server for tests and runner checks: real HTTP, real SSE.

Each request to /v1/chat/completions takes the next scripted turn and is recorded whole.
A turn is a dict, one of:
  {"tool": NAME, "args": {...}}            one native tool call (args may be a raw string)
  {"calls": [{"tool":..., "args":...}]}    several tool calls in one reply
  {"text": "..."}                          a plain text reply (plans, text-mode actions, answers)
  {"choices": ["...", "..."]}              several text choices (an answer to a request with n > 1)
  {"status": 429, "headers": {...}, "error": "..."}   an HTTP error
  {"stall": SECONDS}                       send headers, then nothing, for SECONDS
Structured output: a request whose response_format is the probe omni sends ("omni_probe") is answered
{"ok": true} without taking a turn (recorded in `probes`); with structured=False, any request with a
response_format gets HTTP 400, as from a server without it.
slots=N: GET /props answers {"total_slots": N}, as llama.cpp's server does (otherwise 404).
Options on any reply turn: "delay": SECONDS (answered that much later),
"omit_ids": true (no tool call ids), "usage": {...},
"finish_reason": "length" (a reply cut off at max_tokens; default "tool_calls" or "stop").
When the script is exhausted the server answers 500 "script exhausted", so a test sees it.
POST /v1/completions (fill in the middle) takes no turn: with fills=FUNCTION, a prompt in Qwen's sentinels is
answered FUNCTION(prefix, suffix) in every choice (`n` of them; None: HTTP 400) and recorded in `filled`; without,
404.
A turn with "plan": true goes to the first request for a plan (its last message asks for a high-level plan), which
takes no other turn while one is so marked: omni asks for its first plan beside other work (a reproduction test, its
opening round), so that request may come second.
Scripts for runs at once: add_for(KEY, *turns) gives the turns to the requests whose first messages hold KEY (a
marker in each run's goal); they are taken before the shared script.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CHUNK = 7  # split tool-call arguments into pieces this long when streaming


class FakeOpenAI:
    def __init__(self, script: list[dict[str, Any]] | None = None, model: str = "fake-model",
                 structured: bool = True, slots: int | None = None, fills=None):
        self.slots = slots
        self.fills = fills  # (prefix, suffix) -> the middle, for /v1/completions; None: not served
        self.filled: list[dict[str, Any]] = []
        self.script = list(script or [])
        self.keyed: dict[str, list[dict[str, Any]]] = {}
        self.in_flight = self.most_in_flight = 0  # chat requests being answered at once, and the most ever
        self.requests: list[dict[str, Any]] = []
        self.probes: list[dict[str, Any]] = []
        self.structured = structured
        self.headers: list[dict[str, str]] = []
        self.model = model
        self.lock = threading.Lock()
        handler = type("Handler", (_Handler,), {"fake": self})
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> FakeOpenAI:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def add(self, *turns: dict[str, Any]) -> None:
        with self.lock:
            self.script.extend(turns)

    def served_for(self, key: str) -> int:
        """How many requests of the runs marked KEY were answered from its script."""
        with self.lock:
            return sum(key in json.dumps(body.get("messages", [])[:2]) for body in self.requests)

    def counted(self, delta: int) -> None:
        with self.lock:
            self.in_flight += delta
            self.most_in_flight = max(self.most_in_flight, self.in_flight)

    def add_for(self, key: str, *turns: dict[str, Any]) -> None:
        with self.lock:
            self.keyed.setdefault(key, []).extend(turns)

    def next_turn(self, body: dict[str, Any], headers: dict[str, str]) -> dict[str, Any] | None:
        with self.lock:
            self.requests.append(body)
            self.headers.append(headers)
            opening = json.dumps(body.get("messages", [])[:2])
            for key, turns in self.keyed.items():
                if key in opening:
                    return turns.pop(0) if turns else None
            marked = [n for n, turn in enumerate(self.script) if turn.get("plan")]
            if marked and _asks_for_plan(body):
                return self.script.pop(marked[0])
            unmarked = [n for n, turn in enumerate(self.script) if not turn.get("plan")]
            return self.script.pop(unmarked[0]) if unmarked else None


def _asks_for_plan(body: dict[str, Any]) -> bool:
    messages = body.get("messages") or [{}]
    return "high-level plan" in str(messages[-1].get("content", ""))


class _Handler(BaseHTTPRequestHandler):
    fake: FakeOpenAI
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            self._json(200, {"object": "list", "data": [{"id": self.fake.model, "object": "model"}]})
        elif self.path.rstrip("/") == "/props" and self.fake.slots is not None:
            self._json(200, {"total_slots": self.fake.slots, "model_alias": self.fake.model})
        else:
            self._json(404, {"error": {"message": "not found"}})

    def do_POST(self) -> None:
        self.fake.counted(1)
        try:
            self._post()
        finally:
            self.fake.counted(-1)

    def _post(self) -> None:
        length = int(self.headers.get("content-length", 0))
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except json.JSONDecodeError:
            self._json(400, {"error": {"message": "invalid JSON body"}})
            return
        if self.path.rstrip("/").endswith("/completions") and "/chat/" not in self.path:
            self._fill(body)
            return
        if body.get("response_format") and not self.fake.structured:
            self._json(400, {"error": {"message": "response_format is not supported", "type": "invalid_request_error"}})
            return
        if (body.get("response_format") or {}).get("json_schema", {}).get("name") == "omni_probe":
            self.fake.probes.append(body)
            turn = {"text": '{"ok": true}'}
        else:
            turn = self.fake.next_turn(body, {k.lower(): v for k, v in self.headers.items()})
        if turn is not None and "delay" in turn:  # a slow server: the reply comes after this many seconds
            time.sleep(turn["delay"])
        if turn is None:
            self._json(500, {"error": {"message": "script exhausted", "type": "server_error"}})
        elif "status" in turn:
            self._json(turn["status"], {"error": {"message": turn.get("error", "scripted error"),
                                                  "type": "invalid_request_error", "code": turn.get("code")}},
                       turn.get("headers", {}))
        elif "stall" in turn:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.end_headers()
            self.wfile.flush()
            time.sleep(turn["stall"])
        elif body.get("stream"):
            self._stream(body, turn)
        else:
            self._json(200, self._completion(body, turn))

    def _fill(self, body: dict[str, Any]) -> None:
        """A fill-in-the-middle completion: the prompt's prefix and suffix (Qwen's sentinels) to fake.fills."""
        if self.fake.fills is None:
            self._json(404, {"error": {"message": "no completions endpoint", "type": "not_found"}})
            return
        prompt = str(body.get("prompt", ""))
        prefix, _, rest = prompt.removeprefix("<|fim_prefix|>").partition("<|fim_suffix|>")
        suffix = rest.removesuffix("<|fim_middle|>")
        with self.fake.lock:
            self.fake.filled.append(body)
        middle = self.fake.fills(prefix, suffix)
        if middle is None:  # a server that fails the request
            self._json(400, {"error": {"message": "the fill failed", "type": "invalid_request_error"}})
            return
        choices = [{"index": n, "text": middle, "finish_reason": "stop"} for n in range(int(body.get("n") or 1))]
        self._json(200, {"id": "cmpl-fake", "object": "text_completion", "created": int(time.time()),
                         "model": body.get("model", self.fake.model), "choices": choices,
                         "usage": {"prompt_tokens": len(prompt) // 4, "completion_tokens": len(middle) // 4 + 1,
                                   "total_tokens": len(prompt) // 4 + len(middle) // 4 + 1}})

    # ---- replies --------------------------------------------------------------------------------
    def _calls(self, turn) -> list[tuple[str, str, str | None]]:
        raw = turn.get("calls") or ([turn] if "tool" in turn else [])
        out = []
        for n, call in enumerate(raw):
            args = call.get("args", {})
            text = args if isinstance(args, str) else json.dumps(args)
            out.append((call["tool"], text, None if turn.get("omit_ids") else f"call_{n}_{id(turn) % 99999}"))
        return out

    def _usage(self, turn) -> dict[str, Any]:
        usage = {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120,
                 "prompt_tokens_details": {"cached_tokens": 0}}
        usage.update(turn.get("usage", {}))
        return usage

    @staticmethod
    def _finish(turn, calls) -> str:
        return turn.get("finish_reason") or ("tool_calls" if calls else "stop")

    def _completion(self, body, turn) -> dict[str, Any]:
        calls = self._calls(turn)
        message: dict[str, Any] = {"role": "assistant", "content": turn.get("text")}
        if calls:
            message["tool_calls"] = [{"id": cid or "", "type": "function",
                                      "function": {"name": name, "arguments": args}}
                                     for name, args, cid in calls]
        choices = [{"index": 0, "message": message, "finish_reason": self._finish(turn, calls)}]
        if "choices" in turn:  # several samples of one prompt (a request with n > 1)
            choices = [{"index": n, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
                       for n, text in enumerate(turn["choices"])]
        return {"id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()),
                "model": body.get("model", self.fake.model), "choices": choices, "usage": self._usage(turn)}

    def _stream(self, body, turn) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")  # the body ends with the connection, as HTTP/1.1 has it
        self.close_connection = True
        self.end_headers()
        base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": int(time.time()),
                "model": body.get("model", self.fake.model)}

        def send(choices, usage=None):
            chunk = dict(base, choices=choices)
            if usage is not None:
                chunk["usage"] = usage
            self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
            self.wfile.flush()

        send([{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}])
        text = turn.get("text") or ""
        for start in range(0, len(text), 20):
            send([{"index": 0, "delta": {"content": text[start:start + 20]}, "finish_reason": None}])
        calls = self._calls(turn)
        for index, (name, args, cid) in enumerate(calls):
            first = {"index": index, "type": "function", "function": {"name": name, "arguments": ""}}
            if cid:
                first["id"] = cid
            send([{"index": 0, "delta": {"tool_calls": [first]}, "finish_reason": None}])
            for start in range(0, len(args), CHUNK):
                piece = {"index": index, "function": {"arguments": args[start:start + CHUNK]}}
                send([{"index": 0, "delta": {"tool_calls": [piece]}, "finish_reason": None}])
        send([{"index": 0, "delta": {}, "finish_reason": self._finish(turn, calls)}])
        if (body.get("stream_options") or {}).get("include_usage"):
            send([], usage=self._usage(turn))
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()

    def _json(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)
