"""A Hugging Face checkpoint whose vocabulary is only a tokenizer.json: byte-level BPE, as GPT-2,
Llama 3 and Qwen2 ship theirs, and SentencePiece-style BPE (byte fallback, spaces as U+2581), as
transformers converts Llama 2's. The test trains a real tokenizer.json with the `tokenizers`
library for each kind, writes a tiny random Llama beside it, and checks that `baton convert`
tokenizes every sample text as `tokenizers` does and that `-m DIR` generates what the converted
file generates.

Usage: hf_tokenizer_json_test.py BATON_BINARY. Exits 77 (skip) when `tokenizers` is missing.
"""
import json
import os
import random
import re
import struct
import subprocess
import sys
import tempfile

try:
    from tokenizers import (AddedToken, Regex, Tokenizer, decoders, models, normalizers,
                            pre_tokenizers, processors, trainers)
except ImportError:
    print("skip: the tokenizers package is not installed (scripts/python-test-env.sh)")
    sys.exit(77)

# The qwen2 case is a Qwen2ForCausalLM (q, k and v biases); the others are Llamas.
LLAMA3_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
                r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
               r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")

CORPUS = [
    "In the beginning God created the heaven and the earth.",
    "And the earth was without form, and void; and darkness was upon the face of the deep.",
    "And God said, Let there be light: and there was light.",
    "I'll say it's 2024; they've counted 1234567 stars, won't they? We'd LOVE to.",
    "Caf\u00e9 cr\u00e8me, na\u00efve fa\u00e7ade, \u00fcber Stra\u00dfe, \u00bd of 3.14159.",
    "\u4f60\u597d\u4e16\u754c, \u3053\u3093\u306b\u3061\u306f, \u043f\u0440\u0438\u0432\u0435\u0442 "
    "\u043c\u0438\u0440 \U0001F600\U0001F680",
    "def main():\n    return {'a': [1, 2, 3]}\n\n\tTabs\tand  double  spaces\r\n",
] * 20

SAMPLES = [
    "Hello world",
    "In the beginning God created the heaven and the earth.",
    "I'LL be there, won't you? They've 12345 apples and 3.14159 pies.",
    "  leading spaces\n\n\ttabs and newlines\r\nend   ",
    "h\u00e9llo w\u00f6rld \u2014 na\u00efve caf\u00e9 \u00bd \U0001F600 \u4f60\u597d",
    "unseen: zyxwvut QQQ 98765432109876 \u0e2a\u0e27\u0e31\u0e2a\u0e14\u0e35",
    "",
]

VARIANTS = {
    "gpt-2": {
        "pre": pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
        "special": ["<|endoftext|>"], "bos": "<|endoftext|>", "eos": "<|endoftext|>",
        "add_bos": False},
    "llama-bpe": {
        "pre": pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(LLAMA3_SPLIT), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)]),
        "special": ["<|begin_of_text|>", "<|end_of_text|>"],
        "bos": "<|begin_of_text|>", "eos": "<|end_of_text|>", "add_bos": True},
    "qwen2": {
        "pre": pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(QWEN2_SPLIT), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)]),
        "normalizer": normalizers.NFC(),
        "special": ["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
        "bos": None, "eos": "<|im_end|>", "add_bos": False, "architecture": "Qwen2ForCausalLM"},
    # Llama 2's file: Prepend("▁") + Replace(" ", "▁") normalizers.
    "spm-normalizer": {
        "sentencepiece": "normalizer", "special": ["<unk>", "<s>", "</s>"],
        "bos": "<s>", "eos": "</s>", "add_bos": True},
    # Newer transformers: a Metaspace pre-tokenizer, which prepends "▁" only to the first piece
    # and only when the text does not start with a space. Baton, like SentencePiece itself and
    # llama.cpp, always prepends it (also after special tokens), so texts that start with a
    # space and the special-token check are left out.
    "spm-metaspace": {
        "sentencepiece": "metaspace", "special": ["<unk>", "<s>", "</s>"],
        "bos": "<s>", "eos": "</s>", "add_bos": True, "check_special": False,
        "skip_leading_space": True},
}

SPACE = "\u2581"

# Added tokens whose lstrip / rstrip flags take the whitespace beside them, and texts that need
# the flags to tokenize as `tokenizers` does.
FLAGGED_TOKENS = [AddedToken("<|turn|>", special=True, rstrip=True, normalized=False),
                  AddedToken("<|tool|>", special=True, lstrip=True, normalized=False)]
FLAGGED_SAMPLES = ["a <|turn|>  b", "x \n <|tool|> y", "<|tool|><|turn|>\n\n z <|turn|>"]


def check(condition, message):
    if not condition:
        raise AssertionError(message)


def train_sentencepiece_style(variant):
    """Laid out as transformers converts a SentencePiece tokenizer.model: <unk> <s> </s>, the 256
    <0xXX> byte tokens, then BPE pieces trained on "▁"-joined words, with byte fallback."""
    trainer_tokenizer = Tokenizer(models.BPE())
    trainer_tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(
        replacement=SPACE, prepend_scheme="always", split=True)
    trainer_tokenizer.train_from_iterator(
        CORPUS, trainers.BpeTrainer(vocab_size=500, show_progress=False))
    trained = json.loads(trainer_tokenizer.to_str())["model"]
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    for byte in range(256):
        vocab["<0x%02X>" % byte] = len(vocab)
    for token, _ in sorted(trained["vocab"].items(), key=lambda item: item[1]):
        vocab.setdefault(token, len(vocab))
    merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in trained["merges"]]
    tokenizer = Tokenizer(models.BPE(vocab=vocab, merges=merges, unk_token="<unk>",
                                     byte_fallback=True, fuse_unk=True))
    if variant["sentencepiece"] == "normalizer":
        tokenizer.normalizer = normalizers.Sequence(
            [normalizers.Prepend(SPACE), normalizers.Replace(" ", SPACE)])
    else:
        tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(
            replacement=SPACE, prepend_scheme="first", split=False)
    tokenizer.decoder = decoders.Sequence([decoders.Replace(SPACE, " "), decoders.ByteFallback(),
                                           decoders.Fuse(), decoders.Strip(" ", 1, 0)])
    tokenizer.add_special_tokens(variant["special"])
    tokenizer.add_special_tokens(FLAGGED_TOKENS)
    tokenizer.post_processor = processors.TemplateProcessing(
        single="<s> $A", special_tokens=[("<s>", vocab["<s>"])])
    return tokenizer


def train_tokenizer(variant):
    if "sentencepiece" in variant:
        return train_sentencepiece_style(variant)
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = variant["pre"]
    if "normalizer" in variant:
        tokenizer.normalizer = variant["normalizer"]
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=500, special_tokens=variant["special"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tokenizer.train_from_iterator(CORPUS, trainer)
    tokenizer.add_special_tokens(FLAGGED_TOKENS)
    if variant["add_bos"]:
        bos = variant["bos"]
        tokenizer.post_processor = processors.TemplateProcessing(
            single=bos + " $A", special_tokens=[(bos, tokenizer.token_to_id(bos))])
    return tokenizer


def write_safetensors(tensors, path):
    """The safetensors layout: u64 header size, JSON header, then little-endian f32 data."""
    header, blobs, offset = {}, [], 0
    for name, (shape, values) in tensors.items():
        data = struct.pack("<%df" % len(values), *values)
        header[name] = {"dtype": "F32", "shape": shape,
                        "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    encoded = json.dumps(header).encode()
    encoded += b" " * (-len(encoded) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(encoded)) + encoded + b"".join(blobs))


def write_checkpoint(directory, tokenizer, variant):
    # Three ids past the tokenizer's, as checkpoints pad their embeddings.
    vocab_size = tokenizer.get_vocab_size() + 3
    hidden, ff, rng = 32, 64, random.Random(7)

    def matrix(rows, cols):
        return [rows, cols], [rng.gauss(0, 0.3) for _ in range(rows * cols)]

    tensors = {"model.embed_tokens.weight": matrix(vocab_size, hidden),
               "model.norm.weight": ([hidden], [1.0] * hidden),
               "lm_head.weight": matrix(vocab_size, hidden)}
    layer = "model.layers.0."
    tensors.update({
        layer + "input_layernorm.weight": ([hidden], [1.0] * hidden),
        layer + "post_attention_layernorm.weight": ([hidden], [1.0] * hidden),
        layer + "self_attn.q_proj.weight": matrix(hidden, hidden),
        layer + "self_attn.k_proj.weight": matrix(hidden // 2, hidden),
        layer + "self_attn.v_proj.weight": matrix(hidden // 2, hidden),
        layer + "self_attn.o_proj.weight": matrix(hidden, hidden),
        layer + "mlp.gate_proj.weight": matrix(ff, hidden),
        layer + "mlp.up_proj.weight": matrix(ff, hidden),
        layer + "mlp.down_proj.weight": matrix(hidden, ff)})
    architecture = variant.get("architecture", "LlamaForCausalLM")
    if architecture == "Qwen2ForCausalLM":
        for name, rows in (("q", hidden), ("k", hidden // 2), ("v", hidden // 2)):
            tensors[layer + "self_attn.%s_proj.bias" % name] = ([rows], matrix(1, rows)[1])
    write_safetensors(tensors, os.path.join(directory, "model.safetensors"))
    config = {"architectures": [architecture],
              "hidden_size": hidden, "intermediate_size": ff, "num_hidden_layers": 1,
              "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": vocab_size,
              "max_position_embeddings": 128, "rms_norm_eps": 1e-5, "torch_dtype": "float32",
              "eos_token_id": tokenizer.token_to_id(variant["eos"])}
    with open(os.path.join(directory, "config.json"), "w") as f:
        json.dump(config, f)
    tokenizer.save(os.path.join(directory, "tokenizer.json"))
    tokenizer_config = {"bos_token": variant["bos"], "eos_token": variant["eos"],
                        "chat_template": "{% for m in messages %}{{ m['content'] }}{% endfor %}"}
    with open(os.path.join(directory, "tokenizer_config.json"), "w") as f:
        json.dump(tokenizer_config, f)


def baton(binary, *args, env=None):
    result = subprocess.run([binary, *args], capture_output=True, text=True,
                            env=dict(os.environ, **(env or {})))
    check(result.returncode == 0, "baton %s failed:\n%s" % (" ".join(args), result.stderr))
    return result.stdout


def check_variant(binary, name, variant, work):
    directory = os.path.join(work, name)
    os.makedirs(directory)
    tokenizer = train_tokenizer(variant)
    write_checkpoint(directory, tokenizer, variant)
    gguf = os.path.join(work, name + ".gguf")
    baton(binary, "convert", directory, "-o", gguf, "--outtype", "f32")
    info = baton(binary, "info", "-m", gguf)
    sentencepiece = "sentencepiece" in variant
    check(re.search(r'tokenizer\.ggml\.model +"%s"' % ("llama" if sentencepiece else "gpt2"), info),
          "the tokenizer model:\n" + info)
    pre = "default" if sentencepiece else name
    check(re.search(r'tokenizer\.ggml\.pre +"%s"' % pre, info), "the pre-tokenizer:\n" + info)
    arch = "qwen2" if variant.get("architecture") == "Qwen2ForCausalLM" else "llama"
    check(re.search(r'general\.architecture +"%s"' % arch, info), "architecture:\n" + info)
    check(re.search(r'tokenizer\.ggml\.add_bos_token +%s' % str(variant["add_bos"]).lower(), info),
          "add_bos_token:\n" + info)

    samples = [t for t in SAMPLES if not (variant.get("skip_leading_space") and t.startswith(" "))]
    for text in samples:
        expected = tokenizer.encode(text).ids
        got = json.loads(baton(binary, "tokenize", "-m", gguf, "-p", text))
        check(got == expected, "%s: %r\n  tokenizers: %s\n  baton:      %s"
              % (name, text, expected, got))
    if variant.get("check_special", True):
        special = variant["special"][-1]
        for text in ["before" + special + " after"] + FLAGGED_SAMPLES:
            got = json.loads(baton(binary, "tokenize", "-m", gguf, "-p", text, "--parse-special"))
            check(got == tokenizer.encode(text).ids,
                  "%s: special tokens in %r\n  tokenizers: %s\n  baton:      %s"
                  % (name, text, tokenizer.encode(text).ids, got))

    generate = ["-p", "In the beginning", "-n", "12", "--temp", "0", "--ignore-eos", "-q"]
    cache = {"BATON_CACHE_DIR": os.path.join(work, "cache")}
    from_dir = baton(binary, "run", "-m", directory, *generate, env=cache)
    from_file = baton(binary, "run", "-m", gguf, *generate)
    check(from_dir == from_file, "%s: -m DIR gave %r, the GGUF %r" % (name, from_dir, from_file))
    print("%s: %d samples tokenized as tokenizers does; -m DIR generates as the GGUF"
          % (name, len(samples) + variant.get("check_special", True) * (1 + len(FLAGGED_SAMPLES))))


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    with tempfile.TemporaryDirectory(prefix="baton-tokenizer-json-") as work:
        for name, variant in VARIANTS.items():
            check_variant(sys.argv[1], name, variant, work)


if __name__ == "__main__":
    main()
