import { isMainThread, parentPort, Worker } from "node:worker_threads";
import { transferables, type ColumnBatch } from "./columns.ts";
import { ParquetRowGroups, type ByteSink, type ColumnSpec } from "./parquet.ts";

/**
 * Parquet files encoded on a thread of their own. An extract's work is reading the rows and
 * encoding them, both JavaScript: on one thread the reading (and the database's sending)
 * waited for each row group's encoding. Here the extract's thread reads and converts the next
 * batch while this thread encodes the last one (dictionaries, levels, statistics, Snappy), and
 * the bytes come back to be written where the file goes. A batch crosses column by column
 * (`ColumnBatch`), its typed arrays transferred rather than copied.
 *
 * One thread for the process, shared by every file being written (each has an id); it keeps
 * the process alive only while a file is open.
 */

type Request =
  | {
      readonly kind: "open";
      readonly id: number;
      readonly columns: readonly ColumnSpec[];
      readonly metadata: Readonly<Record<string, string>>;
    }
  | {
      readonly kind: "write";
      readonly id: number;
      readonly batch: ColumnBatch;
    }
  | { readonly kind: "finish" | "sunk" | "abort"; readonly id: number };

type Reply =
  | { readonly kind: "bytes"; readonly id: number; readonly bytes: Uint8Array }
  | { readonly kind: "done"; readonly id: number }
  | { readonly kind: "failed"; readonly id: number; readonly message: string };

// ---------------------------------------------------------------- the encoding thread

if (!isMainThread && parentPort) {
  const port = parentPort;
  const files = new Map<
    number,
    { file: ParquetRowGroups; chain: Promise<void>; sunk?: (() => void) | undefined }
  >();
  port.on("message", (request: Request) => {
    const { id } = request;
    if (request.kind === "open") {
      const entry: { file?: ParquetRowGroups; chain: Promise<void>; sunk?: () => void } = {
        chain: Promise.resolve(),
      };
      // The bytes of a row group go back, and the next is encoded once they are taken.
      const sink: ByteSink = (bytes) =>
        new Promise<void>((resolve) => {
          entry.sunk = resolve;
          port.postMessage({ kind: "bytes", id, bytes } satisfies Reply, [
            bytes.buffer as ArrayBuffer,
          ]);
        });
      entry.file = new ParquetRowGroups(request.columns, sink, request.metadata);
      files.set(id, entry as { file: ParquetRowGroups; chain: Promise<void> });
      return;
    }
    const entry = files.get(id);
    if (!entry) return;
    if (request.kind === "sunk") {
      const sunk = entry.sunk;
      entry.sunk = undefined;
      sunk?.();
      return;
    }
    if (request.kind === "abort") {
      files.delete(id);
      return;
    }
    // In order, each after the last; a failure fails every request after it too.
    const result = entry.chain.then(() =>
      request.kind === "write" ? entry.file.writeColumns(request.batch) : entry.file.finish(),
    );
    entry.chain = result;
    result.then(
      () => {
        if (request.kind === "finish") files.delete(id);
        port.postMessage({ kind: "done", id } satisfies Reply);
      },
      (error: unknown) => {
        const message = error instanceof Error ? error.message : String(error);
        port.postMessage({ kind: "failed", id, message } satisfies Reply);
      },
    );
  });
}

// ---------------------------------------------------------------- the extract's side

interface OpenFile {
  /** The requests waiting for their answer, oldest first. */
  readonly waiting: { resolve: () => void; reject: (error: Error) => void }[];
  readonly sink: ByteSink;
}

let thread:
  { readonly worker: Worker; readonly files: Map<number, OpenFile>; next: number } | undefined;

/** The encoding thread, started on first use; a thread that failed is replaced. */
function encodingThread(): NonNullable<typeof thread> {
  if (thread) return thread;
  const worker = new Worker(new URL(import.meta.url));
  const started = { worker, files: new Map<number, OpenFile>(), next: 1 };
  worker.unref();
  const failAll = (error: Error) => {
    if (thread === started) thread = undefined;
    for (const file of started.files.values()) {
      for (const waiting of file.waiting.splice(0)) waiting.reject(error);
    }
    started.files.clear();
  };
  worker.on("message", (reply: Reply) => {
    const file = started.files.get(reply.id);
    if (!file) return;
    if (reply.kind === "bytes") {
      file.sink(reply.bytes).then(
        () => worker.postMessage({ kind: "sunk", id: reply.id } satisfies Request),
        (error: unknown) => {
          // The file's next request answers with this error.
          const failure = error instanceof Error ? error : new Error(String(error));
          for (const waiting of file.waiting.splice(0)) waiting.reject(failure);
          worker.postMessage({ kind: "abort", id: reply.id } satisfies Request);
        },
      );
      return;
    }
    const waiting = file.waiting.shift();
    if (reply.kind === "done") waiting?.resolve();
    else waiting?.reject(new Error(reply.message));
  });
  worker.on("error", failAll);
  worker.on("exit", (code) => failAll(new Error(`the Parquet encoding thread stopped (${code})`)));
  thread = started;
  return started;
}

/**
 * A Parquet file written row group by row group, encoded on the encoding thread: as
 * `ParquetRowGroups`, but `write` returns once the batch before is encoded, so that the
 * caller reads the next batch while this one is encoded (two batches at most in hand).
 * `abort` gives up a file that will not be finished.
 */
export class ThreadedRowGroups {
  readonly #thread: NonNullable<typeof thread>;
  readonly #id: number;
  #rows = 0;
  #encoding: Promise<void> | undefined;
  #open = true;

  constructor(
    columns: readonly ColumnSpec[],
    sink: ByteSink,
    metadata: Readonly<Record<string, string>> = {},
  ) {
    this.#thread = encodingThread();
    this.#id = this.#thread.next++;
    this.#thread.files.set(this.#id, { waiting: [], sink });
    if (this.#thread.files.size === 1) this.#thread.worker.ref();
    this.#thread.worker.postMessage({
      kind: "open",
      id: this.#id,
      // The specs only (an attribute's column also holds how it reads, run here).
      columns: columns.map(({ name, kind, list, required }) => ({ name, kind, list, required })),
      metadata,
    } satisfies Request);
  }

  /** Rows written so far. */
  get rows(): number {
    return this.#rows;
  }

  /** Writes `batch` as one row group; its typed arrays are handed over (unusable here after). */
  async write(batch: ColumnBatch): Promise<void> {
    if (batch.rows === 0) return;
    this.#rows += batch.rows;
    const before = this.#encoding;
    this.#encoding = this.#request({ kind: "write", id: this.#id, batch }, transferables(batch));
    this.#encoding.catch(() => {}); // answered by the next write, or by finish
    await before;
  }

  async finish(): Promise<void> {
    try {
      await this.#encoding;
      await this.#request({ kind: "finish", id: this.#id });
    } finally {
      this.#close();
    }
  }

  /** Gives the file up: nothing more is encoded, nothing more is written into its sink. */
  abort(): void {
    if (!this.#open) return;
    this.#thread.worker.postMessage({ kind: "abort", id: this.#id } satisfies Request);
    this.#close();
  }

  #request(request: Request, transfer: ArrayBuffer[] = []): Promise<void> {
    const file = this.#thread.files.get(this.#id);
    if (!file) return Promise.reject(new Error("the Parquet encoding thread stopped"));
    return new Promise<void>((resolve, reject) => {
      file.waiting.push({ resolve, reject });
      this.#thread.worker.postMessage(request, transfer);
    });
  }

  #close(): void {
    if (!this.#open) return;
    this.#open = false;
    this.#thread.files.delete(this.#id);
    if (this.#thread.files.size === 0) this.#thread.worker.unref();
  }
}

/** The encoding thread's heap in use, in bytes (garbage not yet collected too); 0 without one. */
export async function encodingThreadHeap(): Promise<number> {
  return thread ? (await thread.worker.getHeapStatistics()).used_heap_size : 0;
}
