#!/usr/bin/env python3
"""Every model family against llama.cpp, one line each.

For each family (and each rope variant), `baton synth` writes a small random-weight GGUF that
exercises what sets the family apart (q/k norms, windowed and global layers with their own rope
bases, layers without rotation, partial rotation with LongRoPE, YaRN); llama.cpp's
`llama-perplexity` and `llama-server` read the same file. The line gives both perplexities on the
same text and context and their relative difference (the bar is 0.5%), and the greedy comparison
of compare_greedy.py: the token ids must agree wherever llama.cpp's top-2 logit margin exceeds
--margin. Exits 1 when a family misses either.

Usage: compare_llamacpp_families.py --llama-bin DIR [--baton build/bin/baton] [-t 2]

DIR holds llama-perplexity and llama-server, built from the llama.cpp tree vendored in the
llama-cpp-python sdist (pip download --no-deps --no-binary :all: llama-cpp-python).
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

import compare_greedy

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHAPE = ["--n-embd", "256", "--n-head", "4", "--n-head-kv", "2", "--head-dim", "64",
         "--n-ff", "512", "--std", "0.1", "--type", "f32", "--ctx", "512"]
# name, synth arguments
CASES = [
    ("llama", ["--arch", "llama", "--n-layer", "4"]),
    ("qwen2", ["--arch", "qwen2", "--n-layer", "4"]),
    ("qwen2-yarn", ["--arch", "qwen2", "--n-layer", "4", "--yarn", "8"]),
    ("phi3-partial-longrope", ["--arch", "phi3", "--n-layer", "4", "--n-rot", "48",
                               "--long-rope", "64"]),
    ("gemma2", ["--arch", "gemma2", "--n-layer", "4", "--sliding-window", "16"]),
    ("qwen3", ["--arch", "qwen3", "--n-layer", "4"]),
    ("gemma3", ["--arch", "gemma3", "--n-layer", "7", "--sliding-window", "16"]),
    ("smollm3", ["--arch", "smollm3", "--n-layer", "8"]),
    ("olmo2", ["--arch", "olmo2", "--n-layer", "4"]),
]
# llama.cpp keeps its KV cache in f16 by default and its CPU flash attention rounds to f16, where
# Baton's f32 cache and attention do not: that moves logits by ~1e-3. Both in f32, llama.cpp
# computes what Baton does.
F32_CACHE = ["-ctk", "f32", "-ctv", "f32", "-fa", "off"]


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True, errors="replace", check=False,
                          stdin=subprocess.DEVNULL)


def perplexity(output):
    found = re.findall(r"Final estimate: PPL = ([0-9.]+)", output)
    return float(found[-1]) if found else None


def llama_perplexity(args, model):
    # llama.cpp's logging thread now and then loses its last lines at exit, the result among
    # them: a run without it is repeated.
    for _ in range(3):
        scored = run([os.path.join(args.llama_bin, "llama-perplexity"), "-m", model, "-f",
                      args.text, "-c", args.ctx, "-t", str(args.t)] + F32_CACHE)
        found = perplexity(scored.stdout + scored.stderr)
        if found is not None:
            return found
    return None


def greedy(args, model):
    """'N/M prompts identical' or what differs, and whether a token above the margin did."""
    options = argparse.Namespace(baton=args.baton, model=model, t=args.t, n=args.n,
                                 llama_server=os.path.join(args.llama_bin, "llama-server"))
    prompts = compare_greedy.DEFAULT_PROMPTS
    baton = compare_greedy.baton_complete(options, prompts)
    llama = compare_greedy.llama_all(options, prompts)
    ties = 0
    for b, l in zip(baton, llama):
        _, mismatch, tie = compare_greedy.compare(b, l, args.margin)
        if mismatch:
            i, bt, lt, gap = mismatch
            return "token %d differs: %d vs %d (margin %.2g)" % (i, bt, lt, gap), True
        ties += tie
    text = "%d prompts x %d tokens agree" % (len(prompts), args.n)
    return text + (" (%d up to a tie)" % ties if ties else ""), False


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--llama-bin", required=True)
    parser.add_argument("--baton", default=os.path.join(ROOT, "build", "bin", "baton"))
    parser.add_argument("--text", default=os.path.join(ROOT, "assets", "lora",
                                                       "kjv-heldout-sample.txt"))
    parser.add_argument("--ctx", default="128", help="perplexity context")
    parser.add_argument("-n", type=int, default=32, help="greedy tokens per prompt")
    parser.add_argument("-t", type=int, default=2)
    parser.add_argument("--margin", type=float, default=1e-3)
    args = parser.parse_args()
    vocab = os.path.join(ROOT, "assets", "models", "kjv-7m-f16.gguf")
    failures = 0
    print("%-22s %14s %14s %9s  %s" % ("family", "llama.cpp PPL", "Baton PPL", "diff", "greedy"),
          flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name, extra in CASES:
            model = os.path.join(tmp, name + ".gguf")
            made = run([args.baton, "synth", "-o", model, "--vocab-from", vocab] + SHAPE + extra)
            if made.returncode != 0:
                print("%-22s synth failed: %s" % (name, made.stderr.strip()), flush=True)
                failures += 1
                continue
            theirs = llama_perplexity(args, model)
            ours = perplexity(run([args.baton, "perplexity", "-m", model, "-f", args.text,
                                   "--ctx", args.ctx, "-t", str(args.t)]).stdout)
            if theirs is None or ours is None:
                print("%-22s no perplexity (llama.cpp %s, Baton %s)" % (name, theirs, ours))
                failures += 1
                continue
            diff = abs(ours - theirs) / theirs
            text, differs = greedy(args, model)
            failures += diff > 0.005 or differs
            print("%-22s %14.4f %14.4f %8.4f%%  %s" % (name, theirs, ours, 100 * diff, text),
                  flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
