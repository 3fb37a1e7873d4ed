// Run by TestJSClientClose (pkg/realtime/js_test.go): the closing
// handshake of the ES module client against peers that answer it, never
// answer it, or drop the connection instead.
//
//   node [--experimental-websocket] close_test.mjs WS_URL DROP_URL
//
// WS_URL is the Go server of testdata/chat with an inbox of one, whose
// "say" handler blocks on text "stall" until a "release" arrives on
// another connection; DROP_URL is a peer that closes the TCP connection
// when it reads a close frame, without answering it. Each step prints
// "ok NAME" or "FAIL NAME"; any failure exits 1.
import assert from "node:assert/strict";
import { connect, RealtimeError } from "./realtime.js";

const [url, dropURL] = process.argv.slice(2);
// The steps that expect the server's answer give it far longer than the
// default 2 s: on a loaded machine node may not run for a while, and its
// timers run before the socket's input when it wakes up.
const answered = { closeTimeout: 20000 };
if (!url || !dropURL) {
  console.error("usage: close_test.mjs WS_URL DROP_URL");
  process.exit(2);
}

// within fails when p has not settled in ms: a close() that never resolves
// is the bug this file pins, and it must fail here, not hang the test.
async function within(ms, p, what) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

async function step(name, fn) {
  try {
    await fn();
    console.log("ok", name);
  } catch (e) {
    console.log("FAIL", name, e?.stack ?? e);
    process.exitCode = 1;
  }
}

await step("a server that answers: close resolves with the code sent", async () => {
  const rt = await connect(url, answered);
  const closed = await within(30000, rt.close(4000, "done"), "close()");
  assert.equal(closed.code, 4000);
  assert.equal(rt.connected, false);
});

await step("a server whose reader is stalled: close resolves after closeTimeout with 1006", async () => {
  const rt = await connect(url, { closeTimeout: 300 });
  try {
    const changes = [];
    rt.onConnectionChange((up) => changes.push(up));
    // One event runs (and blocks), one waits in the inbox, one waits in the
    // server's reader: the close frame behind them is not read until the
    // first handler returns.
    const stalled = rt.request("say", [{ text: "stall" }]);
    stalled.catch(() => {});
    rt.emit("typing", true);
    rt.emit("typing", true);
    const start = Date.now();
    const closed = await within(10000, rt.close(), "close()");
    const took = Date.now() - start;
    assert.equal(closed.code, 1006);
    assert.match(closed.reason, /closing handshake within 300 ms/);
    assert.ok(took >= 290, `resolved after ${took} ms, before the close timeout`);
    await assert.rejects(stalled, (e) => e instanceof RealtimeError && e.code === "REALTIME_REQUEST_DISCONNECTED" && e.details.sent === true);
    assert.deepEqual(changes, [false]);
    assert.equal(rt.connected, false);
  } finally {
    // Let the server go on: it reads the close frame, answers and closes
    // the socket (which lets node exit); the client has settled and
    // ignores that.
    const other = await connect(url, answered);
    assert.deepEqual(Object.keys(await other.request("say", [{ text: "release" }])), ["n"]);
    assert.equal((await within(30000, other.close(), "close()")).code, 1000);
  }
});

await step("close() stops sending at once", async () => {
  const rt = await connect(url, answered);
  const closing = rt.close();
  assert.equal(rt.connected, false, "connected after close()");
  assert.throws(() => rt.emit("typing", false), (e) => e instanceof RealtimeError && e.code === "REALTIME_REQUEST_DISCONNECTED");
  await assert.rejects(rt.request("say", [{ text: "hi" }]), (e) => e instanceof RealtimeError && e.details.sent === false);
  assert.equal((await within(30000, closing, "close()")).code, 1000);
});

await step("a peer that drops the connection: close resolves with 1006 at once", async () => {
  // A close timeout far beyond the wait below: the drop itself must settle it.
  const rt = await connect(dropURL, { closeTimeout: 60000 });
  const closed = await within(10000, rt.close(), "close()");
  assert.equal(closed.code, 1006);
  assert.equal(closed.reason, "");
});
