#!/usr/bin/env python3
"""Copies a model folder with its float32 weights rounded to bfloat16 (round to nearest even, as
torch's .to(torch.bfloat16)): config.json (its "dtype" set to "bfloat16"), generation_config.json
and model.safetensors. Made tests/data/hf_tiny_bf16 from tests/data/hf_tiny, whose expected logits
transformers then computes in fp32 from these bf16 weights (tests/data/hf_tiny_bf16/README.md).
Stdlib only.

  scripts/bf16_copy.py SRC_DIR DST_DIR
"""
import array, json, os, shutil, struct, sys


def to_bf16(raw):
    words = array.array("I", raw)  # float32 bits, little-endian on every machine we run
    out = array.array("H", bytes(2 * len(words)))
    for i, w in enumerate(words):
        if (w & 0x7F800000) == 0x7F800000:  # inf / nan: keep, quiet the nan
            out[i] = (w >> 16) | (0x40 if w & 0xFFFF else 0)
        else:
            out[i] = ((w + 0x7FFF + ((w >> 16) & 1)) >> 16) & 0xFFFF
    return out.tobytes()


def main(src, dst):
    os.makedirs(dst, exist_ok=True)
    with open(os.path.join(src, "model.safetensors"), "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    tensors, blobs, offset = {}, [], 0
    for name, t in sorted((k, v) for k, v in header.items() if k != "__metadata__"):
        begin, end = t["data_offsets"]
        raw = data[begin:end]
        if t["dtype"] == "F32":
            raw, dtype = to_bf16(raw), "BF16"
        else:
            dtype = t["dtype"]
        tensors[name] = {"dtype": dtype, "shape": t["shape"], "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    tensors["__metadata__"] = {"format": "pt"}
    head = json.dumps(tensors, separators=(",", ":")).encode()
    head += b" " * (-len(head) % 8)
    with open(os.path.join(dst, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(head)) + head + b"".join(blobs))
    config = json.load(open(os.path.join(src, "config.json")))
    config["dtype"] = "bfloat16"
    json.dump(config, open(os.path.join(dst, "config.json"), "w"), indent=2)
    shutil.copy(os.path.join(src, "generation_config.json"), dst)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
