"""Reading a YAML file that a JSON Schema describes, with errors a person can act on.

The rubric and the course profiles are both written by hand; a mistake in either is reported
as ``file:line: path: problem``, never a traceback, and names the documentation section to read.
"""

from __future__ import annotations

import contextlib
import marshal
from pathlib import Path
from typing import Any

import jsonschema
import yaml

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's safe loader where PyYAML has it: a tenth of the time of the pure-Python one."""
_VALID: dict[tuple[str, str, int], bytes] = {}
"""The files this process has read and found valid, by path, text and schema, as ``marshal``
keeps plain data: a batch lane reads the rubric and the profile once, and each of its forks
takes a fresh copy of their data instead of parsing and validating them again (10-18 ms of a
fork's CPU). A file whose text changed is read anew."""


def line_of(text: str, path: list[Any]) -> int:
    """The 1-based line of the YAML node at a JSON path (as far as the path exists). Only an
    error needs it, so only then is the text parsed into nodes that keep their lines."""
    node = yaml.compose(text)
    for key in path:
        if isinstance(node, yaml.MappingNode):
            match = [v for k, v in node.value if k.value == key]
            if not match:
                break
            node = match[0]
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
            node = node.value[key]
        else:
            break
    return node.start_mark.line + 1


def load_validated(
    path: Path, schema: dict[str, Any], what: str, see: str, error: type[Exception]
) -> tuple[Any, str]:
    """The data of the YAML file at ``path`` and its text, once it matches ``schema``; else
    ``error("file:line: path: problem. <see>")``, ``see`` naming the section of the docs to
    read. ``what`` names the file's role in the messages (``the rubric``)."""
    try:
        text = path.read_text()
        known = _VALID.get((str(path), text, id(schema)))
        if known is not None:
            return marshal.loads(known), text
        data = yaml.load(text, Loader=_LOADER)
    except OSError as exc:
        raise error(f"{path}: cannot read {what} ({exc.strerror})") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark else ""
        raise error(f"{path}{line}: not valid YAML ({getattr(exc, 'problem', exc)})") from None
    errors = sorted(
        jsonschema.Draft202012Validator(schema).iter_errors(data),
        key=lambda e: list(e.absolute_path),
    )
    if errors:
        first = errors[0]
        where = "/".join(str(p) for p in first.absolute_path) or "top level"
        raise error(
            f"{path}:{line_of(text, list(first.absolute_path))}: {where}: {first.message}. {see}"
        )
    with contextlib.suppress(ValueError):  # data marshal cannot keep (a YAML date) is not kept
        _VALID[(str(path), text, id(schema))] = marshal.dumps(data)
    return data, text
