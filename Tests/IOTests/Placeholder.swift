import XCTest

final class IOTestsPlaceholder: XCTestCase {
    func testModuleBuilds() {}
}
