import Foundation
import IO
import XCTest

/// Three Chromium tabs of the served client in one SFU room: each decodes audio and video
/// from the others (issue 3, "Integration against the real server binary"). Skips only while
/// the server binary has no media plane (room.join answered `mediaUnavailable`).
final class BrowserRoomTests: BrowserCase {
    func testThreeTabsInOneRoomEachDecodeTheOthers() throws {
        let started = Date()
        let server = try ServerProcess(settings: ["auth.dev_tokens": "true"])
        let chromium = try Chromium(loop: loop)
        defer { chromium.close() }
        let names = [("alice", "laptop"), ("bob", "phone"), ("carol", "desk")]
        let pages = try names.map { try openClient(chromium, server, account: $0.0, device: $0.1) }

        for (index, page) in pages.enumerated() {
            let outcome = try page.evaluate("window.switchboard.joinRoom('standup').then(() => 'ok', e => e.message)", timeout: 20) as? String
            if outcome?.contains("mediaUnavailable") == true {
                throw XCTSkip("this server build has no SFU media plane yet (room.join → mediaUnavailable)")
            }
            XCTAssertEqual(outcome, "ok", "\(names[index])")
        }
        let keys = names.map { "\($0.0)/\($0.1)" }
        for (index, page) in pages.enumerated() {
            let others = keys.enumerated().filter { $0.offset != index }.map(\.element)
            let list = others.map { ChromiumPage.literal($0) }.joined(separator: ",")
            try page.waitUntil("[\(list)].every(k => window.switchboard.members.includes(k))", timeout: 15)
            // One remote stream per other member (stream id = account/device), each with a <video>.
            try page.waitUntil("[\(list)].every(k => window.switchboard.remoteStreams.includes(k))", timeout: 20)
            try assertMediaFlows(page, keys[index])
        }

        // Mute and leave: carol leaves, the others drop her tile.
        try pages[2].evaluate("window.switchboard.leaveRoom()")
        for page in pages.prefix(2) {
            try page.waitUntil("!window.switchboard.members.includes('carol/desk')", timeout: 10)
            try page.waitUntil("!document.querySelector('.tile[data-id=\"room:carol/desk\"]')", timeout: 10)
        }
        print("browser room test took \(String(format: "%.1f", Date().timeIntervalSince(started))) s")
    }
}
