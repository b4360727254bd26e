/// Validation of identifiers that come off the wire: callID, eventID, account and device.
///
/// 1–64 characters of `[A-Za-z0-9._:-]`: long enough for UUIDs and prefixed IDs, short
/// enough that a hostile client cannot bloat the database keys or the logs.
public enum WireIdentifier {
    /// 64: a UUID with a prefix fits; anything longer is not an identifier.
    public static let maxLength = 64

    public static func isValid(_ value: String) -> Bool {
        let utf8 = value.utf8
        guard !utf8.isEmpty, utf8.count <= maxLength else { return false }
        for byte in utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"),
                 UInt8(ascii: ":"), UInt8(ascii: "-"):
                continue
            default:
                return false
            }
        }
        return true
    }
}
