/// Redaction by construction: the logger passes every field through here, so callers cannot
/// forget it. Over-redaction (e.g. `sdpMid`) is accepted as the price of never leaking.
public enum Redaction {
    /// Replacement text for anything sensitive.
    public static let placeholder = "[redacted]"

    /// Key fragments, matched case-insensitively as substrings, so `accessToken`,
    /// `turnPassword`, `remoteSDP`, `Authorization` and `ice_pwd` are all caught.
    public static let sensitiveKeyFragments = ["token", "password", "secret", "ice-pwd", "icepwd", "ice_pwd", "authorization", "sdp"]

    public static func isSensitiveKey(_ key: String) -> Bool {
        let lowered = key.lowercased()
        return sensitiveKeyFragments.contains { lowered.contains($0) }
    }

    /// Redacts a field value: strings containing a JWT or an SDP `ice-pwd` attribute become
    /// ``placeholder``; nested objects have sensitive keys redacted recursively.
    public static func redact(_ value: LogValue) -> LogValue {
        switch value {
        case .string(let text):
            if jwtRange(in: Array(text.utf8)) != nil || text.lowercased().contains("ice-pwd:") {
                return .string(placeholder)
            }
            return value
        case .array(let items):
            return .array(items.map(redact))
        case .object(let object):
            return .object(redactFields(object))
        case .int, .double, .bool, .null:
            return value
        }
    }

    public static func redactFields(_ fields: [String: LogValue]) -> [String: LogValue] {
        var out: [String: LogValue] = [:]
        for (key, value) in fields {
            out[key] = isSensitiveKey(key) ? .string(placeholder) : redact(value)
        }
        return out
    }

    /// Replaces every JWT-looking substring of a free-text message with ``placeholder``.
    public static func scrubMessage(_ message: String) -> String {
        var bytes = Array(message.utf8)
        var searchFrom = 0
        var changed = false
        while let range = jwtRange(in: bytes, from: searchFrom) {
            bytes.replaceSubrange(range, with: Array(placeholder.utf8))
            searchFrom = range.lowerBound + placeholder.utf8.count
            changed = true
        }
        return changed ? String(decoding: bytes, as: UTF8.self) : message
    }

    /// Finds `eyJ<b64url>.<b64url>+.<b64url>*`: a JWS compact serialization whose header
    /// starts with `{"` (base64url `eyJ`), RFC 7515 §7.1. The signature may be empty (`alg`
    /// `none` tokens are still credentials someone tried to use).
    static func jwtRange(in bytes: [UInt8], from start: Int = 0) -> Range<Int>? {
        func isB64(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
                true
            default:
                false
            }
        }
        func segmentEnd(_ from: Int) -> Int {
            var index = from
            while index < bytes.count, isB64(bytes[index]) { index += 1 }
            return index
        }
        var index = start
        while index + 3 <= bytes.count {
            if bytes[index] == UInt8(ascii: "e"), bytes[index + 1] == UInt8(ascii: "y"), bytes[index + 2] == UInt8(ascii: "J") {
                let headerEnd = segmentEnd(index)
                if headerEnd < bytes.count, bytes[headerEnd] == UInt8(ascii: ".") {
                    let payloadEnd = segmentEnd(headerEnd + 1)
                    if payloadEnd > headerEnd + 1, payloadEnd < bytes.count, bytes[payloadEnd] == UInt8(ascii: ".") {
                        return index ..< segmentEnd(payloadEnd + 1)
                    }
                }
            }
            index += 1
        }
        return nil
    }
}
