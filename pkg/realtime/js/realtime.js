// stitchkit realtime client: the wire protocol of docs/realtime-protocol.md
// (subprotocol stitchkit.realtime.v1) as a dependency-free ES module for
// browsers and node (node 20 needs --experimental-websocket; node 22+ has
// WebSocket built in).
//
//   import { connect } from "/realtime.js";
//   const rt = await connect("wss://example.com/realtime/board");
//   rt.on("taskChanged", (task) => render(task));
//   const ack = await rt.request("watch", [{ board: "main" }]);
//
// The server validates every frame against the contract; this client
// checks event names and acknowledgement use when given a `contract`
// descriptor, and schemas when given a `validate` function (bring your
// own JSON Schema validator). Errors are RealtimeError values carrying the
// server's registry codes.

export const SUBPROTOCOL = "stitchkit.realtime.v1";

const CLOSE_PROTOCOL_ERROR = 1002;
const CLOSE_UNSUPPORTED_DATA = 1003;
const CLOSE_INVALID_PAYLOAD = 1007;
const CLOSE_ABNORMAL = 1006; // never on the wire: the connection ended without a close frame
const MAX_ID = Number.MAX_SAFE_INTEGER;

/** An error with a stitchkit registry code and structured details. */
export class RealtimeError extends Error {
  constructor(code, message, details) {
    super(message);
    this.name = "RealtimeError";
    this.code = code;
    if (details !== undefined) this.details = details;
  }
}

/**
 * Opens a connection and resolves once the server accepted the handshake
 * and selected the protocol.
 *
 * options.WebSocket       constructor (default globalThis.WebSocket)
 * options.requestTimeout  default request timeout in ms (10000)
 * options.closeTimeout    how long close() waits for the closing handshake, in ms
 *                         (2000, the Go server's and client's bound too)
 * options.contract        {serverToClient: {name: {ack: bool}}, clientToServer: {…}}
 * options.validate        (direction, event, kind, value) => issues array or null;
 *                         kind is "args" or "ack", direction the contract's
 */
export function connect(url, options = {}) {
  const WS = options.WebSocket ?? globalThis.WebSocket;
  if (typeof WS !== "function") {
    return Promise.reject(new Error("no WebSocket implementation (node 20: run with --experimental-websocket)"));
  }
  return new Promise((resolve, reject) => {
    const ws = new WS(url, [SUBPROTOCOL]);
    let settled = false;
    ws.addEventListener("open", () => {
      if (ws.protocol !== SUBPROTOCOL) {
        settled = true;
        ws.close(CLOSE_PROTOCOL_ERROR, "no subprotocol");
        reject(new Error(`the server did not select the subprotocol ${SUBPROTOCOL} (got "${ws.protocol}")`));
        return;
      }
      settled = true;
      resolve(new RealtimeClient(ws, options));
    });
    ws.addEventListener("error", () => {
      if (!settled) {
        settled = true;
        reject(new RealtimeError("REALTIME_REQUEST_DISCONNECTED", `the WebSocket handshake with ${url} failed`));
      }
    });
    ws.addEventListener("close", (ev) => {
      if (!settled) {
        settled = true;
        reject(new RealtimeError("REALTIME_REQUEST_DISCONNECTED", `closed during the handshake (${ev.code})`));
      }
    });
  });
}

/** A connected client. Create it with connect(). */
export class RealtimeClient {
  #ws;
  #timeout;
  #closeTimeout;
  #closeTimer;
  #contract;
  #validate;
  #handlers = new Map(); // event → Set of handlers
  #pending = new Map(); // id → {event, resolve, reject, timer}
  #nextId = 0;
  #changeSubs = new Set();
  #rejectSubs = new Set();
  #connected = true;
  #closed;
  #resolveClosed;

  constructor(ws, options = {}) {
    this.#ws = ws;
    this.#timeout = options.requestTimeout ?? 10000;
    this.#closeTimeout = options.closeTimeout ?? 2000;
    this.#contract = options.contract;
    this.#validate = options.validate;
    this.#closed = new Promise((r) => (this.#resolveClosed = r));
    /** {code, reason} once the connection has closed. */
    this.closeEvent = undefined;
    ws.addEventListener("message", (ev) => this.#onMessage(ev.data));
    ws.addEventListener("close", (ev) => this.#onClose(ev));
  }

  /** Whether the connection is open now (not closed, and close() not called). */
  get connected() {
    return this.#connected && this.#closeTimer === undefined;
  }

  /** Resolves with {code, reason} when the connection has closed. */
  get closed() {
    return this.#closed;
  }

  /**
   * Subscribes to a serverToClient event. The handler receives the
   * arguments; when the server asked for an acknowledgement, its return
   * value (or promise) is the ack, and a thrown RealtimeError with a code
   * refuses the event. Returns a function that removes this handler.
   */
  on(event, handler) {
    this.#check("serverToClient", event, undefined);
    let set = this.#handlers.get(event);
    if (!set) this.#handlers.set(event, (set = new Set()));
    set.add(handler);
    return () => set.delete(handler);
  }

  /** Sends a clientToServer event that takes no acknowledgement. */
  emit(event, ...args) {
    this.#check("clientToServer", event, false);
    this.#checkValue("clientToServer", event, "args", args);
    if (!this.connected) {
      throw new RealtimeError("REALTIME_REQUEST_DISCONNECTED", `not connected: "${event}" was not sent`, { event, sent: false });
    }
    this.#send({ type: "event", event, args });
  }

  /**
   * Sends a clientToServer event and resolves with its acknowledgement.
   * Rejects with REALTIME_REQUEST_TIMEOUT, REALTIME_REQUEST_DISCONNECTED,
   * REALTIME_REQUEST_REJECTED (details: the server's rejection envelope),
   * REALTIME_REQUEST_INVALID_ACKNOWLEDGEMENT (only with a validate
   * function) or REALTIME_CONTRACT_VIOLATION (a local mistake; nothing is
   * sent). Settles exactly once; a late answer is ignored.
   */
  request(event, args = [], { timeout = this.#timeout } = {}) {
    try {
      this.#check("clientToServer", event, true);
      this.#checkValue("clientToServer", event, "args", args);
    } catch (err) {
      return Promise.reject(err);
    }
    if (!this.connected) {
      return Promise.reject(
        new RealtimeError("REALTIME_REQUEST_DISCONNECTED", `not connected: "${event}" was not sent`, { event, sent: false }),
      );
    }
    this.#nextId = this.#nextId >= MAX_ID ? 1 : this.#nextId + 1;
    const id = this.#nextId;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        if (this.#pending.delete(id)) {
          reject(new RealtimeError("REALTIME_REQUEST_TIMEOUT", `no acknowledgement of "${event}" within ${timeout} ms`, { event, timeoutMs: timeout }));
        }
      }, timeout);
      this.#pending.set(id, { event, resolve, reject, timer });
      this.#send({ type: "event", id, event, args });
    });
  }

  /** Calls fn(connected) on every change of connection state. */
  onConnectionChange(fn) {
    this.#changeSubs.add(fn);
    return () => this.#changeSubs.delete(fn);
  }

  /**
   * Calls fn with every rejection this side reports:
   * {event, direction, phase, reason, fault, issues?, peer?}.
   */
  onRejected(fn) {
    this.#rejectSubs.add(fn);
    return () => this.#rejectSubs.delete(fn);
  }

  /**
   * Closes the connection and resolves with {code, reason} when it has
   * closed: when the server has answered the closing handshake, or after
   * closeTimeout ms without an answer (a server whose reader is stalled, a
   * network path that went silent). Then it resolves with code 1006, stops
   * delivering events and fails pending requests; the WebSocket API gives a
   * page no way to drop the socket itself, so the platform does that later
   * (browsers time the handshake out; node's WebSocket waits for the server
   * to close the TCP connection, which the Go server does once it reads the
   * close frame, or by its ping check).
   */
  close(code = 1000, reason = "") {
    if (this.#connected && this.#closeTimer === undefined) {
      this.#ws.close(code, reason);
      const ms = this.#closeTimeout;
      this.#closeTimer = setTimeout(
        () => this.#onClose({ code: CLOSE_ABNORMAL, reason: `no answer to the closing handshake within ${ms} ms` }),
        ms,
      );
    }
    return this.#closed;
  }

  #send(frame) {
    this.#ws.send(JSON.stringify(frame));
  }

  #check(direction, event, wantAck) {
    if (typeof event !== "string" || event === "") {
      throw this.#violation(String(event), direction, "arguments", "unknown-event", "event names are non-empty strings");
    }
    const reg = this.#contract?.[direction];
    if (!reg) return;
    const def = Object.hasOwn(reg, event) ? reg[event] : undefined;
    const out = direction === "clientToServer" ? "client-outbound" : "client-inbound";
    if (!def) throw this.#violation(event, out, "arguments", "unknown-event", `unknown event "${event}"`);
    if (wantAck === true && !def.ack) {
      throw this.#violation(event, out, "acknowledgement", "unexpected-acknowledgement", `event "${event}" takes no acknowledgement`);
    }
    if (wantAck === false && def.ack) {
      throw this.#violation(event, out, "acknowledgement", "missing-acknowledgement", `event "${event}" requires an acknowledgement: use request()`);
    }
  }

  #checkValue(direction, event, kind, value) {
    if (!this.#validate) return;
    const issues = this.#validate(direction, event, kind, value);
    if (issues && issues.length) {
      const reason = kind === "args" ? "invalid-arguments" : "invalid-acknowledgement-value";
      const phase = kind === "args" ? "arguments" : "acknowledgement";
      throw this.#violation(event, "client-outbound", phase, reason, `invalid ${kind} for "${event}"`, issues);
    }
  }

  #violation(event, direction, phase, reason, message, issues) {
    const details = { event, direction, phase, reason, fault: "local" };
    if (issues) details.issues = issues;
    return new RealtimeError("REALTIME_CONTRACT_VIOLATION", message, details);
  }

  #report(rejection) {
    for (const fn of [...this.#rejectSubs]) {
      try {
        fn(rejection);
      } catch {
        // an observer cannot break the transport
      }
    }
  }

  #onMessage(data) {
    if (!this.#connected) return; // closed here after a timed-out handshake
    if (typeof data !== "string") {
      this.#ws.close(CLOSE_UNSUPPORTED_DATA, "frames are JSON text");
      return;
    }
    let f;
    try {
      f = JSON.parse(data);
    } catch {
      this.#ws.close(CLOSE_INVALID_PAYLOAD, "not JSON");
      return;
    }
    if (f === null || typeof f !== "object" || Array.isArray(f) || typeof f.type !== "string") {
      this.#ws.close(CLOSE_PROTOCOL_ERROR, "a frame is an object with a string type");
      return;
    }
    if (f.type !== "event" && f.type !== "ack" && f.type !== "rejection") return; // unknown types are ignored
    const hasId = Object.hasOwn(f, "id");
    if (hasId && !(Number.isSafeInteger(f.id) && f.id >= 1)) {
      this.#ws.close(CLOSE_PROTOCOL_ERROR, '"id" must be an integer from 1 to 2^53-1');
      return;
    }
    if (f.type === "event") {
      if (typeof f.event !== "string" || f.event === "") {
        this.#ws.close(CLOSE_PROTOCOL_ERROR, '"event" must be a non-empty string');
        return;
      }
      this.#inbound(f.event, f.args === undefined ? [] : f.args, hasId ? f.id : 0);
      return;
    }
    if (!hasId) {
      this.#ws.close(CLOSE_PROTOCOL_ERROR, `an ${f.type} frame needs "id"`);
      return;
    }
    if (f.type === "rejection" && (f.rejection === null || typeof f.rejection !== "object" || Array.isArray(f.rejection))) {
      this.#ws.close(CLOSE_PROTOCOL_ERROR, '"rejection" must be an object');
      return;
    }
    this.#settle(f);
  }

  #settle(f) {
    const p = this.#pending.get(f.id);
    if (!p) return; // late or unknown: ignored
    this.#pending.delete(f.id);
    clearTimeout(p.timer);
    if (f.type === "rejection") {
      const env = f.rejection;
      const phase = ["invalid-acknowledgement-value", "missing-acknowledgement", "unexpected-acknowledgement"].includes(env.reason)
        ? "acknowledgement"
        : "arguments";
      this.#report({ event: p.event, direction: "client-inbound", phase, reason: "rejected-by-peer", fault: "local", issues: env.issues, peer: env });
      p.reject(new RealtimeError("REALTIME_REQUEST_REJECTED", `the peer rejected "${p.event}" (${env.code ?? env.reason})`, env));
      return;
    }
    const present = Object.hasOwn(f, "ack");
    const issues = !present
      ? [{ path: "", keyword: "required", message: 'the ack frame has no "ack" value' }]
      : this.#validate?.("clientToServer", p.event, "ack", f.ack);
    if (issues && issues.length) {
      this.#report({ event: p.event, direction: "client-inbound", phase: "acknowledgement", reason: "invalid-acknowledgement-value", fault: "peer", issues });
      p.reject(new RealtimeError("REALTIME_REQUEST_INVALID_ACKNOWLEDGEMENT", `the acknowledgement of "${p.event}" does not match its schema`, { event: p.event, issues }));
      return;
    }
    p.resolve(f.ack);
  }

  #inbound(event, args, id) {
    const answer = (frame) => {
      if (id && this.#connected) this.#send({ id, ...frame });
    };
    const reject = (phase, reason, message, issues) => {
      const r = { event, direction: "client-inbound", phase, reason, fault: "peer" };
      if (issues) r.issues = issues;
      this.#report(r);
      const rejection = { event, reason, message };
      if (issues) rejection.issues = issues.slice(0, 20);
      answer({ type: "rejection", rejection });
    };
    const reg = this.#contract?.serverToClient;
    const def = reg ? (Object.hasOwn(reg, event) ? reg[event] : undefined) : { ack: id !== 0 };
    if (!def) return reject("arguments", "unknown-event", `unknown event "${event}"`);
    if (def.ack && !id) return reject("acknowledgement", "missing-acknowledgement", `event "${event}" requires an acknowledgement id`);
    if (!def.ack && id) return reject("acknowledgement", "unexpected-acknowledgement", `event "${event}" takes no acknowledgement`);
    if (!Array.isArray(args)) return reject("arguments", "invalid-arguments", `invalid arguments for "${event}"`, [{ path: "", keyword: "type", message: "the arguments must be an array" }]);
    const issues = this.#validate?.("serverToClient", event, "args", args);
    if (issues && issues.length) return reject("arguments", "invalid-arguments", `invalid arguments for "${event}"`, issues);
    const handlers = [...(this.#handlers.get(event) ?? [])];
    if (!id) {
      for (const h of handlers) {
        try {
          h(...args);
        } catch {
          // a handler's failure stays local when no answer is due
        }
      }
      return;
    }
    if (handlers.length === 0) {
      return answer({ type: "rejection", rejection: { event, reason: "refused", code: "NOT_IMPLEMENTED", message: `no handler for "${event}"` } });
    }
    Promise.resolve()
      .then(() => handlers[0](...args))
      .then(
        (ack) => {
          const bad = this.#validate?.("serverToClient", event, "ack", ack);
          if (bad && bad.length) {
            this.#report({ event, direction: "client-outbound", phase: "acknowledgement", reason: "invalid-acknowledgement-value", fault: "local", issues: bad });
            answer({ type: "rejection", rejection: { event, reason: "invalid-acknowledgement-value", message: "the receiver failed to produce a valid answer" } });
            return;
          }
          answer({ type: "ack", ack: ack === undefined ? null : ack });
        },
        (err) => {
          const code = err instanceof RealtimeError && typeof err.code === "string" ? err.code : "INTERNAL_SERVER_ERROR";
          const message = code === "INTERNAL_SERVER_ERROR" ? "Internal server error" : err.message;
          answer({ type: "rejection", rejection: { event, reason: "refused", code, message } });
        },
      );
  }

  #onClose(ev) {
    if (this.closeEvent !== undefined) return; // the handshake timed out first
    clearTimeout(this.#closeTimer);
    const wasConnected = this.#connected;
    this.#connected = false;
    this.closeEvent = { code: ev.code, reason: ev.reason };
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const p of pending) {
      clearTimeout(p.timer);
      p.reject(new RealtimeError("REALTIME_REQUEST_DISCONNECTED", `disconnected while awaiting the acknowledgement of "${p.event}"`, { event: p.event, sent: true }));
    }
    if (wasConnected) {
      for (const fn of [...this.#changeSubs]) {
        try {
          fn(false);
        } catch {
          // an observer cannot break the transport
        }
      }
    }
    this.#resolveClosed(this.closeEvent);
  }
}
