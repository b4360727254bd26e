import Foundation
import XCTest
@testable import Storage

/// What an operator reads in the log and in `switchboard serve`'s exit message: the stable
/// code first, then the particulars (not Swift's enum dump).
final class StorageErrorTests: XCTestCase {
    func testDescriptionsLeadWithTheCode() {
        let cases: [(StorageError, String)] = [
            (.revisionConflict(current: 3), "revision_conflict: stored revision 3"),
            (.revisionConflict(current: nil), "revision_conflict: stored revision none"),
            (.duplicateEvent, "duplicate_event"),
            (.invalidCommit("call ID mismatch"), "invalid_commit: call ID mismatch"),
            (.corrupt("bad row"), "corrupt: bad row"),
            (.notADatabase(path: "/d/x.sqlite"), "not_a_database: /d/x.sqlite"),
            (.cannotOpen(path: "/d/x.sqlite", message: "denied"), "cannot_open: /d/x.sqlite: denied"),
            (.schemaTooNew(found: 12, supported: 9), "schema_too_new: schema version 12, this build reads up to 9"),
            (.closed, "closed"),
            (.sqlite(code: 5, message: "database is locked"), "sqlite 5: database is locked"),
        ]
        for (error, text) in cases { XCTAssertEqual("\(error)", text) }
    }

    func testADatabaseThatCannotBeCreatedNamesItsPath() {
        XCTAssertThrowsError(try SQLiteCallStore(path: "/proc/no-such-dir/x.sqlite")) {
            let text = "\($0)"
            XCTAssertTrue(text.hasPrefix("cannot_open: /proc/no-such-dir/x.sqlite: "), text)
        }
    }
}
