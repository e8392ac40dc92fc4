"""vLLM's offline inference example on Baton: only the import line and the model path differ.

Usage: python offline.py [model.gguf]   (default: the bundled demo model)
"""

import pathlib
import sys

from baton import LLM, SamplingParams

demo = pathlib.Path(__file__).resolve().parents[2] / "assets" / "models" / "kjv-7m-f16.gguf"
model = sys.argv[1] if len(sys.argv) > 1 else str(demo)

prompts = ["Funniest joke ever:", "The capital of France is", "The future of AI is"]
sampling_params = SamplingParams(temperature=0.95, top_p=0.95, max_tokens=200)
llm = LLM(model=model, backend="cpu")
outputs = llm.generate(prompts, sampling_params)
for output in outputs:
    print(f"Prompt: {output.prompt!r}, Generated text: {output.outputs[0].text!r}")
