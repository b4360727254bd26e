import DTLS

/// DTLS record framing (RFC 6347 §4.1), the structural gate before OpenSSL sees a datagram.
/// Invariants: agrees with an independent reference walk of the records; a well-formed
/// datagram stops being well-formed when its last byte is cut; record-wise concatenation of
/// two well-formed datagrams is well-formed.
enum DTLSRecordFuzz {
    static func run(_ bytes: [UInt8]) throws(FuzzFailure) {
        let framed = bytes.withUnsafeBytes { DTLSRecordFraming.isWellFormed($0) }
        try expect(framed == reference(bytes), "framing disagrees with the reference walk (\(framed))")
        guard framed else { return }
        FuzzCounters.hit("dtls-record.well-formed")
        let cut = bytes.dropLast().withUnsafeBytes { DTLSRecordFraming.isWellFormed($0) }
        try expect(!cut, "well-formed after cutting the last byte")
        let doubled = (bytes + bytes).withUnsafeBytes { DTLSRecordFraming.isWellFormed($0) }
        try expect(doubled, "two well-formed datagrams back to back are not well-formed")
    }

    /// Straightforward reading of RFC 6347 §4.1 / RFC 5246 §6.2: 13-byte headers, content
    /// types 20–23, version 0xFEFF or 0xFEFD, fragment ≤ 2^14 + 2048, records fill the datagram.
    static func reference(_ bytes: [UInt8]) -> Bool {
        if bytes.isEmpty { return false }
        var rest = bytes[...]
        while !rest.isEmpty {
            guard rest.count >= 13 else { return false }
            let header = Array(rest.prefix(13))
            guard [20, 21, 22, 23].contains(header[0]), header[1] == 0xFE, [0xFF, 0xFD].contains(header[2]) else { return false }
            let length = Int(header[11]) * 256 + Int(header[12])
            guard length <= 16_384 + 2_048, rest.count - 13 >= length else { return false }
            rest = rest.dropFirst(13 + length)
        }
        return true
    }
}
