#!/usr/bin/env python3
"""Structured outputs validated by a real JSON Schema validator: for a corpus of schemas (nested
objects, arrays of enums, optional fields, patterns, formats, references, unions, bounded
numbers), samples at temperature 1 over many seeds, asked through the official openai client,
must all parse and validate. Also what a vLLM client sends (guided_json, guided_choice), and
tool calls round-tripped through the openai client, streaming and not.

Usage: structured_outputs_test.py BATON_BINARY MODEL.gguf [MODEL.gguf ...] [--samples N]
Exits 77 (skip) when the openai or jsonschema package is missing. Prints, per model, how many
outputs validated, how many ended cut by max_tokens (a prefix of valid JSON, with finish_reason
"length"), and the time taken.
"""
import argparse
import json
import os
import sys
import time

from serve_process import check, start_server, stop_server

try:
    import jsonschema
    import openai
except ImportError as missing:
    print("skip: %s is not installed (scripts/python-test-env.sh installs it)" % missing.name)
    sys.exit(77)

CORPUS = {
    "person": {
        "type": "object",
        "properties": {
            "name": {"type": "string", "maxLength": 16},
            "age": {"type": "integer", "minimum": 0, "maximum": 130},
            "email": {"type": "string", "pattern": "^[a-z]{1,8}@[a-z]{1,8}\\.(com|org)$"},
        },
        "required": ["name", "age"],
        "additionalProperties": False,
    },
    "order": {
        "type": "object",
        "properties": {
            "id": {"type": "string", "format": "uuid"},
            "items": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "sku": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]{4}$"},
                        "quantity": {"type": "integer", "minimum": 1, "maximum": 99},
                        "price": {"type": "number", "minimum": 0, "maximum": 1000},
                    },
                    "required": ["sku", "quantity"],
                },
                "minItems": 1,
                "maxItems": 2,
            },
            "placed": {"type": "string", "format": "date-time"},
        },
        "required": ["id", "items", "placed"],
    },
    "colours": {
        "type": "array",
        "items": {"enum": ["red", "green", "blue", "crimson"]},
        "minItems": 2,
        "maxItems": 5,
    },
    "optional_fields": {
        "type": "object",
        "properties": {
            "a": {"type": "boolean"},
            "b": {"type": ["integer", "null"]},
            "c": {"type": "string", "minLength": 1, "maxLength": 5},
            "d": {"const": "fixed"},
        },
    },
    "tree": {
        "$defs": {
            "node": {
                "type": "object",
                "properties": {
                    "label": {"type": "string", "maxLength": 3},
                    "children": {
                        "type": "array",
                        "items": {"$ref": "#/$defs/node"},
                        "maxItems": 2,
                    },
                },
                "required": ["label", "children"],
                "additionalProperties": False,
            }
        },
        "$ref": "#/$defs/node",
    },
    "shape": {
        "anyOf": [
            {
                "type": "object",
                "properties": {"kind": {"const": "circle"},
                               "radius": {"type": "number", "minimum": 0, "maximum": 10}},
                "required": ["kind", "radius"],
                "additionalProperties": False,
            },
            {
                "type": "object",
                "properties": {"kind": {"const": "square"},
                               "side": {"type": "integer", "exclusiveMinimum": 0}},
                "required": ["kind", "side"],
                "additionalProperties": False,
            },
        ]
    },
    "tuple": {
        "type": "array",
        "prefixItems": [{"type": "string", "maxLength": 4},
                        {"type": "integer", "minimum": -50, "maximum": -10},
                        {"type": "boolean"}],
        "items": False,
    },
    "date_and_verse": {
        "type": "object",
        "properties": {
            "day": {"type": "string", "format": "date"},
            "verse": {"type": "string", "pattern": "^[1-9][0-9]?:[1-9][0-9]?$"},
            "words": {"type": "array", "items": {"type": "string", "maxLength": 8},
                      "maxItems": 4},
        },
        "required": ["day", "verse"],
        "additionalProperties": False,
    },
    "inherited": {
        "$defs": {"base": {"type": "object", "properties": {"id": {"type": "integer"}},
                           "required": ["id"]}},
        "allOf": [{"$ref": "#/$defs/base"},
                  {"properties": {"note": {"type": "string", "maxLength": 10}},
                   "required": ["note"]}],
    },
    "inventory": {
        "type": "array",
        "items": {
            "type": "object",
            "properties": {
                "kind": {"enum": ["sheep", "goat", "ox"]},
                "count": {"type": "integer", "minimum": 0, "maximum": 999},
                "sold": {"type": "boolean"},
            },
            "required": ["kind", "count"],
            "additionalProperties": False,
        },
        "maxItems": 4,
    },
}


def sample(client, name, schema, seeds, per_request, max_tokens):
    """Chat completions with response_format json_schema: (outputs, finish reasons)."""
    outputs = []
    for seed in seeds:
        reply = client.chat.completions.create(
            model=client.served_model,
            messages=[{"role": "user", "content": "Describe it as JSON."}],
            response_format={"type": "json_schema",
                             "json_schema": {"name": name, "schema": schema, "strict": True}},
            temperature=1.0, seed=seed, n=per_request, max_tokens=max_tokens)
        outputs += [(c.message.content, c.finish_reason) for c in reply.choices]
    return outputs


def validate_corpus(client, samples, max_tokens):
    per_schema = max(1, samples // len(CORPUS))
    per_request = min(8, per_schema)
    validated = cut = 0
    cut_by_schema = {}
    for name, schema in CORPUS.items():
        jsonschema.Draft202012Validator.check_schema(schema)
        seeds = range(0, per_schema, per_request)
        for text, reason in sample(client, name, schema, seeds, per_request, max_tokens):
            if reason == "length":
                cut += 1
                cut_by_schema[name] = cut_by_schema.get(name, 0) + 1
                continue
            check(reason == "stop", "%s: finish_reason %r" % (name, reason))
            try:
                jsonschema.validate(json.loads(text), schema,
                                    cls=jsonschema.Draft202012Validator)
            except (ValueError, jsonschema.ValidationError) as error:
                raise AssertionError("%s: %r does not validate: %s" % (name, text, error))
            validated += 1
    if cut_by_schema:
        print("cut at max_tokens, by schema: %s" % cut_by_schema)
    return validated, cut


def vllm_fields(port, model):
    client = openai.OpenAI(base_url="http://127.0.0.1:%d/v1" % port, api_key="none")
    schema = CORPUS["person"]
    reply = client.completions.create(model=model, prompt="The man:", max_tokens=120,
                                      temperature=1.0, seed=3, extra_body={"guided_json": schema})
    jsonschema.validate(json.loads(reply.choices[0].text), schema)
    reply = client.completions.create(model=model, prompt="Shall it be?", max_tokens=8,
                                      temperature=1.0,
                                      extra_body={"guided_choice": ["yea", "nay"]})
    check(reply.choices[0].text in ("yea", "nay"), "guided_choice gave %r" % reply.choices[0].text)
    try:
        client.chat.completions.create(
            model=model, messages=[{"role": "user", "content": "x"}],
            response_format={"type": "json_schema",
                             "json_schema": {"name": "n", "schema": {"type": "string",
                                                                     "format": "email"}}})
        check(False, "an unsupported format was accepted")
    except openai.BadRequestError as error:
        check("#/format" in str(error), "the error does not point at the format: %s" % error)


ADD = {"type": "object",
       "properties": {"a": {"type": "integer", "minimum": 0, "maximum": 99},
                      "b": {"type": "integer", "minimum": 0, "maximum": 99}},
       "required": ["a", "b"], "additionalProperties": False}
TOOLS = [{"type": "function", "function": {"name": "add", "description": "Adds two numbers",
                                           "parameters": ADD}}]


def tool_calls(client):
    """A call made, answered, and the conversation continued; then the same call streamed."""
    messages = [{"role": "user", "content": "What is 2 and 3?"}]
    reply = client.chat.completions.create(
        model=client.served_model, messages=messages, tools=TOOLS, tool_choice="required",
        parallel_tool_calls=False, temperature=1.0, seed=4, max_tokens=120)
    choice = reply.choices[0]
    check(choice.finish_reason == "tool_calls", "finish_reason %r" % choice.finish_reason)
    call = choice.message.tool_calls[0]
    check(call.function.name == "add", "called %r" % call.function.name)
    jsonschema.validate(json.loads(call.function.arguments), ADD)
    messages.append(choice.message.model_dump(exclude_none=True))
    messages.append({"role": "tool", "tool_call_id": call.id, "content": "5"})
    reply = client.chat.completions.create(model=client.served_model, messages=messages,
                                           tools=TOOLS, temperature=1.0, seed=4, max_tokens=120)
    check(reply.choices[0].finish_reason in ("stop", "tool_calls", "length"),
          "finish_reason %r" % reply.choices[0].finish_reason)
    calls = {}
    finish = None
    for chunk in client.chat.completions.create(
            model=client.served_model, messages=messages[:1], tools=TOOLS,
            tool_choice={"type": "function", "function": {"name": "add"}}, temperature=1.0,
            seed=5, max_tokens=120, stream=True):
        for delta_choice in chunk.choices:
            for delta in delta_choice.delta.tool_calls or []:
                entry = calls.setdefault(delta.index, {"name": "", "arguments": ""})
                entry["name"] += delta.function.name or ""
                entry["arguments"] += delta.function.arguments or ""
            finish = delta_choice.finish_reason or finish
    # A named tool_choice ends with "stop", as OpenAI's does.
    check(finish == "stop" and len(calls) == 1, "streamed %r, %r" % (calls, finish))
    check(calls[0]["name"] == "add", "streamed call %r" % calls[0])
    jsonschema.validate(json.loads(calls[0]["arguments"]), ADD)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("models", nargs="+")
    parser.add_argument("--samples", type=int, default=1000,
                        help="outputs per model, spread over the corpus")
    parser.add_argument("--max-tokens", type=int, default=230,
                        help="the demo model's context holds 256 tokens")
    args = parser.parse_args()
    for model in args.models:
        if not os.path.exists(model):
            print("skip %s: not present (../shared holds it on the project's machines)" % model)
            continue
        # A context past the demo model's trained 256 tokens, so that the tools' descriptions fit
        # beside the conversation; the outputs' shape is what is checked.
        server, port = start_server(args.binary, model, "-c", "1024")
        try:
            client = openai.OpenAI(base_url="http://127.0.0.1:%d/v1" % port, api_key="none",
                                   timeout=600)
            client.served_model = client.models.list().data[0].id
            started = time.time()
            validated, cut = validate_corpus(client, args.samples, args.max_tokens)
            elapsed = time.time() - started
            print("%s: %d outputs validated against %d schemas, %d cut at max_tokens %d, "
                  "%.1f s" % (os.path.basename(model), validated, len(CORPUS), cut,
                              args.max_tokens, elapsed))
            # Cut outputs end with finish_reason "length", never claimed complete; the corpus is
            # sized so that few are, and each one that finished must validate.
            check(validated > 0 and cut <= validated // 8,
                  "too few outputs finished: %d validated, %d cut" % (validated, cut))
            vllm_fields(port, client.served_model)
            tool_calls(client)
        finally:
            check(stop_server(server) == 0, "baton serve did not stop cleanly")
    print("structured outputs ok")


if __name__ == "__main__":
    main()
