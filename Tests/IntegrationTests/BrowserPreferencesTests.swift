import Foundation
import XCTest

/// The served client's adaptive receive (WebClient+Preferences.swift): each remote video tile
/// reports its rendered size with `sfu.preferences`, the SFU records it per subscriber and
/// track (/metrics), a resize sends a new one once settled, a small one sends none.
final class BrowserPreferencesTests: BrowserSimulcastCase {
    func testTilesReportTheirRenderedSizeAndResizesUpdateIt() throws {
        let server = try ServerProcess(settings: ["auth.dev_tokens": "true"])
        _ = try mediaPort(server)
        let chromium = try Chromium(loop: loop)
        defer { chromium.close() }
        let (aliceKey, bobKey) = ("alice/laptop", "bob/phone")
        let alice = try openClient(chromium, server, account: "alice", device: "laptop")
        let bob = try openClient(chromium, server, account: "bob", device: "phone")
        try joinAll([alice, bob], room: "adaptive", keys: [aliceKey, bobKey])
        let scale = try XCTUnwrap(bob.evaluate("window.devicePixelRatio || 1") as? NSNumber).doubleValue
        let tile = "document.querySelector('.tile[data-id=\"room:\(aliceKey)\"] video')"

        // The tile's CSS size (240x180 in the page's style) in device pixels.
        let small = (width: Int((240 * scale).rounded()), height: Int((180 * scale).rounded()))
        try bob.waitUntil(accepted(aliceKey, small), timeout: 20)
        try waitForMetrics(bob, publisher: aliceKey, subscriber: bobKey, size: small)
        // alice's tab is in the background (no rendering, so no ResizeObserver callbacks): her
        // tile of bob is reported by the first, timer-driven send.
        try alice.waitUntil(accepted(bobKey, small), timeout: 20)

        // A notable resize: one new preference after the size settles.
        try bob.evaluate("\(tile).style.width = '640px'; \(tile).style.height = '360px';")
        let large = (width: Int((640 * scale).rounded()), height: Int((360 * scale).rounded()))
        try bob.waitUntil(accepted(aliceKey, large), timeout: 10)
        try waitForMetrics(bob, publisher: aliceKey, subscriber: bobKey, size: large)

        // Below the 15 % threshold: nothing is sent (the recorded preference stays).
        try bob.evaluate("\(tile).style.width = '660px';")
        Thread.sleep(forTimeInterval: 1.5)   // three debounce periods
        XCTAssertEqual(try bob.evaluate("window.switchboard.preferences[\(ChromiumPage.literal(aliceKey))].maxWidth") as? Int, large.width)
        try waitForMetrics(bob, publisher: aliceKey, subscriber: bobKey, size: large)
        print("bob's tile of alice: \(small.width)x\(small.height) then \(large.width)x\(large.height) device pixels (scale \(scale))")
    }

    func testAdaptiveZeroSendsNoPreferences() throws {
        let server = try ServerProcess(settings: ["auth.dev_tokens": "true"])
        _ = try mediaPort(server)
        let chromium = try Chromium(loop: loop)
        defer { chromium.close() }
        let alice = try openClient(chromium, server, account: "alice", device: "laptop")
        let bob = try openClient(chromium, server, account: "bob", device: "phone", query: "?adaptive=0")
        try joinAll([alice, bob], room: "plain", keys: ["alice/laptop", "bob/phone"])
        // alice (adaptive) reports her tile of bob: the mechanism runs on this server …
        try alice.waitUntil(accepted("bob/phone", nil), timeout: 20)
        // … bob (adaptive=0) never does, and the SFU holds no size for him.
        Thread.sleep(forTimeInterval: 1.5)
        XCTAssertEqual(try bob.evaluate("Object.keys(window.switchboard.preferences).length") as? Int, 0)
        let widths = try metrics(bob).filter { $0.name == "switchboard_sfu_subscriber_max_width" && $0.labels["subscriber"] == "bob/phone" }
        XCTAssertEqual(widths.map(\.value), [0], "bob's subscription to alice's video has no size")
    }

    // MARK: Helpers

    /// JS: the page's last preference for `publisher` was accepted (with this size, if given).
    private func accepted(_ publisher: String, _ size: (width: Int, height: Int)?) -> String {
        let p = "window.switchboard.preferences[\(ChromiumPage.literal(publisher))]"
        guard let size else { return "!!\(p) && \(p).status === 'accepted'" }
        return "!!\(p) && \(p).status === 'accepted' && \(p).maxWidth === \(size.width) && \(p).maxHeight === \(size.height)"
    }

    private func waitForMetrics(_ page: ChromiumPage, publisher: String, subscriber: String, size: (width: Int, height: Int),
                                file: StaticString = #filePath, line: UInt = #line) throws {
        var seen: [String: Double] = [:]
        for _ in 0..<20 {
            let samples = try metrics(page).filter {
                $0.labels["publisher"] == publisher && $0.labels["subscriber"] == subscriber && $0.labels["kind"] == "video"
            }
            for name in ["max_width", "max_height", "max_layer"] {
                seen[name] = samples.first { $0.name == "switchboard_sfu_subscriber_" + name }?.value
            }
            if seen["max_width"] == Double(size.width), seen["max_height"] == Double(size.height) { break }
            Thread.sleep(forTimeInterval: 0.25)
        }
        XCTAssertEqual(seen["max_width"], Double(size.width), "\(seen)", file: file, line: line)
        XCTAssertEqual(seen["max_height"], Double(size.height), "\(seen)", file: file, line: line)
        XCTAssertEqual(seen["max_layer"], -1, "the browser sends no layer cap", file: file, line: line)
    }
}
