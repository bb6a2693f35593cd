"""The host's view of the tools: schemas for the model and argument validation, both made from
tools/specs.py, so what the model is told and what is checked cannot drift apart."""

from __future__ import annotations

import importlib.util
import sys
from typing import Any

from pydantic import BaseModel, ValidationError

from omni.resources import data_dir
from omni.results import Action, ToolResult


def _load_specs():
    name = "omni_tool_specs"  # private name: nothing called `tools` is imported on the host
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, data_dir("tools") / "specs.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _clean(schema: Any, defs: dict[str, Any]) -> Any:
    """Inline $refs and drop pydantic's titles: shorter schemas for small context windows."""
    if isinstance(schema, dict):
        if "$ref" in schema:
            return _clean(defs[schema["$ref"].split("/")[-1]], defs)
        if "anyOf" in schema and len(schema["anyOf"]) == 2 and {"type": "null"} in schema["anyOf"]:
            other = next(s for s in schema["anyOf"] if s != {"type": "null"})
            merged = {k: v for k, v in schema.items() if k != "anyOf"} | _clean(other, defs)
            return _clean(merged, defs)
        return {k: _clean(v, defs) for k, v in schema.items() if k not in ("title", "$defs")}
    if isinstance(schema, list):
        return [_clean(item, defs) for item in schema]
    return schema


def specs():
    """tools/specs.py, the one declaration of every tool."""
    return _load_specs()


def server_table() -> dict[str, list[str]]:
    """{module: [tool names]} of every tool that runs in the sandbox (a host tool's sandbox half too): the tool
    server's dispatch table."""
    table: dict[str, list[str]] = {}
    for spec in specs().ALL:
        if spec.kind != specs().HOST or spec.module:
            table.setdefault(spec.module, []).append(spec.__name__)
    return table


def details(name: str, result: ToolResult):
    """A result's details as its tool declared them: typed, with defaults where a field is missing."""
    declared = specs()
    spec = next((s for s in declared.ALL if s.__name__ == name), None)
    return (spec.details if spec else declared.Details).model_validate(result.details)


class Toolbox:
    def __init__(self, profile: str = "full", repair: bool = True, aider: bool = False):
        """profile: "full", every tool; "core", the few a small model chooses among well, plus the host tools.
        repair: offer propose_fixes (verified repair; off with --samples 1). aider: offer aider_edit (--aider)."""
        declared = specs()
        offered = [s for s in declared.ALL if s.kind not in (declared.INTERNAL, declared.HOST)]
        if profile == "core":
            offered = sorted((s for s in offered if s.core), key=lambda s: s.core)
        off = {name for name, on in (("propose_fixes", repair), ("aider_edit", aider)) if not on}
        host = [m for m in declared.of_kind(declared.HOST) if m.__name__ not in off]
        self.models: dict[str, type[BaseModel]] = {m.__name__: m for m in (*offered, *host)}
        self.host = {m.__name__ for m in host}
        self.read_only = {m.__name__ for m in declared.of_kind(declared.READ)}
        self.checks = {m.__name__ for m in declared.of_kind(declared.CHECK)}
        self.editing = {m.__name__ for m in declared.of_kind(declared.EDIT)} | {m.__name__ for m in host if m.edits}
        # Built once: every model request sends them, and a stable list keeps the prompt prefix cached.
        self._schemas = {name: self._build_schema(model) for name, model in self.models.items()}

    @property
    def names(self) -> list[str]:
        return list(self.models)

    def schema(self, name: str) -> dict[str, Any]:
        return self._schemas[name]

    @staticmethod
    def _build_schema(model: type[BaseModel]) -> dict[str, Any]:
        name = model.__name__
        raw = model.model_json_schema()
        params = _clean(raw, raw.get("$defs", {}))
        params.pop("description", None)
        params.setdefault("properties", {})
        return {"type": "function", "function": {
            "name": name, "description": (model.__doc__ or "").strip(), "parameters": params}}

    def schemas(self) -> list[dict[str, Any]]:
        return list(self._schemas.values())

    def signatures(self) -> list[dict[str, str]]:
        """One line per tool for text mode: name(param: type, opt?: type)."""
        out = []
        for name, model in self.models.items():
            params = []
            for field_name, field in model.model_fields.items():
                kind = getattr(field.annotation, "__name__", None) or str(field.annotation).replace(
                    "typing.", "")
                params.append(f"{field_name}{'' if field.is_required() else '?'}: {kind}")
            out.append({"name": name, "signature": ", ".join(params),
                        "description": (model.__doc__ or "").strip()})
        return out

    def validate(self, action: Action) -> dict[str, Any] | ToolResult:
        """The validated arguments, or a model-facing error result (nothing has run)."""
        if action.name not in self.models:
            return ToolResult.fail("unknown_tool", f"there is no tool named {action.name!r}. "
                                   f"Valid tools: {', '.join(self.models)}.")
        if "__invalid_json__" in action.args:
            return ToolResult.fail("format_error", (
                f"the arguments for {action.name} are not valid JSON ({action.args['__error__']}): "
                f"{action.args['__invalid_json__'][:300]}\nExpected parameters: "
                f"{self.schema(action.name)['function']['parameters']}"))
        try:
            return self.models[action.name].model_validate(action.args).model_dump(exclude_none=True)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or '(arguments)'}: {e['msg']}" for e in exc.errors())
            return ToolResult.fail("invalid_arguments", (
                f"invalid arguments for {action.name}: {problems}. Nothing ran.\nExpected parameters: "
                f"{self.schema(action.name)['function']['parameters']}"))
