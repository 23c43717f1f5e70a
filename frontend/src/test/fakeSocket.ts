import type { SocketLike } from '../live/connection';

/** A WebSocket stand-in for the live connection: the test opens, feeds and drops it. */
export class FakeSocket implements SocketLike {
  static all: FakeSocket[] = [];
  readyState = 0;
  onopen: ((event: unknown) => void) | null = null;
  onclose: ((event: { code: number; reason: string }) => void) | null = null;
  onmessage: ((event: { data: unknown }) => void) | null = null;
  onerror: ((event: unknown) => void) | null = null;
  /** What the client sent, parsed. */
  sent: unknown[] = [];
  /** The code the client closed it with (null while it did not). */
  closedWith: number | null = null;

  constructor(readonly url: string) {
    FakeSocket.all.push(this);
  }
  send(data: string) {
    this.sent.push(JSON.parse(data));
  }
  close(code = 1000) {
    this.closedWith = code;
    this.readyState = 3;
  }
  // server side
  open() {
    this.readyState = 1;
    this.onopen?.({});
  }
  /** A frame from the server (a `ServerMessage`, or anything a test wants to send). */
  receive(message: unknown) {
    this.onmessage?.({ data: JSON.stringify(message) });
  }
  drop(code: number, reason = '') {
    this.readyState = 3;
    this.onclose?.({ code, reason });
  }
}

/** The socket opened last. */
export const latestSocket = (): FakeSocket => FakeSocket.all[FakeSocket.all.length - 1]!;
