"""One tool, declared once: what the assistant reads, its argument schema, its hints, its code.

A :class:`Tool` holds everything a front end needs: the name, title and description (with
profile placeholders such as ``{timeout_s}``), the JSON schema of each parameter, the four MCP
annotations (``readOnlyHint``, ``destructiveHint``, ``idempotentHint``, ``openWorldHint``), whether
it changes the session, the handler that serves it and the renderer of its result; optionally an
``output_schema`` (MCP ``outputSchema``) that a successful result's structured part conforms to.

Blocks: a call whose arguments do not match the schema (:meth:`Tool.check`, see schema.py) and a
declaration that leaves out a hint or gives a non-bool one (at import).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Callable

from launcher.tools import content, schema

ANNOTATION_KEYS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")


def hints(*, read_only: bool, destructive: bool, idempotent: bool, open_world: bool) -> dict[str, bool]:
    """The four MCP tool annotations, spelt as MCP spells them."""
    return dict(zip(ANNOTATION_KEYS, (read_only, destructive, idempotent, open_world)))


@dataclass(frozen=True)
class Tool:
    name: str
    title: str
    description: str                   # may hold {allowed_imports}, {timeout_s}, {max_...}: see describe()
    params: dict[str, dict]            # parameter name -> JSON schema (with "description")
    handler: Callable[..., dict]       # handler(ctx, session, **args) -> result dict
    annotations: dict[str, bool]       # exactly ANNOTATION_KEYS (see hints())
    changes_session: bool              # True: the session's state, history or snapshots change
    renderer: Callable[[dict], list[dict]] | None = None  # result -> content blocks (None: JSON)
    required: tuple[str, ...] = ()
    needs_session: bool = True         # False: handler(ctx, None, **args) manages the session itself
    normalize: Callable[[dict], dict] | None = None  # accepted spellings -> canonical, before check()
    output_schema: dict | None = None  # MCP outputSchema: a successful result's ``result[name]`` conforms

    def __post_init__(self):
        if tuple(self.annotations) != ANNOTATION_KEYS or not all(type(v) is bool for v in self.annotations.values()):
            raise ValueError(f"tool {self.name}: annotations must be hints(...) with four bools")
        if type(self.changes_session) is not bool or not set(self.required) <= set(self.params):
            raise ValueError(f"tool {self.name}: changes_session must be a bool, required a subset of params")

    def describe(self, profile=None) -> str:
        return schema.fill(self.description, profile)

    def input_schema(self, profile=None) -> dict:
        """The schema clients see in tools/list (profile facts filled into the descriptions)."""
        return schema.with_profile(self._schema, profile)

    @cached_property
    def _schema(self) -> dict:
        return {"type": "object", "properties": self.params, "required": list(self.required),
                "additionalProperties": False}

    @cached_property
    def _validator(self):
        return schema.validator(self._schema)

    def check(self, args) -> dict:
        """The arguments to call the handler with, or schema.ArgumentError."""
        if self.normalize is not None and isinstance(args, dict):
            args = self.normalize(args)
        return schema.check_args(self.name, self._validator, self.required, args)

    @cached_property
    def _output_validator(self):
        return None if self.output_schema is None else schema.validator(self.output_schema)

    def structured(self, result) -> dict | None:
        """The MCP ``structuredContent`` of a successful call: ``result[self.name]`` checked against
        ``output_schema`` (ValueError when it does not conform); None for a failed call or a tool
        without an output schema."""
        if self.output_schema is None or content.is_error(result):
            return None
        data = result.get(self.name)
        err = next(iter(self._output_validator.iter_errors(data)), None)
        if err is not None:
            where = "/".join(str(p) for p in err.absolute_path) or "the result"
            raise ValueError(f"{self.name}: the result does not match the tool's output schema at {where}")
        return data

    def content(self, result) -> list[dict]:
        """The result as MCP content blocks: ``Error: ...`` for a failed call, else the renderer's."""
        err = content.error(result)
        if err is not None:
            return err
        return content.as_json(result) if self.renderer is None else self.renderer(result)
