import XCTest

final class STUNTestsPlaceholder: XCTestCase {
    func testModuleBuilds() {}
}
