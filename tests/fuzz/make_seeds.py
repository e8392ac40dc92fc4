#!/usr/bin/env python3
"""Writes the seed corpora of fuzz_hf_checkpoint and fuzz_lora (tests/fuzz/corpus/).

Run from the repository root: python3 tests/fuzz/make_seeds.py. Standard library only. The
adapters fit the small Llama of fuzz_lora.cpp: 8 wide, 2 layers, 2 heads of 4, 1 KV head, a
feed-forward of 16.
"""
import json
import random
import struct
from pathlib import Path

CORPUS = Path(__file__).resolve().parent / "corpus"
N_EMBD, N_FF, HEAD_DIM, N_HEAD_KV = 8, 16, 4, 1
SPACE = "\u2581"


def write(target, name, data):
    path = CORPUS / target / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def documents(*parts):
    return b"\0".join(json.dumps(p).encode() if not isinstance(p, bytes) else p for p in parts)


def hf_checkpoint_seeds():
    llama = {"architectures": ["LlamaForCausalLM"], "hidden_size": 8, "intermediate_size": 16,
             "num_hidden_layers": 1, "num_attention_heads": 2, "num_key_value_heads": 1,
             "vocab_size": 8, "max_position_embeddings": 64, "rms_norm_eps": 1e-5,
             "bos_token_id": 1, "eos_token_id": [2, 3], "torch_dtype": "bfloat16"}
    byte_level = {
        "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2, "<|end|>": 3},
                  "merges": ["a b"]},
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "use_regex": True},
        "added_tokens": [{"id": 3, "content": "<|end|>", "special": True, "rstrip": True},
                         {"id": 4, "content": "user word", "special": False}]}
    chat = {"eos_token": "<|end|>",
            "chat_template": "{% for m in messages %}{{ m.content }}<|end|>{% endfor %}"}
    write("fuzz_hf_checkpoint", "byte-level-bpe", documents(llama, byte_level, chat))

    qwen2 = dict(llama, architectures=["Qwen2ForCausalLM"], tie_word_embeddings=True,
                 rope_scaling={"type": "linear", "factor": 2.0})
    split = dict(byte_level, pre_tokenizer={"type": "Sequence", "pretokenizers": [
        {"type": "Split", "behavior": "Isolated", "pattern": {"Regex": (
            r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+"
            r"[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")}},
        {"type": "ByteLevel", "use_regex": False}]})
    split["model"] = dict(byte_level["model"], merges=[["a", "b"]])
    split["post_processor"] = {"type": "TemplateProcessing",
                               "single": [{"SpecialToken": {"id": "<|end|>"}},
                                          {"Sequence": {"id": "A"}}]}
    write("fuzz_hf_checkpoint", "split-regex-pairs", documents(qwen2, split))

    sentencepiece = {
        "model": {"type": "BPE", "byte_fallback": True, "unk_token": "<unk>",
                  "vocab": {"<unk>": 0, "<s>": 1, "</s>": 2, "<0x0A>": 3, SPACE: 4, "a": 5,
                            SPACE + "a": 6},
                  "merges": [SPACE + " a"]},
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": SPACE},
            {"type": "Replace", "pattern": {"String": " "}, "content": SPACE}]},
        "pre_tokenizer": None,
        "added_tokens": [{"id": i, "content": c, "special": True}
                         for i, c in enumerate(["<unk>", "<s>", "</s>"])]}
    phi3 = dict(llama, architectures=["Phi3ForCausalLM"], sliding_window=32,
                original_max_position_embeddings=32,
                rope_scaling={"type": "longrope", "short_factor": [1.0, 1.5],
                              "long_factor": [2.0, 4.0]})
    write("fuzz_hf_checkpoint", "sentencepiece-bpe",
          documents(phi3, sentencepiece, {"add_bos_token": True, "bos_token": "<s>"}))
    gemma2 = dict(llama, architectures=["Gemma2ForCausalLM"], head_dim=4,
                  attn_logit_softcapping=50.0, final_logit_softcapping=30.0,
                  query_pre_attn_scalar=4, sliding_window=16)
    write("fuzz_hf_checkpoint", "config-only", documents(gemma2))


def gguf_string(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def gguf_adapter(tensors, alpha):
    """A GGUF v3 file of f32/f16 tensors (numpy order: outermost first) and adapter metadata."""
    kvs = [("general.architecture", 8, gguf_string("llama")),
           ("general.type", 8, gguf_string("adapter")),
           ("adapter.type", 8, gguf_string("lora")),
           ("adapter.lora.alpha", 6, struct.pack("<f", alpha))]
    out = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kvs))
    for key, kind, value in kvs:
        out += gguf_string(key) + struct.pack("<I", kind) + value
    data, offset = b"", 0
    for name, shape, ggml_type, values in tensors:
        fmt = "<%d%s" % (len(values), "f" if ggml_type == 0 else "e")
        blob = struct.pack(fmt, *values)
        out += gguf_string(name) + struct.pack("<I", len(shape))
        out += b"".join(struct.pack("<Q", d) for d in reversed(shape))
        out += struct.pack("<IQ", ggml_type, offset)
        blob += b"\0" * (-len(blob) % 32)
        data += blob
        offset += len(blob)
    return out + b"\0" * (-len(out) % 32) + data


def safetensors(tensors):
    header, data = {}, b""
    for name, shape, dtype, values in tensors:
        blob = struct.pack("<%d%s" % (len(values), "f" if dtype == "F32" else "e"), *values)
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [len(data), len(data) + len(blob)]}
        data += blob
    encoded = json.dumps(header).encode()
    return struct.pack("<Q", len(encoded)) + encoded + data


def lora_seeds():
    rng = random.Random(7)
    rank = 2
    weights = {"attn_q": (N_EMBD, N_EMBD), "attn_k": (N_HEAD_KV * HEAD_DIM, N_EMBD),
               "attn_v": (N_HEAD_KV * HEAD_DIM, N_EMBD), "attn_output": (N_EMBD, N_EMBD),
               "ffn_gate": (N_FF, N_EMBD), "ffn_up": (N_FF, N_EMBD), "ffn_down": (N_EMBD, N_FF)}

    def values(n):
        return [round(rng.uniform(-0.2, 0.2), 3) for _ in range(n)]

    def pairs(layer, kinds, ggml_type):
        for kind in kinds:
            out, inp = weights[kind]
            name = "blk.%d.%s.weight" % (layer, kind)
            yield name + ".lora_a", [rank, inp], ggml_type, values(rank * inp)
            yield name + ".lora_b", [out, rank], ggml_type, values(out * rank)

    write("fuzz_lora", "gguf-all-targets", b"\0" + gguf_adapter(
        [t for layer in (0, 1) for t in pairs(layer, weights, 0)], alpha=4.0))
    write("fuzz_lora", "gguf-f16-attention", b"\0" + gguf_adapter(
        list(pairs(1, ["attn_q", "attn_v"], 1)), alpha=0.0))

    modules = {"attn_q": "self_attn.q_proj", "attn_k": "self_attn.k_proj",
               "attn_v": "self_attn.v_proj", "attn_output": "self_attn.o_proj",
               "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj", "ffn_down": "mlp.down_proj"}

    def peft_tensors(kinds, dtype, ranks):
        for layer in (0, 1):
            for kind in kinds:
                out, inp = weights[kind]
                r = ranks.get(modules[kind].split(".")[-1], rank)
                name = "base_model.model.model.layers.%d.%s" % (layer, modules[kind])
                yield name + ".lora_A.weight", [r, inp], dtype, values(r * inp)
                yield name + ".lora_B.weight", [out, r], dtype, values(out * r)

    config = {"peft_type": "LORA", "r": rank, "lora_alpha": 4,
              "target_modules": ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj",
                                 "down_proj"]}
    write("fuzz_lora", "peft-all-targets",
          b"\1" + documents(config, safetensors(list(peft_tensors(weights, "F32", {})))))
    patterned = dict(config, use_rslora=True, target_modules=["q_proj", "down_proj"],
                     rank_pattern={"down_proj": 1}, alpha_pattern={"q_proj": 8})
    write("fuzz_lora", "peft-patterns-f16", b"\1" + documents(patterned, safetensors(
        list(peft_tensors(["attn_q", "ffn_down"], "F16", {"down_proj": 1})))))


if __name__ == "__main__":
    hf_checkpoint_seeds()
    lora_seeds()
