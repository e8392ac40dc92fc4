#!/usr/bin/env python3
"""A tiktoken BPE rank file written as a GGUF vocabulary (llama.cpp's gpt2 tokenizer keys), for
`baton bench grammar` on a vocabulary of 150k tokens, which ../shared does not hold.

Qwen's 151,643 ranks come with PyPI's dashscope wheel (dashscope/resources/qwen.tiktoken), so
no model download is needed:

  pip download --no-deps dashscope && unzip -j dashscope-*.whl dashscope/resources/qwen.tiktoken
  python3 -m venv /tmp/gguf-venv && /tmp/gguf-venv/bin/pip install gguf
  /tmp/gguf-venv/bin/python tools/bench/tiktoken_vocabulary.py qwen.tiktoken qwen-vocab.gguf

tiktoken keeps ranks only; GGUF's gpt2 tokenizer wants merges. A token's merge is the last one
byte-pair encoding makes when it spells the token with the ranks below its own, as Hugging
Face's converters derive them. Qwen's control tokens (<|endoftext|>, <|im_start|>, <|im_end|>
and 205 extras) follow the ranks.
"""
import base64
import sys

import gguf


def byte_spellings():
    """GPT-2's printable spelling of each byte, which gpt2 vocabularies store tokens in."""
    printable = (list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) +
                 list(range(ord("®"), ord("ÿ") + 1)))
    spelling = {b: chr(b) for b in printable}
    shifted = 0
    for b in range(256):
        if b not in spelling:
            spelling[b] = chr(256 + shifted)
            shifted += 1
    return spelling


def last_merge(token, rank, ranks):
    """The two parts byte-pair encoding joins last when it spells `token` from its bytes."""
    parts = [bytes([b]) for b in token]
    while len(parts) > 2:
        pairs = [(ranks.get(parts[i] + parts[i + 1], rank), i) for i in range(len(parts) - 1)]
        best_rank, i = min(pairs)
        if best_rank >= rank:
            break
        parts[i:i + 2] = [parts[i] + parts[i + 1]]
    if len(parts) != 2:
        raise ValueError("rank %d: %r is not two lower-ranked tokens joined" % (rank, token))
    return parts


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: tiktoken_vocabulary.py RANKS.tiktoken OUT.gguf")
    ranks = {}
    with open(sys.argv[1], "rb") as lines:
        for line in lines:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    ordered = sorted(ranks, key=ranks.get)
    if [ranks[t] for t in ordered] != list(range(len(ordered))):
        sys.exit("the ranks are not 0..n-1")
    spelling = byte_spellings()

    def spell(token):
        return "".join(spelling[b] for b in token)

    tokens = [spell(t) for t in ordered]
    merges = [" ".join(spell(p) for p in last_merge(t, ranks[t], ranks))
              for t in ordered if len(t) > 1]
    controls = (["<|endoftext|>", "<|im_start|>", "<|im_end|>"] +
                ["<|extra_%d|>" % i for i in range(205)])
    writer = gguf.GGUFWriter(sys.argv[2], "qwen2")
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("qwen2")
    writer.add_token_list(tokens + controls)
    writer.add_token_types([gguf.TokenType.NORMAL] * len(tokens) +
                           [gguf.TokenType.CONTROL] * len(controls))
    writer.add_token_merges(merges)
    writer.add_bos_token_id(len(tokens))
    writer.add_eos_token_id(len(tokens))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    print("%s: %d tokens, %d merges" % (sys.argv[2], len(tokens) + len(controls), len(merges)))


if __name__ == "__main__":
    main()
