import Foundation
import IO
import XCTest

/// Three Chromium tabs of the served client in one SFU room: each decodes audio and video
/// from the others (issue 3, "Integration against the real server binary"), then one leaves.
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
            XCTAssertEqual(outcome, "ok", "\(names[index])")
        }
        let keys = names.map { "\($0.0)/\($0.1)" }
        func others(_ index: Int) -> String {
            keys.enumerated().filter { $0.offset != index }.map { ChromiumPage.literal($0.element) }.joined(separator: ",")
        }
        // Membership: each tab lists the two others (from the join result or room.memberJoined).
        for (index, page) in pages.enumerated() {
            try page.waitUntil("[\(others(index))].every(k => window.switchboard.members.includes(k)) && window.switchboard.members.length === 2", timeout: 15)
        }
        for page in pages {
            try page.waitUntil("window.switchboard.roomState === 'negotiated'", timeout: 20)
        }
        for (index, page) in pages.enumerated() {
            // One remote stream per other member (stream id = account/device), each shown in a <video>.
            try page.waitUntil("[\(others(index))].every(k => window.switchboard.remoteStreams.includes(k) && document.querySelector('.tile[data-id=\"room:' + k + '\"] video'))", timeout: 20)
            try assertMediaFlows(page, keys[index])
        }

        // Leave: carol goes, the others drop her from the member list and her tile.
        try pages[2].evaluate("window.switchboard.leaveRoom()")
        XCTAssertEqual(try pages[2].evaluate("window.switchboard.room") as? String, nil)
        for page in pages.prefix(2) {
            try page.waitUntil("!window.switchboard.members.includes('carol/desk')", timeout: 10)
            try page.waitUntil("!document.querySelector('.tile[data-id=\"room:carol/desk\"]')", timeout: 10)
        }
        print("browser room test took \(String(format: "%.1f", Date().timeIntervalSince(started))) s")
    }

    func testRoomRingRingsEveryInviteeTabAndJoinFromOneStopsTheOther() throws {
        let server = try ServerProcess(settings: ["auth.dev_tokens": "true"])
        let chromium = try Chromium(loop: loop)
        defer { chromium.close() }
        let alice = try openClient(chromium, server, account: "alice", device: "laptop")
        let bobA = try openClient(chromium, server, account: "bob", device: "tab-a")
        let bobB = try openClient(chromium, server, account: "bob", device: "tab-b")
        let joined = try alice.evaluate("window.switchboard.joinRoom('standup').then(() => 'ok', e => e.message)", timeout: 20) as? String
        XCTAssertEqual(joined, "ok")

        try alice.evaluate("""
            document.getElementById('invitees').value = 'bob';
            document.getElementById('ring-btn').click();
            """)
        try alice.waitUntil("(window.switchboard.ringStates.standup || {}).bob === 'ringing'", timeout: 10)
        for tab in [bobA, bobB] {
            try tab.waitUntil("document.querySelector('#room-invites .ring[data-room=\"standup\"] button.join')", timeout: 10)
            let text = try tab.evaluate("document.querySelector('#room-invites .ring').textContent") as? String
            XCTAssertTrue(text?.contains("alice/laptop") == true, text ?? "")
        }
        try bobA.evaluate("document.querySelector('#room-invites .ring[data-room=\"standup\"] button.join').click()")
        try bobA.waitUntil("window.switchboard.room === 'standup' && window.switchboard.members.includes('alice/laptop')", timeout: 10)
        try bobB.waitUntil("window.switchboard.roomInvites.standup.state === 'accepted'", timeout: 10)
        try bobB.waitUntil("document.getElementById('room-invites').textContent.includes('answered on another device')", timeout: 5)
        XCTAssertNil(try bobB.evaluate("window.switchboard.room"), "the other tab did not join")
        try alice.waitUntil("window.switchboard.members.includes('bob/tab-a') && window.switchboard.ringStates.standup.bob === 'accepted'", timeout: 10)
    }
}
