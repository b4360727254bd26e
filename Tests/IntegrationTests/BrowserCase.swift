import Foundation
import IO
import XCTest

/// Helpers for tests that drive the served browser client (`/`) in headless Chromium.
class BrowserCase: IntegrationCase {
    /// Opens the client and signs in through its form (development token, no paste).
    func openClient(_ chromium: Chromium, _ server: ServerProcess, account: String, device: String,
                    query: String = "") throws -> ChromiumPage {
        let page = try chromium.page(url: server.httpBase + "/" + query)
        try page.evaluate("""
            document.getElementById('account').value = \(ChromiumPage.literal(account));
            document.getElementById('device').value = \(ChromiumPage.literal(device));
            document.getElementById('token').value = '';
            document.getElementById('connect-btn').click();
            """)
        try page.waitUntil("window.switchboard.status === 'ready'", timeout: 15)
        return page
    }

    /// `window.switchboard.calls[callID].state` on `page`.
    func callState(_ page: ChromiumPage, _ callID: String) throws -> String? {
        try page.evaluate("(window.switchboard.calls[\(ChromiumPage.literal(callID))] || {}).state") as? String
    }

    func waitForCallState(_ page: ChromiumPage, _ callID: String, _ state: String, timeout: Double = 20) throws {
        try page.waitUntil("(window.switchboard.calls[\(ChromiumPage.literal(callID))] || {}).state === \(ChromiumPage.literal(state))",
                           timeout: timeout)
    }

    /// `switchboard.stats()` decoded.
    func stats(_ page: ChromiumPage) throws -> BrowserStats {
        let value = try page.evaluate("window.switchboard.stats()")
        return BrowserStats(try XCTUnwrap(value as? [String: Any], "stats() returned \(String(describing: value))"))
    }

    /// Waits until video frames are being decoded, then takes two samples 1.5 s apart and
    /// asserts packets (audio, video) and decoded frames (video) grew between them.
    func assertMediaFlows(_ page: ChromiumPage, _ name: String, file: StaticString = #filePath, line: UInt = #line) throws {
        try page.waitUntil("window.switchboard.stats().then(s => s.video.framesDecoded > 0 && s.audio.packetsReceived > 0)", timeout: 20)
        let first = try stats(page)
        Thread.sleep(forTimeInterval: 1.5)
        let second = try stats(page)
        XCTAssertGreaterThan(second.audioPackets, first.audioPackets, "\(name): audio packets", file: file, line: line)
        XCTAssertGreaterThan(second.videoPackets, first.videoPackets, "\(name): video packets", file: file, line: line)
        XCTAssertGreaterThan(second.videoFrames, first.videoFrames, "\(name): video frames decoded", file: file, line: line)
        print("\(name): audio packets \(first.audioPackets)→\(second.audioPackets), video packets \(first.videoPackets)→\(second.videoPackets), frames decoded \(first.videoFrames)→\(second.videoFrames) in 1.5 s")
    }
}

/// The parts of `switchboard.stats()` the tests look at.
struct BrowserStats {
    let raw: [String: Any]
    init(_ raw: [String: Any]) { self.raw = raw }

    private func number(_ kind: String, _ key: String) -> Int {
        ((raw[kind] as? [String: Any])?[key] as? NSNumber)?.intValue ?? 0
    }
    var audioPackets: Int { number("audio", "packetsReceived") }
    var videoPackets: Int { number("video", "packetsReceived") }
    var videoFrames: Int { number("video", "framesDecoded") }
    /// The transports' selected pairs: [state, local candidate type, remote candidate type].
    var selected: [[String: Any]] { raw["selected"] as? [[String: Any]] ?? [] }
    var pairs: [[String: Any]] { raw["pairs"] as? [[String: Any]] ?? [] }
}
