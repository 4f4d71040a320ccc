#!/usr/bin/env python3
"""Validates a JSON document against one of docs/schema/*.schema.json.
   scripts/check_schema.py SCHEMA DOCUMENT            exit 0 valid, 1 invalid with the reason
   scripts/check_schema.py --mutate SCHEMA DOCUMENT   the document must be valid, and every
       corruption of it invalid: each field given a value of the wrong type, each object an
       unknown key, each required key removed (the first element of every list is corrupted,
       as the items share one schema). Exit 1 lists the corruptions the schema accepted."""
import json
import sys

import jsonschema

WRONG = ["lots", 12345.5, True, [], {"x": 1}, None]
TYPES = {"string": str, "number": (int, float), "integer": int, "boolean": bool, "array": list, "object": dict,
         "null": type(None)}


def allowed(schema, v):
    if "const" in schema:
        return v == schema["const"]
    if "enum" in schema:
        return v in schema["enum"]
    types = schema.get("type")
    if types is None:
        return True
    types = types if isinstance(types, list) else [types]
    if isinstance(v, bool):
        return "boolean" in types
    if isinstance(v, float) and not v.is_integer():
        return "number" in types
    return any(isinstance(v, TYPES[t]) for t in types)


def mutations(schema, v, path):
    """Yields (path, subschema, corrupted value) for v and everything under it."""
    wrong = next((w for w in WRONG if not allowed(schema, w)), None)
    if wrong is None:
        yield path + " (untyped: accepts any value)", {}, None
    else:
        yield path + " -> " + json.dumps(wrong), schema, wrong
    if isinstance(v, dict):
        extra = schema.get("additionalProperties", True)
        if extra is True or extra == {}:
            yield path + " + unknown key (an open object)", {}, None
        elif extra is False:
            yield path + " + unknown key", schema, dict(v, gpuadvisor_unknown_key=1)
        for key in schema.get("required", []):
            if key in v:
                yield path + " - " + key, schema, {k: x for k, x in v.items() if k != key}
        props = schema.get("properties", {})
        for key, x in v.items():
            sub = props.get(key, extra if isinstance(extra, dict) else None)
            if sub is not None:
                yield from mutations(sub, x, f"{path}.{key}")
    elif isinstance(v, list) and v and isinstance(schema.get("items"), dict):
        yield from mutations(schema["items"], v[0], path + "[0]")


def main():
    mutate = sys.argv[1] == "--mutate"
    schema_path, doc_path = sys.argv[2:4] if mutate else sys.argv[1:3]
    schema = json.load(open(schema_path))
    document = json.load(open(doc_path))
    try:
        jsonschema.validate(document, schema)
    except jsonschema.ValidationError as e:
        print(f"{doc_path}: {e.message} at {list(e.absolute_path)}", file=sys.stderr)
        sys.exit(1)
    if not mutate:
        return
    accepted, total = [], 0
    for what, sub, corrupted in mutations(schema, document, "$"):
        total += 1
        if jsonschema.Draft7Validator(sub).is_valid(corrupted):
            accepted.append(what)
    for what in accepted:
        print(f"{doc_path}: the schema accepts {what}", file=sys.stderr)
    print(f"{total} corruptions, {total - len(accepted)} rejected")
    sys.exit(1 if accepted else 0)


if __name__ == "__main__":
    main()
