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
        var writer = CompactWriter(capacity: payloads.reduce(16) { $0 + $1.count + 3 } + entries.count * 32)
        writer.byte(Self.format)
        writer.varint(UInt64(payloads.count))
        for payload in payloads { writer.data(payload) }
        writer.varint(UInt64(entries.count))
        for entry in entries {
            writer.string(entry.device.account)
            writer.string(entry.device.device)
            writer.varint(UInt64(bitPattern: entry.seq))
            writer.varint(UInt64(entry.payload))
        }
        return writer.record()
    }

    /// Decodes a stored blob; a truncated or foreign one is `corrupt`, never a trap.
    init(decoding data: Data) throws {
        var reader = CompactReader(data)
        do {
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
        } catch is CompactReader.Malformed {
            throw StorageError.corrupt("outbox log record: truncated or malformed")
        }
        guard reader.isAtEnd else { throw StorageError.corrupt("outbox log record: trailing bytes") }
    }

    /// The stored entry at `slot`, as the store returns it.
    func entry(_ slot: Int, createdAt: Int64) -> OutboxEntry {
        let entry = entries[slot]
        return OutboxEntry(device: entry.device, seq: entry.seq, payload: payloads[entry.payload], createdAt: createdAt)
    }
}
