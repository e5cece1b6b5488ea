// A stand-in for the OpenAI Responses API on loopback, for the Codex
// journey: every request is recorded, and each `POST /v1/responses` is
// answered, as Server-Sent Events, with the next scripted step of the
// conversation (what the model "says": tool calls, then a message). When
// the script runs out it answers with a final message, so a confused
// harness ends its turn instead of looping.
//
// The items are those of the Responses API as Codex 0.171.0 reads them:
// `function_call` (exec_command, or an MCP tool with its `namespace`),
// `custom_tool_call` (the freeform apply_patch tool), `tool_search_call`
// (loads deferred tools, e.g. MCP servers' tools) and `message`.
'use strict';

const { recordingServer } = require('./lib.js');

let counter = 0;
const nextId = (prefix) => `${prefix}_${++counter}`;

/** The model runs a shell command (Codex's `exec_command` tool). */
function shell(cmd, callId = nextId('call_shell')) {
  return { type: 'function_call', name: 'exec_command', arguments: JSON.stringify({ cmd }), call_id: callId };
}

/** The model edits files with Codex's freeform `apply_patch` tool. */
function applyPatch(patch, callId = nextId('call_patch')) {
  return { type: 'custom_tool_call', name: 'apply_patch', input: patch, call_id: callId };
}

/** The model searches the deferred tools (MCP servers' tools are deferred for models that support it). */
function toolSearch(query, callId = nextId('call_search')) {
  return { type: 'tool_search_call', call_id: callId, execution: 'client', arguments: { query, limit: 8 } };
}

/** The model calls tool `name` of MCP server `server` (namespace `mcp__<server>`). */
function mcpCall(server, name, args, callId = nextId('call_mcp')) {
  return { type: 'function_call', namespace: `mcp__${server}`, name, arguments: JSON.stringify(args), call_id: callId };
}

/** The model answers in text (ends the turn when it is the only item). */
function message(text) {
  return { type: 'message', role: 'assistant', content: [{ type: 'output_text', text }] };
}

/** One response as the SSE stream Codex reads: created, each item done, completed (with its token usage). */
function sse(responseId, items, totalTokens = 2) {
  const events = [{ type: 'response.created', response: { id: responseId } }];
  items.forEach((item, index) => {
    events.push({ type: 'response.output_item.done', output_index: index, item: { id: `${responseId}_item_${index}`, ...item } });
  });
  events.push({
    type: 'response.completed',
    response: {
      id: responseId,
      usage: {
        input_tokens: totalTokens - 1,
        input_tokens_details: null,
        output_tokens: 1,
        output_tokens_details: null,
        total_tokens: totalTokens,
      },
    },
  });
  return events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join('');
}

/** The text Codex's local compaction sends as the last user message. */
const COMPACTION_PROMPT = 'You are performing a CONTEXT CHECKPOINT COMPACTION';

/** Whether a /v1/responses request body is Codex asking for a compaction summary. */
function isCompaction(body) {
  const input = (body && body.input) || [];
  const last = input[input.length - 1];
  return Boolean(last && last.type === 'message' && last.role === 'user' && itemText(last).includes(COMPACTION_PROMPT));
}

/**
 * Start the fake API. `steps` is a list whose element i answers the i-th
 * `POST /v1/responses` of the conversation: an array of output items, a
 * function of the recorded request returning one, or {items, totalTokens}
 * to report that many tokens used (over Codex's model_auto_compact_token_limit,
 * it compacts). Compaction requests are answered with a summary and take no
 * step. Resolves to {url (base_url for Codex, with /v1), requests
 * (everything recorded), responses() (the /v1/responses request bodies, in
 * order, compactions included), close()}.
 */
async function fakeOpenAI(steps) {
  let step = 0;
  const server = await recordingServer((request, res) => {
    if (request.method === 'POST' && request.url.split('?')[0].endsWith('/responses')) {
      let scripted;
      if (isCompaction(request.body)) {
        scripted = [message('Checkpoint summary: the user asked for a change; work is in progress.')];
      } else {
        scripted = step < steps.length ? steps[step] : [message('Done.')];
        step += 1;
      }
      if (typeof scripted === 'function') scripted = scripted(request);
      const { items, totalTokens } = Array.isArray(scripted) ? { items: scripted } : scripted;
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.end(sse(nextId('resp'), items, totalTokens));
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: `the fake OpenAI API has no ${request.method} ${request.url}` } }));
  });
  return {
    url: `${server.url}/v1`,
    requests: server.requests,
    responses: () =>
      server.requests
        .filter((r) => r.method === 'POST' && r.url.split('?')[0].endsWith('/responses'))
        .map((r) => r.body),
    close: server.close,
  };
}

// --- reading a recorded /v1/responses request -------------------------------

/** The text of an input item (message content, tool output), joined. */
function itemText(item) {
  const parts = [];
  const collect = (v) => {
    if (typeof v === 'string') parts.push(v);
    else if (Array.isArray(v)) v.forEach(collect);
    else if (v && typeof v === 'object') {
      if (typeof v.text === 'string') parts.push(v.text);
      else if (v.content !== undefined) collect(v.content);
      else if (v.output !== undefined) collect(v.output);
    }
  };
  collect(item.content ?? item.output ?? item.input ?? item.arguments ?? '');
  return parts.join('\n');
}

/** Index of the first input item matching `predicate`, or -1. */
function findIndex(body, predicate) {
  return (body.input || []).findIndex(predicate);
}

/** The user's own prompt message (the last user message not made by Codex itself). */
function promptIndex(body, prompt) {
  return findIndex(body, (i) => i.type === 'message' && i.role === 'user' && itemText(i).includes(prompt));
}

/** The developer messages of a request, as [{index, text}]. */
function developerMessages(body) {
  return (body.input || [])
    .map((item, index) => ({ item, index }))
    .filter(({ item }) => item.type === 'message' && item.role === 'developer')
    .map(({ item, index }) => ({ index, text: itemText(item) }));
}

/** The names of the tools a request offers (namespaces as `ns.tool`). */
function toolNames(body) {
  const names = [];
  for (const tool of body.tools || []) {
    if (tool.type === 'namespace') for (const t of tool.tools || []) names.push(`${tool.name}.${t.name}`);
    else names.push(tool.name || tool.type);
  }
  return names;
}

/** A short, readable account of the recorded requests, for failure messages. */
function summarize(requests) {
  const lines = [];
  requests.forEach((r, n) => {
    lines.push(`#${n} ${r.method} ${r.url}`);
    if (!r.body || typeof r.body !== 'object') return;
    lines.push(`   tools: ${toolNames(r.body).join(', ')}`);
    (r.body.input || []).forEach((item, i) => {
      const who = item.role ? `${item.type}/${item.role}` : item.type;
      const name = item.name ? ` ${item.namespace ? `${item.namespace}.` : ''}${item.name}` : '';
      const text = itemText(item).replace(/\s+/g, ' ');
      const shown = text.length > 300 ? `${text.slice(0, 300)}… (${text.length} chars)` : text;
      lines.push(`   [${i}] ${who}${name}${item.call_id ? ` (${item.call_id})` : ''}: ${shown}`);
    });
  });
  return lines.join('\n');
}

module.exports = {
  fakeOpenAI,
  shell,
  applyPatch,
  toolSearch,
  mcpCall,
  message,
  isCompaction,
  itemText,
  findIndex,
  promptIndex,
  developerMessages,
  toolNames,
  summarize,
};
