import XCTest

final class ICETestsPlaceholder: XCTestCase {
    func testModuleBuilds() {}
}
