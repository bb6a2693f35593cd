"""Where the model is: flags first, then environment variables, resolved into ModelConfig."""

from __future__ import annotations

import os
from collections.abc import Mapping

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


def resolve_endpoint(base_url: str | None, api_key: str | None, env: Mapping[str, str]) -> tuple[str, str, dict]:
    """(base_url, api_key, headers) from flags and environment, in that order of precedence."""
    headers: dict[str, str] = {}
    url = base_url or env.get("OPENAI_BASE_URL") or env.get("OPENAI_API_BASE")
    key = api_key or env.get("OPENAI_API_KEY")
    if not url and env.get("OPENROUTER_API_KEY") and not key:
        url, key = OPENROUTER_URL, env["OPENROUTER_API_KEY"]
    if not url and env.get("OLLAMA_HOST") and not key:
        url = _ollama_url(env["OLLAMA_HOST"])
    if url and "openrouter.ai" in url:
        key = key or env.get("OPENROUTER_API_KEY")
        headers.update(OPENROUTER_HEADERS)
    if not url:
        if not key:
            raise UsageError(NO_MODEL)
        url = OPENAI_URL
    if not key:
        if "api.openai.com" in url or "openrouter.ai" in url:
            raise UsageError(f"{url} needs an API key: pass --api-key or set "
                             f"{'OPENROUTER_API_KEY' if 'openrouter' in url else 'OPENAI_API_KEY'}")
        key = "sk-no-key-needed"  # local servers accept anything; the client insists on a value
    return url.rstrip("/"), key, headers


def resolve_models(settings, env: Mapping[str, str] | None = None) -> tuple[ModelConfig, ModelConfig]:
    """The action model and the planner model from the effective settings (and the provider env vars)."""
    env = os.environ if env is None else env
    url, key, headers = resolve_endpoint(settings.base_url, settings.api_key, env)
    if not settings.model:
        raise UsageError(NO_MODEL)
    common = {"base_url": url, "api_key": key, "headers": headers, "tool_mode": settings.tool_mode,
              "stream": settings.stream, "idle_timeout": settings.request_timeout,
              "temperature": settings.temperature, "max_tokens": settings.max_tokens}
    action = ModelConfig(model=settings.model, **common)
    planner = ModelConfig(model=settings.planner_model or settings.model, **common)
    return action, planner
