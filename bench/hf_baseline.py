#!/usr/bin/env python3
"""Hugging Face transformers baseline for the numbers brook-bench reports (docs/benchmarks.md).

Full ERNIE-4.5-0.3B shape, random bf16 weights, sdpa attention, on the GPU, ignore_eos (eos never
stops generation: min_new_tokens = max_new_tokens):
  latency:    batch 1, 128-token prompt, 256 new tokens -> decode tokens/s; TTFT of a 512-token prompt
  throughput: 128 requests x (128 in, 256 out) as one padded batch -> output tokens/s
Modes: eager (dynamic cache) and "compiled" (static cache + torch.compile, transformers' fast path).

Usage: python3 bench/hf_baseline.py [--compile] [--skip-throughput]
"""
import argparse
import time

import torch
from transformers import Ernie4_5Config, Ernie4_5ForCausalLM


def sync():
    torch.cuda.synchronize()


def timed_generate(model, ids, new_tokens, **kw):
    sync()
    t0 = time.perf_counter()
    model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=new_tokens,
                   min_new_tokens=new_tokens, do_sample=False, pad_token_id=0, **kw)
    sync()
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compile", action="store_true", help="static cache + torch.compile")
    ap.add_argument("--skip-throughput", action="store_true")
    args = ap.parse_args()
    config = Ernie4_5Config(vocab_size=103424, hidden_size=1024, intermediate_size=3072, num_hidden_layers=18,
                            num_attention_heads=16, num_key_value_heads=2, head_dim=128,
                            max_position_embeddings=131072, tie_word_embeddings=True,
                            rope_parameters={"rope_type": "default", "rope_theta": 500000.0})
    torch.manual_seed(0)
    model = Ernie4_5ForCausalLM(config).to("cuda", torch.bfloat16).eval()
    model.config._attn_implementation = "sdpa"
    kw = {}
    label = "eager"
    if args.compile:
        # generate() compiles the decoding forward itself when the cache is compileable
        # (transformers' documented fast path); wrapping forward in torch.compile as well made
        # it compile twice and outlast the run.
        kw = dict(cache_implementation="static")
        label = "static cache + torch.compile"

    gen = torch.Generator().manual_seed(1)
    prompt128 = torch.randint(3, 100000, (1, 128), generator=gen).cuda()
    prompt512 = torch.randint(3, 100000, (1, 512), generator=gen).cuda()
    for _ in range(2):  # warm-up (and compilation)
        timed_generate(model, prompt128, 256, **kw)
        timed_generate(model, prompt512, 1, **kw)
    ttft = min(timed_generate(model, prompt512, 1, **kw) for _ in range(5))
    t_one = min(timed_generate(model, prompt128, 1, **kw) for _ in range(3))
    t_all = min(timed_generate(model, prompt128, 256, **kw) for _ in range(3))
    decode = 255 / (t_all - t_one)
    print(f"HF transformers {label}: TTFT(512) {ttft * 1e3:.1f} ms, batch-1 decode {decode:.0f} tok/s "
          f"(128 in, 256 out: {t_all:.2f} s)")
    if not args.skip_throughput:
        batch = torch.randint(3, 100000, (128, 128), generator=gen).cuda()
        timed_generate(model, batch, 256, **kw)
        t = timed_generate(model, batch, 256, **kw)
        print(f"HF transformers {label}: 128 x (128 in, 256 out) in {t:.2f} s = {128 * 256 / t:.0f} output tok/s")


if __name__ == "__main__":
    main()
