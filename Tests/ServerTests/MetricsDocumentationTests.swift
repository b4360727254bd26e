import Foundation
import Logging
@testable import Server
import XCTest

/// docs/stats.md defines every family of `GET /metrics`: a family the server exposes and the
/// document does not name fails here. The exposition comes from a real server object (real
/// SQLite file in a temp dir, the SFU worker pool on 127.0.0.1 port 0, not started: its
/// families are declared with no samples), rendered by the same `metricsText()` the route
/// serves.
final class MetricsDocumentationTests: XCTestCase {
    private var temp: TempDirectory!

    override func setUpWithError() throws { temp = try TempDirectory() }
    override func tearDown() { temp.remove() }

    /// The families (`# TYPE` lines, Prometheus text format 0.0.4) of an exposition.
    static func families(_ exposition: String) -> [String] {
        exposition.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ")
            guard parts.count == 4, parts[0] == "#", parts[1] == "TYPE" else { return nil }
            return String(parts[2])
        }
    }

    /// True when `text` names `name` as a whole: not only as the start of a longer name
    /// (`…_tick_microseconds` inside `…_tick_microseconds_max`) or the end of one.
    static func mentions(_ text: String, _ name: String) -> Bool {
        func isNameCharacter(_ c: Character) -> Bool { c == "_" || c.isLetter || c.isNumber }
        var searchRange = text.startIndex..<text.endIndex
        while let found = text.range(of: name, range: searchRange) {
            let before = found.lowerBound == text.startIndex ? nil : text[text.index(before: found.lowerBound)]
            let after = found.upperBound == text.endIndex ? nil : text[found.upperBound]
            if !(before.map(isNameCharacter) ?? false) && !(after.map(isNameCharacter) ?? false) { return true }
            searchRange = found.upperBound..<text.endIndex
        }
        return false
    }

    func testMentionsMatchesWholeNamesOnly() {
        let text = "`switchboard_hub_tick_microseconds_max` and switchboard_commands_total."
        XCTAssertTrue(Self.mentions(text, "switchboard_commands_total"))
        XCTAssertTrue(Self.mentions(text, "switchboard_hub_tick_microseconds_max"))
        XCTAssertFalse(Self.mentions(text, "switchboard_hub_tick_microseconds"))
        XCTAssertFalse(Self.mentions(text, "hub_tick_microseconds_max"))
        XCTAssertEqual(Self.families("# HELP a b c\n# TYPE a counter\na 1\n# TYPE b_max gauge\n"), ["a", "b_max"])
    }

    func testEveryMetricsFamilyIsDefinedInStatsDoc() throws {
        var config = ServerConfig()
        config.http.host = "127.0.0.1"
        config.http.port = 0
        config.database.path = temp.file("switchboard.sqlite")
        config.token.secretFile = temp.file("token-secret")
        config.media.host = "127.0.0.1"
        config.media.port = 0
        let server = try SwitchboardServer(config: config, log: Logger(subsystem: "test", minimumLevel: .error))
        defer {
            server.sfu?.stop()
            server.store.close()
        }
        XCTAssertNotNil(server.sfu, "media.enabled is the default: the media families are part of the exposition")
        // The frame-handling summary is written only once a frame was handled.
        server.commandTimes.record(120)
        let exposition = server.metricsText()
        let families = Self.families(exposition)
        // Not vacuous: the parse found the hub's, the WAL's and the media plane's families.
        for known in ["switchboard_ws_connections", "switchboard_frame_handling_microseconds",
                      "switchboard_hub_frame_wait_microseconds", "switchboard_hub_frame_wait_microseconds_max",
                      "switchboard_wal_frames_written_total", "switchboard_sfu_rtp_in_total",
                      "switchboard_media_loop_datagrams_in_total", "switchboard_sfu_pacer_lane_rate_bps"] {
            XCTAssertTrue(families.contains(known), "\(known) missing from the exposition: the parse or the fixture is wrong")
        }
        XCTAssertEqual(families.count, Set(families).count, "each family is declared once")

        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let doc = try String(contentsOfFile: repository.appendingPathComponent("docs/stats.md").path, encoding: .utf8)
        let missing = families.filter { !Self.mentions(doc, $0) }
        XCTAssertEqual(missing, [], "families on /metrics that docs/stats.md does not define")
    }
}
