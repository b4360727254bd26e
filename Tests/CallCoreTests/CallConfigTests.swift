import XCTest
@testable import CallCore

final class CallConfigTests: XCTestCase {
    func testDefaultsValidate() throws {
        XCTAssertNoThrow(try CallConfig.default.validate())
        XCTAssertEqual(CallConfig.default.ringTimeout, 60_000)
        XCTAssertEqual(CallConfig.default.inviteLifetime, 90_000)
    }

    func testLifetimeShorterThanRingIsRejected() {
        var config = CallConfig()
        config.inviteLifetime = 30_000
        XCTAssertThrowsError(try config.validate()) { XCTAssertEqual($0 as? CallConfigError, .lifetimeShorterThanRing) }
    }

    func testGraceOutOfRangeIsRejected() {
        var config = CallConfig()
        config.deliveryGrace = 90_000
        XCTAssertThrowsError(try config.validate()) { XCTAssertEqual($0 as? CallConfigError, .graceOutOfRange) }
    }
}
