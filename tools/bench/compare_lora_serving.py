#!/usr/bin/env python3
"""Serves one base model with LoRA adapters in the ways issue 22's bar compares, drives each with
`baton bench serve` under the same load, and prints the figures side by side with the ratio of
each to the base model alone:

  base     the base model, no adapter
  lora1    ADAPTERS adapters loaded, every request asking for the first
  loraN    ADAPTERS adapters loaded, the requests taking them in turn (all in flight together)
  merged   each adapter baked into its own model (`baton lora merge`), served one after the
           other with its share of the requests: the single-adapter servers' way. Its output
           tok/s counts only the bench time; "incl. restarts" adds each server's start-up.

The adapters are random (`baton lora synth`, rank --rank, every linear layer), written next to
--work-dir with the merged models.

Usage: compare_lora_serving.py [--baton build/bin/baton] [-t 2] [--adapters 8] [--rank 16]
           [--lora-dtype f16] [--requests 64] [--concurrency 8] [--prompt-tokens 100]
           [--output-tokens 64]
           [--setups base,lora1,loraN,merged] [--work-dir /tmp/baton-lora-bench] model.gguf
"""
import argparse
import os
import subprocess
import sys
import time

from compare_servers import FIGURES, bench, dict_args, fmt, run_server, wait_ready

PORT = 18621


def serve(args, model, adapters):
    command = [args.baton, "serve", "-m", model, "--port", str(PORT), "-t", str(args.t)]
    for name, path in adapters:
        command += ["--lora", "%s=%s" % (name, path)]
    if adapters:
        command += ["--max-loras", str(len(adapters)), "--max-lora-rank", str(args.rank),
                    "--lora-dtype", args.lora_dtype]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def measure(args, model, adapters, model_names=None):
    def start(_):
        return serve(args, model, adapters), "http://127.0.0.1:%d" % PORT
    return run_server(dict_args(args, model_names=model_names), start)


def merged_in_turn(args, merged):
    """Each merged model served alone with its share of the requests; the figures summed."""
    tokens = bench_seconds = wall_seconds = 0.0
    share = max(1, args.requests // len(merged))
    for path in merged:
        started = time.time()
        process = serve(args, path, [])
        try:
            wait_ready("http://127.0.0.1:%d" % PORT, process)
            result = bench(dict_args(args, requests=share), "http://127.0.0.1:%d" % PORT)
        finally:
            process.terminate()
            process.wait(timeout=120)
        wall_seconds += time.time() - started
        tokens += result["total_output_tokens"]
        bench_seconds += result["duration_s"]
    return {"output_tokens_per_s": tokens / bench_seconds,
            "output_tokens_per_s_with_restarts": tokens / wall_seconds}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--baton", default="build/bin/baton")
    parser.add_argument("-t", type=int, default=2)
    parser.add_argument("--adapters", type=int, default=8)
    parser.add_argument("--rank", type=int, default=16)
    parser.add_argument("--lora-dtype", default="f16", help="the slots' element type: f16 or f32")
    parser.add_argument("--requests", type=int, default=64)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--prompt-tokens", type=int, default=100)
    parser.add_argument("--output-tokens", type=int, default=64)
    parser.add_argument("--setups", default="base,lora1,loraN,merged")
    parser.add_argument("--work-dir", default="/tmp/baton-lora-bench")
    parser.add_argument("model")
    args = parser.parse_args()
    setups = args.setups.split(",")
    os.makedirs(args.work_dir, exist_ok=True)
    stem = os.path.splitext(os.path.basename(args.model))[0]
    adapters = []
    for i in range(args.adapters):
        path = os.path.join(args.work_dir, "%s-lora%d-r%d.gguf" % (stem, i, args.rank))
        if not os.path.exists(path):
            subprocess.run([args.baton, "lora", "synth", "-m", args.model, "--rank",
                            str(args.rank), "--seed", str(i + 1), "-o", path], check=True,
                           stderr=subprocess.DEVNULL)
        adapters.append(("a%d" % i, path))
    names = [name for name, _ in adapters]
    results = {}
    if "base" in setups:
        results["base"] = measure(args, args.model, [])
    if "lora1" in setups:
        results["lora1"] = measure(args, args.model, adapters, names[0])
    if "loraN" in setups:
        results["loraN"] = measure(args, args.model, adapters, ",".join(names))
    if "merged" in setups:
        merged = []
        for name, path in adapters:
            out = os.path.join(args.work_dir, "%s-merged-%s.gguf" % (stem, name))
            if not os.path.exists(out):
                subprocess.run([args.baton, "lora", "merge", "-m", args.model, "--lora", path,
                                "-o", out], check=True, stderr=subprocess.DEVNULL)
            merged.append(out)
        results["merged"] = merged_in_turn(args, merged)
    base = results.get("base")
    print("| setup | output tok/s | / base | TTFT p50 ms | TPOT p50 ms |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for setup in setups:
        r = results[setup]
        tps = r["output_tokens_per_s"]
        ratio = "%.2fx" % (tps / base["output_tokens_per_s"]) if base else "-"
        if setup == "merged":
            print("| merged, in turn | %s | %s | - | - |" % (fmt(tps), ratio))
            with_restarts = r["output_tokens_per_s_with_restarts"]
            print("| merged, in turn, incl. restarts | %s | %s | - | - |" % (
                fmt(with_restarts),
                "%.2fx" % (with_restarts / base["output_tokens_per_s"]) if base else "-"))
            continue
        ttft = dict(FIGURES)["TTFT p50 ms"](r)
        tpot = dict(FIGURES)["TPOT p50 ms"](r)
        print("| %s | %s | %s | %s | %s |" % (setup, fmt(tps), ratio, fmt(ttft), fmt(tpot)),
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
