/// Base64url encoding without padding: RFC 4648 §5, as required for JWS compact
/// serialization by RFC 7515 §2 ("Base64url Encoding") and Appendix C.
public enum Base64URL {
    private static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Reverse table: 0xFF marks a byte outside the url-safe alphabet.
    private static let reverse: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(index) }
        return table
    }()

    /// Encodes `bytes` with the url-safe alphabet and no `=` padding.
    public static func encode<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        let input = Array(bytes)
        var out = [UInt8]()
        out.reserveCapacity((input.count * 4 + 2) / 3)
        var index = 0
        while index + 3 <= input.count {
            let n = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
            out.append(alphabet[Int(n >> 18 & 63)])
            out.append(alphabet[Int(n >> 12 & 63)])
            out.append(alphabet[Int(n >> 6 & 63)])
            out.append(alphabet[Int(n & 63)])
            index += 3
        }
        switch input.count - index {
        case 1:
            let n = UInt32(input[index]) << 16
            out.append(alphabet[Int(n >> 18 & 63)])
            out.append(alphabet[Int(n >> 12 & 63)])
        case 2:
            let n = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8
            out.append(alphabet[Int(n >> 18 & 63)])
            out.append(alphabet[Int(n >> 12 & 63)])
            out.append(alphabet[Int(n >> 6 & 63)])
        default:
            break
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Strict decoder: url-safe alphabet only, no padding, no whitespace, and the unused
    /// trailing bits must be zero (RFC 4648 §3.5 canonical encoding), so every byte string has
    /// exactly one accepted encoding. Returns nil for anything else.
    public static func decode<Text: StringProtocol>(_ text: Text) -> [UInt8]? {
        decode(utf8: Array(text.utf8))
    }

    static func decode(utf8 input: [UInt8]) -> [UInt8]? {
        if input.count % 4 == 1 { return nil }
        var out = [UInt8]()
        out.reserveCapacity(input.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits: UInt32 = 0
        for byte in input {
            let value = reverse[Int(byte)]
            if value == 0xFF { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> bits))
                accumulator &= (1 << bits) - 1
            }
        }
        // Leftover bits (2 or 4) must be zero for a canonical encoding.
        if accumulator != 0 { return nil }
        return out
    }
}
