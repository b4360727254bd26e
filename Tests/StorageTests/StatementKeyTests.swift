import Foundation
import XCTest
@testable import Storage

/// The statement cache's key hashes only a sample of the text; equality is the whole text.
final class StatementKeyTests: StorageTestCase {
    func testTextsThatAgreeInTheSampledBytesAreStillDifferentStatements() throws {
        // Same length, same middle and end: only the first word differs.
        let first = "SELECT call_id FROM calls WHERE revision = ?1 AND call_id = ?2"
        let second = "DELETE call_id FROM calls WHERE revision = ?1 AND call_id = ?2"
        XCTAssertEqual(StatementKey(sql: first).hashValue, StatementKey(sql: second).hashValue)
        XCTAssertNotEqual(StatementKey(sql: first), StatementKey(sql: second))
        var cache: [StatementKey: Int] = [StatementKey(sql: first): 1, StatementKey(sql: second): 2]
        XCTAssertEqual(cache[StatementKey(sql: String(first.utf8.map { Character(UnicodeScalar($0)) }))], 1)
        XCTAssertEqual(cache[StatementKey(sql: second)], 2)
        cache[StatementKey(sql: "x")] = 3
        XCTAssertEqual(cache[StatementKey(sql: "x")], 3)
        XCTAssertNil(cache[StatementKey(sql: "y")])
    }

    /// Through a connection: two such statements each run their own SQL.
    func testAConnectionKeepsCollidingStatementsApart() throws {
        let connection = try SQLiteConnection(path: databasePath)
        defer { connection.close() }
        XCTAssertEqual(try connection.scalarInt("SELECT 1 + 100 AS value_of_the_first_one"), 101)
        XCTAssertEqual(try connection.scalarInt("SELECT 2 + 100 AS value_of_the_first_one"), 102)
        XCTAssertEqual(try connection.scalarInt("SELECT 1 + 100 AS value_of_the_first_one"), 101)
        XCTAssertEqual(connection.preparedSQL.count, 2)
    }
}
