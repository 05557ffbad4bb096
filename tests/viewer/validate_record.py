"""Validates the foxglove.* channels of a run record against Foxglove's own JSON Schemas.

    validate_record.py RECORD [--break N] [--strict] [--schemas DIR]

RECORD is a record.mcap (or the run folder holding it). Every message on a channel whose schema
name starts with `foxglove.` must be JSON (message encoding `json`, schema encoding
`jsonschema`) and validate against the JSON Schema of that name from the npm package
@foxglove/schemas (DIR, default <repo>/.npm-test/node_modules/@foxglove/schemas, installed by
`scripts/setup --test`; its `jsonschema` module is read with node). Other channels are the
project's own and are not checked.

--strict also refuses what the schemas allow but a viewer would silently ignore: a property
the schema does not name (a misspelt field), and a property it names left out.

--break N first corrupts the N-th foxglove.* message (counting from 1, in log-time order):
the first `nsec` in it becomes a string, or, without one, the first non-string property its
schema requires does; the validation must then fail on it.

Prints one line per schema: how many messages validated, on which topics. Exits 1 naming the
topic, the message's index on it (from 1), its log time and the error, on the first failure;
1 too when the record holds no foxglove.* message; 2 on bad arguments or an unreadable record
or package.
"""
import argparse
import copy
import json
import os
import subprocess
import sys

import jsonschema
from mcap.reader import make_reader

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_SCHEMAS = os.path.join(REPO, ".npm-test", "node_modules", "@foxglove", "schemas")


def fail(code, text):
    print(f"validate_record: {text}", file=sys.stderr)
    sys.exit(code)


def load_schemas(package):
    """{"foxglove.Name": schema} from the package's `jsonschema` module."""
    if not os.path.isfile(os.path.join(package, "package.json")):
        fail(2, f"no npm package at {package} (scripts/setup --test installs @foxglove/schemas)")
    script = (
        "const s = require(process.argv[1] + '/jsonschema');"
        "process.stdout.write(JSON.stringify(s));"
    )
    try:
        out = subprocess.run(
            ["node", "-e", script, package], capture_output=True, check=True, timeout=60
        ).stdout
    except FileNotFoundError:
        fail(2, "node is missing (scripts/setup --test installs it)")
    except subprocess.CalledProcessError as e:
        fail(2, f"node could not load {package}/jsonschema: {e.stderr.decode(errors='replace')}")
    exported = json.loads(out)
    schemas = {}
    for name, schema in exported.items():
        title = schema.get("title") if isinstance(schema, dict) else None
        if isinstance(title, str) and title.startswith("foxglove."):
            schemas[title] = schema
    if not schemas:
        fail(2, f"{package}/jsonschema exports no foxglove.* schema")
    return schemas


def strictly(schema):
    """The schema with every object closed (no other properties) and every property required."""
    if isinstance(schema, list):
        return [strictly(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: strictly(v) for k, v in schema.items()}
    if isinstance(schema.get("properties"), dict):
        out["additionalProperties"] = False
        out["required"] = sorted(schema["properties"])
    return out


def break_message(message, schema):
    """Corrupts `message` in place so that `schema` must refuse it; says what it changed."""

    def first_nsec(value, path):
        if isinstance(value, dict):
            for k, v in value.items():
                if k == "nsec" and isinstance(v, int):
                    value[k] = str(v)
                    return f"{path}/nsec {v} -> \"{v}\""
                found = first_nsec(v, f"{path}/{k}")
                if found:
                    return found
        elif isinstance(value, list):
            for i, v in enumerate(value):
                found = first_nsec(v, f"{path}/{i}")
                if found:
                    return found
        return None

    changed = first_nsec(message, "")
    if changed:
        return changed
    for key in schema.get("required", []):
        if key in message and not isinstance(message[key], str):
            message[key] = "broken"
            return f"/{key} -> \"broken\""
    fail(2, "--break: the message has neither an nsec nor a non-string required property")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("record", help="record.mcap, or the run folder holding it")
    p.add_argument("--break", dest="break_n", type=int, metavar="N",
                   help="corrupt the N-th foxglove.* message (from 1) before validating")
    p.add_argument("--strict", action="store_true",
                   help="also refuse properties the schema does not name, and left-out ones")
    p.add_argument("--schemas", default=DEFAULT_SCHEMAS, metavar="DIR",
                   help="the @foxglove/schemas package folder")
    args = p.parse_args()
    if args.break_n is not None and args.break_n < 1:
        fail(2, "--break: N counts from 1")
    path = args.record
    if os.path.isdir(path):
        path = os.path.join(path, "record.mcap")

    schemas = load_schemas(args.schemas)
    validators = {}
    counts = {}  # schema name -> {topic: messages}
    per_topic = {}  # topic -> messages seen
    seen = 0
    broken = None
    try:
        f = open(path, "rb")
    except OSError as e:
        fail(2, f"cannot read {path}: {e}")
    with f:
        try:
            messages = make_reader(f).iter_messages(log_time_order=True)
            for schema, channel, message in messages:
                name = schema.name if schema is not None else ""
                if not name.startswith("foxglove."):
                    continue
                topic = channel.topic
                seen += 1
                index = per_topic[topic] = per_topic.get(topic, 0) + 1
                where = f"{topic} message {index} (log time {message.log_time} ns)"
                if channel.message_encoding != "json":
                    fail(1, f"{where}: message encoding {channel.message_encoding!r}, not 'json'")
                if schema.encoding != "jsonschema":
                    fail(1, f"{where}: schema encoding {schema.encoding!r}, not 'jsonschema'")
                if name not in schemas:
                    fail(1, f"{where}: @foxglove/schemas has no schema {name}")
                if name not in validators:
                    s = strictly(schemas[name]) if args.strict else schemas[name]
                    cls = jsonschema.validators.validator_for(s, default=jsonschema.Draft7Validator)
                    validators[name] = cls(s)
                try:
                    value = json.loads(message.data)
                except ValueError as e:
                    fail(1, f"{where}: not JSON: {e}")
                if seen == args.break_n:
                    broken = f"{where}: {break_message(value, schemas[name])}"
                    print(f"broke {broken}")
                error = jsonschema.exceptions.best_match(validators[name].iter_errors(value))
                if error is not None:
                    at = "/" + "/".join(str(x) for x in error.absolute_path)
                    fail(1, f"{where} does not validate against {name}: at {at}: {error.message}")
                counts.setdefault(name, {})
                counts[name][topic] = counts[name].get(topic, 0) + 1
        except (OSError, ValueError, EOFError) as e:
            fail(2, f"{path}: not a readable MCAP file: {type(e).__name__}: {e}")
        except Exception as e:  # the mcap reader's own errors (bad magic, bad records)
            if type(e).__module__.startswith("mcap"):
                fail(2, f"{path}: not a readable MCAP file: {type(e).__name__}: {e}")
            raise
    if seen == 0:
        fail(1, f"{path} has no message on a foxglove.* channel")
    if args.break_n is not None and broken is None:
        fail(2, f"--break {args.break_n}: the record has only {seen} foxglove.* messages")
    for name in sorted(counts):
        topics = ", ".join(f"{t} {n}" for t, n in sorted(counts[name].items()))
        total = sum(counts[name].values())
        print(f"{name}: {total} messages valid ({topics})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
