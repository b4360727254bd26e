import CSQLite
import XCTest
@testable import Storage

/// `SQLiteMemoryStatistics`: off before SQLite initializes, so SQLite counts nothing.
final class SQLiteMemoryStatisticsTests: StorageTestCase {
    func testStatisticsAreOffOnceAConnectionIsOpen() throws {
        let store = try openStore()
        _ = try insert("c1", into: store)
        XCTAssertTrue(SQLiteMemoryStatistics.turnOffIfNeeded())
        // Initialized: a second configuration is refused.
        XCTAssertEqual(sb_sqlite_memstatus_off(), SQLITE_MISUSE)
        // With the statistics on, the open connection's schema, statements and page cache
        // would be counted here; off, SQLite never updates the counters.
        XCTAssertEqual(sqlite3_memory_used(), 0)
        var current: Int64 = 0, highest: Int64 = 0
        XCTAssertEqual(sqlite3_status64(SQLITE_STATUS_MALLOC_COUNT, &current, &highest, 0), SQLITE_OK)
        XCTAssertEqual(current, 0)
    }
}
