import XCTest
import CNice
import CSRTP
import COpus
import COpenSSL
import CSoup
import CSQLite

/// Each Debian library links and answers a version query: proves the module maps and
/// pkg-config wiring that every other module relies on.
final class SystemLibraryTests: XCTestCase {
    func testLibrariesLinkAndReportVersions() throws {
        XCTAssertGreaterThanOrEqual(Int(sqlite3_libversion_number()), 3_040_000)
        XCTAssertNotNil(OpenSSL_version(0))
        XCTAssertNotNil(opus_get_version_string())
        XCTAssertGreaterThan(srtp_get_version(), 0)
        XCTAssertGreaterThanOrEqual(soup_get_major_version(), 3)
        let agent = stun_agent_t()
        _ = agent
        XCTAssertNotNil(sb_sqlite_transient())
    }
}
