#!/usr/bin/env python3
"""Validates a JSON document against one of docs/schema/*.schema.json.
   scripts/check_schema.py SCHEMA DOCUMENT   (exit 0 valid, 1 invalid with the reason)"""
import json
import sys

import jsonschema

schema = json.load(open(sys.argv[1]))
document = json.load(open(sys.argv[2]))
try:
    jsonschema.validate(document, schema)
except jsonschema.ValidationError as e:
    print(f"{sys.argv[2]}: {e.message} at {list(e.absolute_path)}", file=sys.stderr)
    sys.exit(1)
