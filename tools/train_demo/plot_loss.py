"""Draws the training and held-out loss curves of a train.py run, with the unigram baseline."""
import csv
import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)


def main(work: Path, png: Path):
    rows = list(csv.DictReader(open(work / "loss.csv")))
    summary = json.loads((work / "summary.json").read_text())
    steps = [int(r["step"]) for r in rows]
    train = [float(r["train_loss"]) for r in rows]
    evaluated = [(int(r["step"]), float(r["heldout_loss"])) for r in rows if r["heldout_loss"]]
    fig, ax = plt.subplots(figsize=(7, 4), dpi=110)
    ax.plot(steps, train, lw=0.8, alpha=0.6, label="training batch loss")
    ax.plot(*zip(*evaluated), "o-", label="held-out loss")
    ax.axhline(summary["unigram_heldout_loss"], color="grey", ls="--",
               label=f"unigram baseline ({summary['unigram_heldout_loss']:.2f})")
    ax.set_xlabel(f"step ({summary['args']['batch']} x 256 tokens)")
    ax.set_ylabel("cross-entropy (nats/token)")
    ax.set_title("Baton demo model: 7M-parameter Llama on the King James Bible")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(png)


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
