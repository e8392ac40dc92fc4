"""Writes the trained model as a Hugging Face Llama directory and the reference outputs."""
import json
import shutil
import struct
from pathlib import Path

import torch

# The model continues text; it has never seen a dialogue. The template therefore gives it the
# conversation as plain text, one turn per line, so a "chat" continues the user's words.
# The newline is a Jinja string: Hugging Face renders with trim_blocks, which drops a literal
# newline that follows a block tag.
CHAT_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}{% if not loop.first %}{{ '\\n' }}{% endif %}"
    "{{ message['content'] | trim }}{% endfor %}"
)


def write_safetensors(tensors: dict, path: Path):
    """The safetensors layout: u64 header size, JSON header, then the raw little-endian data."""
    header, offset, blobs = {}, 0, []
    for name, tensor in tensors.items():
        data = tensor.detach().to(torch.float32).contiguous().numpy().tobytes()
        header[name] = {"dtype": "F32", "shape": list(tensor.shape),
                        "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    header["__metadata__"] = {"format": "pt"}
    encoded = json.dumps(header, separators=(",", ":")).encode()
    encoded += b" " * (-len(encoded) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(encoded)))
        f.write(encoded)
        for blob in blobs:
            f.write(blob)


def write_hf_directory(model, sp, tokenizer_model: Path, out: Path):
    out.mkdir(parents=True, exist_ok=True)
    shape = model.shape
    config = {
        "architectures": ["LlamaForCausalLM"], "model_type": "llama",
        "vocab_size": shape.vocab_size, "hidden_size": shape.hidden_size,
        "intermediate_size": shape.intermediate_size,
        "num_hidden_layers": shape.num_hidden_layers,
        "num_attention_heads": shape.num_attention_heads,
        "num_key_value_heads": shape.num_key_value_heads,
        "max_position_embeddings": shape.max_position_embeddings,
        "rms_norm_eps": shape.rms_norm_eps, "rope_theta": shape.rope_theta,
        "hidden_act": "silu", "tie_word_embeddings": False, "rope_scaling": None,
        "bos_token_id": sp.bos_id(), "eos_token_id": sp.eos_id(), "torch_dtype": "float32",
    }
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    tokenizer_config = {
        "tokenizer_class": "LlamaTokenizer", "add_bos_token": True, "add_eos_token": False,
        "bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>",
        "model_max_length": shape.max_position_embeddings, "chat_template": CHAT_TEMPLATE,
    }
    (out / "tokenizer_config.json").write_text(json.dumps(tokenizer_config, indent=2) + "\n")
    shutil.copyfile(tokenizer_model, out / "tokenizer.model")
    write_safetensors(dict(model.state_dict()), out / "model.safetensors")


@torch.no_grad()
def write_reference(model, sp, path: Path, prompt="In the beginning", continuation=32):
    """What PyTorch computes for a fixed prompt, for Baton's tests to reproduce."""
    model.eval()
    ids = [sp.bos_id()] + sp.encode(prompt)
    logits = model(torch.tensor([ids]))[0, -1].double()
    generated = list(ids)
    for _ in range(continuation):
        generated.append(int(model(torch.tensor([generated]))[0, -1].argmax()))
    reference = {"prompt": prompt, "prompt_ids": ids,
                 "last_logits": [round(v, 5) for v in logits.tolist()],
                 "greedy_ids": generated[len(ids):],
                 "greedy_text": sp.decode(generated[len(ids):])}
    path.write_text(json.dumps(reference) + "\n")
