/// Builds one JSON object as text, field by field, without a reflection-based encoder on
/// the relay path (every relayed event is written once per recipient).
///
/// Strings are escaped per RFC 8259 §7; `raw` splices text that is already JSON.
public struct JSONWriter: Sendable {
    private var text: String
    private var first = true

    public init() {
        text = "{"
        text.reserveCapacity(256)
    }

    public mutating func field(_ key: String, _ value: String?) {
        guard let value else { return }
        key_(key)
        Self.appendQuoted(value, to: &text)
    }

    public mutating func field(_ key: String, _ value: Int64?) {
        guard let value else { return }
        key_(key)
        text += String(value)
    }

    public mutating func field(_ key: String, _ value: Int?) {
        guard let value else { return }
        key_(key)
        text += String(value)
    }

    public mutating func field(_ key: String, _ value: Bool?) {
        guard let value else { return }
        key_(key)
        text += value ? "true" : "false"
    }

    /// Splices `json`, which must already be a complete JSON value.
    public mutating func raw(_ key: String, _ json: String?) {
        guard let json else { return }
        key_(key)
        text += json
    }

    public mutating func null(_ key: String) {
        key_(key)
        text += "null"
    }

    public consuming func finish() -> String {
        text += "}"
        return text
    }

    private mutating func key_(_ key: String) {
        if first { first = false } else { text += "," }
        Self.appendQuoted(key, to: &text)
        text += ":"
    }

    static func appendQuoted(_ value: String, to out: inout String) {
        out += "\""
        var needsEscape = false
        for byte in value.utf8 where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
            needsEscape = true
            break
        }
        if !needsEscape {
            out += value
        } else {
            for scalar in value.unicodeScalars {
                switch scalar {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                case "\n": out += "\\n"
                case "\r": out += "\\r"
                case "\t": out += "\\t"
                case _ where scalar.value < 0x20:
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                default:
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }
}
