"""Writes a trained LoRA as a PEFT directory and as a llama.cpp GGUF adapter."""
import json
from pathlib import Path

import gguf
import numpy as np

from export import write_safetensors
from gguf_base import interleave_rows
from lora import TARGET_MODULES

GGUF_NAMES = {"self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k",
              "self_attn.v_proj": "attn_v", "self_attn.o_proj": "attn_output",
              "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up", "mlp.down_proj": "ffn_down"}


def write_peft(adapted: dict, rank: int, alpha: float, base_name: str, out: Path):
    """adapter_config.json and adapter_model.safetensors as PEFT's save_pretrained writes them."""
    out.mkdir(parents=True, exist_ok=True)
    config = {"peft_type": "LORA", "task_type": "CAUSAL_LM", "base_model_name_or_path": base_name,
              "r": rank, "lora_alpha": alpha, "lora_dropout": 0.0, "bias": "none",
              "target_modules": TARGET_MODULES, "fan_in_fan_out": False, "use_rslora": False,
              "modules_to_save": None, "inference_mode": True}
    (out / "adapter_config.json").write_text(json.dumps(config, indent=2) + "\n")
    tensors = {}
    for path, module in adapted.items():
        tensors[f"base_model.model.{path}.lora_A.weight"] = module.lora_A
        tensors[f"base_model.model.{path}.lora_B.weight"] = module.lora_B
    write_safetensors(tensors, out / "adapter_model.safetensors")


def write_gguf(adapted: dict, alpha: float, shape, out: Path):
    """The layout of llama.cpp's convert_lora_to_gguf.py: <base tensor>.lora_a [r, in] and
    .lora_b [out, r], f16, with q and k rows interleaved per head as in the base GGUF."""
    writer = gguf.GGUFWriter(out, "llama")
    writer.add_string("general.type", "adapter")
    writer.add_string("adapter.type", "lora")
    writer.add_float32("adapter.lora.alpha", alpha)
    for path, module in adapted.items():
        layer = path.split(".")[2]
        kind = GGUF_NAMES[".".join(path.split(".")[3:])]
        b = module.lora_B.detach().numpy()
        if kind == "attn_q":
            b = interleave_rows(b, shape.num_attention_heads)
        elif kind == "attn_k":
            b = interleave_rows(b, shape.num_key_value_heads)
        name = f"blk.{layer}.{kind}.weight"
        writer.add_tensor(f"{name}.lora_a", module.lora_A.detach().numpy().astype(np.float16))
        writer.add_tensor(f"{name}.lora_b", b.astype(np.float16))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
