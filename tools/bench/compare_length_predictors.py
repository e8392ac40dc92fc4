#!/usr/bin/env python3
"""Issue 23's second length predictor against the first: serve a workload with `baton serve
--length-log`, then fit `baton length-head` (a ridge head on the model's hidden state after
prefill) on the log's first requests and score it against the online predictor on the last.
Then serve as many new requests of the same workload twice, without and with the head
(`--length-head`), and read the predictions' error and rank agreement from /metrics: what the
scheduler was given in each case.

Workloads (--workload):
  verses     each prompt is the opening words of a verse of held-out King James text, cut at a
             random word; the model continues at temperature 0.8 until the line ends (stop
             "\\n") or max_tokens 128. How long the answer runs depends on the prompt's words
             (how much of the verse is left), not on a shared template.
  templates  compare_scheduling.py's mixed workload: three system prompts, 80% short and 20%
             long answers whose length is their max_tokens (ignore_eos). The template and the
             limit decide the length, which the online predictor keys on.

Usage: compare_length_predictors.py [--baton build/bin/baton] [-t 2] [--requests 400]
           [--workload verses|templates] [--seed 1] [--work-dir /tmp/baton-length-head] model.gguf
"""
import argparse
import concurrent.futures
import json
import os
import random
import subprocess
import sys
import urllib.request

from compare_scheduling import SYSTEM_PROMPTS, QUESTIONS
from compare_servers import wait_ready

PORT = 18632
VERSES = os.path.join(os.path.dirname(__file__), "..", "..", "assets", "lora",
                      "kjv-heldout-sample.txt")


def verse_requests(count, rng):
    with open(VERSES) as f:
        verses = [line.split() for line in f if len(line.split()) >= 4]
    for _ in range(count):
        words = rng.choice(verses)
        cut = rng.randrange(1, len(words) - 1)
        yield {"prompt": " ".join(words[:cut]), "max_tokens": 128, "temperature": 0.8,
               "stop": ["\n"], "seed": rng.randrange(1 << 30)}


def template_requests(count, rng):
    for _ in range(count):
        template = 2 if rng.random() < 0.2 else rng.randrange(2)
        system, (low, high) = SYSTEM_PROMPTS[template]
        yield {"prompt": system + "\n" + rng.choice(QUESTIONS) + " " + str(rng.randrange(1000)),
               "max_tokens": rng.randint(low, high), "ignore_eos": True, "temperature": 0.8,
               "seed": rng.randrange(1 << 30)}


def post(url, body):
    request = urllib.request.Request(url + "/v1/completions", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=600) as response:
        return json.loads(response.read())["usage"]["completion_tokens"]


def serve(args, requests, flags):
    """Serves `requests` eight at a time; returns the completion lengths and /metrics."""
    server = subprocess.Popen([args.baton, "serve", "-m", args.model, "--port", str(PORT), "-t",
                               str(args.t), "-c", "512"] + flags,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = "http://127.0.0.1:%d" % PORT
    try:
        wait_ready(url, server)
        # Eight at a time, in order: the log keeps the order requests finish in, which is
        # the order a server learns from them.
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            lengths = list(pool.map(lambda body: post(url, body), requests))
        with urllib.request.urlopen(url + "/metrics", timeout=60) as response:
            metrics = {}
            for line in response.read().decode().splitlines():
                if line.startswith("baton_length_"):
                    name, value = line.split()
                    metrics[name] = float(value)
        return lengths, metrics
    finally:
        server.terminate()
        server.wait(timeout=120)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--baton", default="build/bin/baton")
    parser.add_argument("-t", type=int, default=2)
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--workload", choices=["verses", "templates"], default="verses")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--work-dir", default="/tmp/baton-length-head")
    parser.add_argument("model")
    args = parser.parse_args()
    os.makedirs(args.work_dir, exist_ok=True)
    log = os.path.join(args.work_dir, "%s-%d.jsonl" % (args.workload, args.seed))
    if os.path.exists(log):
        os.remove(log)
    head = os.path.join(args.work_dir, "%s-%d-head.json" % (args.workload, args.seed))
    make = verse_requests if args.workload == "verses" else template_requests
    requests = list(make(args.requests, random.Random(args.seed)))
    lengths, _ = serve(args, requests, ["--length-log", log])
    result = json.loads(subprocess.run(
        [args.baton, "length-head", "-m", args.model, "--log", log, "-c", "512", "-t",
         str(args.t), "-o", head, "--json"], check=True, capture_output=True, text=True).stdout)
    print("workload %s, seed %d: %d requests, lengths %d to %d (mean %.1f); %d learned from, "
          "%d held out, ridge penalty %g\n"
          % (args.workload, args.seed, len(lengths), min(lengths), max(lengths),
             sum(lengths) / len(lengths), result["trained"], result["held_out"],
             result["penalty"]))
    print("| predictor | mean absolute error (tokens) | Kendall's tau |")
    print("| --- | ---: | ---: |")
    for name, key in (("online (prefix and shape)", "online"), ("hidden-state head", "head")):
        print("| %s | %.1f | %.3f |" % (name, result[key]["mean_absolute_error"],
                                        result[key]["kendall_tau"]))
    print("\nthe head %s the online predictor on both"
          % ("beats" if result["head_wins"] else "does not beat"))

    fresh = list(make(args.requests, random.Random(args.seed + 1000)))
    print("\nserved, %d new requests of the workload (/metrics over the last 512):\n" % len(fresh))
    print("| server | mean absolute error (tokens) | Kendall's tau |")
    print("| --- | ---: | ---: |")
    _, metrics = serve(args, fresh, [])
    print("| online predictor | %.1f | %.3f |" % (metrics["baton_length_prediction_error_tokens"],
                                                 metrics["baton_length_prediction_kendall_tau"]))
    _, metrics = serve(args, fresh, ["--length-head", head])
    print("| with --length-head, the head's predictions | %.1f | %.3f |"
          % (metrics["baton_length_head_error_tokens"], metrics["baton_length_head_kendall_tau"]))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
