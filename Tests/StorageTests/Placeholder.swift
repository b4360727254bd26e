import XCTest

final class StorageTestsPlaceholder: XCTestCase {
    func testModuleBuilds() {}
}
