// A stand-in for the Anthropic Messages API on loopback, for Claude Code
// driven with ANTHROPIC_BASE_URL: it records every request (lib.js's
// recordingServer) and answers the agent's conversation from a script; and
// the readers of what the model received.
//
// The script is a list of assistant turns, each a list of content blocks
// ({type: 'text', text} or {type: 'tool_use', name, input}). A request is
// the agent's own when it offers the Edit tool; its turn is the number of
// assistant messages since the user's last prompt (a user message that is
// not tool results), so a retried request gets the same answer and a
// resumed session starts the script again. Anything else Claude Code asks on
// the side (a title, a topic, a quota probe, token counting, a HEAD probe)
// gets a short harmless answer, and is recorded all the same.
//
// Claude Code 2.1.197 streams (`stream: true`) to POST /v1/messages?beta=true;
// both the server-sent events of the Messages API and plain JSON are served.
'use strict';

const { recordingServer } = require('./lib');

const MODEL = 'claude-fake-harness';

/** The text of a content (a string, or its text blocks and tool results' text). */
function contentText(content) {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((block) => {
      if (block.type === 'text') return block.text;
      if (block.type === 'tool_result') return contentText(block.content);
      return '';
    })
    .join('\n');
}

/** Whether a recorded request is a turn of the agent's conversation (it offers the Edit tool). */
function isAgentTurn(request) {
  const body = request.body;
  return (
    request.method === 'POST' &&
    /^\/v1\/messages(\?|$)/.test(request.url) &&
    body !== null &&
    typeof body === 'object' &&
    Array.isArray(body.tools) &&
    body.tools.some((tool) => tool.name === 'Edit')
  );
}

/** The names of the tools a request offers. */
function toolNames(request) {
  return ((request.body && request.body.tools) || []).map((tool) => tool.name);
}

/** The agent's turn: assistant messages since the last user message that is not only tool results. */
function turnOf(messages) {
  let turn = 0;
  for (const m of messages) {
    const toolResults = Array.isArray(m.content) && m.content.some((block) => block.type === 'tool_result');
    if (m.role === 'user' && !toolResults) turn = 0;
    else if (m.role === 'assistant') turn += 1;
  }
  return turn;
}

let ids = 0;
function nextId(prefix) {
  ids += 1;
  return `${prefix}_harness${String(ids).padStart(6, '0')}`;
}

/** A Messages API message of `blocks` (tool_use blocks get ids). */
function message(blocks) {
  const content = blocks.map((block) =>
    block.type === 'tool_use' ? { type: 'tool_use', id: nextId('toolu'), name: block.name, input: block.input } : block,
  );
  return {
    id: nextId('msg'),
    type: 'message',
    role: 'assistant',
    model: MODEL,
    content,
    stop_reason: content.some((block) => block.type === 'tool_use') ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
  };
}

/** Answer `res` with `msg`, as JSON or as the Messages API's server-sent events. */
function send(res, msg, stream) {
  if (!stream) {
    res.writeHead(200, { 'content-type': 'application/json', 'request-id': nextId('req') });
    res.end(JSON.stringify(msg));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'request-id': nextId('req') });
  const event = (type, data) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  event('message_start', { message: { ...msg, content: [], stop_reason: null, usage: { ...msg.usage, output_tokens: 1 } } });
  msg.content.forEach((block, index) => {
    if (block.type === 'tool_use') {
      event('content_block_start', { index, content_block: { ...block, input: {} } });
      event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } });
    } else {
      event('content_block_start', { index, content_block: { type: 'text', text: '' } });
      event('content_block_delta', { index, delta: { type: 'text_delta', text: block.text } });
    }
    event('content_block_stop', { index });
  });
  event('message_delta', {
    delta: { stop_reason: msg.stop_reason, stop_sequence: null },
    usage: { output_tokens: msg.usage.output_tokens },
  });
  event('message_stop', {});
  res.end();
}

/**
 * Start the stand-in with the agent's `script` (see above); a turn past the
 * end of the script answers "Done.". Resolves to the recording server
 * ({url, requests, close()}; a request answered from the script carries its
 * `answer`, tool_use ids included) plus `agentTurns()` (the agent's requests)
 * and `summary()` (what the model received, readable, for failure messages).
 */
async function fakeAnthropic(script) {
  const server = await recordingServer((request, res) => {
    const { method, url, body } = request;
    if (method === 'POST' && /^\/v1\/messages\/count_tokens(\?|$)/.test(url)) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ input_tokens: 10 }));
      return;
    }
    if (method === 'POST' && /^\/v1\/messages(\?|$)/.test(url) && body !== null && typeof body === 'object') {
      const blocks = isAgentTurn(request)
        ? script[turnOf(body.messages || [])] || [{ type: 'text', text: 'Done.' }]
        : [{ type: 'text', text: 'Harness' }];
      const answer = message(blocks);
      request.answer = answer;
      send(res, answer, body.stream === true);
      return;
    }
    // Anything else (the HEAD / probe, an endpoint this stand-in does not know): an empty success.
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(method === 'HEAD' ? undefined : '{}');
  });
  return {
    ...server,
    agentTurns: () => server.requests.filter(isAgentTurn),
    summary: () => summarize(server.requests),
  };
}

/**
 * The parts of a request's conversation in order: {message, role, type,
 * text, toolUseId, toolName, isError}. A message whose content is a string
 * (Claude Code's mid-conversation `role: "system"` messages) is one text part.
 */
function parts(request) {
  const out = [];
  (request.body.messages || []).forEach((m, message) => {
    const blocks = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content || [];
    for (const block of blocks) {
      out.push({
        message,
        role: m.role,
        type: block.type,
        text:
          block.type === 'text'
            ? block.text
            : block.type === 'tool_result'
              ? contentText(block.content)
              : block.type === 'tool_use'
                ? JSON.stringify(block.input)
                : '',
        toolUseId: block.type === 'tool_result' ? block.tool_use_id : block.type === 'tool_use' ? block.id : undefined,
        toolName: block.type === 'tool_use' ? block.name : undefined,
        isError: block.is_error === true,
      });
    }
  });
  return out;
}

/**
 * Every hook's additional context in a request, as Claude Code 2.1.197 puts
 * it: `<Event>[:<Tool>] hook additional context: <text>`, the text running to
 * the next blank line or `</system-reminder>` (mnemo's output has no blank
 * lines). Returns [{event, tool, text, message, role, part}], `part` the
 * index in parts(request).
 */
function hookContexts(request) {
  const found = [];
  parts(request).forEach((part, index) => {
    if (part.type !== 'text') return;
    const pattern = /(\w+)(?::(\w+))? hook additional context: ([\s\S]*?)(?=\n\n|\n<\/system-reminder>|$)/g;
    for (const match of part.text.matchAll(pattern)) {
      found.push({ event: match[1], tool: match[2], text: match[3], message: part.message, role: part.role, part: index });
    }
  });
  return found;
}

/** A long text shortened to what a reader of a failure needs: hook contexts and mnemo's text whole, the rest elided. */
function condense(text) {
  return text
    .split('\n\n')
    .map((paragraph) =>
      paragraph.length <= 300 || /hook additional context|mnemo/.test(paragraph)
        ? paragraph
        : `[… ${paragraph.length} characters of Claude Code's own text: ${JSON.stringify(paragraph.slice(0, 60))}…]`,
    )
    .join('\n\n');
}

/** What the recorded requests carried: a line each, then the last agent request's conversation in full. */
function summarize(requests) {
  const lines = requests.map((request, i) => {
    const body = request.body !== null && typeof request.body === 'object' ? request.body : null;
    const head = `#${i} ${request.method} ${request.url}`;
    if (!body) return `${head} ${String(request.body).slice(0, 100)}`;
    const tools = toolNames(request);
    const mcp = tools.filter((name) => name.startsWith('mcp__'));
    const answer = request.answer
      ? ` → ${request.answer.content.map((b) => (b.type === 'tool_use' ? `tool_use ${b.name}` : 'text')).join(', ')}`
      : '';
    const messages = (body.messages || []).length;
    return `${head} model=${body.model} stream=${body.stream} messages=${messages} tools=${tools.length} [${mcp.join(', ')}]${answer}`;
  });
  const agent = requests.filter(isAgentTurn);
  if (agent.length > 0) {
    const last = agent[agent.length - 1];
    lines.push(`the last agent request (#${requests.indexOf(last)}), message by message:`);
    for (const part of parts(last)) {
      const tool = [part.toolName, part.toolUseId, part.isError ? 'ERROR' : undefined].filter(Boolean).join(' ');
      const label = `[${part.message}] ${part.role}/${part.type}${tool ? ` ${tool}` : ''}`;
      lines.push(`  ${label}: ${condense(part.text).replace(/\n/g, '\n      ')}`);
    }
  }
  return lines.join('\n');
}

module.exports = { fakeAnthropic, isAgentTurn, toolNames, contentText, parts, hookContexts, summarize };
