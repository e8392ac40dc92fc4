#!/usr/bin/env python3
"""Renders tests/data/chat_templates/*.jinja with Python's jinja2, as transformers does.

Each template meets each conversation of cases.json; the text (or the template's exception)
goes to expected.json, which the chat template test holds Baton's renders to. Rerun it after
adding a template or a case:

    python3 scripts/render_chat_templates.py
"""

import json
import os

import jinja2.ext
from jinja2.sandbox import ImmutableSandboxedEnvironment

HERE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "data",
                    "chat_templates")
# What transformers passes besides the conversation (apply_chat_template's defaults), with a
# fixed date for the templates that print one.
CONTEXT = {"bos_token": "<s>", "eos_token": "</s>", "date_string": "26 Jul 2024"}


class TemplateError(Exception):
    pass


def raise_exception(message):
    raise TemplateError(message)


def tojson(value, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                      sort_keys=sort_keys)


def main():
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    with open(os.path.join(HERE, "cases.json"), encoding="utf-8") as f:
        cases = json.load(f)
    expected = {}
    for name in sorted(os.listdir(HERE)):
        if not name.endswith(".jinja"):
            continue
        with open(os.path.join(HERE, name), encoding="utf-8") as f:
            template = env.from_string(f.read())
        renders = {}
        for case, conversation in cases.items():
            try:
                renders[case] = template.render(**CONTEXT, **conversation)
            except TemplateError as error:
                renders[case] = {"error": str(error)}
        expected[name[:-len(".jinja")]] = renders
    with open(os.path.join(HERE, "expected.json"), "w", encoding="utf-8") as f:
        json.dump(expected, f, indent=1, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
