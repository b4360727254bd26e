import Foundation

/// Sends and closes for WebSocket connections that may live on several event loops (the
/// shards of a sharded ``HTTPServer``), collected by one thread and carried out together:
/// ``submit()`` hands each loop ONE job with that loop's part, in order.
///
/// Why: a ``WebSocketConnection/send(text:)`` from off the connection's loop costs one
/// `loop.execute` per frame (a closure allocation, the loop's lock and possibly a wake-up of
/// the loop's thread, which may then drain the queue between two frames and need another
/// wake-up). The signaling hub sends ~25 frames per call setup from its own thread to
/// connections on the shard threads, so that was ≈33 µs of shard CPU per frame
/// (docs/benchmarks.md, "Batched sends to shards"). A batch costs one job per loop, and on
/// the loop the job runs inside ``EventLoop/coalescingWebSocketWrites(_:)`` (each
/// connection context re-registered with epoll once) with the connections that get at
/// least ``corkingMinimum`` frames corked (``WebSocketConnection/setCorked(_:)``) while
/// their frames are written, so that they leave in one TCP segment. Neither works from the
/// collecting thread: there the sends only queue.
///
/// Guarantees: per connection the operations run in the order they were added, and after
/// every send or close made to it (from any thread) before ``submit()``: a loop's job is
/// queued behind the loop's earlier `execute` blocks. Nothing is written before `submit()`;
/// the part for the submitting thread's own loop runs inline in `submit()`, the others
/// right after on their loops. The bytes are those of the single calls.
///
/// Not thread-safe: one thread builds and submits a batch.
public struct WebSocketSendBatch {
    enum Operation {
        /// A text frame's payload as UTF-8 bytes (``WebSocketConnection/send(utf8:)``).
        case utf8([UInt8])
        case close(UInt16, String)
    }

    struct Entry {
        let connection: WebSocketConnection
        let operation: Operation
    }

    /// One loop's part of the batch.
    struct Part {
        let loop: EventLoop
        var entries: [Entry]
    }

    /// 2 frames. A frame written to a loopback or LAN TCP socket normally leaves as its own
    /// segment; in a signaling batch a device often gets several (its own results and the
    /// peer's relayed candidates arrive together). A segment's transmit and loopback receive
    /// (`__tcp_push_pending_frames`) cost ~10 µs of server CPU per frame (docs/benchmarks.md,
    /// "Hub CPU per setup": 7.5 % of 3.3 ms over ~25 frames), a `setsockopt` about 1 µs, so
    /// corking pays from two frames on, and a single frame has nothing to share its segment
    /// with.
    public static let defaultCorkingMinimum = 2

    /// Connections with at least this many sends in one loop's part are corked while it runs.
    public let corkingMinimum: Int
    /// Parts in order of their loop's first use; a server has a handful of shards, so a
    /// linear search beats hashing.
    private(set) var parts: [Part] = []

    /// Called on each loop once its part was written, with the µs from ``submit()`` until
    /// then (the hop to the loop, the wait behind its earlier jobs, and the writes).
    public let onPartWritten: (@Sendable (Int64) -> Void)?

    public init(corkingMinimum: Int = WebSocketSendBatch.defaultCorkingMinimum,
                onPartWritten: (@Sendable (Int64) -> Void)? = nil) {
        self.corkingMinimum = max(1, corkingMinimum)
        self.onPartWritten = onPartWritten
    }

    /// True when nothing was added since the last ``submit()``.
    public var isEmpty: Bool { parts.isEmpty }

    /// Queues a text frame for `connection` (dropped at run time if it is no longer open,
    /// as ``WebSocketConnection/send(text:)`` does).
    public mutating func send(text: String, to connection: WebSocketConnection) {
        append(Entry(connection: connection, operation: .utf8(Array(text.utf8))))
    }

    /// Queues a text frame given as its UTF-8 bytes (``WebSocketConnection/send(utf8:)``).
    public mutating func send(utf8: [UInt8], to connection: WebSocketConnection) {
        append(Entry(connection: connection, operation: .utf8(utf8)))
    }

    /// Queues the closing handshake of `connection` (``WebSocketConnection/close(code:reason:)``).
    public mutating func close(_ connection: WebSocketConnection, code: UInt16, reason: String) {
        append(Entry(connection: connection, operation: .close(code, reason)))
    }

    private mutating func append(_ entry: Entry) {
        let loop = entry.connection.loop
        for i in parts.indices where parts[i].loop === loop {
            parts[i].entries.append(entry)
            return
        }
        parts.append(Part(loop: loop, entries: [entry]))
    }

    /// Carries the batch out and empties it: inline for the calling thread's own loop, one
    /// `execute` per other loop.
    public mutating func submit() {
        let submitted = parts
        parts.removeAll()
        let minimum = corkingMinimum, written = onPartWritten
        let submittedAt = written == nil ? 0 : EventLoop.monotonicMicroseconds()
        for part in submitted {
            if part.loop.isOnLoopThread {
                Self.run(part.entries, on: part.loop, corkingMinimum: minimum)
                written?(EventLoop.monotonicMicroseconds() - submittedAt)
            } else {
                let loop = part.loop, entries = part.entries
                loop.execute {
                    Self.run(entries, on: loop, corkingMinimum: minimum)
                    written?(EventLoop.monotonicMicroseconds() - submittedAt)
                }
            }
        }
    }

    /// One loop's part, on that loop's thread.
    static func run(_ entries: [Entry], on loop: EventLoop, corkingMinimum: Int) {
        loop.coalescingWebSocketWrites {
            let corked = connectionsToCork(entries, minimum: corkingMinimum).filter { $0.setCorked(true) }
            for entry in entries {
                switch entry.operation {
                case .utf8(let bytes): entry.connection.sendOnLoop(utf8: bytes)
                case .close(let code, let reason): entry.connection.closeOnLoop(code: code, reason: reason)
                }
            }
            for connection in corked { connection.setCorked(false) }
            loop.dispatcherStorage?.recordSendBatch(corked: corked.count)
        }
    }

    /// Connections with at least `minimum` sends in `entries`, in order of their first send.
    static func connectionsToCork(_ entries: [Entry], minimum: Int) -> [WebSocketConnection] {
        guard entries.count >= minimum else { return [] }
        return itemsToCork(entries, minimum: minimum) { entry in
            switch entry.operation {
            case .utf8: return entry.connection.id
            case .close: return nil
            }
        }.map(\.connection)
    }

    /// For every key that `sendKey` returns at least `minimum` times (nil: not a send, e.g. a
    /// close), the item at which it reached `minimum`; once per key, in that order.
    static func itemsToCork<Item, Key: Hashable>(_ items: [Item], minimum: Int, sendKey: (Item) -> Key?) -> [Item] {
        var counts: [Key: Int] = [:]
        var result: [Item] = []
        for item in items {
            guard let key = sendKey(item) else { continue }
            let count = counts[key, default: 0] + 1
            counts[key] = count
            if count == minimum { result.append(item) }
        }
        return result
    }
}
