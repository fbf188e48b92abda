"""Validates JSON against the official Python SDK 0.3's pydantic models (a2a-sdk 0.3.26),
one request a line: `{"def": "<type name>", "value": <json>}` in, `{"ok": true}` or
`{"ok": false, "error": "..."}` out. The Rust tests keep one of these running and send
everything our server emits through it (tests/schema.rs)."""

import json
import sys

import a2a.types as types
from pydantic import TypeAdapter, ValidationError

adapters = {}

for line in sys.stdin:
    request = json.loads(line)
    name = request["def"]
    model = getattr(types, name, None)
    if model is None:
        out = {"ok": False, "error": f"a2a.types has no {name}"}
    else:
        adapter = adapters.setdefault(name, TypeAdapter(model))
        try:
            adapter.validate_python(request["value"])
            out = {"ok": True}
        except ValidationError as e:
            out = {"ok": False, "error": str(e)}
    print(json.dumps(out), flush=True)
