import XCTest
@testable import Server

/// The detection's other side: test bundles do not link tcmalloc, so their `malloc` is
/// glibc's (the binary's side is `AllocatorTests` in IntegrationTests).
final class ProcessAllocatorTests: XCTestCase {
    func testATestBundleRunsOnGlibc() {
        XCTAssertEqual(ProcessAllocator.name, "glibc")
    }
}
