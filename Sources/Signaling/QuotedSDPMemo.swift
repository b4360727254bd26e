import Foundation

/// SDP bodies as JSON string literals (RFC 8259 §7), escaped at most once per body.
///
/// A body goes out several times: an offer in the `call.incoming` notice and in the stored
/// descriptions (``CallDescriptions``), an answer in `call.answered` and in the stored
/// descriptions. Escaping a 3 KB SDP costs ~150 escapes (a CR and LF per line); done once
/// per use it was the biggest single item of the hub's Swift CPU per setup
/// (docs/benchmarks.md, "Hub Swift CPU per command"). The memo keeps the last few bodies
/// with their literals, and the hub seeds it with the literal the device sent when that is
/// already in the writer's form (``ClientMessage/parse(_:quotedSDP:)``), so a typical body
/// is never escaped by the server at all.
///
/// Bodies are matched by their UTF-8 bytes, not by `String` equality: two canonically
/// equivalent strings with different bytes (precomposed and decomposed accents) are equal
/// as `String`s but escape to different literals.
struct QuotedSDPMemo {
    /// 4: an offer and an answer per call; a batch of commands interleaves a few calls, and
    /// a miss only costs the escape.
    static let capacity = 4

    private var entries: [(text: String, quoted: [UInt8])] = []

    init() {}

    /// The literal of `text`: ``JSONWriter/appendQuoted(_:to:)-([UInt8])`` of it.
    mutating func quoted(_ text: String) -> [UInt8] {
        if let hit = lookup(text) { return hit }
        var quoted: [UInt8] = []
        JSONWriter.appendQuoted(text, to: &quoted)
        remember(text, quoted: quoted)
        return quoted
    }

    /// Remembers `quoted` as the literal of `text`. The caller vouches that it is exactly
    /// ``JSONWriter/appendQuoted(_:to:)-([UInt8])`` of `text`.
    mutating func remember(_ text: String, quoted: [UInt8]) {
        if entries.count >= Self.capacity { entries.removeFirst() }
        entries.append((text, quoted))
    }

    private func lookup(_ text: String) -> [UInt8]? {
        for entry in entries.reversed() where Self.sameBytes(entry.text, text) { return entry.quoted }
        return nil
    }

    /// Whether `a` and `b` have the same UTF-8 bytes (a length check, then one `memcmp`
    /// over the strings' own storage).
    static func sameBytes(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        var a = a, b = b
        return a.withUTF8 { x in
            b.withUTF8 { y in
                guard let xBase = x.baseAddress, let yBase = y.baseAddress else { return x.count == y.count }
                return xBase == yBase || memcmp(xBase, yBase, x.count) == 0
            }
        }
    }
}
