#!/usr/bin/env python3
"""Greedy generation of Baton against llama.cpp's `llama-server` on the same GGUF file.

Each prompt is completed greedily by `baton batch` and by llama-server's /completion, both
with the top two log-probabilities per token, and the token ids are compared. They must agree
wherever llama.cpp's top-2 margin (the difference of the two largest logits) exceeds --margin; at
the first token where the margin is smaller, either choice is right, so the comparison of that
prompt stops there. Exits 1 on a disagreement above the margin.

Usage: compare_greedy.py --llama-server PATH [--baton build/bin/baton] [-t 2] [-n 48]
                         [--margin 1e-3] [--prompt TEXT ...] model.gguf
"""
import argparse
import json
import subprocess
import sys
import urllib.request

from compare_servers import wait_ready

PORT_LLAMA = 18612
DEFAULT_PROMPTS = [
    "In the beginning",
    "The quick brown fox",
    "Once upon a time there was",
    "def fibonacci(n):",
    "1, 2, 3, 5, 8,",
]


def context(args):
    """One context size for both: it picks LongRoPE's factor set, and the window of sliding-
    window layers must fit."""
    return 4 * args.n + 256


def margin(logprobs):
    values = sorted(logprobs, reverse=True)
    return values[0] - values[1] if len(values) > 1 else float("inf")


def llama_complete(url, prompt, n):
    """[(token id, top-2 margin)] of a greedy completion by llama-server's /completion."""
    body = json.dumps({"prompt": prompt, "n_predict": n, "temperature": 0, "n_probs": 2,
                       "return_tokens": True, "ignore_eos": True}).encode()
    request = urllib.request.Request(url + "/completion", body,
                                     {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=600) as answer:
        result = json.load(answer)
    # llama-server leaves out the probabilities of a token that ends inside a UTF-8 character
    # (it reports them with the next one), so they are matched to the ids; such a token's margin
    # is unknown and it must agree.
    probabilities = iter(result["completion_probabilities"])
    entry = next(probabilities, None)
    steps = []
    for token in result["tokens"]:
        if entry is not None and entry["id"] == token:
            steps.append((token, margin([t["logprob"] for t in entry["top_logprobs"]])))
            entry = next(probabilities, None)
        else:
            steps.append((token, float("inf")))
    return steps


def baton_complete(args, prompts):
    """The same from `baton batch`, for every prompt in one run."""
    requests = "".join(json.dumps({"prompt": p, "max_tokens": args.n, "temperature": 0,
                                   "logprobs": 2}) + "\n" for p in prompts)
    out = subprocess.run([args.baton, "batch", "-m", args.model, "-t", str(args.t),
                          "-c", str(context(args)), "--ignore-eos", "--input", "/dev/stdin"],
                         input=requests, check=True, capture_output=True, text=True).stdout
    results = []
    for line in out.splitlines():
        completion = json.loads(line)
        results.append([(step["id"], margin([t["logprob"] for t in step["top"]]))
                        for step in completion["logprobs"]])
    return results


def compare(baton, llama, margin):
    """(tokens compared, first disagreement above the margin or None, stopped at a tie)."""
    for i, ((b, _), (l, gap)) in enumerate(zip(baton, llama)):
        if b == l:
            continue
        if gap <= margin:
            return i, None, True
        return i, (i, b, l, gap), False
    return min(len(baton), len(llama)), None, False


def llama_all(args, prompts):
    url = "http://127.0.0.1:%d" % PORT_LLAMA
    # An f32 KV cache like Baton's default, so that the cache rounds neither side.
    process = subprocess.Popen(
        [args.llama_server, "-m", args.model, "--port", str(PORT_LLAMA), "-t", str(args.t), "-np",
         "1", "-c", str(context(args)), "-ctk", "f32", "-ctv", "f32", "-fa", "off"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_ready(url, process)
        return [llama_complete(url, p, args.n) for p in prompts]
    finally:
        process.terminate()
        process.wait()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model")
    parser.add_argument("--baton", default="build/bin/baton")
    parser.add_argument("--llama-server", required=True)
    parser.add_argument("-t", type=int, default=2)
    parser.add_argument("-n", type=int, default=48)
    parser.add_argument("--margin", type=float, default=1e-3)
    parser.add_argument("--prompt", action="append", dest="prompts")
    args = parser.parse_args()
    prompts = args.prompts or DEFAULT_PROMPTS
    baton = baton_complete(args, prompts)
    llama = llama_all(args, prompts)
    failed = False
    for prompt, b, l in zip(prompts, baton, llama):
        compared, mismatch, tie = compare(b, l, args.margin)
        if mismatch:
            failed = True
            i, bt, lt, gap = mismatch
            print("%-30r DIFFERS at token %d: baton id %d, llama.cpp id %d (margin %.2g)"
                  % (prompt, i, bt, lt, gap))
        elif tie:
            print("%-30r %d tokens identical, then a tie within %.0e (either is right)"
                  % (prompt, compared, args.margin))
        else:
            print("%-30r %d tokens identical" % (prompt, compared))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
