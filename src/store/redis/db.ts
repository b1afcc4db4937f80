// The Redis driver's core, on ioredis: the connection (opened by connection.ts: one server, a
// Sentinel set or a Cluster), the mapping of every failure onto StoreUnavailable, the Lua
// scripts, and the change feed.
//
// Keys: every key starts with the configured prefix. Keys that one script touches share a hash
// tag, so every script runs on Redis Cluster: `{c}` for the catalog (developers, apps,
// credentials, sessions, mailed links: small, written rarely, read through the token cache),
// `{t}` for throttled accounts, one family's tokens in one hash, an app's usage under the tag of
// its id and the hours' index of usage under `{uh}`; a counter is one key, and so are a spent
// single-use id (`once:`) and an idempotency key (`idempotency:`).
//
// The change feed: a change is published on the prefix's `changes` channel by the script that
// commits it (so none is committed unannounced, even one applied after its caller gave up) and
// heard by every instance, this one included, from its subscription; this one is also told at
// once. While that subscription is down, changes may be missed: catchUp reports `everything` on
// each call, so the token cache trusts nothing it remembers until the subscription is back. A
// subscription can also be dead without its connection closing (a network partition, a
// half-open connection): every BEAT_MS each instance sends a heartbeat through its
// subscription's connection, and trusts it only while they come back: a PING, answered after
// every message published before it; on a Cluster, whose subscription has a connection of its
// own, a message published on a channel only this instance hears.
import { createHash, randomUUID } from 'node:crypto';
import { Cluster, type Redis, ReplyError } from 'ioredis';
import { StoreUnavailable, type Change, type ChangeFeed } from '../port/index.ts';
import { redisAdvice } from './advice.ts';
import { connect } from './connection.ts';
import type { RedisOptions, RedisSettings } from './settings.ts';

export type { RedisSettings } from './settings.ts';

export interface RedisDbOptions extends RedisSettings {
  /** Hears of connection losses and recoveries. */
  warn?: (message: string) => void;
}

type Client = Redis | Cluster;
type Listener = (change: Change) => void;
/** A command run() waits for: when it was issued (performance.now() ms), and how to fail its caller. */
interface Waiting {
  at: number;
  reject: (err: Error) => void;
  done: boolean;
}

/** One script: its keys, then its arguments; resolves to what the script returns. */
export type Script = (keys: readonly string[], args: readonly (string | number)[]) => Promise<unknown>;

/** How often each instance sends its heartbeat, and retries the changes it could not publish. */
const BEAT_MS = 500;
/** The message of a command that timed out. */
const TIMED_OUT = 'Command timed out';
/** Changes waiting to be published again, at most; beyond, they become one `everything`. */
const UNSENT_MAX = 100;

export class RedisDb implements ChangeFeed {
  readonly client: Client;
  /** A Redis Cluster: a script's keys must then share a hash slot. */
  readonly cluster: boolean;
  readonly #subscriber: Client;
  readonly #channel: string;
  /** Tells this instance's own messages from others'. */
  readonly #instance = randomUUID();
  /** A Cluster's heartbeats, which only this instance hears. */
  readonly #beatChannel: string;
  /** How long the subscription is trusted without a heartbeat answered (performance.now() ms). */
  readonly #staleMs: number;
  /** When the subscription's connection last answered a heartbeat (or confirmed the subscription). */
  #heardAt = -Infinity;
  readonly #beat: NodeJS.Timeout;
  /** Changes whose publication failed, published again with the next heartbeat. */
  #unsent: Change[] = [];
  readonly #timeoutMs: number;
  /** Set when a command timed out, cleared by the next answer: meanwhile run() fails at once. */
  #stalled = false;
  readonly #answered = () => {
    this.#stalled = false;
  };
  readonly #heartbeatAnswered = () => {
    this.#heardAt = performance.now();
  };
  readonly #listeners: Listener[] = [];
  readonly #warn: (message: string) => void;
  /** Whether the subscription is known to be up: changes from other instances are heard. */
  #live = false;
  #closed = false;
  #advice: readonly string[] = [];
  /** Why the connection is down, while it is: a command that fails meanwhile says this, not "max retries". */
  #down: string | undefined;
  /** Commands not yet answered, and who waits for there to be none (close). */
  #pending = 0;
  #idle: (() => void) | undefined;

  constructor(options: RedisDbOptions) {
    this.#warn = options.warn ?? (() => {});
    this.#channel = `${options.keyPrefix}changes`;
    this.#beatChannel = `${options.keyPrefix}heartbeat:${this.#instance}`;
    // A heartbeat is sent every BEAT_MS and may take up to the command timeout: two missed in a
    // row, and the subscription is no longer trusted.
    this.#staleMs = 2 * BEAT_MS + options.timeoutMs;
    this.#timeoutMs = options.timeoutMs;
    const common: RedisOptions = {
      keyPrefix: options.keyPrefix,
      enableAutoPipelining: true,
      // A command issued while the connection is down fails at the next failed attempt to
      // reconnect (or its timeout) rather than waiting for Redis to come back.
      maxRetriesPerRequest: 0,
      connectTimeout: Math.max(options.timeoutMs, 1000),
      retryStrategy: (times) => Math.min(50 * times, 1000),
      lazyConnect: false,
    };
    this.client = connect(options.connection, common);
    this.cluster = this.client instanceof Cluster;
    // The subscriber waits as long as it must: it is not on any request's path.
    this.#subscriber = connect(options.connection, { ...common, keyPrefix: undefined, autoResubscribe: false });

    let reported = false;
    this.client.on('error', (err: Error) => {
      this.#down = err.message;
      if (reported || this.#closed) return;
      reported = true;
      this.#warn(`the Redis store is unreachable (${err.message}); calls that need it are answered 503 until it is back`);
    });
    this.client.on('ready', () => {
      this.#down = undefined;
      if (reported) this.#warn('the Redis store is reachable again');
      reported = false;
      void this.#advise();
    });
    this.#subscriber.on('error', () => {});
    this.#subscriber.on('close', () => {
      this.#live = false;
    });
    this.#subscriber.on('ready', () => void this.#subscribe());
    this.#subscriber.on('message', (channel: string, message: string) => {
      if (channel === this.#channel) this.#heard(message);
      else if (channel === this.#beatChannel) this.#heartbeatAnswered();
    });
    this.#beat = setInterval(() => this.#heartbeat(), BEAT_MS);
    this.#beat.unref();
  }

  /** Asks what an operator should change in this Redis (advice.ts), warns of each, and keeps them for readiness. */
  async #advise(): Promise<void> {
    const found = await redisAdvice(this.client);
    if (this.#closed) return;
    this.#advice = found;
    for (const warning of found) this.#warn(warning);
  }

  /** What an operator should change in this Redis, as last found when it connected. */
  advice(): readonly string[] {
    return this.#advice;
  }

  /** Whether the subscription is up and known to deliver: its connection answers the heartbeats. */
  #trusted(): boolean {
    return this.#live && performance.now() - this.#heardAt <= this.#staleMs;
  }

  #heartbeat(): void {
    if (this.#closed) return;
    for (const change of this.#unsent.splice(0)) this.#publish(change, false);
    // Never through the command connection: there a write would wait, and hold back the commands
    // behind it, while Redis holds writes back (CLIENT PAUSE WRITE, as a failover does).
    if (this.#live) {
      const beat = this.#subscriber instanceof Cluster ? this.#subscriber.publish(this.#beatChannel, '1') : this.#subscriber.ping().then(this.#heartbeatAnswered);
      beat.catch(() => {});
    }
    // After a command timed out, a PING answered (behind whatever stalled) shows Redis answers again.
    if (this.#stalled) this.client.ping().then(this.#answered, () => {});
    // A subscription that has not delivered for long is dead without knowing it (a half-open
    // connection): a new one, once subscribed, tells `everything` and is trusted again.
    if (this.#live && performance.now() - this.#heardAt > 4 * this.#staleMs) {
      this.#warn('the subscription to the Redis changes channel delivers nothing: reconnecting it');
      this.#live = false;
      this.#heardAt = performance.now();
      this.#subscriber.disconnect(true);
    }
  }

  /** Publishes the change; one that fails is published again with the next heartbeat. `echo`: this instance hears it too. */
  #publish(change: Change, echo: boolean): void {
    const message = JSON.stringify({ from: this.#instance, change, ...(echo && { echo }) });
    this.client.publish(this.#channel, message).catch(() => {
      if (this.#closed) return;
      this.#unsent.push(change);
      if (this.#unsent.length > UNSENT_MAX) this.#unsent = [{ kind: 'everything' }];
    });
  }

  /** Subscribes (again): only once Redis confirms is the feed live, and everything remembered before is dropped. */
  async #subscribe(): Promise<void> {
    try {
      await (this.#subscriber instanceof Cluster ? this.#subscriber.subscribe(this.#channel, this.#beatChannel) : this.#subscriber.subscribe(this.#channel));
    } catch {
      return; // the connection dropped again; its next 'ready' tries again
    }
    this.#live = true;
    this.#heardAt = performance.now();
    this.#tell({ kind: 'everything' });
  }

  #heard(message: string): void {
    let parsed: { from?: unknown; change?: Change; echo?: boolean };
    try {
      parsed = JSON.parse(message) as typeof parsed;
    } catch {
      return;
    }
    if ((parsed.from === this.#instance && parsed.echo !== true) || parsed.change === undefined) return;
    this.#tell(parsed.change);
  }

  #tell(change: Change): void {
    for (const listener of this.#listeners) listener(change);
  }

  listen(listener: Listener): void {
    this.#listeners.push(listener);
  }

  catchUp(): void {
    if (!this.#trusted()) this.#tell({ kind: 'everything' });
  }

  /**
   * A change made through this process: its listeners hear it now, the other instances through
   * the channel. A publish that fails is tried again with the next heartbeat.
   */
  changed(change: Change): void {
    this.#tell(change);
    this.#publish(change, false);
  }

  /**
   * Where a script that makes `change` publishes it (its ARGV): the channel, and the message. A
   * change is published by the script that commits it, so none is committed unannounced, even
   * one applied after its caller gave up waiting (a timeout answered 503); this instance hears
   * the message too, whenever it lands, and forgets what it read meanwhile.
   */
  announce(change: Change): { channel: string; message: string } {
    return { channel: this.#channel, message: JSON.stringify({ from: this.#instance, change, echo: true }) };
  }

  /** Tells this process's listeners, now, of a change a script announced (or may yet apply: it failed without an answer). */
  told(change: Change): void {
    this.#tell(change);
  }

  /**
   * Runs a command; any failure (Redis down, a timeout, an error reply) becomes StoreUnavailable.
   * Once one has timed out, and until Redis answers anything again (the heartbeat asks every
   * BEAT_MS), each fails at once: a call of several commands, or the calls queued behind it,
   * would otherwise each wait out the timeout in turn.
   */
  run<T>(command: Promise<T>): Promise<T> {
    if (this.#stalled) {
      // It is sent all the same (a write's outcome is then unknown: see unsure()), and its answer clears the stall.
      command.then(this.#answered, () => {});
      return Promise.reject(this.#failure(new Error('not answering: a command timed out, and none was answered since')));
    }
    this.#pending++;
    return new Promise<T>((resolve, reject) => {
      const waiting: Waiting = { at: performance.now(), reject, done: false };
      this.#waiting.push(waiting);
      this.#timer ??= setTimeout(this.#sweep, this.#timeoutMs);
      command.then(
        (value) => {
          this.#stalled = false;
          if (this.#settle(waiting)) resolve(value);
        },
        (err: Error) => {
          if (err instanceof ReplyError) this.#stalled = false;
          if (this.#settle(waiting)) reject(this.#failure(err));
        },
      );
    });
  }

  /** Commands not yet answered nor timed out, oldest first (Redis answers in order); `#head` is the oldest's index. */
  #waiting: Waiting[] = [];
  #head = 0;
  /** The one timer that times the oldest command out: ioredis's own timeout would start only when the command is sent. */
  #timer: NodeJS.Timeout | undefined;

  /** Marks a command answered (or timed out); false when it already was. */
  #settle(waiting: Waiting): boolean {
    if (waiting.done) return false;
    waiting.done = true;
    while (this.#head < this.#waiting.length && this.#waiting[this.#head]!.done) this.#head++;
    if (this.#head === this.#waiting.length) {
      this.#waiting = [];
      this.#head = 0;
    } else if (this.#head > 1024 && this.#head * 2 > this.#waiting.length) {
      this.#waiting = this.#waiting.slice(this.#head);
      this.#head = 0;
    }
    if (--this.#pending === 0) this.#idle?.();
    return true;
  }

  /**
   * Times out every command issued `timeoutMs` ago or more, and waits for the next oldest. Auto-
   * pipelining sends a batch only once the batch before it is answered: behind a stalled batch, a
   * command would wait out that batch's timeout, then its own; the timeout counts from the issue.
   */
  readonly #sweep = () => {
    this.#timer = undefined;
    const now = performance.now();
    // #settle moves the head past every settled command: the head is always one still waiting.
    let oldest: Waiting | undefined = this.#waiting[this.#head];
    while (oldest !== undefined && now - oldest.at >= this.#timeoutMs) {
      this.#settle(oldest);
      if (!this.#stalled) {
        this.#stalled = true;
        // Asked at once, behind whatever stalled: answered as soon as Redis answers again.
        this.client.ping().then(this.#answered, () => {});
      }
      oldest.reject(this.#failure(new Error(TIMED_OUT)));
      oldest = this.#waiting[this.#head];
    }
    if (oldest !== undefined) this.#timer = setTimeout(this.#sweep, Math.max(1, oldest.at + this.#timeoutMs - now));
  };

  #failure(err: Error): StoreUnavailable {
    const reason = this.#down === undefined ? err.message : `unreachable (${this.#down})`;
    return new StoreUnavailable(`the Redis store failed: ${reason}`, { cause: err });
  }

  /**
   * A Lua script (its keys, which get the prefix, all of one hash tag for Cluster), run by EVALSHA
   * and sent whole when Redis does not have it (first use, after a restart). Not a command defined
   * on the client: ioredis would batch one over any number of keys (auto-pipelining, on a Cluster)
   * by its first argument, the number of keys, with commands whose keys are on other nodes;
   * EVALSHA is batched by its first key.
   */
  script(lua: string): Script {
    const sha = createHash('sha1').update(lua).digest('hex');
    return (keys, args) =>
      this.run(
        this.client.evalsha(sha, keys.length, ...keys, ...args).catch((err: unknown) => {
          if (!(err instanceof ReplyError && (err as Error).message.startsWith('NOSCRIPT'))) throw err;
          return this.client.eval(lua, keys.length, ...keys, ...args);
        }),
      );
  }

  async ping(): Promise<void> {
    // The subscription counts too: without it, this instance would not hear revocations.
    if (!this.#live) throw new StoreUnavailable('the Redis store is unreachable: not subscribed to its changes');
    if (!this.#trusted()) throw new StoreUnavailable('the Redis store is unreachable: its changes channel delivers nothing');
    await this.run(this.client.ping());
  }

  /**
   * Waits until no command is pending, and none follows within the same turn of the event loop:
   * an operation of several commands (a save, a rotation) issues its next one as the last
   * resolves, and must finish rather than fail on a closed connection.
   */
  async #settled(): Promise<void> {
    for (;;) {
      if (this.#pending > 0) await new Promise<void>((resolve) => (this.#idle = resolve));
      this.#idle = undefined;
      await new Promise((resolve) => setImmediate(resolve));
      if (this.#pending === 0) return;
    }
  }

  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  #closing: Promise<void> | undefined;

  async #close(): Promise<void> {
    await this.#settled();
    clearInterval(this.#beat);
    clearTimeout(this.#timer);
    this.#closed = true;
    this.#live = false;
    await Promise.allSettled([this.client.quit(), this.#subscriber.quit()]);
    this.client.disconnect();
    this.#subscriber.disconnect();
  }
}
