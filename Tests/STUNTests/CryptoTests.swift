import XCTest
@testable import STUN

func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

final class CryptoTests: XCTestCase {
    /// RFC 3174 §7.3 TEST1–TEST4.
    func testSHA1RFC3174Vectors() {
        XCTAssertEqual(hex(SHA1.hash(Array("abc".utf8))), "a9993e364706816aba3e25717850c26c9cd0d89d")
        XCTAssertEqual(hex(SHA1.hash(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))),
                       "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
        XCTAssertEqual(hex(SHA1.hash([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000))),
                       "34aa973cd4c4daa4f61eeb2bdbad27316534016f")
        let test4 = Array(String(repeating: "01234567", count: 8 * 10).utf8)
        XCTAssertEqual(hex(SHA1.hash(test4)), "dea356a2cddd90c7a7ecedc5ebb563934f460452")
    }

    func testSHA1StreamingMatchesOneShotAtEveryBlockBoundary() {
        let data = (0..<200).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        for split in [0, 1, 55, 56, 63, 64, 65, 119, 120, 128, 200] {
            var sha = SHA1()
            sha.update(data[0..<split])
            sha.update(data[split...])
            XCTAssertEqual(sha.finalize(), SHA1.hash(data), "split \(split)")
        }
        XCTAssertEqual(hex(SHA1.hash([UInt8]())), "da39a3ee5e6b4b0d3255bfef95601890afd80709")
    }

    /// RFC 2202 §3 test cases 1–7 for HMAC-SHA1.
    func testHMACSHA1RFC2202Vectors() {
        let cases: [(key: [UInt8], data: [UInt8], digest: String)] = [
            ([UInt8](repeating: 0x0B, count: 20), Array("Hi There".utf8), "b617318655057264e28bc0b6fb378c8ef146be00"),
            (Array("Jefe".utf8), Array("what do ya want for nothing?".utf8), "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79"),
            ([UInt8](repeating: 0xAA, count: 20), [UInt8](repeating: 0xDD, count: 50), "125d7342b9ac11cd91a39af48aa17b4f63f175d3"),
            (Array(1...25), [UInt8](repeating: 0xCD, count: 50), "4c9007f4026250c6bc8414f9bf50c86c2d7235da"),
            ([UInt8](repeating: 0x0C, count: 20), Array("Test With Truncation".utf8), "4c1a03424b55e07fe7f27be1d58bb9324a9a5a04"),
            ([UInt8](repeating: 0xAA, count: 80), Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
             "aa4ae5e15272d00e95705637ce8a3b55ed402112"),
            ([UInt8](repeating: 0xAA, count: 80),
             Array("Test Using Larger Than Block-Size Key and Larger Than One Block-Size Data".utf8),
             "e8e99d0f45237d786d6bbaa7965c7808bbff1a91"),
        ]
        for (index, testCase) in cases.enumerated() {
            XCTAssertEqual(hex(HMACSHA1.authenticate(key: testCase.key, message: testCase.data)), testCase.digest, "case \(index + 1)")
        }
    }

    /// The CRC-32 "check" value of the ISO-HDLC/V.42 parameterisation.
    func testCRC32CheckValue() {
        XCTAssertEqual(CRC32.checksum(Array("123456789".utf8)), 0xCBF4_3926)
        XCTAssertEqual(CRC32.checksum([UInt8]()), 0)
        XCTAssertEqual(CRC32.checksum(Array("The quick brown fox jumps over the lazy dog".utf8)), 0x414F_A339)
    }
}
