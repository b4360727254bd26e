import XCTest

final class DTLSTestsPlaceholder: XCTestCase {
    func testModuleBuilds() {}
}
