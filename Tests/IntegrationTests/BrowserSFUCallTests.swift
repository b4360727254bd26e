import Foundation
import IO
import XCTest

/// A 1:1 call routed through the SFU (`media: sfu`), rung and answered through the served
/// client: both parties join the room named after the callID. The media half (both tabs
/// decode each other) is skipped only while the server runs without a media plane.
final class BrowserSFUCallTests: BrowserCase {
    func testSFURoutedCallRingsAnswersAndBothPartiesJoinTheCallRoom() throws {
        let started = Date()
        let server = try ServerProcess(settings: ["auth.dev_tokens": "true"])
        let chromium = try Chromium(loop: loop)
        defer { chromium.close() }
        let alice = try openClient(chromium, server, account: "alice", device: "laptop")
        let bobA = try openClient(chromium, server, account: "bob", device: "tab-a")
        let bobB = try openClient(chromium, server, account: "bob", device: "tab-b")

        try alice.evaluate("""
            document.getElementById('via-server').checked = true;
            document.getElementById('callee').value = 'bob';
            document.getElementById('call-btn').click();
            """)
        try alice.waitUntil("window.switchboard.currentCall", timeout: 10)
        let callID = try XCTUnwrap(try alice.evaluate("window.switchboard.currentCall") as? String)
        let id = ChromiumPage.literal(callID)
        for tab in [bobA, bobB] {
            try waitForCallState(tab, callID, "ringing")
            XCTAssertEqual(try tab.evaluate("window.switchboard.calls[\(id)].media") as? String, "sfu")
        }
        XCTAssertEqual(try bobA.evaluate("window.switchboard.accept(\(id))", timeout: 20) as? Bool, true)
        try waitForCallState(bobB, callID, "answeredElsewhere")

        // Both parties are in the call's room and see each other.
        try alice.waitUntil("window.switchboard.room === \(id) && window.switchboard.members.includes('bob/tab-a')", timeout: 10)
        try bobA.waitUntil("window.switchboard.room === \(id) && window.switchboard.members.includes('alice/laptop')", timeout: 10)
        XCTAssertNil(try bobB.evaluate("window.switchboard.room"))
        for page in [alice, bobA] {
            try page.waitUntil("window.switchboard.roomState === 'negotiated'", timeout: 20)
        }
        try waitForCallState(alice, callID, "connected", timeout: 20)
        try waitForCallState(bobA, callID, "connected", timeout: 20)
        try assertMediaFlows(alice, "alice (sfu)")
        try assertMediaFlows(bobA, "bob/tab-a (sfu)")

        try alice.evaluate("window.switchboard.hangup()")
        try waitForCallState(alice, callID, "ended")
        try waitForCallState(bobA, callID, "ended")
        try bobA.waitUntil("window.switchboard.room === null", timeout: 10)
        XCTAssertNil(try alice.evaluate("window.switchboard.room"))
        print("browser SFU-routed call test took \(String(format: "%.1f", Date().timeIntervalSince(started))) s")
    }
}
