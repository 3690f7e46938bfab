// The soak: three `mnemo serve --http` on one root (one holds the index, two
// are its front ends), clients of the official MCP TypeScript SDK on each
// making a mix of searches, reads, writes, edits, deletes and session
// searches, a writer appending to agents' transcripts, and every
// --restart-every seconds the serve holding the index stopped (SIGTERM and
// SIGKILL by turns) and started again (it comes back as a front end). Every
// --interval seconds one JSON line: calls, p50/p99, errors, documented
// retries, and each serve's RSS, goroutines and open files. At the end every
// acknowledged write is checked on disk and through a search.
//
// usage (scripts/soak runs it): node driver.mjs --bin MNEMO --root ROOT
//   --sessions DIR --duration S [--interval S] [--restart-every S] [--clients N] --out FILE
import { execFile, spawn } from "node:child_process";
import { appendFileSync, existsSync, readFileSync, readdirSync, unlinkSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const arg = (k, d) => { const i = process.argv.indexOf("--" + k); return i < 0 ? d : process.argv[i + 1]; };
const bin = arg("bin"), root = arg("root"), sessions = arg("sessions"), out = arg("out", "/dev/stdout");
const duration = +arg("duration", 60), interval = +arg("interval", 60), restartEvery = +arg("restart-every", 600);
const perServe = +arg("clients", 4);
const token = "soak-" + Math.random().toString(36).slice(2) + Math.random().toString(36).slice(2);
const RETRY = "mnemo: retry:"; // mcp.RetryMessage: a call cut by a handover
const BUSY = "server busy";   // mcp.ErrBusy: the search queue was full; documented "retry in a moment"
const sleep = ms => new Promise(r => setTimeout(r, ms));
const log = line => { appendFileSync(out, JSON.stringify(line) + "\n"); };

const freePort = () => new Promise(res => { const s = createServer(); s.listen(0, "127.0.0.1", () => { const p = s.address().port; s.close(() => res(p)); }); });

// ---- the serves ----
class Serve {
  constructor(name, port, debugPort) { Object.assign(this, { name, port, debugPort, proc: null, exited: null, log: "", generation: 0 }); }
  start() {
    this.generation++;
    this.proc = spawn(bin, ["--root", root, "serve", "--http", `127.0.0.1:${this.port}`, "--debug-addr", `127.0.0.1:${this.debugPort}`,
      "--source", `claude-code=${sessions}`, "--debounce-ms", "100"], { env: { ...process.env, MAENIFOLD_HTTP_TOKEN: token }, stdio: ["ignore", "ignore", "pipe"] });
    this.log = "";
    this.proc.stderr.on("data", d => { this.log = (this.log + d).slice(-20000); appendFileSync(out + ".serve.log", `[${this.name} ${this.proc.pid}] ` + d); });
    this.exited = new Promise(r => this.proc.on("exit", (code, sig) => r({ code, sig })));
  }
  async ready() {
    for (let i = 0; i < 600; i++) {
      if (/mcp listening on /.test(this.log)) return;
      await sleep(50);
    }
    throw new Error(`${this.name} did not listen:\n${this.log}`);
  }
  url() { return `http://127.0.0.1:${this.port}/mcp`; }
  async stats() {
    const pid = this.proc?.pid;
    try {
      const st = readFileSync(`/proc/${pid}/status`, "utf8");
      const rss = +(/VmRSS:\s+(\d+)/.exec(st)?.[1] ?? 0) / 1024;
      const fds = readdirSync(`/proc/${pid}/fd`).length;
      const r = await fetch(`http://127.0.0.1:${this.debugPort}/debug/pprof/goroutine?debug=1`, { headers: { Authorization: `Bearer ${token}` } });
      const g = +(/goroutine profile: total (\d+)/.exec(await r.text())?.[1] ?? -1);
      return { pid, rssMB: +rss.toFixed(1), goroutines: g, fds };
    } catch (e) { return { pid, error: String(e).slice(0, 100) }; }
  }
}

// ---- what the clients were told was done ----
const acked = new Map(); // uri -> { word, deleted }
const lat = []; const counts = { calls: 0, errors: 0, retries: 0, busy: 0, reconnects: 0, ownServeRestarts: 0, forgotten: 0, forgetRetries: 0 };
const samples = new Set();
const queries = ["bbolt", "postgres pool exhausted", "why did we choose bbolt", "incident review", "planning", "cache stampede",
  "数据库", "retry budget", "file watcher", "release checklist"];
const textOf = r => r?.content?.[0]?.text ?? "";

class Agent {
  constructor(id, serve) { Object.assign(this, { id, serve, client: null, mine: [], n: 0 }); }
  async connect() {
    this.generation = this.serve.generation;
    this.client = new Client({ name: `soak-${this.id}`, version: "1" });
    await this.client.connect(new StreamableHTTPClientTransport(new URL(this.serve.url()), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  }
  // call makes one tool call; a retry answer is retried (up to 20 times), as the error asks.
  async call(name, args) {
    for (let attempt = 0; ; attempt++) {
      const t0 = performance.now();
      const r = await this.client.callTool({ name, arguments: args });
      lat.push(performance.now() - t0); counts.calls++;
      const t = textOf(r);
      if (r.isError && (t.startsWith(RETRY) || t.includes(BUSY)) && attempt < 20) {
        t.startsWith(RETRY) ? counts.retries++ : counts.busy++;
        await sleep(100);
        continue;
      }
      return { r, retried: attempt > 0 };
    }
  }
  async step() {
    const k = this.n++ % 20, tag = `soak${this.id}x${this.n}`;
    if (k < 10) return this.check(await this.call("SearchMemories", { query: queries[(this.id + this.n) % queries.length] }));
    if (k < 12) return this.check(await this.call("SearchSessions", { query: "deploy checklist" }));
    if (k < 14) {
      const uri = this.mine[this.n % Math.max(1, this.mine.length)];
      return uri && this.check(await this.call("ReadMemory", { identifier: uri }));
    }
    // As many deletes as writes, so the vault stays the size it reaches in
    // the first minutes and resource use can be compared across the hour.
    if (k < 16) { // a write, then read-your-write through a search
      const word = `w${tag}`;
      const { r, retried } = await this.call("WriteMemory", { title: `Soak ${tag}`, content: `A soak note holding ${word}.`, folder: `soak/a${this.id}` });
      let uri = r.structuredContent?.uri;
      if (r.isError && retried && /already exists|has the title/.test(textOf(r))) uri = `memory://soak/a${this.id}/soak-${tag}`; // the cut call had written it
      if (!uri) return this.check({ r });
      acked.set(uri, { word, deleted: false }); this.mine.push(uri);
      const s = await this.call("SearchMemories", { query: word, mode: "FullText" });
      if (!(s.r.structuredContent?.results ?? []).some(x => x.uri === uri)) this.fail(`read-your-write missed ${uri}`);
      return;
    }
    if (k < 18 && this.mine.length) { // an edit of one of its own notes
      const uri = this.mine[this.n % this.mine.length], word = `e${tag}`;
      const { r } = await this.call("EditMemory", { identifier: uri, operation: "append", content: `\nEdited with ${word}.` });
      if (r.isError) return this.check({ r });
      acked.get(uri).edits = [...(acked.get(uri).edits ?? []), word];
      return;
    }
    if (this.mine.length > 3) { // a delete of its oldest note
      const uri = this.mine.shift();
      // Sent: if the answer never comes (this agent's own serve is the one
      // restarted mid-call), the delete may or may not have been made.
      acked.get(uri).deleteSent = true;
      const { r, retried } = await this.call("DeleteMemory", { identifier: uri, confirm: true });
      if (r.isError && !(retried && /not found/.test(textOf(r)))) return this.check({ r });
      acked.get(uri).deleted = true;
    }
  }
  check({ r }) { if (r.isError) this.fail(textOf(r)); }
  fail(msg) { counts.errors++; samples.add(msg.slice(0, 160)); }
  async run(until) {
    while (Date.now() < until) {
      try {
        if (!this.client) await this.connect();
        await this.step();
      } catch (e) {
        // The agent's own serve went away (it was the one restarted): like
        // an agent whose MCP server died, it reconnects to the new one.
        if (this.serve.restarting || this.generation !== this.serve.generation) { counts.ownServeRestarts++; } else { counts.errors++; samples.add(String(e).slice(0, 160)); }
        this.client = null; counts.reconnects++;
        await sleep(200);
      }
    }
    await this.client?.close().catch(() => {});
  }
}

// ---- transcripts being written while the soak runs ----
// An agent's session grows to perSession messages, then a new one starts;
// the oldest beyond the last eight is forgotten (ForgetSessions through the
// CLI, which forwards to the holder) and its file removed — as a user who
// prunes their history does — so the sessions corpus stays the size it
// reaches in the first minutes and resource use compares across the hour.
const perSession = 50, keepSessions = 8;
const sidOf = k => `00000000-0000-4000-8000-${String(k).padStart(12, "0")}`;
function appendTranscripts(until) {
  const dir = join(sessions, "-home-dev-soak"); let n = 0, forgetting = false;
  const toForget = [];
  const forget = () => {
    if (forgetting || !toForget.length) return;
    forgetting = true;
    const k = toForget[0];
    execFile(bin, ["--root", root, "sessions", "forget", sidOf(k)], { timeout: 30000 }, err => {
      forgetting = false;
      if (err) { counts.forgetRetries++; return; } // a handover: the next rotation tries again
      toForget.shift(); counts.forgotten++;
      try { unlinkSync(join(dir, `${sidOf(k)}.jsonl`)); } catch {}
    });
  };
  const t = setInterval(() => {
    if (Date.now() > until) return clearInterval(t);
    const k = Math.floor(n / perSession), sid = sidOf(k);
    if (n % perSession === 0 && k >= keepSessions) toForget.push(k - keepSessions);
    forget();
    const rec = { type: "user", uuid: `soak-${n}`, parentUuid: n % perSession ? `soak-${n - 1}` : null, sessionId: sid, cwd: "/home/dev/soak", isSidechain: false,
      timestamp: new Date().toISOString(), message: { role: "user", content: `Soak message ${n}: the deploy checklist step ${n % 17}.` } };
    appendFileSync(join(dir, `${sid}.jsonl`), JSON.stringify(rec) + "\n"); n++;
  }, 250);
}

// ---- the run ----
const serves = [];
for (const name of ["s1", "s2", "s3"]) serves.push(new Serve(name, await freePort(), await freePort()));
serves[0].start(); await serves[0].ready();
for (const s of serves.slice(1)) { s.start(); await s.ready(); }
const holder = () => { try { const pid = +readFileSync(join(root, "index", "writer.pid"), "utf8"); return serves.find(s => s.proc.pid === pid); } catch { return undefined; } };

const t0 = Date.now(), until = t0 + duration * 1000;
appendTranscripts(until);
const agents = serves.flatMap((s, i) => Array.from({ length: perServe }, (_, j) => new Agent(i * perServe + j, s)));
const running = agents.map(a => a.run(until));

let restarts = 0, intervalNo = 0, sigkill = false;
const nextRestart = () => Math.min(restartEvery, duration) * 1000;
let restartAt = t0 + nextRestart(), reportAt = t0 + interval * 1000;
while (Date.now() < until) {
  await sleep(Math.max(0, Math.min(restartAt, reportAt, until) - Date.now()));
  if (Date.now() >= reportAt) {
    const l = lat.splice(0).sort((a, b) => a - b), c = { ...counts };
    for (const k in counts) counts[k] = 0;
    const q = p => l.length ? +l[Math.min(l.length - 1, Math.floor(p * l.length))].toFixed(1) : null;
    const st = await Promise.all(serves.map(async s => ({ name: s.name, holder: s === holder(), ...(await s.stats()) })));
    const notes = readdirSync(join(root, "memory"), { recursive: true }).filter(f => String(f).endsWith(".md")).length;
    const transcripts = readdirSync(sessions, { recursive: true }).filter(f => String(f).endsWith(".jsonl")).length;
    log({ interval: ++intervalNo, atSeconds: Math.round((Date.now() - t0) / 1000), ...c, p50: q(0.5), p99: q(0.99), notes, transcripts, serves: st, errorSamples: [...samples].slice(0, 3) });
    samples.clear();
    reportAt += interval * 1000;
  }
  if (Date.now() >= restartAt && Date.now() < until - 5000) {
    const h = holder();
    if (h) {
      h.restarting = true;
      h.proc.kill(sigkill ? "SIGKILL" : "SIGTERM");
      const how = await h.exited;
      h.start(); await h.ready();
      h.restarting = false; restarts++;
      log({ restart: restarts, serve: h.name, signal: sigkill ? "SIGKILL" : "SIGTERM", exit: how, newHolder: holder()?.name ?? null });
      sigkill = !sigkill;
    }
    restartAt += restartEvery * 1000;
  }
}
await Promise.all(running);

// ---- every acknowledged write, checked ----
const checker = new Agent(999, serves.find(s => s.proc.exitCode === null));
await checker.connect();
let lost = 0, present = 0, gone = 0, unanswered = 0; const lostSamples = [];
for (const [uri, w] of acked) {
  const rel = uri.replace("memory://", "") + ".md", path = join(root, "memory", rel);
  if (w.deleted) { if (existsSync(path)) { lost++; lostSamples.push(`deleted but present: ${rel}`); } else gone++; continue; }
  // A delete whose answer was lost with its serve: gone is as right as present.
  if (w.deleteSent && !existsSync(path)) { unanswered++; continue; }
  const body = existsSync(path) ? readFileSync(path, "utf8") : "";
  const words = [w.word, ...(w.edits ?? [])];
  const missing = words.filter(x => !body.includes(x));
  const s = await checker.call("SearchMemories", { query: w.word, mode: "FullText" });
  const found = (s.r.structuredContent?.results ?? []).some(x => x.uri === uri);
  if (missing.length || !found) { lost++; lostSamples.push(`${rel}: missing ${missing.join(",") || "-"}, search ${found ? "finds" : "misses"} it`); } else present++;
}
await checker.client.close();
for (const s of serves) { s.proc.kill("SIGTERM"); await s.exited; }
log({ done: true, seconds: Math.round((Date.now() - t0) / 1000), restarts, acknowledgedWrites: acked.size, present, deletedAndGone: gone, goneByUnansweredDelete: unanswered, lost, lostSamples: lostSamples.slice(0, 5) });
