import XCTest

final class AuthTestsPlaceholder: XCTestCase {
    func testModuleBuilds() {}
}
