import XCTest
@testable import Auth

final class HMACTests: XCTestCase {
    private func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    /// RFC 4231 §4.3 test case 2 (key "Jefe").
    func testSHA256RFC4231Case2() {
        let mac = HMAC.sha256(key: Array("Jefe".utf8), data: Array("what do ya want for nothing?".utf8))
        XCTAssertEqual(hex(mac), "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    /// RFC 4231 §4.7 test case 6: a 131-byte key (longer than the block, so it is hashed first).
    func testSHA256RFC4231Case6LongKey() {
        let mac = HMAC.sha256(key: [UInt8](repeating: 0xAA, count: 131),
                              data: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8))
        XCTAssertEqual(hex(mac), "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
    }

    /// RFC 2202 §3 test case 2 (key "Jefe").
    func testSHA1RFC2202Case2() {
        let mac = HMAC.sha1(key: Array("Jefe".utf8), data: Array("what do ya want for nothing?".utf8))
        XCTAssertEqual(hex(mac), "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79")
    }

    /// Empty key and data are legal HMAC inputs. Vector from
    /// `python3 -c 'import hmac,hashlib;print(hmac.new(b"",b"",hashlib.sha256).hexdigest())'`.
    func testEmptyKeyAndData() {
        XCTAssertEqual(hex(HMAC.sha256(key: [], data: [])),
                       "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
    }

    func testConstantTimeEquals() {
        XCTAssertTrue(HMAC.constantTimeEquals([1, 2, 3], [1, 2, 3]))
        XCTAssertFalse(HMAC.constantTimeEquals([1, 2, 3], [1, 2, 4]))
        XCTAssertFalse(HMAC.constantTimeEquals([1, 2, 3], [1, 2]))
        XCTAssertFalse(HMAC.constantTimeEquals([], []))
    }
}
