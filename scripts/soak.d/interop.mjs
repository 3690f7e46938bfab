// Interop: the official MCP TypeScript SDK against `mnemo serve --http`. With
// the bearer token it connects, lists the tools and searches; without it, or
// with a wrong one, connecting fails (401). Prints one JSON line.
// usage: node interop.mjs --url http://127.0.0.1:PORT/mcp --token TOKEN
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const arg = k => { const i = process.argv.indexOf("--" + k); return i < 0 ? undefined : process.argv[i + 1]; };
const url = new URL(arg("url")), token = arg("token");
const connect = async auth => {
  const c = new Client({ name: "interop", version: "1" });
  const headers = auth ? { Authorization: auth } : {};
  await c.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));
  return c;
};
const out = {};
const c = await connect(`Bearer ${token}`);
out.tools = (await c.listTools()).tools.map(t => t.name).sort();
const r = await c.callTool({ name: "SearchMemories", arguments: { query: "bbolt" } });
out.searchError = !!r.isError;
out.results = (r.structuredContent?.results ?? []).length;
await c.close();
for (const [name, auth] of [["noToken", ""], ["wrongToken", "Bearer wrong"]]) {
  try { const x = await connect(auth); await x.close(); out[name] = "connected"; }
  catch (e) { out[name] = String(e).slice(0, 120); }
}
console.log(JSON.stringify(out));
