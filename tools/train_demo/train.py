"""Trains Baton's bundled demo model: a small Llama on the King James Bible.

Steps: read the text (Debian's bible-kjv-text), hold out every 20th chapter, train a 2048-token
SentencePiece BPE vocabulary, train the model with fixed seeds, log training and validation loss,
then write a Hugging Face Llama directory (config.json, model.safetensors, tokenizer.model,
tokenizer_config.json) plus reference outputs that Baton's tests compare against. `train.sh`
turns that directory into the bundled GGUF with `baton convert`.
"""
import argparse
import csv
import json
import math
import os
import random
import time
from pathlib import Path

import numpy as np
import sentencepiece as spm
import torch
import torch.nn.functional as F

import corpus
from export import write_hf_directory, write_reference
from model import LlamaForCausalLM, LlamaShape

HELDOUT_EVERY = 20


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", type=Path, required=True, help="work folder for data, logs and the HF export")
    p.add_argument("--steps", type=int, default=450)
    p.add_argument("--batch", type=int, default=8, help="sequences per step")
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--warmup", type=int, default=30)
    p.add_argument("--eval-every", type=int, default=50)
    p.add_argument("--eval-windows", type=int, default=32)
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--seed", type=int, default=1611)
    return p.parse_args()


def train_tokenizer(train_text: Path, prefix: Path, vocab_size: int):
    # Llama's SentencePiece settings: BPE with byte fallback, no normalization, a dummy prefix
    # space, digits split, so every byte sequence is representable and tokenizers that follow
    # llama.cpp's SPM algorithm produce the same ids.
    spm.SentencePieceTrainer.train(
        input=str(train_text), model_prefix=str(prefix), vocab_size=vocab_size, model_type="bpe",
        byte_fallback=True, split_digits=True, normalization_rule_name="identity",
        add_dummy_prefix=True, remove_extra_whitespaces=False, character_coverage=1.0,
        unk_id=0, bos_id=1, eos_id=2, pad_id=-1, num_threads=1, minloglevel=2,
        max_sentence_length=1 << 16)
    return spm.SentencePieceProcessor(model_file=f"{prefix}.model")


def encode_documents(sp, documents):
    """One stream: each document framed by BOS and EOS, as in pre-training."""
    ids = []
    for document in documents:
        ids += [sp.bos_id()] + sp.encode(document) + [sp.eos_id()]
    return torch.tensor(ids, dtype=torch.long)


def unigram_cross_entropy(train_ids, heldout_ids, vocab_size):
    """Nats per token of the best context-free model (add-one smoothed train frequencies)."""
    counts = np.bincount(train_ids.numpy(), minlength=vocab_size).astype(np.float64) + 1.0
    log_probs = np.log(counts / counts.sum())
    return float(-log_probs[heldout_ids.numpy()].mean())


@torch.no_grad()
def heldout_loss(model, ids, context, windows=None):
    """Mean next-token loss over non-overlapping windows of the held-out stream."""
    model.eval()
    starts = list(range(0, len(ids) - context - 1, context))
    if windows:
        starts = starts[:: max(1, len(starts) // windows)][:windows]
    total, count = 0.0, 0
    for i in range(0, len(starts), 16):
        batch = torch.stack([ids[s : s + context + 1] for s in starts[i : i + 16]])
        logits = model(batch[:, :-1])
        total += F.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch[:, 1:].reshape(-1),
                                 reduction="sum").item()
        count += batch[:, 1:].numel()
    model.train()
    return total / count


@torch.no_grad()
def greedy(model, sp, prompt, n):
    model.eval()
    ids = [sp.bos_id()] + sp.encode(prompt)
    for _ in range(n):
        next_id = int(model(torch.tensor([ids[-model.shape.max_position_embeddings :]]))[0, -1].argmax())
        ids.append(next_id)
        if next_id == sp.eos_id():
            break
    model.train()
    return ids


def learning_rate(step, args):
    if step < args.warmup:
        return args.lr * (step + 1) / args.warmup
    progress = (step - args.warmup) / max(1, args.steps - args.warmup)
    return args.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))


def seed_everything(seed, threads):
    """Fixed seeds for Python, NumPy and PyTorch, and PyTorch's thread count, so a run repeats."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.set_num_threads(threads)


def train_step(model, optimizer, parameters, train_ids, generator, step, args):
    """One optimizer step on args.batch random windows of the training stream; the loss."""
    for group in optimizer.param_groups:
        group["lr"] = learning_rate(step, args)
    context = model.shape.max_position_embeddings
    starts = torch.randint(0, len(train_ids) - context - 1, (args.batch,), generator=generator)
    batch = torch.stack([train_ids[s : s + context + 1] for s in starts])
    logits = model(batch[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch[:, 1:].reshape(-1))
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(parameters, 1.0)
    optimizer.step()
    return loss.item()


def main():
    args = parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    seed_everything(args.seed, args.threads)

    train_chapters, heldout_chapters = corpus.split_chapters(corpus.read_chapters(), HELDOUT_EVERY)
    (args.out / "train.txt").write_text("\n".join(train_chapters) + "\n")
    (args.out / "heldout.txt").write_text("\n\n".join(heldout_chapters) + "\n")
    shape = LlamaShape()
    sp = train_tokenizer(args.out / "train.txt", args.out / "tokenizer", shape.vocab_size)
    train_ids = encode_documents(sp, train_chapters)
    heldout_ids = encode_documents(sp, heldout_chapters)
    unigram = unigram_cross_entropy(train_ids, heldout_ids, shape.vocab_size)
    print(f"train tokens {len(train_ids)}, held-out tokens {len(heldout_ids)}, "
          f"unigram held-out loss {unigram:.4f} nats")

    model = LlamaForCausalLM(shape)
    print(f"parameters {sum(p.numel() for p in model.parameters())}")
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                                   {"params": no_decay, "weight_decay": 0.0}],
                                  lr=args.lr, betas=(0.9, 0.95))
    context = shape.max_position_embeddings
    generator = torch.Generator().manual_seed(args.seed)
    log_rows = []
    started = time.time()
    for step in range(args.steps):
        loss = train_step(model, optimizer, list(model.parameters()), train_ids, generator, step,
                          args)
        row = {"step": step + 1, "train_loss": loss, "heldout_loss": "",
               "seconds": round(time.time() - started, 1)}
        if (step + 1) % args.eval_every == 0 or step + 1 == args.steps:
            row["heldout_loss"] = heldout_loss(model, heldout_ids, context, args.eval_windows)
            sample = sp.decode(greedy(model, sp, "In the beginning", 24))
            print(f"step {step + 1}/{args.steps} train {loss:.3f} held-out "
                  f"{row['heldout_loss']:.3f} lr {learning_rate(step, args):.2e} "
                  f"{row['seconds']:.0f}s | {sample!r}", flush=True)
        log_rows.append(row)

    with open(args.out / "loss.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(log_rows[0]))
        writer.writeheader()
        writer.writerows(log_rows)
    final_heldout = heldout_loss(model, heldout_ids, context)
    summary = {"parameters": sum(p.numel() for p in model.parameters()),
               "train_tokens": len(train_ids), "heldout_tokens": len(heldout_ids),
               "tokens_seen": args.steps * args.batch * context,
               "unigram_heldout_loss": unigram, "heldout_loss": final_heldout,
               "heldout_perplexity": math.exp(final_heldout),
               "unigram_heldout_perplexity": math.exp(unigram),
               "training_seconds": round(time.time() - started), "args": {
                   k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}}
    (args.out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary, indent=2))
    write_hf_directory(model, sp, args.out / "tokenizer.model", args.out / "hf")
    write_reference(model, sp, args.out / "reference.json")


if __name__ == "__main__":
    main()
