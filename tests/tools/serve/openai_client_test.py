#!/usr/bin/env python3
"""Drives `baton serve` with the official openai Python client: completions, chat, streaming.

Usage: openai_client_test.py BATON_BINARY MODEL.gguf. Exits 77 (skip) when the openai package
or the model is missing.
"""
import os
import sys

from serve_process import check, start_server, stop_server

try:
    import openai
except ImportError:
    print("skip: the openai package is not installed (scripts/python-test-env.sh installs it)")
    sys.exit(77)


def run(client):
    models = client.models.list()
    check([m.id for m in models.data] == ["kjv-demo"], "models: %r" % models)

    completion = client.completions.create(
        model="kjv-demo", prompt="Once upon a time", max_tokens=20, temperature=0)
    text = completion.choices[0].text
    check(len(text) > 0, "completion text is empty")
    check(completion.usage.completion_tokens > 0, "usage: %r" % completion.usage)

    pieces = []
    stream = client.completions.create(
        model="kjv-demo", prompt="Once upon a time", max_tokens=20, temperature=0, stream=True)
    for chunk in stream:
        pieces.append(chunk.choices[0].text)
    check(len(pieces) > 1, "the completion stream came in %d chunks" % len(pieces))
    check("".join(pieces) == text, "streamed %r != whole %r" % ("".join(pieces), text))

    messages = [{"role": "system", "content": "You tell stories."},
                {"role": "user", "content": "Tell me about a cat."}]
    chat = client.chat.completions.create(
        model="kjv-demo", messages=messages, max_tokens=20, temperature=0)
    reply = chat.choices[0].message.content
    check(chat.choices[0].message.role == "assistant", "chat role")
    check(len(reply) > 0, "chat reply is empty")

    deltas = []
    usage = None
    stream = client.chat.completions.create(
        model="kjv-demo", messages=messages, max_tokens=20, temperature=0, stream=True,
        stream_options={"include_usage": True})
    for chunk in stream:
        if chunk.usage is not None:
            usage = chunk.usage
        for choice in chunk.choices:
            deltas.append(choice.delta.content or "")
    check("".join(deltas) == reply, "streamed chat %r != whole %r" % ("".join(deltas), reply))
    check(usage is not None and usage.completion_tokens > 0, "stream usage: %r" % usage)

    try:
        client.completions.create(model="no-such-model", prompt="hi", max_tokens=2)
        check(False, "an unknown model was accepted")
    except openai.NotFoundError as error:
        check("no-such-model" in str(error), "error names the model: %s" % error)

    bad_key = openai.OpenAI(base_url=str(client.base_url), api_key="wrong", max_retries=0)
    try:
        bad_key.models.list()
        check(False, "a wrong API key was accepted")
    except openai.AuthenticationError:
        pass


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    binary, model = sys.argv[1], sys.argv[2]
    if not os.path.exists(model):
        print("skip: model not present (%s)" % model)
        sys.exit(77)
    server, port = start_server(binary, model, "--api-key", "test-key",
                                "--served-model-name", "kjv-demo")
    try:
        client = openai.OpenAI(base_url="http://127.0.0.1:%d/v1" % port, api_key="test-key",
                               max_retries=0)
        run(client)
        print("openai client: completions, chat and streaming all passed")
    finally:
        code = stop_server(server)
    sys.exit(code)


if __name__ == "__main__":
    main()
