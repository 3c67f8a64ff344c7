#!/usr/bin/env python3
"""schema_check.py SCHEMA_DIR json|jsonl FILE...: validate debit's output against
docs/schema (debit.schema.json for --format json, debit-run.schema.json for each line of
--jsonl). Prints one line per error (path: message) and exits 1 on any, 0 when all valid.
Works with Debian 12's python3-jsonschema (4.10, RefResolver) and newer (referencing)."""
import json
import os
import sys

import jsonschema


def validator_for(schema_dir, name):
    schemas = {}
    for f in ("debit.schema.json", "debit-run.schema.json"):
        with open(os.path.join(schema_dir, f)) as fp:
            s = json.load(fp)
        schemas[s["$id"]] = s
    main = next(s for s in schemas.values() if s["$id"].endswith("/" + name))
    cls = jsonschema.Draft202012Validator
    cls.check_schema(main)
    try:
        from referencing import Registry, Resource
        reg = Registry().with_resources((i, Resource.from_contents(s)) for i, s in schemas.items())
        return cls(main, registry=reg)
    except ImportError:
        resolver = jsonschema.RefResolver(main["$id"], main, store=schemas)
        return cls(main, resolver=resolver)


def main():
    schema_dir, kind, files = sys.argv[1], sys.argv[2], sys.argv[3:]
    v = validator_for(schema_dir, "debit.schema.json" if kind == "json" else "debit-run.schema.json")
    bad = 0
    for path in files:
        with open(path) as fp:
            docs = [json.load(fp)] if kind == "json" else [json.loads(line) for line in fp if line.strip()]
        for n, doc in enumerate(docs, 1):
            for e in v.iter_errors(doc):
                if e.context:  # anyOf: the branch of the right type says what is wrong
                    e = next((c for c in e.context if c.validator != "type"), e)
                where = "/".join(str(p) for p in e.absolute_path)
                print(f"{path}:{n}: /{where}: {e.message[:300]}")
                bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
