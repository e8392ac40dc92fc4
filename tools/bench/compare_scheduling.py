#!/usr/bin/env python3
"""Issue 23's bar: length-aware scheduling against fcfs on a mixed workload, served by
`baton serve` and driven by `baton bench serve`, figures side by side in one run.

The workload (written to --work-dir/mixed.jsonl): 80% short answers (16 to 32 tokens) and 20%
long ones (256 to 320), each behind one of a few shared system prompts: two templates ask for
short answers and one for long ones, so the template is what tells them apart. Requests arrive
as a Poisson process.

  1. capacity: fcfs with every request at once, giving the requests/s the server sustains;
  2. fcfs and sjf at --load times that rate (default 0.9: the server stays busy): throughput,
     mean and p99 end-to-end latency;
  3. preemptions: fcfs with --kv-reservation none and predicted under a KV pool of --small-kv
     MiB, sized to run dry (4 MiB holds 512 tokens of the demo model: one long request fits,
     eight at once do not).

Every server takes --max-seqs sequences per step, so that a queue forms for the policy to order,
and a context of --ctx tokens (the demo model was trained on 256, too few for the long answers;
past that its text degrades, which does not change the timing).
The predictor starts empty in each server and learns from the run's own finished requests.

With --length-head, a fourth run serves sjf with a hidden-state head (docs/scheduling.md): a
server first takes every request of a second workload of the same mix (another seed) at once,
logging their lengths (--length-log); `baton length-head` fits the head on that log; sjf then
serves the measured workload with the head, at the same arrival rate.

Usage: compare_scheduling.py [--baton build/bin/baton] [-t 2] [--requests 200] [--max-seqs 8]
           [--ctx 512] [--load 0.9] [--small-kv 4.0] [--policies-only] [--length-head]
           [--sjf-aging A [A ...]] [--sjf-overtake R [R ...]]
           [--seed 1] [--work-dir /tmp/baton-sched-bench] model.gguf
"""
import argparse
import json
import os
import random
import subprocess
import sys

from compare_servers import wait_ready

PORT = 18631

SYSTEM_PROMPTS = [
    # (template, answer lengths): the shared part of each prompt.
    ("Answer in one short verse. In the beginning God created the heaven and the earth. And the "
     "earth was without form, and void; and darkness was upon the face of the deep.", (16, 32)),
    ("Reply with a brief blessing. The LORD bless thee, and keep thee: The LORD make his face "
     "shine upon thee, and be gracious unto thee: The LORD lift up his countenance upon thee.",
     (16, 32)),
    ("Tell the whole story at length, chapter by chapter. Now these are the generations of the "
     "sons of Noah, Shem, Ham, and Japheth: and unto them were sons born after the flood.",
     (256, 320)),
]
QUESTIONS = ["And Moses said", "Who is like unto thee", "Blessed is the man", "And it came to pass",
             "Hear, O Israel", "Thus saith the LORD", "Praise ye the LORD", "In that day"]


def write_dataset(path, count, rng):
    with open(path, "w") as out:
        for _ in range(count):
            template = 2 if rng.random() < 0.2 else rng.randrange(2)
            system, (low, high) = SYSTEM_PROMPTS[template]
            prompt = system + "\n" + rng.choice(QUESTIONS) + " " + str(rng.randrange(1000))
            out.write(json.dumps({"prompt": prompt, "max_tokens": rng.randint(low, high)}) + "\n")


def measure(args, dataset, flags, rate=None):
    command = [args.baton, "serve", "-m", args.model, "--port", str(PORT), "-t", str(args.t),
               "--max-seqs", str(args.max_seqs), "-c", str(args.ctx),
               # Every request may be in flight at once (the capacity run sends them so).
               "--max-queue", str(max(256, args.requests))] + flags
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = "http://127.0.0.1:%d" % PORT
    try:
        wait_ready(url, process)
        bench = [args.baton, "bench", "serve", "--url", url, "--dataset", dataset, "--requests",
                 str(args.requests), "--concurrency", str(args.requests), "--seed", str(args.seed),
                 "--json"]
        if rate:
            bench += ["--request-rate", "%.4f" % rate]
        result = json.loads(subprocess.run(bench, check=True, capture_output=True,
                                           text=True).stdout)
        if result["failed"]:
            raise RuntimeError("%d requests failed: %s" % (result["failed"], result["first_error"]))
        return result
    finally:
        process.terminate()
        process.wait(timeout=120)


def fit_length_head(args):
    """Logs a second workload's lengths and fits a head on them; returns the head's path and
    `baton length-head --json`'s report."""
    train = os.path.join(args.work_dir, "train.jsonl")
    write_dataset(train, args.requests, random.Random(args.seed + 1000))
    log = os.path.join(args.work_dir, "lengths.jsonl")
    if os.path.exists(log):
        os.remove(log)
    measure(args, train, ["--scheduling-policy", "fcfs", "--length-log", log])
    head = os.path.join(args.work_dir, "head.json")
    fitted = subprocess.run([args.baton, "length-head", "-m", args.model, "--log", log, "-o",
                             head, "-c", str(args.ctx), "-t", str(args.t), "--json"],
                            check=True, capture_output=True, text=True)
    return head, json.loads(fitted.stdout)


def row(name, r, base=None):
    cells = [name, "%.2f" % r["requests_per_s"], "%.1f" % r["output_tokens_per_s"],
             "%.0f" % r["e2e_ms"]["mean"], "%.0f" % r["e2e_ms"]["p99"],
             str(r.get("preemptions")), str(r.get("recomputed_tokens")),
             str(r.get("suspensions"))]
    if base:
        cells += ["%.2fx" % (r["output_tokens_per_s"] / base["output_tokens_per_s"]),
                  "%.2fx" % (r["e2e_ms"]["mean"] / base["e2e_ms"]["mean"]),
                  "%.2fx" % (r["e2e_ms"]["p99"] / base["e2e_ms"]["p99"])]
    else:
        cells += ["1.00x"] * 3
    return "| " + " | ".join(cells) + " |"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--baton", default="build/bin/baton")
    parser.add_argument("-t", type=int, default=2)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--max-seqs", type=int, default=8)
    parser.add_argument("--ctx", type=int, default=512)
    parser.add_argument("--load", type=float, default=0.9)
    parser.add_argument("--small-kv", type=float, default=4.0)
    parser.add_argument("--policies-only", action="store_true",
                        help="skip step 3 (the preemption runs under a small KV pool)")
    parser.add_argument("--length-head", action="store_true",
                        help="also serve sjf with a hidden-state head fitted on another seed's log")
    parser.add_argument("--sjf-aging", type=float, nargs="+", default=[None],
                        help="serve sjf once per --sjf-aging value given (default: the server's)")
    parser.add_argument("--sjf-overtake", type=float, nargs="+", default=[None],
                        help="serve sjf once per --sjf-overtake value given, for each aging "
                             "(default: the server's)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--work-dir", default="/tmp/baton-sched-bench")
    parser.add_argument("model")
    args = parser.parse_args()
    os.makedirs(args.work_dir, exist_ok=True)
    dataset = os.path.join(args.work_dir, "mixed.jsonl")
    write_dataset(dataset, args.requests, random.Random(args.seed))

    capacity = measure(args, dataset, ["--scheduling-policy", "fcfs"])
    rate = args.load * capacity["requests_per_s"]
    fcfs = measure(args, dataset, ["--scheduling-policy", "fcfs"], rate)
    sjf_runs = []
    for aging in args.sjf_aging:
        for overtake in args.sjf_overtake:
            flags = ["--scheduling-policy", "sjf"]
            name = "sjf"
            if aging is not None:
                flags += ["--sjf-aging", str(aging)]
                name += ", aging %g" % aging
            if overtake is not None:
                flags += ["--sjf-overtake", str(overtake)]
                name += ", overtake %g" % overtake
            sjf_runs.append((name, measure(args, dataset, flags, rate)))
    if args.length_head:
        head, fitted = fit_length_head(args)
        sjf_head = measure(args, dataset, ["--scheduling-policy", "sjf", "--length-head", head],
                           rate)
    if not args.policies_only:
        small = ["--kv-cache-size", str(args.small_kv), "--scheduling-policy", "fcfs"]
        no_reserve = measure(args, dataset, small + ["--kv-reservation", "none"], rate)
        reserve = measure(args, dataset, small + ["--kv-reservation", "predicted"], rate)

    header = ("| run | req/s | output tok/s | e2e mean ms | e2e p99 ms | preemptions | "
              "recomputed tokens | suspensions | tok/s ratio | mean ratio | p99 ratio |")
    print("capacity (all at once): %.2f req/s; Poisson arrivals at %.2f req/s (%.0f%%)\n"
          % (capacity["requests_per_s"], rate, 100 * args.load))
    if args.length_head:
        print("length head: %d requests learned from, %d held out; held out MAE / tau: online "
              "%.1f / %.2f, head %.1f / %.2f\n"
              % (fitted["trained"], fitted["held_out"], fitted["online"]["mean_absolute_error"],
                 fitted["online"]["kendall_tau"], fitted["head"]["mean_absolute_error"],
                 fitted["head"]["kendall_tau"]))
    print(header)
    print("|" + " --- |" * 11)
    print(row("fcfs", fcfs))
    for name, sjf in sjf_runs:
        print(row(name, sjf, fcfs))
    if args.length_head:
        print(row("sjf, length head", sjf_head, fcfs))
    if not args.policies_only:
        print(row("kv %.2g MiB, reserve none" % args.small_kv, no_reserve))
        print(row("kv %.2g MiB, reserve predicted" % args.small_kv, reserve, no_reserve))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
