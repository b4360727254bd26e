/// Validation of identifiers that come off the wire: callID, eventID, account and device.
///
/// 1–64 characters of `[A-Za-z0-9._:-]`: long enough for UUIDs and prefixed IDs, short
/// enough that a hostile client cannot bloat the database keys or the logs.
public enum WireIdentifier {
    /// 64: a UUID with a prefix fits; anything longer is not an identifier.
    public static let maxLength = 64

    /// Over the string's UTF-8 buffer with a table of the allowed bytes: iterating
    /// `String.UTF8View` byte by byte cost ~17 instructions per byte, and every command
    /// carries three or four identifiers (`switchboard bench signaling`: ~1 % of the shard
    /// threads' instructions).
    public static func isValid(_ value: String) -> Bool {
        var value = value
        return value.withUTF8 { bytes in
            guard !bytes.isEmpty, bytes.count <= maxLength else { return false }
            for byte in bytes where !allowed[Int(byte)] { return false }
            return true
        }
    }

    /// `[A-Za-z0-9._:-]`, indexed by byte.
    private static let allowed: [Bool] = (0 ..< 256).map { byte in
        switch UInt8(byte) {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"),
             UInt8(ascii: ":"), UInt8(ascii: "-"):
            return true
        default:
            return false
        }
    }
}
