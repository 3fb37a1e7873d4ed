// Run by TestJSClient (pkg/realtime/js_test.go) against the Go server of
// testdata/chat: node [--experimental-websocket] realtime_test.mjs WS_URL.
// Each step prints "ok NAME" or "FAIL NAME"; any failure exits 1.
import assert from "node:assert/strict";
import { connect, RealtimeError, SUBPROTOCOL } from "./realtime.js";

const url = process.argv[2];
if (!url) {
  console.error("usage: realtime_test.mjs WS_URL");
  process.exit(2);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function waitFor(cond, what) {
  for (let i = 0; i < 500; i++) {
    if (cond()) return;
    await sleep(10);
  }
  throw new Error(`timed out waiting for ${what}`);
}
const code = (c, check = () => true) => (e) => {
  assert.ok(e instanceof RealtimeError, `not a RealtimeError: ${e}`);
  assert.equal(e.code, c, e.message);
  return check(e) !== false;
};

async function step(name, fn) {
  try {
    await fn();
    console.log("ok", name);
  } catch (e) {
    console.log("FAIL", name, e?.stack ?? e);
    process.exitCode = 1;
  }
}

let rt;
const rejections = [];
const messages = [];

await step("connects with the subprotocol", async () => {
  assert.equal(SUBPROTOCOL, "stitchkit.realtime.v1");
  rt = await connect(url);
  assert.equal(rt.connected, true);
  rt.onRejected((r) => rejections.push(r));
  rt.on("message", (m) => messages.push(m.text));
});

await step("request is acknowledged", async () => {
  assert.deepEqual(await rt.request("say", [{ text: "hi" }]), { n: 1 });
});

await step("the server rejects invalid arguments with the envelope", async () => {
  await assert.rejects(
    rt.request("say", [{ text: "" }]),
    code("REALTIME_REQUEST_REJECTED", (e) => {
      assert.equal(e.details.reason, "invalid-arguments");
      assert.equal(e.details.event, "say");
      assert.equal(e.details.issues[0].path, "/0/text");
    }),
  );
  const r = rejections.at(-1);
  assert.deepEqual(
    { direction: r.direction, phase: r.phase, reason: r.reason, fault: r.fault },
    { direction: "client-inbound", phase: "arguments", reason: "rejected-by-peer", fault: "local" },
  );
});

await step("the server rejects an unknown event", async () => {
  await assert.rejects(rt.request("shout", []), code("REALTIME_REQUEST_REJECTED", (e) => assert.equal(e.details.reason, "unknown-event")));
});

await step("events pushed by the server reach handlers in order", async () => {
  await rt.request("say", [{ text: "push" }]);
  assert.deepEqual(messages, ["pushed"]);
});

await step("a server request is answered by the handler", async () => {
  rt.on("confirm", (q) => ({ answer: q.question === "bad?" ? "maybe" : "yes" }));
  await rt.request("say", [{ text: "ask" }]);
  await waitFor(() => messages.includes("answer:yes"), "answer:yes");
});

await step("the server validates the client's acknowledgement", async () => {
  await rt.request("say", [{ text: "bad-ask" }]);
  await waitFor(() => messages.includes("error:REALTIME_REQUEST_INVALID_ACKNOWLEDGEMENT"), "the server's invalid-ack report");
});

await step("a request times out; the late answer is ignored", async () => {
  await assert.rejects(rt.request("say", [{ text: "slow" }], { timeout: 50 }), code("REALTIME_REQUEST_TIMEOUT"));
  // Another connection lets the slow handler answer; the next request on
  // this one is handled after it, so by its ack the late one has arrived.
  const other = await connect(url, { closeTimeout: 20000 });
  await other.request("say", [{ text: "release-slow" }]);
  await other.close();
  assert.deepEqual(Object.keys(await rt.request("say", [{ text: "after" }])), ["n"]);
  assert.equal(rt.connected, true);
});

await step("emit reaches the server's handler", async () => {
  rt.emit("typing", true);
  await rt.request("say", [{ text: "sync" }]); // handlers of a connection run in order
});

await step("a contract descriptor and a validator check locally", async () => {
  const contract = {
    serverToClient: { message: { ack: false }, confirm: { ack: true } },
    clientToServer: { say: { ack: true }, typing: { ack: false }, join: { ack: true } },
  };
  const validate = (direction, event, kind, value) =>
    event === "say" && kind === "args" && value[0]?.text?.length > 5 ? [{ path: "/0/text", keyword: "maxLength", message: "too long" }] : null;
  // closeTimeout: the close code is checked, and a loaded machine may not
  // run node for longer than the default 2 s.
  const rt2 = await connect(url, { contract, validate, closeTimeout: 20000 });
  assert.throws(() => rt2.emit("say", { text: "x" }), code("REALTIME_CONTRACT_VIOLATION", (e) => assert.equal(e.details.reason, "missing-acknowledgement")));
  await assert.rejects(rt2.request("typing", [true]), code("REALTIME_CONTRACT_VIOLATION", (e) => assert.equal(e.details.reason, "unexpected-acknowledgement")));
  await assert.rejects(rt2.request("shout", []), code("REALTIME_CONTRACT_VIOLATION", (e) => assert.equal(e.details.reason, "unknown-event")));
  await assert.rejects(
    rt2.request("say", [{ text: "much too long" }]),
    code("REALTIME_CONTRACT_VIOLATION", (e) => {
      assert.equal(e.details.direction, "client-outbound");
      assert.equal(e.details.issues[0].keyword, "maxLength");
    }),
  );
  assert.throws(() => rt2.on("nope", () => {}), code("REALTIME_CONTRACT_VIOLATION"));
  assert.deepEqual(Object.keys(await rt2.request("say", [{ text: "ok" }])), ["n"]);
  const closed = await rt2.close();
  assert.equal(closed.code, 1000);
  assert.equal(rt2.connected, false);
});

await step("a disconnect in flight rejects the request", async () => {
  const changes = [];
  rt.onConnectionChange((up) => changes.push(up));
  await assert.rejects(rt.request("say", [{ text: "hang" }]), code("REALTIME_REQUEST_DISCONNECTED", (e) => assert.equal(e.details.sent, true)));
  assert.deepEqual(changes, [false]);
  assert.equal(rt.connected, false);
});

await step("nothing is sent while disconnected", async () => {
  await assert.rejects(rt.request("say", [{ text: "hi" }]), code("REALTIME_REQUEST_DISCONNECTED", (e) => assert.equal(e.details.sent, false)));
  assert.throws(() => rt.emit("typing", false), code("REALTIME_REQUEST_DISCONNECTED"));
});

await step("a refused handshake rejects connect", async () => {
  await assert.rejects(connect(url + "-nowhere"), code("REALTIME_REQUEST_DISCONNECTED"));
});
