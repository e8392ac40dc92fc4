"""Fine-tunes a LoRA of the bundled demo model on another public-domain text.

The base (a small Llama trained on the King James Bible, read back from its GGUF file) stays
frozen; a rank-8 adapter on every linear layer of every block learns Ambrose Bierce's The
Devil's Dictionary (Debian's dict-devil), every 20th entry held out. A share of the training
windows (--rehearsal) replays Bible chapters the base was trained on, so that the adapter learns
the new text without forgetting the old one. The adapter is written as a PEFT directory and as a llama.cpp GGUF adapter, with the held-out losses of base and adapter on
both texts, as PyTorch computes them, in summary.json.
"""
import argparse
import json
import math
import os
import time
from pathlib import Path

import torch

import corpus
import devil_corpus
import gguf_base
from export_lora import write_gguf, write_peft
from lora import add_lora
from train import encode_documents, heldout_loss, seed_everything, train_step

HELDOUT_EVERY = 20
REHEARSAL_STRIDE = 10  # every 10th training chapter: spread over the whole book
SAMPLE_TOKENS = 10000  # the shipped excerpt of held-out Bible chapters a test scores


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--base", type=Path, required=True, help="the demo model's GGUF file")
    p.add_argument("--out", type=Path, required=True, help="work folder for data, logs and exports")
    p.add_argument("--rank", type=int, default=8)
    p.add_argument("--alpha", type=float, default=16.0)
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--batch", type=int, default=8, help="sequences per step")
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--eval-every", type=int, default=50)
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--seed", type=int, default=1911)
    p.add_argument("--rehearsal", type=float, default=0.25,
                   help="share of training tokens replayed from the base's own training text")
    return p.parse_args()


def rehearsal_stream(sp, chapters, new_tokens, share):
    """Chapters spread over the whole Bible, enough to make `share` of the training tokens."""
    wanted = round(new_tokens * share / (1.0 - share))
    ids = []
    for chapter in chapters[::REHEARSAL_STRIDE]:
        if len(ids) >= wanted:
            break
        ids += encode_documents(sp, [chapter]).tolist()
    return torch.tensor(ids[:wanted], dtype=torch.long)


def write_heldout_sample(sp, chapters, path):
    """The first held-out chapters that make SAMPLE_TOKENS tokens, for a test to score quickly."""
    sample, tokens = [], 0
    for chapter in chapters:
        if tokens >= SAMPLE_TOKENS:
            break
        sample.append(chapter)
        tokens += len(sp.encode(chapter)) + 2
    path.write_text("\n\n".join(sample) + "\n")


def main():
    args = parse_args()
    if not 0 <= args.rehearsal < 1:
        raise SystemExit(f"--rehearsal must be in [0, 1), got {args.rehearsal}")
    args.out.mkdir(parents=True, exist_ok=True)
    seed_everything(args.seed, args.threads)

    train_entries, heldout_entries = devil_corpus.split_entries(devil_corpus.read_entries(),
                                                                HELDOUT_EVERY)
    (args.out / "devil-train.txt").write_text("\n\n".join(train_entries) + "\n")
    (args.out / "devil-heldout.txt").write_text("\n\n".join(heldout_entries) + "\n")
    kjv_train_chapters, kjv_heldout_chapters = corpus.split_chapters(corpus.read_chapters(),
                                                                     HELDOUT_EVERY)
    (args.out / "kjv-heldout.txt").write_text("\n\n".join(kjv_heldout_chapters) + "\n")

    model = gguf_base.load_model(args.base)
    sp = gguf_base.load_tokenizer(args.base)
    shape = model.shape
    context = shape.max_position_embeddings
    write_heldout_sample(sp, kjv_heldout_chapters, args.out / "kjv-heldout-sample.txt")
    devil_ids = encode_documents(sp, train_entries)
    replay_ids = rehearsal_stream(sp, kjv_train_chapters, len(devil_ids), args.rehearsal)
    train_ids = torch.cat([devil_ids, replay_ids])
    heldout = {"devil": encode_documents(sp, heldout_entries),
               "kjv": encode_documents(sp, kjv_heldout_chapters)}
    print(f"train tokens {len(train_ids)} ({len(replay_ids)} replayed), held-out tokens {len(heldout['devil'])} "
          f"(Devil's Dictionary), {len(heldout['kjv'])} (King James Bible)")
    base_losses = {text: heldout_loss(model, ids, context) for text, ids in heldout.items()}
    print(f"base held-out loss {base_losses}")

    adapted = add_lora(model, args.rank, args.alpha)
    trainable = [p for p in model.parameters() if p.requires_grad]
    print(f"adapted linears {len(adapted)}, trainable parameters {sum(p.numel() for p in trainable)}")
    optimizer = torch.optim.AdamW(trainable, lr=args.lr, betas=(0.9, 0.95), weight_decay=0.0)
    generator = torch.Generator().manual_seed(args.seed)
    started = time.time()
    for step in range(args.steps):
        loss = train_step(model, optimizer, trainable, train_ids, generator, step, args)
        if (step + 1) % args.eval_every == 0 or step + 1 == args.steps:
            devil = heldout_loss(model, heldout["devil"], context, 16)
            print(f"step {step + 1}/{args.steps} train {loss:.3f} held-out {devil:.3f} "
                  f"{time.time() - started:.0f}s", flush=True)

    adapter_losses = {text: heldout_loss(model, ids, context) for text, ids in heldout.items()}
    summary = {"rank": args.rank, "alpha": args.alpha, "train_tokens": len(train_ids),
               "replayed_tokens": len(replay_ids),
               "heldout_tokens": {text: len(ids) for text, ids in heldout.items()},
               "base_heldout_loss": base_losses, "adapter_heldout_loss": adapter_losses,
               "base_heldout_perplexity": {t: math.exp(v) for t, v in base_losses.items()},
               "adapter_heldout_perplexity": {t: math.exp(v) for t, v in adapter_losses.items()},
               "training_seconds": round(time.time() - started), "args": {
                   k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}}
    (args.out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary, indent=2))
    write_peft(adapted, args.rank, args.alpha, args.base.name, args.out / "peft")
    write_gguf(adapted, args.alpha, shape, args.out / "adapter.gguf")


if __name__ == "__main__":
    main()
