/// `a=fingerprint:<hash-func> <fingerprint>` (RFC 8122 §5): a certificate hash as upper-case
/// colon-separated hex bytes.
public struct Fingerprint: Sendable, Hashable {
    /// Lower-case hash function name from the IANA registry, e.g. `sha-256`.
    public var hashFunction: String
    /// The digest bytes.
    public var bytes: [UInt8]

    public init(hashFunction: String, bytes: [UInt8]) {
        self.hashFunction = hashFunction.lowercased()
        self.bytes = bytes
    }

    /// Parses `sha-256 AB:CD:...`; hex is case-insensitive (RFC 8122 §5 uses upper case).
    public init(attributeValue: String, line: Int? = nil) throws(SDPError) {
        let error = SDPError.invalidAttribute(line: line, name: "fingerprint")
        let fields = attributeValue.split(separator: " ")
        guard fields.count == 2, !fields[0].isEmpty else { throw error }
        var bytes: [UInt8] = []
        for pair in fields[1].split(separator: ":", omittingEmptySubsequences: false) {
            guard pair.count == 2, let byte = UInt8(pair, radix: 16) else { throw error }
            bytes.append(byte)
        }
        guard !bytes.isEmpty else { throw error }
        self.init(hashFunction: String(fields[0]), bytes: bytes)
    }

    /// The digest as `AB:CD:...`.
    public var hex: String {
        let digits: [Character] = Array("0123456789ABCDEF")
        return bytes.map { String([digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]]) }.joined(separator: ":")
    }

    /// The value after `a=fingerprint:`.
    public var attributeValue: String { hashFunction + " " + hex }
}
