#!/usr/bin/env python3
"""Runs `baton bench` and llama.cpp's `llama-bench` on the same GGUF files, alternating the two
per file so both see the same machine state, and prints tokens/s side by side with ratios.

Usage: compare_llamacpp.py --llama-bench PATH [--baton build/bin/baton] [-p 512] [-n 128]
                           [-t 2] [-r 5] model.gguf [model.gguf ...]
"""
import argparse
import json
import subprocess
import sys


def baton_results(args, model):
    out = subprocess.run(
        [args.baton, "bench", "-m", model, "-p", str(args.p), "-n", str(args.n), "-t",
         str(args.t), "-r", str(args.r), "--json"],
        check=True, capture_output=True, text=True).stdout
    return {row["test"]: row["median_ts"] for row in json.loads(out)}


def llama_results(args, model):
    out = subprocess.run(
        [args.llama_bench, "-m", model, "-p", str(args.p), "-n", str(args.n), "-t", str(args.t),
         "-r", str(args.r), "-o", "json"],
        check=True, capture_output=True, text=True).stdout
    results = {}
    for row in json.loads(out):
        test = f"pp{row['n_prompt']}" if row["n_prompt"] else f"tg{row['n_gen']}"
        samples = sorted(row["samples_ts"])
        results[test] = samples[len(samples) // 2]
    return results


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--llama-bench", required=True)
    parser.add_argument("--baton", default="build/bin/baton")
    parser.add_argument("-p", type=int, default=512)
    parser.add_argument("-n", type=int, default=128)
    parser.add_argument("-t", type=int, default=2)
    parser.add_argument("-r", type=int, default=5)
    parser.add_argument("models", nargs="+")
    args = parser.parse_args()
    print("| model | test | baton t/s (median) | llama.cpp t/s (median) | ratio |")
    print("| --- | --- | ---: | ---: | ---: |")
    for model in args.models:
        ours = baton_results(args, model)
        theirs = llama_results(args, model)
        for test in sorted(ours):
            if test in theirs:
                print(f"| {model.rsplit('/', 1)[-1]} | {test} | {ours[test]:.1f} | "
                      f"{theirs[test]:.1f} | {ours[test] / theirs[test]:.2f}x |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
