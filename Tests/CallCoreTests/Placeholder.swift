import XCTest

final class CallCoreTestsPlaceholder: XCTestCase {
    func testModuleBuilds() {}
}
