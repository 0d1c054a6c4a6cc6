"""YAML 1.2 as pi's ``yaml`` package reads it, with ruamel.yaml (libyaml through ruamel.yaml.clib
when installed, ruamel's Python parser otherwise).

The core schema and nothing else: ``\\u`` escapes, multi-line quoted strings, anchors and aliases,
nested flow collections and tags all work; ``yes``/``no``/``on`` and dates stay strings; ``<<`` is
an ordinary key (no merge); an unknown tag (``!thing value``) is ignored and the value read as if
untagged; keys are strings, as in a JavaScript object (``1`` and ``true`` are the keys "1" and
"true"), and a duplicate key is an error. Problems come back as ``YamlProblem`` with the 0-based
line the parser reports.
"""

from __future__ import annotations

import math
import re
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.constructor import ConstructorError, SafeConstructor
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from ruamel.yaml.resolver import BaseResolver

try:
    from ruamel.yaml import CParser  # libyaml, from ruamel.yaml.clib: about four times faster
except ImportError:  # pragma: no cover - a platform without the compiled parser
    CParser = None


class YamlProblem(Exception):
    """The YAML does not parse (or repeats a key): where, and why."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line + 1}: {message}")
        self.line = line
        self.message = message


def read_yaml_mapping(text: str, *, pure: bool = False) -> tuple[dict[str, Any], dict[str, int]]:
    """The top-level mapping of the YAML ``text`` (empty when it is not a mapping) and the 0-based
    line of each of its keys; ``YamlProblem`` when it does not parse. ``pure`` reads with ruamel's
    Python parser even where the C one is installed."""
    try:
        return _read_mapping(text, pure=pure)
    except YAMLError as problem:
        raise YamlProblem(*_located(problem)) from None


def _read_mapping(text: str, *, pure: bool) -> tuple[dict[str, Any], dict[str, int]]:
    # pi's yaml package ends the last line of a block scalar as if a line break followed it.
    node, constructor = _compose(text + "\n", pure=pure)
    if not isinstance(node, MappingNode):
        if node is not None:
            constructor.construct_document(node)  # still report an error inside it
        return {}, {}
    value = constructor.construct_document(node)
    key_lines = {
        _js_key(constructor.construct_object(key_node, deep=True)): key_node.start_mark.line
        for key_node, _ in node.value
    }
    return value, key_lines


class CoreSchemaResolver(BaseResolver):
    """YAML 1.2's core schema, and nothing else: null, booleans, integers, floats; the rest are
    strings (no timestamps, no ``yes``/``no`` booleans, no ``1_000``, no merge keys)."""

    def __init__(self, version: Any = None, loader: Any = None) -> None:
        super().__init__(loader)

    @property
    def processing_version(self) -> tuple[int, int]:
        return (1, 2)  # the parser asks; YAML 1.2 rules for the syntax too


_CORE_SCALARS = (
    ("tag:yaml.org,2002:null", r"^(?:~|null|Null|NULL|)$", "~nN"),
    ("tag:yaml.org,2002:bool", r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
    ("tag:yaml.org,2002:int", r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$", "-+0123456789"),
    (
        "tag:yaml.org,2002:float",
        (
            r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
            r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
        ),
        "-+0123456789.",
    ),
)
for _tag, _pattern, _first in _CORE_SCALARS:
    CoreSchemaResolver.add_implicit_resolver_base(_tag, re.compile(_pattern), [*_first, ""])


class FrontmatterConstructor(SafeConstructor):
    """Mappings as JavaScript objects (string keys: ``1`` and ``true`` are the keys "1" and
    "true", not one key twice), no merge keys, and an unknown tag's node read as if it had none,
    as pi's ``yaml`` package does."""

    def construct_mapping(self, node: Node, deep: bool = False) -> dict[str, Any]:
        if not isinstance(node, MappingNode):
            kind = type(node).__name__
            raise ConstructorError(None, None, f"expected a mapping, found {kind}", node.start_mark)
        mapping: dict[str, Any] = {}
        for key_node, value_node in node.value:
            key = _js_key(self.construct_object(key_node, deep=True))
            if key in mapping:
                raise ConstructorError(
                    "while reading a mapping",
                    node.start_mark,
                    f'found duplicate key "{key}"',
                    key_node.start_mark,
                )
            mapping[key] = self.construct_object(value_node, deep=deep)
        return mapping

    def construct_undefined(self, node: Node) -> Any:
        if isinstance(node, ScalarNode):
            return node.value
        if isinstance(node, SequenceNode):
            return self.construct_sequence(node, deep=True)
        if isinstance(node, MappingNode):
            return self.construct_mapping(node, deep=True)
        return None


FrontmatterConstructor.add_constructor(None, FrontmatterConstructor.construct_undefined)


def _compose(text: str, *, pure: bool) -> tuple[Node | None, SafeConstructor]:
    if CParser is not None and not pure:
        loader = _CLoader(text)
        return loader.get_single_node(), loader
    yaml = YAML(typ="safe", pure=True)
    yaml.Resolver = CoreSchemaResolver
    yaml.Constructor = FrontmatterConstructor
    return yaml.compose(text), yaml.constructor


if CParser is not None:

    class _CLoader(CParser, FrontmatterConstructor, CoreSchemaResolver):
        """libyaml's parser with the core schema and pi's reading of mappings and tags."""

        def __init__(self, text: str) -> None:
            CParser.__init__(self, text)
            FrontmatterConstructor.__init__(self, loader=self)
            CoreSchemaResolver.__init__(self, loader=self)


def _located(problem: YAMLError) -> tuple[int, str]:
    """The 0-based line and the first line of ruamel's message for ``problem``."""
    if isinstance(problem, MarkedYAMLError):
        mark = problem.problem_mark or problem.context_mark
        text = problem.problem or problem.context or str(problem)
        return (mark.line if mark is not None else 0), str(text).strip()
    return 0, str(problem).splitlines()[0] if str(problem) else type(problem).__name__


def _js_key(key: Any) -> str:
    if isinstance(key, str):
        return key
    if key is None:
        return ""
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, float) and math.isfinite(key) and key.is_integer():
        return str(int(key))
    if isinstance(key, (tuple, list)):
        return ",".join(_js_key(item) for item in key)
    return str(key)
