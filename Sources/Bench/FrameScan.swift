#if canImport(Glibc)
import Glibc
#endif

/// Cheap field lookup in the server's compact JSON frames, so that 10,000+ sockets cost
/// little client CPU: `memmem` for `"key":`, then the string or integer after it. Finds the
/// first occurrence, which for Switchboard frames is the top-level field: `JSONWriter` emits
/// `type`, `eventID`, `callID`, `status`, `revision` before any nested `snapshot`.
/// Not a JSON parser: values with escapes are returned raw (ours never have any).
struct FrameScan {
    let bytes: UnsafeBufferPointer<UInt8>

    /// The string value of `key` (pattern built with ``pattern(_:)``), or nil.
    func string(_ pattern: [UInt8]) -> String? {
        guard let start = valueStart(pattern), start < bytes.count, bytes[start] == UInt8(ascii: "\"") else { return nil }
        var end = start + 1
        while end < bytes.count, bytes[end] != UInt8(ascii: "\"") {
            if bytes[end] == UInt8(ascii: "\\") { end += 1 }
            end += 1
        }
        guard end < bytes.count else { return nil }
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[(start + 1) ..< end]), as: UTF8.self)
    }

    /// True when the string value of `key` equals `expected`, without allocating.
    func stringEquals(_ pattern: [UInt8], _ expected: [UInt8]) -> Bool {
        guard let start = valueStart(pattern), start + expected.count + 1 < bytes.count,
              bytes[start] == UInt8(ascii: "\"") else { return false }
        for (offset, byte) in expected.enumerated() where bytes[start + 1 + offset] != byte { return false }
        return bytes[start + 1 + expected.count] == UInt8(ascii: "\"")
    }

    /// The integer value of `key`; accepts a quoted integer (`"seq":"41"`).
    func integer(_ pattern: [UInt8]) -> Int64? {
        valueStart(pattern).flatMap { integer(at: $0) }
    }

    /// The integer (maybe quoted) that starts at byte `start`.
    private func integer(at start: Int) -> Int64? {
        var index = start
        if index < bytes.count, bytes[index] == UInt8(ascii: "\"") { index += 1 }
        var value: Int64 = 0
        var digits = 0
        while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9"), digits < 18 {
            value = value * 10 + Int64(bytes[index] - UInt8(ascii: "0"))
            index += 1
            digits += 1
        }
        return digits > 0 ? value : nil
    }

    /// The `seq` of a durable event, read where the server puts it: right after the
    /// envelope's version, `{"v":1,"seq":"41",…` (Signaling's `OutboxFrame`, the only writer
    /// of `seq`). A frame that does not start so has none, and is not searched: looking for
    /// `"seq":` through a result and its snapshot, which carry none, was the benchmark's
    /// largest cost per frame after the socket calls.
    func leadingSeq() -> Int64? {
        guard bytes.starts(with: Self.seqPrefix) else { return nil }
        return integer(at: Self.seqPrefix.count)
    }

    private static let seqPrefix = Array(#"{"v":1,"seq":"#.utf8)

    /// How many times `pattern` occurs (e.g. candidates in a batched `ice.candidate`).
    func count(_ pattern: [UInt8]) -> Int {
        var n = 0
        var from = 0
        while let at = find(pattern, from: from) {
            n += 1
            from = at + pattern.count
        }
        return n
    }

    private func valueStart(_ pattern: [UInt8]) -> Int? {
        find(pattern, from: 0).map { $0 + pattern.count }
    }

    /// First occurrence of `pattern` at or after `from`: `memchr` for its first byte, the
    /// second byte compared in place, then `memcmp` (glibc's `memmem` is a GNU extension the
    /// Glibc module does not export). Every pattern starts with `"`, the commonest byte of a
    /// JSON frame: a `memcmp` call at each one was 6 % of the benchmark's CPU, most of it
    /// looking for a `seq` through results, which have none.
    private func find(_ pattern: [UInt8], from: Int) -> Int? {
        guard let base = bytes.baseAddress, let first = pattern.first else { return nil }
        // A one-byte pattern compares its first byte again (at `index`) and nothing after it.
        let second = pattern.count >= 2 ? pattern[1] : first, skip = min(2, pattern.count) - 1
        let end = bytes.count - pattern.count
        var at = from
        return pattern.withUnsafeBytes { needle -> Int? in
            while at <= end {
                guard let hit = memchr(base + at, Int32(first), end - at + 1) else { return nil }
                let index = base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
                if base[index + skip] == second, let n = needle.baseAddress,
                   memcmp(base + index + skip + 1, n + skip + 1, pattern.count - skip - 1) == 0 { return index }
                at = index + 1
            }
            return nil
        }
    }

    /// `"key":` as bytes.
    static func pattern(_ key: String) -> [UInt8] { Array("\"\(key)\":".utf8) }

    /// Runs `body` over the UTF-8 bytes of `text` (native strings are contiguous; others copy).
    static func with<T>(_ text: String, _ body: (FrameScan) -> T) -> T {
        var text = text
        return text.withUTF8 { body(FrameScan(bytes: $0)) }
    }
}

/// The patterns the benchmark looks up, built once.
enum Keys {
    static let type = FrameScan.pattern("type")
    static let eventID = FrameScan.pattern("eventID")
    static let callID = FrameScan.pattern("callID")
    static let status = FrameScan.pattern("status")
    static let code = FrameScan.pattern("code")
    static let message = FrameScan.pattern("message")
    static let commandsPerSecond = FrameScan.pattern("commandsPerSecond")
    static let revision = FrameScan.pattern("revision")
    static let seq = FrameScan.pattern("seq")
    static let candidate = FrameScan.pattern("candidate")
}
