/// One outgoing text frame's payload as UTF-8 bytes (RFC 6455 §5.6: a text frame carries
/// UTF-8), as the hub's writers build it and as libsoup takes it.
///
/// Why not a `String`: every frame was written as bytes (``JSONWriter``, the outbox splice),
/// turned into a `String` (a copy and a UTF-8 validation), then copied back out into a
/// `GBytes` for libsoup, which validates and copies it once more into the frame it writes.
/// Bytes go from the writer to libsoup as they are (docs/benchmarks.md, "Escape once, send
/// bytes").
///
/// Equal when the bytes are equal. ``text`` decodes them for tests and logs.
public struct WireText: Equatable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The payload: valid UTF-8.
    public let bytes: [UInt8]

    /// The UTF-8 of `text`.
    public init(_ text: String) {
        bytes = Array(text.utf8)
    }

    public init(stringLiteral value: String) {
        self.init(value)
    }

    /// Bytes the hub's writers made from Swift strings and ASCII, valid UTF-8 by
    /// construction (libsoup checks again before sending).
    init(utf8 bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// The payload as a `String`.
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    public var description: String { text }
}
