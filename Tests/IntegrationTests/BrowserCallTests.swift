import Foundation
import IO
import XCTest

/// 1:1 calls between headless Chromium tabs running the served client (`/`), against the
/// real server binary: ringing in every tab, answered elsewhere, P2P media on loopback, and
/// relay-only ICE through coturn with the TURN credentials the server issued.
final class BrowserCallTests: BrowserCase {
    func testTwoTabsRingOneAnswersOtherSeesAnsweredElsewhereAndMediaFlowsPeerToPeer() throws {
        let started = Date()
        let server = try ServerProcess(settings: ["auth.dev_tokens": "true"])
        let chromium = try Chromium(loop: loop)
        defer { chromium.close() }
        let alice = try openClient(chromium, server, account: "alice", device: "laptop")
        let bobA = try openClient(chromium, server, account: "bob", device: "tab-a")
        let bobB = try openClient(chromium, server, account: "bob", device: "tab-b")

        try alice.evaluate("""
            document.getElementById('callee').value = 'bob';
            document.getElementById('call-btn').click();
            """)
        try alice.waitUntil("window.switchboard.currentCall", timeout: 10)
        let callID = try XCTUnwrap(try alice.evaluate("window.switchboard.currentCall") as? String)

        // Both of bob's tabs ring, showing the caller and accept / decline buttons.
        let ringSelector = "#incoming .ring[data-call=\(ChromiumPage.literal(callID).replacingOccurrences(of: "'", with: ""))]"
        for tab in [bobA, bobB] {
            try waitForCallState(tab, callID, "ringing")
            try tab.waitUntil("document.querySelector('\(ringSelector) button.accept') && document.querySelector('\(ringSelector) button.decline')")
            let text = try tab.evaluate("document.querySelector('\(ringSelector)').textContent") as? String
            XCTAssertTrue(text?.contains("alice") == true, text ?? "")
        }
        try alice.waitUntil("['calling','ringing'].includes(window.switchboard.calls[\(ChromiumPage.literal(callID))].state)")

        try bobA.evaluate("document.querySelector('\(ringSelector) button.accept').click()")

        // The other tab stops ringing and says so.
        try waitForCallState(bobB, callID, "answeredElsewhere")
        try bobB.waitUntil("document.getElementById('incoming').textContent.includes('answered on another device')")
        XCTAssertNil(try bobB.evaluate("document.querySelector('\(ringSelector) button.accept')"))

        // ICE on loopback, DTLS, media: both sides report connected (→ call.mediaConnected).
        try waitForCallState(alice, callID, "connected", timeout: 20)
        try waitForCallState(bobA, callID, "connected", timeout: 20)
        try assertMediaFlows(alice, "alice")
        try assertMediaFlows(bobA, "bob/tab-a")
        let selected = try stats(alice).selected
        XCTAssertEqual(selected.first?["local"] as? String, "host", "P2P on loopback: \(selected)")

        // The server saw the call become active.
        XCTAssertTrue(server.logLines.contains { $0.contains(callID) && $0.contains("mediaConnected") },
                      "the server logged call.mediaConnected")

        // Mute flips the local tracks; unmute restores them.
        try alice.evaluate("document.getElementById('mute-audio').click(); document.getElementById('mute-video').click()")
        XCTAssertEqual(try alice.evaluate("[window.switchboard.audioMuted, window.switchboard.videoMuted]") as? [Bool], [true, true])
        XCTAssertEqual(try alice.evaluate("window.switchboard._callPC.getSenders().map(s => s.track.enabled)") as? [Bool], [false, false])
        try alice.evaluate("document.getElementById('mute-audio').click(); document.getElementById('mute-video').click()")
        XCTAssertEqual(try alice.evaluate("window.switchboard._callPC.getSenders().map(s => s.track.enabled)") as? [Bool], [true, true])

        try alice.evaluate("document.getElementById('hangup-btn').click()")
        try waitForCallState(alice, callID, "ended")
        try waitForCallState(bobA, callID, "ended")
        XCTAssertEqual(try bobA.evaluate("window.switchboard.calls[\(ChromiumPage.literal(callID))].reason") as? String, "hangup")
        XCTAssertEqual(try callState(bobB, callID), "answeredElsewhere", "the losing tab never rings again")
        XCTAssertNil(try bobA.evaluate("window.switchboard._callPC"), "the peer connection is closed")

        // A reload resumes from the cursor kept in sessionStorage: nothing rings again.
        try bobB.waitUntil("window.switchboard.cursor && sessionStorage.getItem('sb.cursor.bob/tab-b') === window.switchboard.cursor", timeout: 5)
        let cursor = try XCTUnwrap(try bobB.evaluate("(() => { const c = sessionStorage.getItem('sb.cursor.bob/tab-b'); location.reload(); return c; })()") as? String)
        try bobB.waitUntil("window.switchboard && window.switchboard.status === 'signedOut'", timeout: 10)
        try bobB.evaluate("window.switchboard.signIn('bob', 'tab-b')")
        try bobB.waitUntil("window.switchboard.status === 'ready'", timeout: 10)
        XCTAssertEqual(try bobB.evaluate("window.switchboard.resumedFrom") as? String, cursor)
        Thread.sleep(forTimeInterval: 0.3)
        XCTAssertEqual(try bobB.evaluate("Object.keys(window.switchboard.calls).length") as? Int, 0,
                       "no replayed event for the finished call")
        XCTAssertNil(try bobB.evaluate("document.querySelector('#incoming button.accept')"))
        print("browser P2P call test took \(String(format: "%.1f", Date().timeIntervalSince(started))) s")
    }

    func testDeclineInOneTabEndsTheCallForTheCallerAndTheOtherTab() throws {
        let server = try ServerProcess(settings: ["auth.dev_tokens": "true"])
        let chromium = try Chromium(loop: loop)
        defer { chromium.close() }
        let alice = try openClient(chromium, server, account: "alice", device: "laptop")
        let bobA = try openClient(chromium, server, account: "bob", device: "tab-a")
        let bobB = try openClient(chromium, server, account: "bob", device: "tab-b")
        let callID = try XCTUnwrap(try alice.evaluate("window.switchboard.call('bob')", timeout: 15) as? String)
        try waitForCallState(bobA, callID, "ringing")
        try waitForCallState(bobB, callID, "ringing")
        try bobA.evaluate("document.querySelector('#incoming .ring button.decline').click()")
        try waitForCallState(bobA, callID, "declined")
        try waitForCallState(bobB, callID, "declinedElsewhere")
        try bobB.waitUntil("document.getElementById('incoming').textContent.includes('declined on another device')")
        try waitForCallState(alice, callID, "ended")
        XCTAssertEqual(try alice.evaluate("window.switchboard.calls[\(ChromiumPage.literal(callID))].reason") as? String, "declined")
        XCTAssertNil(try alice.evaluate("window.switchboard._callPC"), "the caller's peer connection is closed")
    }

    func testRelayOnlyCallThroughCoturnWithServerIssuedCredentials() throws {
        let started = Date()
        let turn = try BrowserTURNServer()
        defer { turn.stop() }
        let server = try ServerProcess(settings: ["auth.dev_tokens": "true", "turn.secret": turn.secret,
                                                  "turn.uris": turn.uri])
        let chromium = try Chromium(loop: loop)
        defer { chromium.close() }
        let alice = try openClient(chromium, server, account: "alice", device: "laptop", query: "?relay=1")
        let bob = try openClient(chromium, server, account: "bob", device: "desk", query: "?relay=1")
        XCTAssertEqual(try alice.evaluate("window.switchboard.relayOnly") as? Bool, true)

        let callID = try XCTUnwrap(try alice.evaluate("window.switchboard.call('bob')", timeout: 15) as? String)
        try waitForCallState(bob, callID, "ringing")
        let issued = try XCTUnwrap(try bob.evaluate("window.switchboard.calls[\(ChromiumPage.literal(callID))].turn") as? [String: Any])
        XCTAssertTrue((issued["username"] as? String)?.hasSuffix(":bob") == true, "TURN REST username: \(issued)")
        XCTAssertEqual(issued["uris"] as? [String], [turn.uri])
        XCTAssertEqual(try bob.evaluate("window.switchboard.accept(\(ChromiumPage.literal(callID)))", timeout: 15) as? Bool, true)

        do {
            try waitForCallState(alice, callID, "connected", timeout: 30)
            try waitForCallState(bob, callID, "connected", timeout: 30)
        } catch {
            // This wait has timed out a few times in full suite runs (never alone): say what
            // ICE and coturn saw, so the next failure can be told apart from a slow host.
            let pairs = [(alice, "alice"), (bob, "bob")].map { page, name in
                "\(name) candidate pairs: \((try? stats(page))?.pairs.description ?? "stats() failed")"
            }
            XCTFail("not connected: \(pairs.joined(separator: "\n"))\ncoturn log (tail):\n\(turn.log.suffix(4_000))")
            throw error
        }
        for (page, name) in [(alice, "alice"), (bob, "bob")] {
            let s = try stats(page)
            let selected = try XCTUnwrap(s.selected.first, "\(name): no selected pair in \(s.raw)")
            XCTAssertEqual(selected["local"] as? String, "relay", "\(name): \(selected)")
            // The relayed address is one coturn allocated: the REST credentials the server
            // minted were accepted (an allocation needs an authenticated request).
            XCTAssertEqual(selected["localAddress"] as? String, "127.0.0.1", "\(name): \(selected)")
            let relayPort = (selected["localPort"] as? NSNumber)?.intValue ?? 0
            XCTAssertTrue(turn.relayPorts.contains(relayPort), "\(name): relay port \(relayPort) not in \(turn.relayPorts)")
            // Chromium reports a pair `in-progress` again while each later check of it (consent
            // freshness, RFC 7675) is out, and a check through coturn takes a few round trips:
            // one sample caught the nominated pair between request and response in a CI run
            // while media flowed over it. Wait for a sample that shows it succeeded.
            let succeeded = (try? page.waitUntil(
                "window.switchboard.stats().then(s => s.pairs.some(p => p.state === 'succeeded' && p.local === 'relay'))",
                timeout: 10)) != nil
            XCTAssertTrue(succeeded, "\(name): a succeeded relay pair in \((try? stats(page))?.pairs.description ?? "stats() failed")")
            XCTAssertFalse(s.pairs.contains { $0["local"] as? String == "host" || $0["local"] as? String == "srflx" },
                           "\(name): relay-only gathers no host candidates: \(s.pairs)")
            try assertMediaFlows(page, name + " (relay)")
        }
        try bob.evaluate("window.switchboard.hangup()")
        try waitForCallState(alice, callID, "ended")
        print("browser relay call test took \(String(format: "%.1f", Date().timeIntervalSince(started))) s")
    }
}
