"""Validates summary files against docs/summary.schema.json with jsonschema (Draft 2020-12), an
implementation of JSON Schema written apart from Hitch: scripts/check-fleet.sh runs it on every
summary of its fleet run. Prints one line per invalid file (the deepest error that best explains it)
and exits 1 if any is invalid.
    python validate-summaries.py SCHEMA FILE...
"""
import json
import sys

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

schema = json.load(open(sys.argv[1]))
Draft202012Validator.check_schema(schema)
validator = Draft202012Validator(schema)
# Each kind of summary against its own branch as well, so an error names the key, not the whole oneOf.
branches = {"hitch-trace-summary": "traceSummary", "hitch-fleet-summary": "fleetSummary"}
branch_validators = {kind: Draft202012Validator({"$defs": schema["$defs"], "$ref": f"#/$defs/{name}"}) for kind, name in branches.items()}
invalid = 0
for path in sys.argv[2:]:
    with open(path) as f:
        document = json.load(f)
    kind = document.get("format") if isinstance(document, dict) else None
    error = best_match(branch_validators[kind].iter_errors(document)) if kind in branch_validators else None
    error = error or best_match(validator.iter_errors(document))
    if error is not None:
        invalid += 1
        print(f"{path}: {'/'.join(map(str, error.absolute_path)) or '(top)'}: {error.message[:300]}")
print(f"{len(sys.argv) - 2} summaries validated against {sys.argv[1]}, {invalid} invalid")
sys.exit(1 if invalid else 0)
