import XCTest

final class PeerTestsPlaceholder: XCTestCase {
    func testModuleBuilds() {}
}
