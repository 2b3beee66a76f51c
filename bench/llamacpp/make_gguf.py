#!/usr/bin/env python3
"""Write a Brook test model (ERNIE-4.5 shape, safetensors) as a GGUF file for llama.cpp.

llama.cpp is the baseline issue 16 compares Brook's CPU backend with. Its own converter
(convert_hf_to_gguf.py) needs torch and a recent numpy, which Debian 12 does not have; the model
here is simple enough to write directly, with the standard library only:
  - the same weights, bit for bit: bf16 matrices stay bf16, norm vectors become f32 (as the
    converter writes 1-D tensors);
  - llama.cpp's names for ERNIE 4.5 (arch "ernie4_5"): token_embd, blk.N.attn_q / attn_k / attn_v /
    attn_output / ffn_gate / ffn_up / ffn_down, the two norms, output_norm; the tied output matrix
    is token_embd itself, as for the real ERNIE-4.5-0.3B;
  - a synthetic sentencepiece-style vocabulary of the model's size (llama-bench feeds token ids,
    so the pieces' text does not matter): <unk>, <s>, </s>, the 256 byte pieces, then unique
    words.

GGUF v3 layout (llama.cpp's docs/gguf.md): header, key/values, tensor infos (dimensions innermost
first, so a torch [out, in] matrix is written as [in, out]), then the data, each tensor aligned
to 32 bytes.

Usage: make_gguf.py MODEL_DIR OUT.gguf
"""
import json
import struct
import sys
from pathlib import Path

ALIGNMENT = 32

# GGUF value types
U32, I32, F32, BOOL, STRING, ARRAY, U64 = 4, 5, 6, 7, 8, 9, 10
# ggml tensor types
GGML_F32, GGML_BF16 = 0, 30
# llama.cpp token types
NORMAL, UNKNOWN, CONTROL, BYTE = 1, 2, 3, 6
LLAMA_FTYPE_MOSTLY_BF16 = 32


def pack_string(s: str) -> bytes:
    b = s.encode("utf-8")
    return struct.pack("<Q", len(b)) + b


def pack_value(vtype: int, value) -> bytes:
    if vtype == STRING:
        return pack_string(value)
    fmt = {U32: "<I", I32: "<i", F32: "<f", BOOL: "<?", U64: "<Q"}[vtype]
    return struct.pack(fmt, value)


def pack_kv(key: str, vtype: int, value, element_type: int | None = None) -> bytes:
    out = pack_string(key) + struct.pack("<I", vtype)
    if vtype == ARRAY:
        out += struct.pack("<IQ", element_type, len(value))
        out += b"".join(pack_value(element_type, v) for v in value)
    else:
        out += pack_value(vtype, value)
    return out


def read_safetensors(path: Path):
    with open(path, "rb") as f:
        header_len = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(header_len))
        base = 8 + header_len
        header.pop("__metadata__", None)
        for name, info in header.items():
            if info["dtype"] != "BF16":
                raise SystemExit(f"{name}: dtype {info['dtype']}, this writer takes bf16 checkpoints only")
            begin, end = info["data_offsets"]
            f.seek(base + begin)
            yield name, info["shape"], f.read(end - begin)


def bf16_to_f32(raw: bytes) -> bytes:
    halves = struct.unpack(f"<{len(raw) // 2}H", raw)
    return struct.pack(f"<{len(halves)}I", *(h << 16 for h in halves))


def gguf_name(hf: str) -> str | None:
    fixed = {"model.embed_tokens.weight": "token_embd.weight", "model.norm.weight": "output_norm.weight"}
    if hf in fixed:
        return fixed[hf]
    parts = hf.split(".")
    if parts[:2] != ["model", "layers"]:
        return None
    layer, rest = parts[2], ".".join(parts[3:])
    per_layer = {
        "input_layernorm.weight": "attn_norm.weight",
        "post_attention_layernorm.weight": "ffn_norm.weight",
        "self_attn.q_proj.weight": "attn_q.weight",
        "self_attn.k_proj.weight": "attn_k.weight",
        "self_attn.v_proj.weight": "attn_v.weight",
        "self_attn.o_proj.weight": "attn_output.weight",
        "mlp.gate_proj.weight": "ffn_gate.weight",
        "mlp.up_proj.weight": "ffn_up.weight",
        "mlp.down_proj.weight": "ffn_down.weight",
    }
    return f"blk.{layer}.{per_layer[rest]}" if rest in per_layer else None


def vocabulary(size: int):
    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
    types = [UNKNOWN, CONTROL, CONTROL] + [BYTE] * 256
    while len(tokens) < size:
        tokens.append(f"\u2581w{len(tokens)}")
        types.append(NORMAL)
    scores = [0.0] * 259 + [-float(i) for i in range(size - 259)]
    return tokens[:size], scores[:size], types[:size]


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    model_dir, out_path = Path(sys.argv[1]), Path(sys.argv[2])
    c = json.loads((model_dir / "config.json").read_text())
    if c.get("model_type") != "ernie4_5" or not c.get("tie_word_embeddings", False):
        raise SystemExit("expected a dense ERNIE 4.5 checkpoint with tied embeddings")
    head_dim = c.get("head_dim") or c["hidden_size"] // c["num_attention_heads"]

    tensors = []  # (gguf name, dims innermost first, ggml type, bytes)
    for name, shape, raw in read_safetensors(model_dir / "model.safetensors"):
        g = gguf_name(name)
        if g is None:
            raise SystemExit(f"unexpected tensor {name}")
        if len(shape) == 1:
            tensors.append((g, shape, GGML_F32, bf16_to_f32(raw)))
        else:
            tensors.append((g, list(reversed(shape)), GGML_BF16, raw))

    tokens, scores, types = vocabulary(c["vocab_size"])
    arch = "ernie4_5"
    kvs = [
        pack_kv("general.architecture", STRING, arch),
        pack_kv("general.name", STRING, model_dir.name),
        pack_kv("general.file_type", U32, LLAMA_FTYPE_MOSTLY_BF16),
        pack_kv("general.alignment", U32, ALIGNMENT),
        pack_kv(f"{arch}.context_length", U32, min(c["max_position_embeddings"], 131072)),
        pack_kv(f"{arch}.embedding_length", U32, c["hidden_size"]),
        pack_kv(f"{arch}.block_count", U32, c["num_hidden_layers"]),
        pack_kv(f"{arch}.feed_forward_length", U32, c["intermediate_size"]),
        pack_kv(f"{arch}.attention.head_count", U32, c["num_attention_heads"]),
        pack_kv(f"{arch}.attention.head_count_kv", U32, c["num_key_value_heads"]),
        pack_kv(f"{arch}.attention.key_length", U32, head_dim),
        pack_kv(f"{arch}.attention.value_length", U32, head_dim),
        pack_kv(f"{arch}.rope.dimension_count", U32, head_dim),
        pack_kv(f"{arch}.attention.layer_norm_rms_epsilon", F32, c["rms_norm_eps"]),
        pack_kv(f"{arch}.rope.freq_base", F32, float(c["rope_theta"])),
        pack_kv("tokenizer.ggml.model", STRING, "llama"),
        pack_kv("tokenizer.ggml.tokens", ARRAY, tokens, STRING),
        pack_kv("tokenizer.ggml.scores", ARRAY, scores, F32),
        pack_kv("tokenizer.ggml.token_type", ARRAY, types, I32),
        pack_kv("tokenizer.ggml.bos_token_id", U32, c.get("bos_token_id", 1)),
        pack_kv("tokenizer.ggml.eos_token_id", U32, c.get("eos_token_id", 2)),
        pack_kv("tokenizer.ggml.unknown_token_id", U32, 0),
        pack_kv("tokenizer.ggml.padding_token_id", U32, c.get("pad_token_id", 0)),
    ]

    infos, offset = [], 0
    for name, dims, ggml_type, raw in tensors:
        offset = (offset + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT
        infos.append(pack_string(name) + struct.pack("<I", len(dims)) + struct.pack(f"<{len(dims)}Q", *dims) +
                     struct.pack("<IQ", ggml_type, offset))
        offset += len(raw)

    with open(out_path, "wb") as f:
        f.write(b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kvs)))
        for kv in kvs:
            f.write(kv)
        for info in infos:
            f.write(info)
        f.write(b"\0" * (-f.tell() % ALIGNMENT))
        data_start = f.tell()
        for _, _, _, raw in tensors:
            f.write(b"\0" * (-(f.tell() - data_start) % ALIGNMENT))
            f.write(raw)
    print(f"wrote {out_path}: {len(tensors)} tensors, {out_path.stat().st_size / 1e9:.2f} GB")


if __name__ == "__main__":
    main()
