// A real MCP client built with the TypeScript SDK (@modelcontextprotocol/sdk, pinned in
// package.json), for runsdesk's tests of its own MCP server (handlers/mcp_typescript_test.go):
// it connects over streamable HTTP to RUNSDESK_MCP_URL with the bearer token RUNSDESK_TOKEN,
// calls the tool named by its first argument with the JSON arguments of its second (sending
// a progress token), and prints "connected <protocol version>" once connected, "progress
// <json>" for every progress notification and "result <json>" with the call's result.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [tool, args] = process.argv.slice(2);
const transport = new StreamableHTTPClientTransport(new URL(process.env.RUNSDESK_MCP_URL), {
  requestInit: { headers: { Authorization: `Bearer ${process.env.RUNSDESK_TOKEN}` } },
});
const client = new Client({ name: 'runsdesk-test-ts-client', version: '1.0.0' });
await client.connect(transport);
console.log('connected ' + transport.protocolVersion);
const result = await client.callTool({ name: tool, arguments: JSON.parse(args) }, undefined, {
  onprogress: (p) => console.log('progress ' + JSON.stringify(p)),
  timeout: 120 * 1000,
});
console.log('result ' + JSON.stringify(result));
await client.close();
