#!/usr/bin/env python3
"""transformers' RoPE inverse frequencies, bit for bit, for tests/engine/test_rope_frequencies.cpp.

Builds each family's rotary embedding module from a config with the given rope_theta and
head_dim, and writes its inv_freq buffer as float32 bit patterns (hex), so the test can compare
engine/rope_frequencies.h exactly. Run where transformers is installed (the GPU machine):

  python3 scripts/rope_reference.py > tests/data/rope_inv_freq_transformers.json
"""
import json
import struct
import sys

import torch
import transformers


def bits(t):
    return [struct.unpack("<I", struct.pack("<f", float(v)))[0] for v in t.float().tolist()]


def rotary(family, theta, head_dim):
    rope = {"rope_type": "default", "rope_theta": theta}
    if family == "ernie4_5":
        from transformers import Ernie4_5Config as C
        from transformers.models.ernie4_5.modeling_ernie4_5 import Ernie4_5RotaryEmbedding as R
    elif family == "qwen3":
        from transformers import Qwen3Config as C
        from transformers.models.qwen3.modeling_qwen3 import Qwen3RotaryEmbedding as R
    else:
        from transformers import LlamaConfig as C
        from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding as R
    config = C(hidden_size=head_dim * 4, num_attention_heads=4, num_key_value_heads=2, head_dim=head_dim,
               rope_parameters=rope)
    return R(config).inv_freq


cases = []
for family, theta, head_dim in [("ernie4_5", 500000.0, 128), ("ernie4_5", 500000.0, 64), ("qwen3", 1000000.0, 128),
                                ("llama", 500000.0, 64), ("llama", 10000.0, 128)]:
    cases.append({"family": family, "rope_theta": theta, "head_dim": head_dim,
                  "inv_freq_bits": [f"{b:08x}" for b in bits(rotary(family, theta, head_dim))]})
json.dump({"transformers": transformers.__version__, "torch": torch.__version__, "cases": cases}, sys.stdout, indent=1)
print()
