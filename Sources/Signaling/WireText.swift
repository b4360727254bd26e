/// One outgoing text frame's payload as UTF-8 bytes (RFC 6455 §5.6: a text frame carries
/// UTF-8), as the hub's writers build it and as libsoup takes it.
///
/// Why not a `String`: every frame was written as bytes (``JSONWriter``, the outbox splice),
/// turned into a `String` (a copy and a UTF-8 validation), then copied back out into a
/// `GBytes` for libsoup, which validates and copies it once more into the frame it writes.
/// Bytes go from the writer to libsoup as they are (docs/benchmarks.md, "Escape once, send
/// bytes").
///
/// A frame may also be *deferred* (``deferred(_:)``): its bytes are made by a pure function
/// of values the hub captured, wherever they are first needed. The server hands that
/// function to the shard thread that writes the frame, so the hub's thread, the one every
/// frame waits for, does not spend its time there (docs/benchmarks.md, "Results rendered
/// where they are written").
///
/// Equal when the bytes are equal. ``text`` decodes them for tests and logs.
public struct WireText: Equatable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    private enum Storage: Sendable {
        case bytes([UInt8])
        case deferred(@Sendable () -> [UInt8])
    }

    private let storage: Storage

    /// The payload: valid UTF-8. For a deferred frame, made now (on the calling thread).
    public var bytes: [UInt8] {
        switch storage {
        case .bytes(let bytes): return bytes
        case .deferred(let render): return render()
        }
    }

    /// The function that makes a deferred frame's bytes, to run on the thread that writes
    /// it; nil for a frame that holds its bytes.
    public var renderer: (@Sendable () -> [UInt8])? {
        if case .deferred(let render) = storage { return render }
        return nil
    }

    /// The UTF-8 of `text`.
    public init(_ text: String) {
        storage = .bytes(Array(text.utf8))
    }

    public init(stringLiteral value: String) {
        self.init(value)
    }

    /// Bytes the hub's writers made from Swift strings and ASCII, valid UTF-8 by
    /// construction (libsoup checks again before sending).
    init(utf8 bytes: [UInt8]) {
        storage = .bytes(bytes)
    }

    /// A frame whose bytes `render` makes when they are needed, on whichever thread needs
    /// them: it must be a pure function of what it captured (values, no shared mutable
    /// state) and return valid UTF-8, the same bytes every time.
    static func deferred(_ render: @escaping @Sendable () -> [UInt8]) -> WireText {
        WireText(storage: .deferred(render))
    }

    private init(storage: Storage) {
        self.storage = storage
    }

    /// The payload as a `String`.
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    public var description: String { text }

    public static func == (lhs: WireText, rhs: WireText) -> Bool {
        lhs.bytes == rhs.bytes
    }
}
