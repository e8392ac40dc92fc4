#!/usr/bin/env python3
"""Serves one GGUF file in several set-ups, one after the other, drives each with
`baton bench serve` under the same load, and prints the figures side by side with the ratio of
each set-up to the first.

Set-ups (--setups, comma-separated): one (one process, -t THREADS); dp2, tp2, pp2 (mpirun -np 2
with --data-parallel 2, --tensor-parallel 2 or --pipeline-parallel 2, -t THREADS/2 per rank);
pp2-serial (pp2 with --pp-micro-batches 1: one step in flight at a time). mpirun runs on loopback
only.

Usage: compare_distributed_serving.py [--baton build/bin/baton] [-t 2] [--setups one,dp2]
           [--requests 16] [--concurrency 8] [--prompt-tokens 100] [--output-tokens 64]
           [--rounds 1] model.gguf
"""
import argparse
import os
import subprocess
import sys

from compare_servers import FIGURES, fmt, run_server

PORT = 18611
MPIRUN = ["mpirun", "--oversubscribe", "--allow-run-as-root", "--bind-to", "none", "--mca", "btl",
          "self,vader", "--mca", "oob_tcp_if_include", "lo", "--mca",
          "btl_vader_single_copy_mechanism", "none", "-x", "OMP_WAIT_POLICY=passive"]
DISTRIBUTED = {
    "dp2": ["--data-parallel", "2"],
    "tp2": ["--tensor-parallel", "2"],
    "pp2": ["--pipeline-parallel", "2"],
    "pp2-serial": ["--pipeline-parallel", "2", "--pp-micro-batches", "1"],
}


def command(args, setup):
    serve = [args.baton, "serve", "-m", args.model, "--port", str(PORT)]
    if setup == "one":
        return serve + ["-t", str(args.t)]
    backends = os.path.join(os.path.dirname(os.path.abspath(args.baton)), "..", "lib")
    return (MPIRUN + ["-x", "BATON_BACKEND_PATH=" + backends, "-np", "2"] + serve +
            ["-t", str(max(1, args.t // 2))] + DISTRIBUTED[setup])


def measure(args, setup):
    def start(_):
        # mpirun passes the terminate signal on to every rank.
        process = subprocess.Popen(command(args, setup), stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
        return process, "http://127.0.0.1:%d" % PORT
    return run_server(args, start)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--baton", default="build/bin/baton")
    parser.add_argument("-t", type=int, default=2)
    parser.add_argument("--setups", default="one,dp2")
    parser.add_argument("--requests", type=int, default=16)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--prompt-tokens", type=int, default=100)
    parser.add_argument("--output-tokens", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("model")
    args = parser.parse_args()
    setups = args.setups.split(",")
    if len(setups) < 2 or any(s != "one" and s not in DISTRIBUTED for s in setups):
        parser.error("--setups takes two or more of one, " + ", ".join(DISTRIBUTED))
    first, others = setups[0], setups[1:]
    print("| round | figure | %s | " % first +
          " | ".join("%s | %s / %s" % (s, s, first) for s in others) + " |")
    print("| --- | --- | ---: |" + " ---: | ---: |" * len(others))
    for round_number in range(1, args.rounds + 1):
        results = {setup: measure(args, setup) for setup in setups}
        for name, pick in FIGURES:
            base = pick(results[first])
            cells = [fmt(base)]
            for setup in others:
                value = pick(results[setup])
                cells.append(fmt(value))
                cells.append("%.2fx" % (value / base) if value is not None and base else "-")
            print("| %d | %s | %s |" % (round_number, name, " | ".join(cells)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
