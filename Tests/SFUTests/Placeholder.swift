import XCTest

final class SFUTestsPlaceholder: XCTestCase {
    func testModuleBuilds() {}
}
