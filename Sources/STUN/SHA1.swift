/// SHA-1 (RFC 3174 / FIPS 180-4) in pure Swift, for STUN MESSAGE-INTEGRITY only
/// (RFC 8489 §14.5 mandates HMAC-SHA1; SHA-1's collision weakness does not affect HMAC).
public struct SHA1: Sendable {
    /// Digest length in bytes.
    public static let digestLength = 20
    /// Block length in bytes (also the HMAC block size, RFC 2104 §2).
    public static let blockLength = 64

    private var state: (UInt32, UInt32, UInt32, UInt32, UInt32) =
        (0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0)
    private var block = [UInt8](repeating: 0, count: 64)
    private var blockCount = 0
    private var totalLength: UInt64 = 0

    public init() {}

    /// One-shot digest.
    public static func hash<C: Collection>(_ data: C) -> [UInt8] where C.Element == UInt8 {
        var sha = SHA1()
        sha.update(data)
        return sha.finalize()
    }

    /// Absorbs more input.
    public mutating func update<C: Collection>(_ data: C) where C.Element == UInt8 {
        for byte in data {
            block[blockCount] = byte
            blockCount += 1
            if blockCount == 64 {
                compress()
                blockCount = 0
            }
        }
        totalLength &+= UInt64(data.count)
    }

    /// Pads, finishes and returns the 20-byte digest.
    public mutating func finalize() -> [UInt8] {
        let bitLength = totalLength &* 8
        block[blockCount] = 0x80
        blockCount += 1
        if blockCount > 56 {
            while blockCount < 64 { block[blockCount] = 0; blockCount += 1 }
            compress()
            blockCount = 0
        }
        while blockCount < 56 { block[blockCount] = 0; blockCount += 1 }
        for index in 0..<8 { block[56 + index] = UInt8(truncatingIfNeeded: bitLength >> (56 - 8 * UInt64(index))) }
        compress()
        blockCount = 0
        var digest: [UInt8] = []
        digest.reserveCapacity(20)
        for word in [state.0, state.1, state.2, state.3, state.4] {
            digest += [UInt8(word >> 24), UInt8(truncatingIfNeeded: word >> 16), UInt8(truncatingIfNeeded: word >> 8), UInt8(truncatingIfNeeded: word)]
        }
        return digest
    }

    private mutating func compress() {
        var w = [UInt32](repeating: 0, count: 80)
        for t in 0..<16 {
            w[t] = UInt32(block[4 * t]) << 24 | UInt32(block[4 * t + 1]) << 16 | UInt32(block[4 * t + 2]) << 8 | UInt32(block[4 * t + 3])
        }
        for t in 16..<80 {
            let x = w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16]
            w[t] = x << 1 | x >> 31
        }
        var (a, b, c, d, e) = state
        for t in 0..<80 {
            let f: UInt32
            let k: UInt32
            switch t {
            case 0..<20: f = (b & c) | (~b & d); k = 0x5A82_7999
            case 20..<40: f = b ^ c ^ d; k = 0x6ED9_EBA1
            case 40..<60: f = (b & c) | (b & d) | (c & d); k = 0x8F1B_BCDC
            default: f = b ^ c ^ d; k = 0xCA62_C1D6
            }
            let temp = (a << 5 | a >> 27) &+ f &+ e &+ k &+ w[t]
            e = d
            d = c
            c = b << 30 | b >> 2
            b = a
            a = temp
        }
        state = (state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d, state.4 &+ e)
    }
}

/// HMAC-SHA1 (RFC 2104).
public enum HMACSHA1 {
    /// Computes HMAC-SHA1 of `message` under `key`.
    public static func authenticate<K: Collection, M: Collection>(key: K, message: M) -> [UInt8]
    where K.Element == UInt8, M.Element == UInt8 {
        var keyBlock = key.count > SHA1.blockLength ? SHA1.hash(key) : Array(key)
        keyBlock += [UInt8](repeating: 0, count: SHA1.blockLength - keyBlock.count)
        var inner = SHA1()
        inner.update(keyBlock.map { $0 ^ 0x36 })
        inner.update(message)
        let innerDigest = inner.finalize()
        var outer = SHA1()
        outer.update(keyBlock.map { $0 ^ 0x5C })
        outer.update(innerDigest)
        return outer.finalize()
    }
}
