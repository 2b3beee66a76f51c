#!/usr/bin/env python3
"""Hugging Face reference for the full ERNIE-4.5-0.3B shape, made on the GPU machine.

Builds transformers' `Ernie4_5ForCausalLM` with ERNIE-4.5-0.3B's config and random weights drawn
with a fixed torch seed (scaled as scripts/make_hf_fixture.py explains but without its o/down gain,
which over 18 layers makes a random network chaotic), rounds them to bf16 (so every backend starts from identical values), saves the
model folder (config.json + model.safetensors in bf16) and expected.safetensors:
  prompt_ids [P] I32, greedy_ids [N] I32 (greedy from the prompt), greedy_logits [N, V] F32
computed in float32 on the GPU with TF32 off, greedy_logits_f64 [N, V] F32 (the same steps computed
in float64, rounded: the fp32 reference's own error) and rope_inv_freq [D/2] F32 (transformers'
RoPE frequencies, for engine/rope_frequencies.h). tests/cuda/test_cuda_backend.cpp compares Brook's
CPU and CUDA backends with it when BROOK_HF_FULL_REFERENCE names the folder.

Usage: python3 scripts/make_hf_full_reference.py --out /tmp/hf-ernie-0.3b [--seed 1] [--steps 64]
"""
import argparse
import math
import os

import torch
import transformers
from safetensors.torch import save_file
from transformers import Ernie4_5Config, Ernie4_5ForCausalLM


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--prompt-len", type=int, default=64)
    ap.add_argument("--steps", type=int, default=64)
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    device = "cuda" if torch.cuda.is_available() else "cpu"

    config = Ernie4_5Config(vocab_size=103424, hidden_size=1024, intermediate_size=3072, num_hidden_layers=18,
                            num_attention_heads=16, num_key_value_heads=2, head_dim=128,
                            max_position_embeddings=131072, rms_norm_eps=1e-5, tie_word_embeddings=True,
                            use_bias=False, hidden_act="silu", pad_token_id=0, bos_token_id=1, eos_token_id=2,
                            rope_parameters={"rope_type": "default", "rope_theta": 500000.0})
    torch.manual_seed(args.seed)
    model = Ernie4_5ForCausalLM(config).to(device=device, dtype=torch.float32).eval()
    g = torch.Generator(device=device).manual_seed(args.seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            r = torch.randn(p.shape, generator=g, device=device)
            if name.endswith("embed_tokens.weight"):
                r *= 0.5
            elif name == "model.norm.weight":
                r *= 1.0                      # zero-mean: a positive final norm makes greedy repeat
            elif name.endswith("norm.weight"):
                r = 1.0 + 0.1 * r
            else:
                # No extra gain on o/down (the tiny fixture's 2.0): over 18 layers it makes the
                # random network chaotic, so fp32 rounding alone moves logits by percents.
                r *= 1.0 / math.sqrt(p.shape[1])
            p.copy_(r.to(torch.bfloat16).float())  # bf16-exact values in an fp32 model
    model.tie_weights()

    os.makedirs(args.out, exist_ok=True)
    # Save bf16 copies of the weights only: model.to(bfloat16) would also round the rotary
    # inv_freq buffer, and the fp32 reference below must keep it exact.
    state = {k: v.to(torch.bfloat16) for k, v in model.state_dict().items() if k != "lm_head.weight"}
    model.save_pretrained(args.out, state_dict=state, safe_serialization=True)

    prompt = torch.randint(3, 100000, (args.prompt_len,), generator=torch.Generator().manual_seed(args.seed + 7))
    ids = prompt.to(device)
    greedy, logits = [], []
    with torch.no_grad():
        for _ in range(args.steps):
            out = model(input_ids=ids[None], use_cache=False).logits[0, -1].float()
            token = int(out.argmax())
            logits.append(out.cpu())
            greedy.append(token)
            ids = torch.cat([ids, torch.tensor([token], device=device)])
    stacked = torch.stack(logits)
    top2 = stacked.topk(2, dim=-1).values
    margins = (top2[:, 0] - top2[:, 1])
    inv_freq = model.model.rotary_emb.inv_freq.detach().float().cpu().clone()

    # The fp32 reference's own rounding, to judge an fp32 engine against it: the same teacher-forced
    # steps in float64 (RoPE's angles stay as transformers makes them, from the fp32 inv_freq).
    model.double()
    logits64 = []
    with torch.no_grad():
        for step in range(args.steps):
            seq = torch.cat([prompt.to(device), torch.tensor(greedy[:step], dtype=torch.long, device=device)])
            logits64.append(model(input_ids=seq[None], use_cache=False).logits[0, -1].cpu())
    stacked64 = torch.stack(logits64)
    floor = top_logprob_error(stacked, stacked64, 3)
    save_file({"prompt_ids": prompt.to(torch.int32), "greedy_ids": torch.tensor(greedy, dtype=torch.int32),
               "greedy_logits": stacked.contiguous(), "greedy_logits_f64": stacked64.float().contiguous(),
               "rope_inv_freq": inv_freq}, os.path.join(args.out, "expected.safetensors"),
              metadata={"transformers": transformers.__version__, "torch": torch.__version__, "seed": str(args.seed)})
    print(f"saved {args.out}: logit std {stacked.std():.2f}, distinct greedy ids {len(set(greedy))}/{len(greedy)}, "
          f"top-2 margin min {margins.min():.3f} median {margins.median():.3f}; "
          f"transformers fp32 vs fp64: top-3 logprob error {floor:.3g}")


def top_logprob_error(a, b, k):
    """Largest |logprob_a - logprob_b| over b's top k tokens of each step (as the C++ tests do)."""
    la, lb = torch.log_softmax(a.double(), -1), torch.log_softmax(b.double(), -1)
    top = b.topk(k, dim=-1).indices
    return float((la.gather(-1, top) - lb.gather(-1, top)).abs().max())


if __name__ == "__main__":
    main()
