import COpenSSL

/// HMAC (RFC 2104) over OpenSSL's one-shot `HMAC()`.
///
/// SHA-256 signs JWTs (RFC 7518 §3.2, "HS256"); SHA-1 is what the TURN REST API
/// (draft-uberti-behave-turn-rest-00 §2.2) and coturn's `use-auth-secret` use for passwords.
public enum HMAC {
    /// HMAC-SHA256: 32-byte tag.
    public static func sha256(key: [UInt8], data: [UInt8]) -> [UInt8] {
        compute(EVP_sha256(), outputLength: 32, key: key, data: data)
    }

    /// HMAC-SHA1: 20-byte tag.
    public static func sha1(key: [UInt8], data: [UInt8]) -> [UInt8] {
        compute(EVP_sha1(), outputLength: 20, key: key, data: data)
    }

    private static func compute(_ md: OpaquePointer?, outputLength: Int, key: [UInt8], data: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var outLength: UInt32 = 0
        // Empty arrays may have a nil base address; OpenSSL wants a non-null pointer even for
        // zero lengths, so empty inputs point at a one-byte dummy with length 0.
        let dummy: [UInt8] = [0]
        let keyBuffer = key.isEmpty ? dummy : key
        let dataBuffer = data.isEmpty ? dummy : data
        let ok = keyBuffer.withUnsafeBytes { keyPtr in
            dataBuffer.withUnsafeBytes { dataPtr in
                out.withUnsafeMutableBufferPointer { outPtr in
                    COpenSSL.HMAC(md, keyPtr.baseAddress, Int32(key.count),
                                  dataPtr.baseAddress?.assumingMemoryBound(to: UInt8.self), data.count,
                                  outPtr.baseAddress, &outLength) != nil
                }
            }
        }
        // HMAC() only fails on allocation failure or an unusable digest; both are environment
        // faults, never input faults. An empty result then never verifies against anything
        // (``constantTimeEquals(_:_:)`` rejects empty MACs).
        guard ok, Int(outLength) == outputLength else { return [] }
        return Array(out.prefix(outputLength))
    }

    /// Constant-time equality of two MACs (OpenSSL `CRYPTO_memcmp`), so verification time does
    /// not reveal how many leading bytes of a forged signature were right. Lengths are public.
    /// Empty inputs never compare equal.
    public static func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count, !a.isEmpty else { return false }
        return a.withUnsafeBytes { pa in
            b.withUnsafeBytes { pb in
                CRYPTO_memcmp(pa.baseAddress, pb.baseAddress, a.count) == 0
            }
        }
    }
}
