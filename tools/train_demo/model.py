"""A Llama-architecture decoder in plain PyTorch, laid out like Hugging Face's LlamaForCausalLM.

The parameter names and the rotate-half RoPE follow transformers' modeling_llama so the exported
checkpoint is an ordinary Hugging Face Llama directory that `baton convert` (or any other Llama
converter) reads without special cases.
"""
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn


@dataclass
class LlamaShape:
    vocab_size: int = 2048
    hidden_size: int = 256
    num_hidden_layers: int = 8
    num_attention_heads: int = 8
    num_key_value_heads: int = 4
    intermediate_size: int = 768
    max_position_embeddings: int = 256
    rms_norm_eps: float = 1e-5
    rope_theta: float = 10000.0

    @property
    def head_dim(self) -> int:
        return self.hidden_size // self.num_attention_heads


class RMSNorm(nn.Module):
    def __init__(self, size: int, eps: float):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(size))
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate_half(x):
    first, second = x.chunk(2, dim=-1)
    return torch.cat((-second, first), dim=-1)


class Attention(nn.Module):
    def __init__(self, shape: LlamaShape):
        super().__init__()
        self.heads = shape.num_attention_heads
        self.kv_heads = shape.num_key_value_heads
        self.head_dim = shape.head_dim
        self.q_proj = nn.Linear(shape.hidden_size, self.heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(shape.hidden_size, self.kv_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(shape.hidden_size, self.kv_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(self.heads * self.head_dim, shape.hidden_size, bias=False)

    def forward(self, x, cos, sin):
        batch, length, _ = x.shape
        q = self.q_proj(x).view(batch, length, self.heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(batch, length, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(batch, length, self.kv_heads, self.head_dim).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        group = self.heads // self.kv_heads
        k = k.repeat_interleave(group, dim=1)
        v = v.repeat_interleave(group, dim=1)
        # Debian's PyTorch 1.13 predates F.scaled_dot_product_attention.
        scores = (q @ k.transpose(-2, -1)) / self.head_dim**0.5
        causal = torch.ones(length, length, dtype=torch.bool, device=x.device).triu(1)
        out = scores.masked_fill(causal, float("-inf")).softmax(dim=-1) @ v
        return self.o_proj(out.transpose(1, 2).reshape(batch, length, -1))


class MLP(nn.Module):
    def __init__(self, shape: LlamaShape):
        super().__init__()
        self.gate_proj = nn.Linear(shape.hidden_size, shape.intermediate_size, bias=False)
        self.up_proj = nn.Linear(shape.hidden_size, shape.intermediate_size, bias=False)
        self.down_proj = nn.Linear(shape.intermediate_size, shape.hidden_size, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class DecoderLayer(nn.Module):
    def __init__(self, shape: LlamaShape):
        super().__init__()
        self.input_layernorm = RMSNorm(shape.hidden_size, shape.rms_norm_eps)
        self.self_attn = Attention(shape)
        self.post_attention_layernorm = RMSNorm(shape.hidden_size, shape.rms_norm_eps)
        self.mlp = MLP(shape)

    def forward(self, x, cos, sin):
        x = x + self.self_attn(self.input_layernorm(x), cos, sin)
        return x + self.mlp(self.post_attention_layernorm(x))


class Backbone(nn.Module):
    def __init__(self, shape: LlamaShape):
        super().__init__()
        self.embed_tokens = nn.Embedding(shape.vocab_size, shape.hidden_size)
        self.layers = nn.ModuleList(DecoderLayer(shape) for _ in range(shape.num_hidden_layers))
        self.norm = RMSNorm(shape.hidden_size, shape.rms_norm_eps)


class LlamaForCausalLM(nn.Module):
    def __init__(self, shape: LlamaShape):
        super().__init__()
        self.shape = shape
        self.model = Backbone(shape)
        self.lm_head = nn.Linear(shape.hidden_size, shape.vocab_size, bias=False)
        inv_freq = 1.0 / (shape.rope_theta ** (torch.arange(0, shape.head_dim, 2).float() / shape.head_dim))
        angles = torch.outer(torch.arange(shape.max_position_embeddings).float(), inv_freq)
        angles = torch.cat((angles, angles), dim=-1)
        self.register_buffer("rope_cos", angles.cos(), persistent=False)
        self.register_buffer("rope_sin", angles.sin(), persistent=False)
        self.apply(self._init_weights)

    @staticmethod
    def _init_weights(module):
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, tokens):
        length = tokens.shape[1]
        cos, sin = self.rope_cos[:length], self.rope_sin[:length]
        x = self.model.embed_tokens(tokens)
        for layer in self.model.layers:
            x = layer(x, cos, sin)
        return self.lm_head(self.model.norm(x))
