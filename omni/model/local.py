"""Local models without ceremony: find a model server on this machine, take its one model, and pick the settings a
small model works best with.

`--local` (and a run where nothing at all names an endpoint) asks the usual local servers on 127.0.0.1 for their
models, in this order: Ollama (11434), llama.cpp's server (8080), LM Studio (1234), vLLM (8000); the first that
answers is used. OMNI_LOCAL_PORTS changes where it looks. An endpoint that serves exactly one model needs no
--model. The small profile (core tools, 1024-token replies, no reviewer call: what every benchmark run of the 1.5B
model uses) is chosen for a small model on a local server, or with --profile small; a value the user set keeps it.
"""

from __future__ import annotations

import json
import os
import re
import urllib.request
from dataclasses import dataclass, field

from omni.errors import UsageError
from omni.model.pricing import is_local

SERVERS = (("Ollama", 11434), ("llama.cpp", 8080), ("LM Studio", 1234), ("vLLM", 8000))
PROBE_TIMEOUT_S = 1.0
SMALL_PARAMS = 8e9  # a model of at most this many parameters gets the small profile
SMALL = {"tools": "core", "max_tokens": 1024, "review": False}  # what the small profile sets, where the user did not
_SIZE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*[bB](?![a-zA-Z])")


@dataclass
class Served:
    """A model server and the models it serves (id -> parameter count, where the server says)."""

    url: str
    name: str = ""
    models: dict[str, float | None] = field(default_factory=dict)


def models_at(url: str, key: str = "", timeout: float = PROBE_TIMEOUT_S) -> dict[str, float | None] | None:
    """GET {url}/models: the ids it serves, with their parameter counts where the server says (llama.cpp's meta);
    None when nothing answers there with a model list."""
    request = urllib.request.Request(url.rstrip("/") + "/models", headers={"Authorization": f"Bearer {key}"}
                                     if key else {})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            listed = json.loads(response.read(4_000_000)).get("data")
    except (OSError, ValueError, AttributeError):
        return None
    if not isinstance(listed, list):
        return None
    found = {}
    for entry in listed:
        if isinstance(entry, dict) and isinstance(entry.get("id"), str):
            params = (entry.get("meta") or {}).get("n_params") if isinstance(entry.get("meta"), dict) else None
            found[entry["id"]] = float(params) if isinstance(params, (int, float)) else None
    return found


def ports(env=os.environ) -> list[tuple[str, int]]:
    given = [p for p in env.get("OMNI_LOCAL_PORTS", "").replace(",", " ").split() if p.isdigit()]
    return [("a local server", int(p)) for p in given] if given else list(SERVERS)


def find_server(env=os.environ) -> Served | None:
    """The first local server that answers with a list of models."""
    for name, port in ports(env):
        url = f"http://127.0.0.1:{port}/v1"
        models = models_at(url)
        if models is not None:
            return Served(url, name, models)
    return None


def no_server(env=os.environ) -> str:
    where = ", ".join(f"{name} ({port})" for name, port in ports(env))
    return (f"--local: no model server answered on 127.0.0.1 (tried {where}). Start one (`ollama serve`, "
            "`llama-server -m MODEL.gguf`, LM Studio's server, `vllm serve MODEL`), or give its URL with --base-url")


def one_model(served: Served) -> str:
    """The endpoint's model when it serves exactly one; else a UsageError naming them."""
    if len(served.models) == 1:
        return next(iter(served.models))
    if not served.models:
        raise UsageError(f"{served.url} serves no model; load one, or name it with --model")
    listed = ", ".join(sorted(served.models)[:12])
    raise UsageError(f"{served.url} serves {len(served.models)} models ({listed}); choose one with --model")


def is_small(model: str, params: float | None) -> bool:
    """Whether a model is small: the server's parameter count, else a size in its name (qwen2.5-coder-1.5b, :7b)."""
    if params:
        return params <= SMALL_PARAMS
    sizes = [float(m) for m in _SIZE.findall(model)]
    return bool(sizes) and max(sizes) * 1e9 <= SMALL_PARAMS


def settle(settings, sources: dict[str, str], env=os.environ):
    """The settings with the endpoint found (--local, or nothing configured at all), the model taken from an
    endpoint that serves one, and the profile chosen ("small" or "default"; the user's own values kept). A
    UsageError when --local finds nothing, or the model cannot be told."""
    from omni.model.endpoint import resolve_endpoint

    update: dict = {}
    served: Served | None = None
    if settings.local:
        served = find_server(env)
        if served is None:
            raise UsageError(no_server(env))
        update["base_url"] = served.url
    elif not settings.model or not settings.base_url:
        try:
            endpoint = resolve_endpoint(settings.base_url, settings.api_key, env, settings.model)
        except UsageError:
            served = find_server(env)  # nothing names an endpoint: a local server, if one runs
            if served is None:
                raise
            update["base_url"] = served.url
        else:
            if not settings.model:
                listed = models_at(endpoint.url, endpoint.key)
                served = Served(endpoint.url, "", listed) if listed is not None else None
    model = settings.model
    if not model:
        if served is None:
            raise UsageError("no model is named and the endpoint does not list its models: pass --model NAME")
        model = update["model"] = one_model(served)
    url = resolve_endpoint(update.get("base_url", settings.base_url), settings.api_key, env, model).url
    params = served.models.get(model) if served else None
    small = settings.profile == "small" or (settings.profile == "auto" and is_local(url) and is_small(model, params))
    update["profile"] = "small" if small else "default"
    if small:
        update.update({k: v for k, v in SMALL.items() if sources.get(k, "default") == "default"})
    return settings.model_copy(update=update)
