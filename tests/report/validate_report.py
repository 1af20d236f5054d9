#!/usr/bin/python3
"""Validate report.json documents (or, with --case, per-case files) against
src/report/report.schema.json; one line per error naming the file and the member."""
import json
import sys

import jsonschema


def main(argv):
    case = argv[1:2] == ["--case"]
    files = argv[2:] if case else argv[1:]
    with open("src/report/report.schema.json") as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    if case:
        schema = dict(schema["$defs"]["case"], **{"$defs": schema["$defs"]})
    v = jsonschema.Draft202012Validator(schema)
    bad = 0
    for path in files:
        with open(path) as f:
            doc = json.load(f)
        for e in sorted(v.iter_errors(doc), key=lambda e: list(e.absolute_path)):
            where = "/".join(str(p) for p in e.absolute_path) or "(top)"
            print(f"{path}: {where}: {e.message}")
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
