import XCTest

final class RTPTestsPlaceholder: XCTestCase {
    func testModuleBuilds() {}
}
