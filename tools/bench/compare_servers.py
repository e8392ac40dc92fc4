#!/usr/bin/env python3
"""Starts `baton serve` and llama.cpp's `llama-server` on the same GGUF file, one after the
other, drives each with `baton bench serve` under the same load, and prints the figures side by
side with ratios (baton / llama-server; for latencies lower is better).

Usage: compare_servers.py --llama-server PATH [--baton build/bin/baton] [-t 2]
                          [--requests 16] [--concurrency 4] [--prompt-tokens 100]
                          [--output-tokens 64] [--rounds 1] model.gguf
"""
import argparse
import json
import subprocess
import sys
import time
import urllib.request

PORT_BATON = 18601
PORT_LLAMA = 18602


def wait_ready(url, process, seconds=300):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if process.poll() is not None:
            raise RuntimeError("the server exited with code %d" % process.returncode)
        try:
            with urllib.request.urlopen(url + "/health", timeout=2) as answer:
                if answer.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.5)
    raise RuntimeError("the server at %s did not become ready" % url)


def start_baton(args):
    return subprocess.Popen(
        [args.baton, "serve", "-m", args.model, "--port", str(PORT_BATON), "-t", str(args.t)],
        stderr=subprocess.DEVNULL), "http://127.0.0.1:%d" % PORT_BATON


def start_llama(args):
    # Continuous batching with one slot per concurrent client, each slot the context it needs.
    ctx = args.concurrency * (args.prompt_tokens * 2 + args.output_tokens + 64)
    return subprocess.Popen(
        [args.llama_server, "-m", args.model, "--port", str(PORT_LLAMA), "-t", str(args.t),
         "-np", str(args.concurrency), "-c", str(ctx), "-cb"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL), "http://127.0.0.1:%d" % PORT_LLAMA


def bench(args, url):
    out = subprocess.run(
        [args.baton, "bench", "serve", "--url", url, "--requests", str(args.requests),
         "--concurrency", str(args.concurrency), "--prompt-tokens", str(args.prompt_tokens),
         "--output-tokens", str(args.output_tokens), "--stream", "--json"] +
        (["--model", args.model_names] if getattr(args, "model_names", None) else []),
        check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def run_server(args, start):
    process, url = start(args)
    try:
        wait_ready(url, process)
        bench(dict_args(args, requests=args.concurrency, output_tokens=8), url)  # warm-up
        result = bench(args, url)
        if result["failed"]:
            raise RuntimeError("%s: %d requests failed: %s" % (url, result["failed"],
                                                               result["first_error"]))
        return result
    finally:
        process.terminate()
        process.wait(timeout=120)


def dict_args(args, **changes):
    copy = argparse.Namespace(**vars(args))
    for key, value in changes.items():
        setattr(copy, key, value)
    return copy


# (name, how to read it from `baton bench serve --json`)
FIGURES = [
    ("mean prompt tokens", lambda r: r["mean_prompt_tokens"]),
    ("output tok/s", lambda r: r["output_tokens_per_s"]),
    ("requests/s", lambda r: r["requests_per_s"]),
    ("TTFT p50 ms", lambda r: r["ttft_ms"]["p50"]),
    ("TTFT p99 ms", lambda r: r["ttft_ms"]["p99"]),
    ("TPOT p50 ms", lambda r: r["tpot_ms"]["p50"]),
    ("ITL p50 ms", lambda r: r["itl_ms"]["p50"]),
    ("e2e p50 ms", lambda r: r["e2e_ms"]["p50"]),
]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--llama-server", required=True)
    parser.add_argument("--baton", default="build/bin/baton")
    parser.add_argument("-t", type=int, default=2)
    parser.add_argument("--requests", type=int, default=16)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--prompt-tokens", type=int, default=100)
    parser.add_argument("--output-tokens", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("model")
    args = parser.parse_args()
    print("| round | figure | baton | llama-server | baton / llama-server |")
    print("| --- | --- | ---: | ---: | ---: |")
    for round_number in range(1, args.rounds + 1):
        ours = run_server(args, start_baton)
        theirs = run_server(args, start_llama)
        for name, pick in FIGURES:
            a, b = pick(ours), pick(theirs)
            ratio = "%.2fx" % (a / b) if a is not None and b else "-"
            print("| %d | %s | %s | %s | %s |" % (round_number, name, fmt(a), fmt(b), ratio),
                  flush=True)
    return 0


def fmt(value):
    return "-" if value is None else "%.1f" % value


if __name__ == "__main__":
    sys.exit(main())
