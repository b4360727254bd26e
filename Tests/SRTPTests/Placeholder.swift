import XCTest

final class SRTPTestsPlaceholder: XCTestCase {
    func testModuleBuilds() {}
}
