import Foundation
import XCTest
@testable import Storage

/// Which pages each committed step writes to the WAL, by owner (table, index, overflow,
/// freelist, page 1, pages zeroed on free): the setup replay (``SetupReplay``) with every op
/// in a batch of its own (the server at low load: one frame per loop turn, one COMMIT per
/// step), then with 8 steps per batch. Owners come from `dbstat`
/// (https://sqlite.org/dbstat.html) right after each batch. Skipped unless
/// SWITCHBOARD_BENCH=1; prints figures, asserts only that frames were seen.
///   SWITCHBOARD_BENCH=1 swift test --filter SQLitePagesPerStepTests
final class SQLitePagesPerStepTests: StorageTestCase {
    func testPagesWrittenPerStep() throws {
        try XCTSkipUnless(ProcessInfo.processInfo.environment["SWITCHBOARD_BENCH"] == "1", "set SWITCHBOARD_BENCH=1")
        let setups = Int(ProcessInfo.processInfo.environment["SETUPS"] ?? "") ?? 200
        let path = directory.appendingPathComponent("pages.sqlite").path
        let store = try SQLiteCallStore(path: path, backgroundCheckpoints: false)
        defer { store.close() }
        let warmUp = SetupReplay(setups: 300)
        try warmUp.registerDevices(in: store)
        _ = try warmUp.run(store: store, walPath: path + "-wal")

        for alone in [true, false] {
            var reader = WALFrameReader(path: path + "-wal")
            var byLabel: [String: (batches: Int, frames: Int, owners: [String: Int])] = [:]
            var total = 0, commits = 0
            var replay = SetupReplay(setups: setups)
            replay.everyOpAlone = alone
            replay.afterBatch = { labels in
                let frames = try reader.newFrames()
                guard !frames.isEmpty else { return }
                commits += 1
                total += frames.count
                let owners = try Self.pageOwners(store)
                let label = alone ? labels.joined(separator: "+") : "batch of 8 steps"
                var entry = byLabel[label] ?? (0, 0, [:])
                entry.batches += 1
                entry.frames += frames.count
                for frame in frames {
                    let owner: String
                    if frame.page == 1 {
                        owner = "page 1 (header)"
                    } else if frame.zeroed {
                        owner = "freed page zeroed (secure_delete)"
                    } else {
                        owner = owners[frame.page] ?? "freelist trunk"
                    }
                    entry.owners[owner, default: 0] += 1
                }
                byLabel[label] = entry
            }
            _ = try replay.run(store: store, walPath: path + "-wal")
            print("pages per step (\(alone ? "every op its own COMMIT" : "8 steps per batch")): \(setups) setups, \(commits) commits, "
                  + String(format: "%.1f WAL frames per setup, %.2f per commit", Double(total) / Double(setups), Double(total) / Double(commits)))
            for (label, entry) in byLabel.sorted(by: { $0.key < $1.key }) {
                let owners = entry.owners.sorted { $0.value > $1.value }
                    .map { String(format: "%@ %.2f", $0.key, Double($0.value) / Double(entry.batches)) }
                print(String(format: "  %@: %d commits, %.2f frames per commit: ", label, entry.batches,
                             Double(entry.frames) / Double(entry.batches)) + owners.joined(separator: ", "))
            }
            XCTAssertGreaterThan(total, 0)
        }
        let counts = try store.locked { connection in
            (try connection.scalarInt("PRAGMA page_count") ?? 0, try connection.scalarInt("PRAGMA freelist_count") ?? 0)
        }
        print("pages per step: page_count \(counts.0), freelist_count \(counts.1)")
    }

    /// Page number → "name (leaf|internal|overflow)" for every page of a B-tree.
    static func pageOwners(_ store: SQLiteCallStore) throws -> [UInt32: String] {
        try store.locked { connection in
            try connection.withUncached("SELECT name, pageno, pagetype FROM dbstat") { statement in
                var owners: [UInt32: String] = [:]
                while try statement.step() {
                    owners[UInt32(statement.int64(1))] = "\(statement.string(0)) (\(statement.string(2)))"
                }
                return owners
            }
        }
    }
}
