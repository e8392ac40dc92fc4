"""The bundled demo model read back from its GGUF file: PyTorch weights and a SentencePiece
tokenizer, for fine-tuning it (train_lora.py) without the original training run's files.

GGUF stores a Llama's q and k rows interleaved per head (llama.cpp's converter does so for its
RoPE); PyTorch's rotate-half layout is restored here, and applied again to adapters on export.
"""
from pathlib import Path

import gguf
import numpy as np
import sentencepiece as spm
import torch
from sentencepiece import sentencepiece_model_pb2

from model import LlamaForCausalLM, LlamaShape

HF_NAMES = {
    "attn_q": "self_attn.q_proj", "attn_k": "self_attn.k_proj", "attn_v": "self_attn.v_proj",
    "attn_output": "self_attn.o_proj", "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj",
    "ffn_down": "mlp.down_proj", "attn_norm": "input_layernorm",
    "ffn_norm": "post_attention_layernorm",
}


def field(reader, key):
    return reader.fields[key].contents()


def interleave_rows(w: np.ndarray, heads: int) -> np.ndarray:
    """Rotate-half rows to GGUF's per-head interleave (as llama.cpp's converter permutes)."""
    return w.reshape(heads, 2, w.shape[0] // heads // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def rotate_half_rows(w: np.ndarray, heads: int) -> np.ndarray:
    """The inverse of interleave_rows."""
    return w.reshape(heads, w.shape[0] // heads // 2, 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def read_shape(reader) -> LlamaShape:
    return LlamaShape(
        vocab_size=int(field(reader, "llama.vocab_size")),
        hidden_size=int(field(reader, "llama.embedding_length")),
        num_hidden_layers=int(field(reader, "llama.block_count")),
        num_attention_heads=int(field(reader, "llama.attention.head_count")),
        num_key_value_heads=int(field(reader, "llama.attention.head_count_kv")),
        intermediate_size=int(field(reader, "llama.feed_forward_length")),
        max_position_embeddings=int(field(reader, "llama.context_length")),
        rms_norm_eps=float(field(reader, "llama.attention.layer_norm_rms_epsilon")),
        rope_theta=float(field(reader, "llama.rope.freq_base")))


def hf_name(gguf_name: str) -> str:
    if gguf_name == "token_embd.weight":
        return "model.embed_tokens.weight"
    if gguf_name == "output_norm.weight":
        return "model.norm.weight"
    if gguf_name == "output.weight":
        return "lm_head.weight"
    _, layer, kind, suffix = gguf_name.split(".")
    return f"model.layers.{layer}.{HF_NAMES[kind]}.{suffix}"


def load_model(path: Path) -> LlamaForCausalLM:
    reader = gguf.GGUFReader(path)
    shape = read_shape(reader)
    model = LlamaForCausalLM(shape)
    state = {}
    for tensor in reader.tensors:
        w = np.array(tensor.data, dtype=np.float32)
        if tensor.name.endswith("attn_q.weight"):
            w = rotate_half_rows(w, shape.num_attention_heads)
        elif tensor.name.endswith("attn_k.weight"):
            w = rotate_half_rows(w, shape.num_key_value_heads)
        state[hf_name(tensor.name)] = torch.from_numpy(w)
    model.load_state_dict(state)
    return model


def load_tokenizer(path: Path) -> spm.SentencePieceProcessor:
    """The SentencePiece BPE model the GGUF vocabulary came from, with Llama's settings
    (train.py's train_tokenizer): byte fallback, identity normalization, a dummy prefix."""
    reader = gguf.GGUFReader(path)
    proto = sentencepiece_model_pb2.ModelProto()
    proto.trainer_spec.model_type = sentencepiece_model_pb2.TrainerSpec.BPE
    proto.trainer_spec.byte_fallback = True
    proto.trainer_spec.unk_id = int(field(reader, "tokenizer.ggml.unknown_token_id"))
    proto.trainer_spec.bos_id = int(field(reader, "tokenizer.ggml.bos_token_id"))
    proto.trainer_spec.eos_id = int(field(reader, "tokenizer.ggml.eos_token_id"))
    proto.trainer_spec.pad_id = -1
    proto.normalizer_spec.name = "identity"
    proto.normalizer_spec.add_dummy_prefix = True
    proto.normalizer_spec.remove_extra_whitespaces = False
    for piece, score, kind in zip(field(reader, "tokenizer.ggml.tokens"),
                                  field(reader, "tokenizer.ggml.scores"),
                                  field(reader, "tokenizer.ggml.token_type")):
        # GGUF's token types are SentencePiece's piece types, numbered alike.
        proto.pieces.add(piece=piece, score=score, type=int(kind))
    return spm.SentencePieceProcessor(model_proto=proto.SerializeToString())
