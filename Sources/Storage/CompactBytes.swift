import Foundation

/// A minimal binary writer for compact stored records (Signaling's `StoredResult`, the
/// outbox log's `OutboxLogRecord`): unsigned LEB128 varints, zig-zag signed integers,
/// length-prefixed UTF-8 strings and byte strings. Not a wire format; only this build's
/// ``CompactReader`` reads it back.
///
/// Built on ``GrowableBytes``, and noncopyable with it; ``record()`` copies the record out.
/// The puts are `@inlinable`: the records are written from Signaling, one put per field.
package struct CompactWriter: ~Copyable {
    @usableFromInline var out: GrowableBytes

    /// 256: a stored result with its compact snapshot (~200 bytes) fits without growing.
    package init(capacity: Int = 256) { out = GrowableBytes(capacity: capacity) }

    @inlinable
    package mutating func byte(_ value: UInt8) { out.put(value) }

    /// LEB128 (7 bits per byte, low first).
    @inlinable
    package mutating func varint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            out.put(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        out.put(UInt8(v))
    }

    /// Zig-zag, so small negative numbers stay short.
    @inlinable
    package mutating func int(_ value: Int64) {
        varint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    @inlinable
    package mutating func optionalInt(_ value: Int64?) {
        guard let value else { return byte(0) }
        byte(1)
        int(value)
    }

    @inlinable
    package mutating func string(_ value: String) {
        // Native and small strings lend their UTF-8 without a copy; others (bridged) are
        // made contiguous first.
        let done: Void? = value.utf8.withContiguousStorageIfAvailable { utf8 in
            varint(UInt64(utf8.count))
            out.put(utf8)
        }
        if done == nil {
            var value = value
            value.withUTF8 { utf8 in
                varint(UInt64(utf8.count))
                out.put(utf8)
            }
        }
    }

    @inlinable
    package mutating func optionalString(_ value: String?) {
        guard let value else { return byte(0) }
        byte(1)
        string(value)
    }

    /// Length-prefixed bytes.
    package mutating func data(_ value: Data) {
        varint(UInt64(value.count))
        value.withUnsafeBytes { out.put($0.bindMemory(to: UInt8.self)) }
    }

    /// The record written so far, copied out (not ``data(_:)``, which writes bytes into it).
    package func record() -> Data { out.data() }
}

/// Reads what ``CompactWriter`` wrote. Every read checks the bounds and throws
/// ``CompactReader/Malformed`` instead of trapping: the bytes come from the database.
package struct CompactReader {
    package struct Malformed: Error, Equatable { package init() {} }

    private let bytes: [UInt8]
    private var offset: Int

    package init(_ data: Data, from offset: Int = 0) {
        bytes = [UInt8](data)
        self.offset = offset
    }

    package var isAtEnd: Bool { offset == bytes.count }

    package mutating func byte() throws -> UInt8 {
        guard offset < bytes.count else { throw Malformed() }
        defer { offset += 1 }
        return bytes[offset]
    }

    package mutating func varint() throws -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let b = try byte()
            guard shift < 64 else { throw Malformed() }
            value |= UInt64(b & 0x7F) << shift
            if b < 0x80 { return value }
            shift += 7
        }
    }

    package mutating func int() throws -> Int64 {
        let raw = try varint()
        return Int64(bitPattern: raw >> 1) ^ -Int64(bitPattern: raw & 1)
    }

    package mutating func optionalInt() throws -> Int64? {
        switch try byte() {
        case 0: return nil
        case 1: return try int()
        default: throw Malformed()
        }
    }

    /// A length or an item count: every byte or item takes at least one byte of what is
    /// left, so a larger value is malformed (and never becomes a huge allocation).
    package mutating func count() throws -> Int {
        let value = try varint()
        guard value <= UInt64(bytes.count - offset) else { throw Malformed() }
        return Int(value)
    }

    private mutating func slice() throws -> ArraySlice<UInt8> {
        let length = try count()
        defer { offset += length }
        return bytes[offset..<offset + length]
    }

    package mutating func string() throws -> String { String(decoding: try slice(), as: UTF8.self) }

    /// What ``CompactWriter/data(_:)`` wrote.
    package mutating func data() throws -> Data { Data(try slice()) }

    package mutating func optionalString() throws -> String? {
        switch try byte() {
        case 0: return nil
        case 1: return try string()
        default: throw Malformed()
        }
    }

    /// A `RawRepresentable` enum stored as its raw string.
    package mutating func raw<T: RawRepresentable>(_ type: T.Type) throws -> T where T.RawValue == String {
        guard let value = T(rawValue: try string()) else { throw Malformed() }
        return value
    }

    /// ``raw(_:)`` written with `optionalString`: nil, or a case this build knows.
    package mutating func optionalRaw<T: RawRepresentable>(_ type: T.Type) throws -> T? where T.RawValue == String {
        guard let text = try optionalString() else { return nil }
        guard let value = T(rawValue: text) else { throw Malformed() }
        return value
    }
}
