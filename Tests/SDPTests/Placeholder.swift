import XCTest

final class SDPTestsPlaceholder: XCTestCase {
    func testModuleBuilds() {}
}
