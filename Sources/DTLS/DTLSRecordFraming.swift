/// Structural check of a datagram's DTLS records (RFC 6347 §4.1), done before OpenSSL sees it so
/// that garbage is reported as `.dropped(.malformedRecord)` instead of being silently ignored.
public enum DTLSRecordFraming {
    /// DTLS record header: type(1) version(2) epoch(2) sequence_number(6) length(2).
    public static let headerLength = 13

    /// True when `datagram` is one or more complete records with a known content type
    /// (20 change_cipher_spec, 21 alert, 22 handshake, 23 application_data; RFC 5246 §6.2.1) and a
    /// DTLS version (0xFEFF = 1.0, 0xFEFD = 1.2).
    public static func isWellFormed(_ datagram: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        guard datagram.count >= headerLength else { return false }
        while offset < datagram.count {
            guard datagram.count - offset >= headerLength else { return false }
            let type = datagram[offset]
            guard (20...23).contains(type), datagram[offset + 1] == 0xFE,
                  datagram[offset + 2] == 0xFF || datagram[offset + 2] == 0xFD
            else { return false }
            let length = Int(datagram[offset + 11]) << 8 | Int(datagram[offset + 12])
            // 2^14 + 2048: maximum TLSCiphertext fragment (RFC 5246 §6.2.3).
            guard length <= 18_432, datagram.count - offset - headerLength >= length else { return false }
            offset += headerLength + length
        }
        return true
    }
}
