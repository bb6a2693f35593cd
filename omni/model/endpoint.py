"""Where the model is: flags first, then environment variables, resolved into ModelConfig."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from pydantic import BaseModel, Field

from omni.errors import UsageError
from omni.settings import Settings

OPENAI_URL = "https://api.openai.com/v1"
OPENROUTER_URL = "https://openrouter.ai/api/v1"
OPENROUTER_HEADERS = {"HTTP-Referer": "https://github.com/omni-agent/omni", "X-Title": "omni"}
def _default(key: str):
    """A setting's default, from the Settings model: the one place defaults are written."""
    return Settings.model_fields[key].default


class ModelConfig(BaseModel):
    """How to reach one model."""

    model: str = Field(description="model id as the server knows it")
    base_url: str = Field(description="OpenAI-compatible base URL, ending in /v1 for most servers")
    api_key: str = Field(description="API key; local servers accept any value")
    headers: dict[str, str] = Field(default_factory=dict, description="extra HTTP headers")
    tool_mode: str = Field(default=_default("tool_mode"), description="auto | native | text")
    stream: bool = Field(default=_default("stream"), description="stream replies (lets a stalled stream be cut)")
    idle_timeout: float = Field(default=_default("request_timeout"), description="seconds without a byte "
                                "before giving up")
    max_attempts: int = Field(default=6, description="attempts per request for 429, 5xx and network errors")
    retry_budget: float = Field(default=120.0, description="total seconds of retry waits per request")
    temperature: float | None = Field(default=_default("temperature"), description="sampling temperature; "
                                      "None = server default")
    max_tokens: int | None = Field(default=_default("max_tokens"), description="cap on completion tokens per reply")
    note: str = Field(default="", description="a provider variable that was set but not used, and how to pick it")
    price: str | None = Field(default=None, description="the user's price, USD per million tokens: IN,OUT[,CACHED]")


NO_MODEL = (
    "No model is configured.\n"
    "  --model NAME (or OMNI_MODEL) names the model, and one of these says where it is:\n"
    "  --base-url URL / OPENAI_BASE_URL / OPENAI_API_BASE   any OpenAI-compatible server (vLLM, LM Studio, llama.cpp)\n"
    "  --api-key KEY / OPENAI_API_KEY                        OpenAI\n"
    "  OPENROUTER_API_KEY                                    OpenRouter\n"
    "  OLLAMA_HOST                                           Ollama (uses {host}/v1)\n"
    "Example: omni --base-url http://127.0.0.1:8080/v1 --model qwen2.5-coder-1.5b \"fix the failing test\""
)


def _ollama_url(host: str) -> str:
    host = host.strip().rstrip("/")
    if not host.startswith(("http://", "https://")):
        host = "http://" + host
    if host.count(":") == 1:  # no port given
        host += ":11434"
    return host + "/v1"


@dataclass
class Endpoint:
    """Where requests go, with the source of each value (for `omni config` and the run's warnings)."""

    url: str
    key: str
    headers: dict[str, str] = field(default_factory=dict)
    url_from: str = ""
    key_from: str = ""
    note: str = ""  # a provider variable that was set but not used, and how to pick it


ORDER = ("--base-url/OMNI_BASE_URL, OPENAI_BASE_URL, OPENAI_API_BASE; with no URL: --api-key (OpenAI), "
         "OPENROUTER_API_KEY (OpenRouter), OLLAMA_HOST (Ollama), OPENAI_API_KEY (OpenAI)")


def _first(pairs) -> tuple[str, str]:
    return next(((value, name) for name, value in pairs if value), ("", ""))


def _no_endpoint(model: str | None) -> UsageError:
    if not model:
        return UsageError(NO_MODEL)
    if "/" in model:
        hint = f"{model} looks like an OpenRouter model id: set OPENROUTER_API_KEY (it is not set)"
    elif model.startswith(("gpt-", "o1", "o3", "o4", "chatgpt", "codex")):
        hint = f"{model} is an OpenAI model: set OPENAI_API_KEY or pass --api-key (neither is set)"
    else:
        hint = f"no API key and no server URL is set for {model}"
    return UsageError(f"{hint}.\n" + NO_MODEL.split("\n", 1)[1])


def resolve_endpoint(base_url: str | None, api_key: str | None, env: Mapping[str, str],
                     model: str | None = None) -> Endpoint:
    """Where the model is, by this order: an explicit URL first; with none, an explicit key means OpenAI,
    then the more specific provider variable wins over OPENAI_API_KEY (see ORDER), with a note when
    OPENAI_API_KEY was set too."""
    url, url_from = _first([("--base-url", base_url), ("OPENAI_BASE_URL", env.get("OPENAI_BASE_URL")),
                            ("OPENAI_API_BASE", env.get("OPENAI_API_BASE"))])
    key, key_from = _first([("--api-key", api_key)])
    note = ""
    if not url and not key:
        if env.get("OPENROUTER_API_KEY"):
            url, url_from = OPENROUTER_URL, "OPENROUTER_API_KEY"
        elif env.get("OLLAMA_HOST"):
            url, url_from = _ollama_url(env["OLLAMA_HOST"]), "OLLAMA_HOST"
        if url and env.get("OPENAI_API_KEY"):
            note = (f"{url_from} and OPENAI_API_KEY are both set: using {url} ({url_from} is the more specific); "
                    f"pass --base-url {OPENAI_URL} for OpenAI")
    openrouter = bool(url) and "openrouter.ai" in url
    if not key:
        # An OpenAI key goes to the URL the user named, never to one an OLLAMA_HOST chose.
        names = ("OPENROUTER_API_KEY", "OPENAI_API_KEY") if openrouter else (
            () if url_from == "OLLAMA_HOST" else ("OPENAI_API_KEY",))
        key, key_from = _first([(name, env.get(name)) for name in names])
    if not url:
        if not key:
            raise _no_endpoint(model)
        url, url_from = OPENAI_URL, f"default for {key_from}"
    if not key:
        if "api.openai.com" in url or openrouter:
            raise UsageError(f"{url} needs an API key: pass --api-key or set "
                             f"{'OPENROUTER_API_KEY' if openrouter else 'OPENAI_API_KEY'} (it is not set)")
        key, key_from = "sk-no-key-needed", "none needed (a local server accepts any)"
    return Endpoint(url.rstrip("/"), key, dict(OPENROUTER_HEADERS) if openrouter else {}, url_from, key_from, note)


def resolve_models(settings, env: Mapping[str, str] | None = None) -> tuple[ModelConfig, ModelConfig]:
    """The action model and the planner model from the effective settings (and the provider env vars)."""
    env = os.environ if env is None else env
    if not settings.model:
        raise UsageError(NO_MODEL)
    found = resolve_endpoint(settings.base_url, settings.api_key, env, settings.model)
    common = {"base_url": found.url, "api_key": found.key, "headers": found.headers, "tool_mode": settings.tool_mode,
              "stream": settings.stream, "idle_timeout": settings.request_timeout,
              "temperature": settings.temperature, "max_tokens": settings.max_tokens, "note": found.note,
              "price": settings.price}
    action = ModelConfig(model=settings.model, **common)
    planner = ModelConfig(model=settings.planner_model or settings.model, **common)
    return action, planner
