"""SARIF 2.1.0 validation for the audit tests, offline: the OASIS schema (errata01, draft-04) is
vendored in ``tests/schemas/`` from https://github.com/oasis-tcs/sarif-spec
(``sarif-2.1/schema/sarif-schema-2.1.0.json``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema

SCHEMA = Path(__file__).parent / "schemas" / "sarif-schema-2.1.0.json"


def validate_sarif(log: dict[str, Any]) -> None:
    """Raise `jsonschema.ValidationError` unless ``log`` is valid SARIF 2.1.0."""
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft4Validator.check_schema(schema)
    jsonschema.Draft4Validator(schema).validate(log)
