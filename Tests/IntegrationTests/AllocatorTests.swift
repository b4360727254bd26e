import Foundation
import XCTest

/// The `switchboard` binary runs on tcmalloc (docs/benchmarks.md, "tcmalloc as the server's
/// allocator"): the link order in the executable decides it, so only the real binary can
/// tell.
final class AllocatorTests: XCTestCase {
    func testTheServerRunsOnTcmalloc() throws {
        let server = try ServerProcess()
        let line = try XCTUnwrap(server.logLines.first { $0.contains("\"msg\":\"listening\"") })
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        let fields = try XCTUnwrap(object["fields"] as? [String: Any])
        let allocator = try XCTUnwrap(fields["allocator"] as? String, line)
        XCTAssertTrue(allocator.hasPrefix("tcmalloc "), allocator)
        // Independently of the server's own report: the library is mapped in the process.
        let pid = try XCTUnwrap(server.process?.processIdentifier)
        // Read to the end: /proc files report size 0, and a Swift server's map is long.
        let handle = try XCTUnwrap(FileHandle(forReadingAtPath: "/proc/\(pid)/maps"))
        defer { try? handle.close() }
        let maps = String(decoding: try handle.readToEnd() ?? Data(), as: UTF8.self)
        XCTAssertTrue(maps.contains("libtcmalloc_minimal.so.4"))
    }
}
