// A real MCP server built with the TypeScript SDK (@modelcontextprotocol/sdk, pinned in
// package.json), for runsdesk's tests: streamable HTTP on 127.0.0.1 (a free port), one session
// per client. Its tools ask for input during the call with elicitInput, as the SDK's own
// examples do (elicitation/create on protocol 2025-11-25), and answer with what they got:
//   confirm_refund  read-only        asks "How much should be refunded?" (amount: number)
//   issue_refund    no hints (write)  asks the same
// It prints "listening <url>" once it listens, and "answer <json>" for every answer it gets.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

const requestedSchema = {
  type: 'object',
  required: ['amount'],
  properties: { amount: { type: 'number', minimum: 0, title: 'Amount' } },
};

function build() {
  const server = new McpServer({ name: 'runsdesk-mcp-ts', version: '1.0.0' });
  const ask = async () => {
    const res = await server.server.elicitInput(
      { mode: 'form', message: 'How much should be refunded?', requestedSchema },
      { timeout: 3600 * 1000 },
    );
    console.log('answer ' + JSON.stringify({ action: res.action, content: res.content ?? null }));
    return { content: [{ type: 'text', text: `refund ${res.action} ${res.content?.amount ?? '<nil>'}` }] };
  };
  const input = { order: z.string() };
  server.registerTool('confirm_refund', {
    description: 'Refund after the operator confirms.', inputSchema: input, annotations: { readOnlyHint: true },
  }, ask);
  server.registerTool('issue_refund', {
    description: 'Issue a refund of the amount the operator gives.', inputSchema: input,
  }, ask);
  return server;
}

const transports = new Map();

const http = createServer(async (req, res) => {
  const id = req.headers['mcp-session-id'];
  let transport = id ? transports.get(id) : undefined;
  if (!transport) {
    if (id || req.method !== 'POST') {
      res.writeHead(404).end();
      return;
    }
    transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sid) => transports.set(sid, transport),
    });
    transport.onclose = () => transport.sessionId && transports.delete(transport.sessionId);
    await build().connect(transport);
  }
  await transport.handleRequest(req, res);
});

http.listen(0, '127.0.0.1', () => {
  console.log(`listening http://127.0.0.1:${http.address().port}/mcp`);
});
