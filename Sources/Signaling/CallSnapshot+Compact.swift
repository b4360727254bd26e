import CallCore
import Storage

/// Binary form of a ``CallSnapshot`` inside a ``StoredResult``. Enums as their raw strings
/// (a renamed case makes old rows unreadable rather than silently different); a device's
/// account as a reference to the caller's or callee's account when it is one (it nearly
/// always is), so each device costs its device ID and two bytes.
extension CallSnapshot {
    func encode(to w: inout CompactWriter) {
        w.string(callID)
        w.int(revision)
        w.string(phase.rawValue)
        w.string(caller.account)
        w.string(caller.device)
        w.string(callee)
        w.varint(UInt64(devices.count))
        for entry in devices {
            encode(entry.device, to: &w)
            entry.participation.encode(to: &w)
        }
        encodeOptional(answeredBy, to: &w)
        w.optionalString(endReason?.rawValue)
        encodeOptional(endedBy, to: &w)
        w.int(createdAt)
        w.optionalInt(endedAt)
        w.optionalInt(deadlines.ring)
        w.optionalInt(deadlines.inviteExpiry)
        w.optionalInt(deadlines.connect)
        w.optionalInt(deadlines.reconnect)
        w.int(generation)
        w.string(media.rawValue)
    }

    static func decode(from r: inout CompactReader) throws -> CallSnapshot {
        let callID = try r.string()
        let revision = try r.int()
        let phase = try r.raw(CallPhase.self)
        let caller = DeviceKey(account: try r.string(), device: try r.string())
        let callee = try r.string()
        let count = try r.varint()
        // A snapshot lists a call's devices (≤ 2 × 16); anything huge is a corrupt row.
        guard count <= 1 << 16 else { throw CompactReader.Malformed() }
        var devices: [DeviceEntry] = []
        for _ in 0..<count {
            let device = try decodeDevice(from: &r, caller: caller, callee: callee)
            devices.append(DeviceEntry(device: device, participation: try DeviceParticipation.decode(from: &r)))
        }
        let answeredBy = try decodeOptional(from: &r, caller: caller, callee: callee)
        let endReason = try r.optionalRaw(CallEndReason.self)
        let endedBy = try decodeOptional(from: &r, caller: caller, callee: callee)
        let createdAt = try r.int()
        let endedAt = try r.optionalInt()
        let deadlines = CallDeadlines(ring: try r.optionalInt(), inviteExpiry: try r.optionalInt(),
                                      connect: try r.optionalInt(), reconnect: try r.optionalInt())
        let generation = try r.int()
        let media = try r.raw(CallMedia.self)
        return CallSnapshot(callID: callID, revision: revision, phase: phase, caller: caller, callee: callee,
                            devices: devices, answeredBy: answeredBy, endReason: endReason, endedBy: endedBy,
                            createdAt: createdAt, endedAt: endedAt, deadlines: deadlines, generation: generation,
                            media: media)
    }

    /// Account tag: 0 the caller's, 1 the callee's, 2 written out.
    private func encode(_ device: DeviceKey, to w: inout CompactWriter) {
        if device.account == caller.account {
            w.byte(0)
        } else if device.account == callee {
            w.byte(1)
        } else {
            w.byte(2)
            w.string(device.account)
        }
        w.string(device.device)
    }

    private func encodeOptional(_ device: DeviceKey?, to w: inout CompactWriter) {
        guard let device else { return w.byte(0) }
        w.byte(1)
        encode(device, to: &w)
    }

    private static func decodeDevice(from r: inout CompactReader, caller: DeviceKey, callee: String) throws -> DeviceKey {
        let account: String
        switch try r.byte() {
        case 0: account = caller.account
        case 1: account = callee
        case 2: account = try r.string()
        default: throw CompactReader.Malformed()
        }
        return DeviceKey(account: account, device: try r.string())
    }

    private static func decodeOptional(from r: inout CompactReader, caller: DeviceKey, callee: String) throws -> DeviceKey? {
        switch try r.byte() {
        case 0: return nil
        case 1: return try decodeDevice(from: &r, caller: caller, callee: callee)
        default: throw CompactReader.Malformed()
        }
    }
}

/// A device's participation in the compact forms (``CallSnapshot``'s here, ``CallStateCompact``):
/// one byte, and a stop's reason as its raw string.
extension DeviceParticipation {
    func encode(to w: inout CompactWriter) {
        switch self {
        case .ringing: w.byte(0)
        case .ringingAcknowledged: w.byte(1)
        case .answered: w.byte(2)
        case .stopped(let reason): w.byte(3); w.string(reason.rawValue)
        case .callerDevice: w.byte(4)
        case .inProgressElsewhere: w.byte(5)
        }
    }

    static func decode(from r: inout CompactReader) throws -> DeviceParticipation {
        switch try r.byte() {
        case 0: return .ringing
        case 1: return .ringingAcknowledged
        case 2: return .answered
        case 3: return .stopped(try r.raw(StopReason.self))
        case 4: return .callerDevice
        case 5: return .inProgressElsewhere
        default: throw CompactReader.Malformed()
        }
    }
}
