import Foundation

/// A minimal binary writer for compact stored records (``StoredResult``): unsigned LEB128
/// varints, zig-zag signed integers, length-prefixed UTF-8 strings. Not a wire format; only
/// this build's ``CompactReader`` reads it back.
struct CompactWriter {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int = 128) { bytes.reserveCapacity(capacity) }

    mutating func byte(_ value: UInt8) { bytes.append(value) }

    /// LEB128 (7 bits per byte, low first).
    mutating func varint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    /// Zig-zag, so small negative numbers stay short.
    mutating func int(_ value: Int64) {
        varint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    mutating func optionalInt(_ value: Int64?) {
        guard let value else { return byte(0) }
        byte(1)
        int(value)
    }

    mutating func string(_ value: String) {
        var value = value
        value.withUTF8 { utf8 in
            varint(UInt64(utf8.count))
            bytes.append(contentsOf: utf8)
        }
    }

    mutating func optionalString(_ value: String?) {
        guard let value else { return byte(0) }
        byte(1)
        string(value)
    }
}

/// Reads what ``CompactWriter`` wrote. Every read checks the bounds and throws
/// ``CompactReader/Malformed`` instead of trapping: the bytes come from the database.
struct CompactReader {
    struct Malformed: Error, Equatable {}

    private let bytes: [UInt8]
    private var offset: Int

    init(_ data: Data, from offset: Int = 0) {
        bytes = [UInt8](data)
        self.offset = offset
    }

    var isAtEnd: Bool { offset == bytes.count }

    mutating func byte() throws -> UInt8 {
        guard offset < bytes.count else { throw Malformed() }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func varint() throws -> UInt64 {
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

    mutating func int() throws -> Int64 {
        let raw = try varint()
        return Int64(bitPattern: raw >> 1) ^ -Int64(bitPattern: raw & 1)
    }

    mutating func optionalInt() throws -> Int64? {
        switch try byte() {
        case 0: return nil
        case 1: return try int()
        default: throw Malformed()
        }
    }

    mutating func string() throws -> String {
        let count = try varint()
        guard count <= UInt64(bytes.count - offset) else { throw Malformed() }
        let end = offset + Int(count)
        defer { offset = end }
        return String(decoding: bytes[offset..<end], as: UTF8.self)
    }

    mutating func optionalString() throws -> String? {
        switch try byte() {
        case 0: return nil
        case 1: return try string()
        default: throw Malformed()
        }
    }

    /// A `RawRepresentable` enum stored as its raw string.
    mutating func raw<T: RawRepresentable>(_ type: T.Type) throws -> T where T.RawValue == String {
        guard let value = T(rawValue: try string()) else { throw Malformed() }
        return value
    }
}
