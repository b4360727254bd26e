import CallCore
import Foundation
import Media
@testable import Server
import Signaling
import XCTest

/// The media-plane side of `sfu.preferences` (docs/protocol.md §9) against a real SFU worker
/// pool on 127.0.0.1, and the browser client's script that sends it.
final class SFUPreferencesPlaneTests: XCTestCase {
    /// The refusal's code, "accepted", or nil without a completion.
    private func answer(_ plane: SFUMediaPlane, _ member: DeviceKey, _ preferences: SFUPreferences) -> String? {
        let done = DispatchSemaphore(value: 0)
        var outcome: Result<Void, SFUPreferencesError>?
        plane.setPreferences(member: member, preferences: preferences) { result in
            outcome = result
            done.signal()
        }
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success, "no completion")
        switch outcome {
        case .success?: return "accepted"
        case .failure(let error)?: return error.code
        case nil: return nil
        }
    }

    func testPoolRefusesMembersWithoutASessionAndOutOfRangeValues() throws {
        let pool = try SFUWorkerPool(configuration: MediaConfiguration(host: "127.0.0.1", port: 0), workers: 2)
        pool.start()
        defer { pool.stop() }
        let plane = SFUMediaPlane(pool)
        let bob = DeviceKey(account: "bob", device: "phone")
        let alice = DeviceKey(account: "alice", device: "laptop")
        let valid = SFUPreferences(publisher: alice, mid: "1", maxWidth: 640, maxHeight: 360, maxLayer: 1)
        // No media session: the device has not offered yet.
        XCTAssertEqual(answer(plane, bob, valid), "notInRoom")
        // Range problems are refused before the pool is asked (the hub refuses them first).
        var tooWide = valid
        tooWide.maxWidth = 16_384
        XCTAssertEqual(answer(plane, bob, tooWide), "badSize")
        var badLayer = valid
        badLayer.maxLayer = 3
        XCTAssertEqual(answer(plane, bob, badLayer), "badLayer")
        // The pool itself: unknown subscriber, and the SFU's own guards on non-positive values.
        let done = DispatchSemaphore(value: 0)
        var results: [String] = []
        for (width, layer) in [(640, 1), (0, 1), (640, -1)] {
            pool.workers[0].setPreferences(member: MemberID(account: "bob", device: "phone"), publisher: MemberID(account: "alice", device: "laptop"),
                                           mid: "1", maxWidth: width, maxHeight: 360, maxLayer: layer) { result in
                switch result {
                case .success: results.append("accepted")
                case .failure(let error): results.append(error.code)
                }
                done.signal()
            }
            XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        }
        XCTAssertEqual(results, ["noSession", "badSize", "badLayer"])
    }

    func testEveryMediaPlaneRefusalHasItsOwnProtocolCode() {
        let all: [SFUPreferenceError] = [.noSession, .unknownPublisher, .unknownTrack, .badSize, .badLayer, .notRunning]
        let codes = all.map { SFUMediaPlane.wire($0).code }
        XCTAssertEqual(codes, ["notInRoom", "unknownPublisher", "unknownTrack", "badSize", "badLayer", "mediaUnavailable"])
    }

    /// The page's script parses (node --check), defines the preference sender and calls it
    /// where room tiles are created.
    func testWebClientScriptSendsPreferencesFromRoomTiles() throws {
        let page = WebClient.page
        XCTAssertTrue(page.contains("function watchTileSize("))
        XCTAssertTrue(page.contains("watchTileSize(e.transceiver, id, videoTile(\"room:\" + id, id))"))
        XCTAssertTrue(page.contains("command(\"sfu.preferences\""))
        XCTAssertTrue(page.contains("new ResizeObserver("))
        let node = ["/usr/bin/node", "/usr/bin/nodejs", "/usr/local/bin/node"].first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let node else { throw XCTSkip("node is not installed: the script's syntax is not checked") }
        let start = try XCTUnwrap(page.range(of: "<script>")), end = try XCTUnwrap(page.range(of: "</script>"))
        let script = FileManager.default.temporaryDirectory.appendingPathComponent("page-\(UUID().uuidString).js")
        try String(page[start.upperBound..<end.lowerBound]).write(to: script, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: script) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: node)
        process.arguments = ["--check", script.path]
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        process.waitUntilExit()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertEqual(process.terminationStatus, 0, message)
    }
}
