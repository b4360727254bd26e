import XCTest

final class SignalingTestsPlaceholder: XCTestCase {
    func testModuleBuilds() {}
}
