#!/usr/bin/env python3
"""Python's overhead over the C++ engine (issue 24's bar): the same prompts and sampling
settings through `baton batch` and through the Python package's `LLM.generate` (default
use_tqdm, so with its progress bar), each in a fresh process that times generation only, not
loading. The two alternate for --rounds rounds; each round prints both throughputs and their
ratio, then the median ratio.

Usage: compare_python.py [--baton build/bin/baton] [--python-path build/python] [-t 2]
           [--prompts 64] [--max-tokens 128] [--rounds 3] [model.gguf]
"""
import argparse
import json
import os
import pathlib
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]

PYTHON_RUN = """
import json, sys, time
from baton import LLM, SamplingParams
model, threads, spec = sys.argv[1], int(sys.argv[2]), json.load(open(sys.argv[3]))
llm = LLM(model=model, threads=threads)
params = [SamplingParams(temperature=0.8, top_k=40, top_p=0.95, min_p=0.05, seed=r["seed"],
                         max_tokens=r["max_tokens"], ignore_eos=True) for r in spec]
start = time.perf_counter()
outputs = llm.generate([r["prompt"] for r in spec], params)
seconds = time.perf_counter() - start
tokens = sum(len(o.outputs[0].token_ids) for o in outputs)
print(json.dumps({"tokens": tokens, "seconds": seconds}))
"""


def prompts(count):
    """Opening words of held-out Bible verses, the demo model's kind of text."""
    lines = (ROOT / "assets" / "lora" / "kjv-heldout-sample.txt").read_text().splitlines()
    verses = [" ".join(line.split()[:12]) for line in lines if len(line.split()) >= 6]
    return [verses[i % len(verses)] for i in range(count)]


def run_batch(args, requests_path):
    result = subprocess.run(
        [args.baton, "batch", "-m", args.model, "-t", str(args.t), "--input", requests_path,
         "--output", os.devnull],
        capture_output=True, text=True, check=True)
    match = re.search(r"(\d+) tokens generated in \d+ engine steps, ([\d.]+) s", result.stderr)
    return int(match.group(1)) / float(match.group(2))


def run_python(args, spec_path):
    env = dict(os.environ, PYTHONPATH=args.python_path)
    result = subprocess.run(
        [sys.executable, "-c", PYTHON_RUN, args.model, str(args.t), spec_path],
        capture_output=True, text=True, check=True, env=env)
    figures = json.loads(result.stdout.strip().splitlines()[-1])
    return figures["tokens"] / figures["seconds"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model", nargs="?", default=str(ROOT / "assets/models/kjv-7m-f16.gguf"))
    parser.add_argument("--baton", default=str(ROOT / "build/bin/baton"))
    parser.add_argument("--python-path", default=str(ROOT / "build/python"))
    parser.add_argument("-t", type=int, default=2)
    parser.add_argument("--prompts", type=int, default=64)
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    spec = [{"prompt": p, "seed": i, "max_tokens": args.max_tokens}
            for i, p in enumerate(prompts(args.prompts))]
    with tempfile.TemporaryDirectory() as work:
        spec_path = os.path.join(work, "spec.json")
        requests_path = os.path.join(work, "requests.jsonl")
        with open(spec_path, "w") as f:
            json.dump(spec, f)
        with open(requests_path, "w") as f:
            for r in spec:
                f.write(json.dumps({"prompt": r["prompt"], "seed": r["seed"],
                                    "max_tokens": r["max_tokens"], "ignore_eos": True,
                                    "temperature": 0.8, "top_k": 40, "top_p": 0.95,
                                    "min_p": 0.05}) + "\n")
        print(f"{args.prompts} prompts x {args.max_tokens} tokens, {args.t} threads, "
              f"{os.path.basename(args.model)}")
        print(f"{'round':>5} {'baton batch tok/s':>18} {'LLM.generate tok/s':>19} {'ratio':>6}")
        ratios = []
        for round_number in range(1, args.rounds + 1):
            batch = run_batch(args, requests_path)
            python = run_python(args, spec_path)
            ratios.append(python / batch)
            print(f"{round_number:>5} {batch:>18.1f} {python:>19.1f} {ratios[-1]:>6.3f}")
        print(f"median ratio (Python / C++): {statistics.median(ratios):.3f}")


if __name__ == "__main__":
    main()
