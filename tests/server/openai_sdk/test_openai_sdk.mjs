// Drives a running brook-serve with the official OpenAI Node SDK, as third-party tools do:
// chat and completions, streaming and not, n=2, stop, seed, logprobs, usage, and the SDK's
// typed errors. Needs BROOK_BASE_URL (http://host:port) and BROOK_API_KEY; the served model is
// "tiny-ernie" (run_openai_sdk_test.sh starts the server). Exit code 0 when every check passes.
import assert from 'node:assert/strict';
import OpenAI from 'openai';

const base = process.env.BROOK_BASE_URL;
const apiKey = process.env.BROOK_API_KEY;
const model = 'tiny-ernie';
if (!base || !apiKey) {
  console.error('set BROOK_BASE_URL and BROOK_API_KEY');
  process.exit(2);
}
const client = new OpenAI({ baseURL: `${base}/v1`, apiKey, maxRetries: 0, timeout: 60_000 });

const checks = [];
const check = (name, fn) => checks.push({ name, fn });
const messages = [{ role: 'user', content: 'Tell me about rivers.' }];

async function collect(stream) {
  const text = {};
  let usage = null;
  let finish = {};
  let chunks = 0;
  for await (const chunk of stream) {
    chunks++;
    if (chunk.usage) usage = chunk.usage;
    for (const c of chunk.choices) {
      const piece = c.delta?.content ?? c.text ?? '';
      text[c.index] = (text[c.index] ?? '') + piece;
      if (c.finish_reason) finish[c.index] = c.finish_reason;
    }
  }
  return { text, usage, finish, chunks };
}

check('models.list reports the served model and its context length', async () => {
  const list = await client.models.list();
  const ids = list.data.map((m) => m.id);
  assert.deepEqual(ids, [model]);
  assert.equal(list.data[0].max_model_len, 4096);
  const one = await client.models.retrieve(model);
  assert.equal(one.id, model);
});

check('chat: whole and streamed answers agree, with usage', async () => {
  const params = { model, messages, max_completion_tokens: 10, temperature: 0, ignore_eos: true };
  const whole = await client.chat.completions.create(params);
  assert.equal(whole.object, 'chat.completion');
  assert.equal(whole.choices[0].message.role, 'assistant');
  assert.equal(whole.choices[0].finish_reason, 'length');
  assert.equal(whole.usage.completion_tokens, 10);
  assert.equal(whole.usage.total_tokens, whole.usage.prompt_tokens + 10);
  const streamed = await collect(
    await client.chat.completions.create({ ...params, stream: true, stream_options: { include_usage: true } }),
  );
  assert.equal(streamed.text[0], whole.choices[0].message.content);
  assert.equal(streamed.finish[0], 'length');
  // The same counts, except that the second asking finds the prompt's full blocks in the prefix
  // cache (all but its last token, in whole 16-token blocks).
  const { prompt_tokens_details: wholeDetails, ...wholeCounts } = whole.usage;
  const { prompt_tokens_details: streamedDetails, ...streamedCounts } = streamed.usage;
  assert.deepEqual(streamedCounts, wholeCounts);
  assert.equal(typeof wholeDetails.cached_tokens, 'number');
  assert.equal(streamedDetails.cached_tokens, Math.floor((whole.usage.prompt_tokens - 1) / 16) * 16);
});

check('completions: whole and streamed, logprobs', async () => {
  const params = { model, prompt: 'The river', max_tokens: 6, temperature: 0, logprobs: 2, ignore_eos: true };
  const whole = await client.completions.create(params);
  assert.equal(whole.object, 'text_completion');
  const lp = whole.choices[0].logprobs;
  assert.equal(lp.tokens.length, 6);
  assert.equal(lp.token_logprobs.length, 6);
  assert.ok(lp.token_logprobs.every((x) => x <= 0));
  assert.ok(Object.keys(lp.top_logprobs[0]).length >= 2);
  const streamed = await collect(await client.completions.create({ ...params, stream: true }));
  assert.equal(streamed.text[0], whole.choices[0].text);
  assert.ok(streamed.chunks >= 6);
});

check('chat logprobs with top_logprobs', async () => {
  const r = await client.chat.completions.create({
    model, messages, max_tokens: 4, temperature: 0, logprobs: true, top_logprobs: 2, ignore_eos: true,
  });
  const content = r.choices[0].logprobs.content;
  assert.equal(content.length, 4);
  for (const entry of content) {
    assert.equal(entry.top_logprobs.length, 2);
    assert.equal(entry.logprob, entry.top_logprobs[0].logprob); // greedy picks the top token
    assert.ok(Array.isArray(entry.bytes));
  }
});

check('n=2 with a seed: two choices, reproducible', async () => {
  const params = { model, messages, max_tokens: 8, temperature: 1.0, seed: 1234, n: 2, ignore_eos: true };
  const a = await client.chat.completions.create(params);
  const b = await client.chat.completions.create(params);
  assert.equal(a.choices.length, 2);
  assert.deepEqual(a.choices.map((c) => c.index), [0, 1]);
  assert.deepEqual(a.choices.map((c) => c.message.content), b.choices.map((c) => c.message.content));
  assert.equal(a.usage.completion_tokens, 16);
  const streamed = await collect(await client.chat.completions.create({ ...params, stream: true }));
  assert.deepEqual([streamed.text[0], streamed.text[1]], a.choices.map((c) => c.message.content));
});

check('stop strings end the answer before them', async () => {
  const params = { model, prompt: 'Once upon a time', max_tokens: 20, temperature: 0, ignore_eos: true };
  const pieces = [];
  for await (const chunk of await client.completions.create({ ...params, stream: true })) pieces.push(chunk.choices[0]?.text ?? '');
  const full = pieces.join('');
  const stop = pieces[5];
  assert.ok(stop.length > 0);
  const r = await client.completions.create({ ...params, stop: [stop, 'never-appears'] });
  assert.equal(r.choices[0].text, full.slice(0, full.indexOf(stop)));
  assert.equal(r.choices[0].finish_reason, 'stop');
});

check('errors arrive as the SDK\'s typed errors', async () => {
  await assert.rejects(client.chat.completions.create({ model: 'gpt-4o', messages }), (e) => {
    assert.ok(e instanceof OpenAI.NotFoundError);
    assert.equal(e.status, 404);
    assert.match(e.message, /does not exist/);
    return true;
  });
  await assert.rejects(client.chat.completions.create({ model, messages, max_tokens: -1 }), (e) => {
    assert.ok(e instanceof OpenAI.BadRequestError);
    assert.equal(e.param, 'max_tokens');
    return true;
  });
  await assert.rejects(client.completions.create({ model, prompt: 'x', max_tokens: 100000 }), (e) => {
    assert.ok(e instanceof OpenAI.BadRequestError);
    assert.match(e.message, /maximum context length is 4096 tokens/);
    return true;
  });
  const wrongKey = new OpenAI({ baseURL: `${base}/v1`, apiKey: 'wrong', maxRetries: 0 });
  await assert.rejects(wrongKey.models.list(), (e) => e instanceof OpenAI.AuthenticationError && e.status === 401);
});

// The server may still be loading the model.
for (let i = 0; i < 200; i++) {
  const health = await fetch(`${base}/health`).catch(() => null);
  if (health?.status === 200) break;
  await new Promise((resolve) => setTimeout(resolve, 50));
}

let failed = 0;
for (const { name, fn } of checks) {
  try {
    await fn();
    console.log(`PASS ${name}`);
  } catch (e) {
    failed++;
    console.log(`FAIL ${name}\n  ${e.stack ?? e}`);
  }
}
console.log(`${checks.length - failed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
