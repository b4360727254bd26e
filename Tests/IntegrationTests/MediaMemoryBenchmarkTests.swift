import Foundation
import Peer
import XCTest

/// Resident memory per room member of the real `switchboard serve` process, on the
/// allocator it ships with (docs/benchmarks.md, "Resident memory per member of the server binary").
/// `SFUMemoryBenchmarkTests` measures the server's heap share inside a test process on
/// glibc; this reads the binary's own VmRSS (/proc/PID/status) while synthetic peers
/// publish audio and 3-layer simulcast video with RTX and receive the others of their room.
///
///     SWITCHBOARD_BENCH=1 swift test --filter MediaMemoryBenchmarkTests
///     # SWITCHBOARD_BENCH_ROOMS (3), SWITCHBOARD_BENCH_ROOM_SIZE (4),
///     # SWITCHBOARD_BENCH_SECONDS (5): media time before the second reading
///     # SWITCHBOARD_TEST_SERVER (optional): path of the server binary to measure
final class MediaMemoryBenchmarkTests: ImpairedRoomCase {
    var roomSize = 4

    func residentKB(_ server: ServerProcess) throws -> Int {
        let pid = try XCTUnwrap(server.process?.processIdentifier)
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try XCTUnwrap(status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") })
        return try XCTUnwrap(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]))
    }

    /// A room of `size` members; returns once every member has every other's media.
    /// `others` (members of rooms filled before) are pumped meanwhile: offers answered, pings sent.
    func fillRoom(_ server: ServerProcess, _ room: String, size: Int, first: Int, others: [RoomPeerMember] = []) throws -> [RoomPeerMember] {
        var members: [RoomPeerMember] = []
        for index in first ..< first + size {
            members.append(try join(server, "user\(index)", "dev", frequency: 300 + Double(index % 20) * 40, room: room) {
                $0.sendVideo = true
                $0.simulcastLayers = SimulcastLayer.chromiumLadder
                $0.offerRTX = true
            })
        }
        for subscriber in members {
            for publisher in members where publisher !== subscriber {
                try awaitMedia(others + members, subscriber: subscriber, publisher: publisher, videoPackets: 25, timeout: 30)
            }
        }
        return members
    }

    func leaveAll(_ members: [RoomPeerMember]) throws {
        for member in members {
            try member.room.leave()
            member.peer.close()
        }
    }

    func testResidentMemoryPerMemberOfTheServerProcess() throws {
        let environment = ProcessInfo.processInfo.environment
        guard environment["SWITCHBOARD_BENCH"] == "1" else { throw XCTSkip("benchmark: set SWITCHBOARD_BENCH=1") }
        let rooms = Int(environment["SWITCHBOARD_BENCH_ROOMS"] ?? "") ?? 3
        let seconds = Double(environment["SWITCHBOARD_BENCH_SECONDS"] ?? "") ?? 5
        roomSize = max(2, Int(environment["SWITCHBOARD_BENCH_ROOM_SIZE"] ?? "") ?? 4)
        let server = try startServer()
        let listening = server.logLines.first { $0.contains("\"msg\":\"listening\"") } ?? ""
        let allocator = listening.range(of: "\"allocator\":\"[^\"]*\"", options: .regularExpression).map { String(listening[$0]) } ?? "?"
        // Warm-up: a room of 2 joins, has media, leaves, so one-time allocations (thread
        // caches, libsrtp/OpenSSL tables, batch buffers, the allocator's own) are not charged
        // to members. Only 2: what it leaves resident, later members reuse without growing RSS.
        try leaveAll(try fillRoom(server, "warm", size: 2, first: 1000))
        Thread.sleep(forTimeInterval: 1)
        let base = try residentKB(server)

        var members: [RoomPeerMember] = []
        for room in 0 ..< rooms { members += try fillRoom(server, "r\(room)", size: roomSize, first: room * roomSize, others: members) }
        let joined = try residentKB(server)
        let until = Date(timeIntervalSinceNow: seconds)
        try pump(members, timeout: seconds + 5) { Date() >= until }
        let media = try residentKB(server)
        try leaveAll(members)
        Thread.sleep(forTimeInterval: 2)
        let left = try residentKB(server)

        let count = Double(members.count)
        func perMember(_ kb: Int) -> String { String(format: "%.1f KB", Double(kb - base) / count) }
        print("""
            media memory, server process (\(allocator)), \(rooms) rooms of \(roomSize), \(members.count) members \
            (audio + 3-layer simulcast + RTX, each receiving the room's others):
              VmRSS before the members: \(base) KB
              all members with media:   \(joined) KB (\(perMember(joined)) per member)
              after \(Int(seconds)) s more media:   \(media) KB (\(perMember(media)) per member)
              after every member left:  \(left) KB (\(perMember(left)) per member)
            """)
        XCTAssertGreaterThan(media, base, "members cost memory")
    }
}
