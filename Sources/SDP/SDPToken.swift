/// RFC 4566 §9 `token` and a reversible escape that turns any text into one.
///
/// `token-char = %x21 / %x23-27 / %x2A-2B / %x2D-2E / %x30-39 / %x41-5A / %x5E-7E`: printable
/// ASCII except space, `"`, `(`, `)`, `,`, `/`, `:`, `;`, `<`, `=`, `>`, `?`, `@`, `[`, `\`, `]`.
/// RFC 8830 §2: `msid-id = 1*64token-char`, so a stream id such as a member's
/// "account/device" must be escaped before it reaches `a=msid` (and `a=ssrc … msid:`).
///
/// The escape is percent-encoding (RFC 3986 §2.1, upper-case hex): every byte of the UTF-8
/// text that is not a token-char, and `%` itself, becomes `%XX`. `%` is a token-char, so the
/// result is a token; JavaScript's `decodeURIComponent` and Python's `urllib.parse.unquote`
/// undo it, as does `unescape(_:)`.
public enum SDPToken {
    /// RFC 8830 §2: at most 64 token-chars in an msid-id.
    public static let maximumMSIDLength = 64

    public static func isTokenChar(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x21, 0x23...0x27, 0x2A...0x2B, 0x2D...0x2E, 0x30...0x39, 0x41...0x5A, 0x5E...0x7E: true
        default: false
        }
    }

    /// One or more token-chars.
    public static func isToken(_ text: String) -> Bool {
        !text.utf8.isEmpty && text.utf8.allSatisfy(isTokenChar)
    }

    /// RFC 8830 `msid-id`: 1 to 64 token-chars.
    public static func isMSIDID(_ text: String) -> Bool {
        isToken(text) && text.utf8.count <= maximumMSIDLength
    }

    /// Percent-encodes every byte that is not a token-char, and `%`. Empty text stays empty
    /// (not a token: callers never pass it).
    public static func escape(_ text: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        let hex = Array("0123456789ABCDEF".utf8)
        for byte in text.utf8 {
            if isTokenChar(byte), byte != UInt8(ascii: "%") {
                out.append(byte)
            } else {
                out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Undoes `escape(_:)`: nil when a `%` is not followed by two hex digits or the bytes are
    /// not UTF-8. Text without `%` comes back unchanged (ids written by others, e.g. browsers'
    /// UUIDs, pass through).
    public static func unescape(_ token: String) -> String? {
        var out: [UInt8] = []
        let bytes = Array(token.utf8)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            guard byte == UInt8(ascii: "%") else {
                out.append(byte)
                index += 1
                continue
            }
            guard index + 2 < bytes.count, let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2]) else {
                return nil
            }
            out.append(high << 4 | low)
            index += 3
        }
        return String(validating: out, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        default: nil
        }
    }
}
