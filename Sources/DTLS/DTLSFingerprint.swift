import COpenSSL

/// A certificate fingerprint as carried in SDP `a=fingerprint:<hash-func> <hex>` (RFC 8122 §5).
public struct DTLSFingerprint: Sendable, Equatable, CustomStringConvertible {
    /// Hash functions of the RFC 8122 §5 registry that are still acceptable (md2/md5 are not).
    public enum Algorithm: String, Sendable, CaseIterable {
        case sha1 = "sha-1"
        case sha224 = "sha-224"
        case sha256 = "sha-256"
        case sha384 = "sha-384"
        case sha512 = "sha-512"

        var openSSLName: String {
            switch self {
            case .sha1: return "SHA1"
            case .sha224: return "SHA224"
            case .sha256: return "SHA256"
            case .sha384: return "SHA384"
            case .sha512: return "SHA512"
            }
        }

        /// Digest length in bytes.
        public var digestLength: Int {
            switch self {
            case .sha1: return 20
            case .sha224: return 28
            case .sha256: return 32
            case .sha384: return 48
            case .sha512: return 64
            }
        }
    }

    public let algorithm: Algorithm
    public let bytes: [UInt8]

    public init(algorithm: Algorithm, bytes: [UInt8]) {
        self.algorithm = algorithm
        self.bytes = bytes
    }

    /// Parses an SDP attribute value such as `sha-256 AB:CD:...` (hash name case-insensitive,
    /// hex accepted in either case although RFC 8122 §5 writes it upper case).
    public init(sdpValue: String) throws(DTLSError) {
        let parts = sdpValue.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 2, let algorithm = Algorithm(rawValue: parts[0].lowercased()) else {
            throw .invalidFingerprint
        }
        self.algorithm = algorithm
        self.bytes = try Self.parseHex(parts[1])
        guard bytes.count == algorithm.digestLength else { throw .invalidFingerprint }
    }

    /// Parses `AB:CD:...` with an explicit algorithm.
    public init(algorithm: Algorithm, hex: String) throws(DTLSError) {
        self.algorithm = algorithm
        self.bytes = try Self.parseHex(Substring(hex))
        guard bytes.count == algorithm.digestLength else { throw .invalidFingerprint }
    }

    /// Upper-case colon-separated hex, as in SDP (RFC 8122 §5).
    public var hex: String {
        let digits = Array("0123456789ABCDEF")
        var out = ""
        out.reserveCapacity(bytes.count * 3)
        for (i, b) in bytes.enumerated() {
            if i > 0 { out.append(":") }
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0F)])
        }
        return out
    }

    /// `sha-256 AB:CD:...`, the value of an SDP `a=fingerprint` attribute.
    public var sdpValue: String { "\(algorithm.rawValue) \(hex)" }

    public var description: String { sdpValue }

    /// Digest of a DER certificate (`X509*`) with this fingerprint's algorithm.
    static func digest(of certificate: OpaquePointer, algorithm: Algorithm) -> [UInt8]? {
        guard let md = EVP_get_digestbyname(algorithm.openSSLName) else { return nil }
        var out = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        guard X509_digest(certificate, md, &out, &length) == 1 else { return nil }
        return Array(out[0..<Int(length)])
    }

    private static func parseHex(_ text: Substring) throws(DTLSError) -> [UInt8] {
        var bytes: [UInt8] = []
        for pair in text.split(separator: ":", omittingEmptySubsequences: false) {
            guard pair.count == 2, let value = UInt8(pair, radix: 16) else { throw .invalidFingerprint }
            bytes.append(value)
        }
        return bytes
    }
}
