import Foundation

/// The outbox entries of one step, as one `outbox_log` row's `entries` blob (schema 6).
///
/// Layout (integers are LEB128 varints, https://en.wikipedia.org/wiki/LEB128):
///
///     format (1 byte, = 1)
///     payload count P, then P × (length, bytes)        -- each distinct payload once
///     entry count E,   then E × (account length, account bytes,
///                                device length, device bytes, seq, payload index < P)
///
/// A payload that the step sends to several devices (the ~4 KB `call.incoming` to every
/// callee device) is stored once; entries refer to it by index.
struct OutboxLogRecord: Equatable {
    struct Entry: Equatable {
        var device: StoredDeviceKey
        var seq: Int64
        var payload: Int
    }

    static let format: UInt8 = 1

    var payloads: [Data]
    var entries: [Entry]

    /// Builds the record of a step: payloads deduplicated by content, in first-use order.
    /// Quadratic in the entries of one step, which are a handful (the devices of two accounts).
    init(entries: [OutboxEntry]) {
        payloads = []
        self.entries = []
        self.entries.reserveCapacity(entries.count)
        for entry in entries {
            let index = payloads.firstIndex(of: entry.payload) ?? {
                payloads.append(entry.payload)
                return payloads.count - 1
            }()
            self.entries.append(Entry(device: entry.device, seq: entry.seq, payload: index))
        }
    }

    init(payloads: [Data], entries: [Entry]) {
        self.payloads = payloads
        self.entries = entries
    }

    func encoded() -> Data {
        var bytes: [UInt8] = [Self.format]
        bytes.reserveCapacity(payloads.reduce(16) { $0 + $1.count + 3 } + entries.count * 32)
        Self.put(UInt64(payloads.count), into: &bytes)
        for payload in payloads {
            Self.put(UInt64(payload.count), into: &bytes)
            bytes.append(contentsOf: payload)
        }
        Self.put(UInt64(entries.count), into: &bytes)
        for entry in entries {
            Self.put(entry.device.account, into: &bytes)
            Self.put(entry.device.device, into: &bytes)
            Self.put(UInt64(bitPattern: entry.seq), into: &bytes)
            Self.put(UInt64(entry.payload), into: &bytes)
        }
        return Data(bytes)
    }

    /// Decodes a stored blob; a truncated or foreign one is `corrupt`, never a trap.
    init(decoding data: Data) throws {
        var reader = Reader(bytes: [UInt8](data))
        guard try reader.byte() == Self.format else { throw StorageError.corrupt("outbox log record: unknown format") }
        let payloadCount = try reader.count()
        payloads = []
        payloads.reserveCapacity(payloadCount)
        for _ in 0..<payloadCount { payloads.append(try reader.data()) }
        let entryCount = try reader.count()
        entries = []
        entries.reserveCapacity(entryCount)
        for _ in 0..<entryCount {
            let account = try reader.string()
            let device = try reader.string()
            let seq = Int64(bitPattern: try reader.varint())
            let payload = try reader.varint()
            guard payload < UInt64(payloadCount), seq > 0 else { throw StorageError.corrupt("outbox log record: bad entry") }
            entries.append(Entry(device: StoredDeviceKey(account: account, device: device), seq: seq, payload: Int(payload)))
        }
        guard reader.atEnd else { throw StorageError.corrupt("outbox log record: trailing bytes") }
    }

    /// The stored entry at `slot`, as the store returns it.
    func entry(_ slot: Int, createdAt: Int64) -> OutboxEntry {
        let entry = entries[slot]
        return OutboxEntry(device: entry.device, seq: entry.seq, payload: payloads[entry.payload], createdAt: createdAt)
    }

    private static func put(_ value: UInt64, into bytes: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    private static func put(_ text: String, into bytes: inout [UInt8]) {
        let utf8 = text.utf8
        put(UInt64(utf8.count), into: &bytes)
        bytes.append(contentsOf: utf8)
    }

    /// Bounds-checked reads over the blob.
    private struct Reader {
        let bytes: [UInt8]
        var offset = 0

        var atEnd: Bool { offset == bytes.count }

        mutating func byte() throws -> UInt8 {
            guard offset < bytes.count else { throw StorageError.corrupt("outbox log record: truncated") }
            defer { offset += 1 }
            return bytes[offset]
        }

        mutating func varint() throws -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                let byte = try byte()
                guard shift < 64 else { throw StorageError.corrupt("outbox log record: varint too long") }
                value |= UInt64(byte & 0x7f) << shift
                if byte < 0x80 { return value }
                shift += 7
            }
        }

        /// A length or an item count: every byte or item takes at least one byte of what is
        /// left, so a larger value is corrupt (and never becomes a huge allocation).
        mutating func count() throws -> Int {
            let value = try varint()
            guard value <= UInt64(bytes.count - offset) else {
                throw StorageError.corrupt("outbox log record: count out of range")
            }
            return Int(value)
        }

        mutating func slice() throws -> ArraySlice<UInt8> {
            let length = try count()
            guard length <= bytes.count - offset else { throw StorageError.corrupt("outbox log record: truncated") }
            defer { offset += length }
            return bytes[offset..<offset + length]
        }

        mutating func data() throws -> Data { Data(try slice()) }

        mutating func string() throws -> String { String(decoding: try slice(), as: UTF8.self) }
    }
}
