"""LoRA (Hu et al. 2021) for the demo model: each adapted nn.Linear gains a trainable low-rank
update, y = W x + (alpha / r) B A x, with B starting at zero so training starts from the base."""
import math

import torch
from torch import nn

# PEFT's module names for every linear layer of a Llama block.
TARGET_MODULES = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


class LoraLinear(nn.Module):
    def __init__(self, base: nn.Linear, rank: int, alpha: float):
        super().__init__()
        self.base = base
        self.scale = alpha / rank
        self.lora_A = nn.Parameter(torch.empty(rank, base.in_features))
        self.lora_B = nn.Parameter(torch.zeros(base.out_features, rank))
        # PEFT's initialisation: A as nn.Linear's default, B zero.
        nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))

    def forward(self, x):
        return self.base(x) + (x @ self.lora_A.t() @ self.lora_B.t()) * self.scale


def add_lora(model, rank: int, alpha: float) -> dict[str, LoraLinear]:
    """Freezes the model and wraps its target linears; returns them by their PEFT module path
    (model.layers.N.self_attn.q_proj ...)."""
    for p in model.parameters():
        p.requires_grad_(False)
    adapted = {}
    for name, module in list(model.named_modules()):
        for child_name, child in list(module.named_children()):
            if child_name in TARGET_MODULES and isinstance(child, nn.Linear):
                wrapped = LoraLinear(child, rank, alpha)
                setattr(module, child_name, wrapped)
                adapted[f"{name}.{child_name}"] = wrapped
    return adapted
