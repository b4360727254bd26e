import Foundation
import NetEmu
import XCTest

/// The served client publishes room video as three rid simulcast layers (q/h/f,
/// WebClient+Simulcast.swift) and the SFU receives all three and forwards one per subscriber
/// (issue 4, "Real clients"). Also: one page's media through a NetEmu relay (the client's
/// test-only `?sfuCandidatePort=` hook), the ground for the downlink-cap test.
final class BrowserSimulcastTests: BrowserSimulcastCase {
    func testPublisherSendsThreeLayersTheSFUReceivesThemAndSubscribersDecode() throws {
        let server = try ServerProcess(settings: ["auth.dev_tokens": "true"])
        _ = try mediaPort(server)
        // The subscribers stop their cameras (black frames): the box's CPU goes to alice's three encodings.
        let chromium = try Chromium(loop: loop)
        defer { chromium.close() }
        let names = [("alice", "laptop"), ("bob", "phone"), ("carol", "desk")]
        let keys = names.map { "\($0.0)/\($0.1)" }
        let pages = try names.map { try openClient(chromium, server, account: $0.0, device: $0.1) }
        try joinAll(pages, room: "layers", keys: keys)
        let alice = pages[0]
        for page in pages.dropFirst() { try page.evaluate("document.getElementById('mute-video').click()") }
        XCTAssertEqual(try alice.evaluate("window.switchboard.simulcastAccepted") as? Bool, true, "the SFU's answer accepts simulcast")

        // The publisher encodes all three rids: the first 2 s window (within 60 s) in which
        // every rid's bytesSent and framesEncoded grow. Chromium enables a layer only once its
        // send estimate covers it (≈1.3 Mbit/s for f) and pauses it again when the estimate
        // dips, so a fixed window right after joining would test the estimator, not simulcast.
        let interval = 2.0
        let deadline = Date(timeIntervalSinceNow: 60)
        var first = try outbound(alice), firstMetrics = try metrics(alice)
        var firstInbound = try pages.dropFirst().map { try inbound($0) }
        var second = first, secondMetrics = firstMetrics, secondInbound = firstInbound
        while true {
            Thread.sleep(forTimeInterval: interval)
            second = try outbound(alice)
            secondMetrics = try metrics(alice)
            secondInbound = try pages.dropFirst().map { try inbound($0) }
            let allGrow = ["q", "h", "f"].allSatisfy { rid in
                guard let a = first[rid], let b = second[rid] else { return false }
                return b.bytesSent > a.bytesSent && b.framesEncoded > a.framesEncoded
            }
            if allGrow { break }
            if Date() >= deadline {
                // Say why: Chromium's own send estimate (GCC) decides how many layers it sends.
                let estimate = (try stats(alice).selected.first { $0["pc"] as? String == "room" }?["availableOutgoingBitrate"] as? NSNumber)?.intValue ?? 0
                XCTFail("no 2 s window with all three layers growing within 60 s; alice's send estimate \(estimate / 1000) kbit/s, "
                    + "limits " + second.values.map { "\($0.rid): \($0.qualityLimitation)" }.sorted().joined(separator: ", "))
                break
            }
            (first, firstMetrics, firstInbound) = (second, secondMetrics, secondInbound)
        }

        var report: [String] = []
        for rid in ["q", "h", "f"] {
            let a = try XCTUnwrap(first[rid], "outbound rid \(rid)")
            let b = try XCTUnwrap(second[rid], "outbound rid \(rid)")
            XCTAssertGreaterThan(b.bytesSent, a.bytesSent, "rid \(rid): bytesSent grows")
            XCTAssertGreaterThan(b.framesEncoded, a.framesEncoded, "rid \(rid): framesEncoded grows")
            let kbps = (b.bytesSent - a.bytesSent) * 8 / interval / 1000
            let rtxKbps = (b.retransmittedBytesSent - a.retransmittedBytesSent) * 8 / interval / 1000
            let fps = (b.framesEncoded - a.framesEncoded) / interval
            report.append("\(rid) \(b.width)x\(b.height) \(Int(kbps)) kbit/s (of which rtx/padding \(Int(rtxKbps))) \(Int(fps)) fps limit=\(b.qualityLimitation)")
        }
        print("alice sends: " + report.joined(separator: "; "))
        if let q = second["q"], let f = second["f"] {
            XCTAssertLessThan(q.height, f.height, "the q layer is smaller than the f layer")
        }

        // The SFU receives three layers of alice's video, in ladder order, all growing.
        let layersBefore = sfuVideoLayers(firstMetrics, publisher: keys[0])
        let layersAfter = sfuVideoLayers(secondMetrics, publisher: keys[0])
        XCTAssertEqual(layersAfter.count, 3, "SFU layers of alice's video: \(layersAfter)")
        for (rid, layer) in [("q", 0), ("h", 1), ("f", 2)] {
            let after = try XCTUnwrap(layersAfter[rid], "SFU layer \(rid)")
            XCTAssertEqual(after.layer, layer, "rid \(rid) is layer \(layer)")
            XCTAssertGreaterThan(after.packets, layersBefore[rid]?.packets ?? 0, "SFU receives rid \(rid)")
        }
        print("SFU receives alice's layers: " + ["q", "h", "f"].map { rid in
            let packets = (layersAfter[rid]?.packets ?? 0) - (layersBefore[rid]?.packets ?? 0)
            let bytes = (layersAfter[rid]?.bytes ?? 0) - (layersBefore[rid]?.bytes ?? 0)
            return "\(rid) \(Int(packets / interval)) packets/s \(Int(bytes * 8 / interval / 1000)) kbit/s"
        }.joined(separator: ", "))

        // Each subscriber gets one layer of alice's video and decodes it. (A layer switch waits
        // for that layer's keyframe, so "decodes" is polled rather than read off one window.)
        for (offset, page) in pages.dropFirst().enumerated() {
            let key = keys[offset + 1]
            let layer = try XCTUnwrap(sfuSubscriberLayer(secondMetrics, publisher: keys[0], subscriber: key), "\(key): SFU layer")
            XCTAssertGreaterThanOrEqual(layer.current, 0, "\(key): the SFU forwards a layer of alice's video")
            let decoded = secondInbound[offset][keys[0]]?.framesDecoded ?? 0
            try page.waitUntil("window.switchboard.stats().then(s => s.inboundVideo.some(v => v.stream === \(ChromiumPage.literal(keys[0])) && v.framesDecoded > \(Int(decoded) + 10)))",
                               timeout: 20)
            let a = firstInbound[offset][keys[0]] ?? Inbound(stream: keys[0], bytesReceived: 0, framesDecoded: 0, width: 0, height: 0, freezeCount: 0, totalFreezesDuration: 0)
            let b = try XCTUnwrap(secondInbound[offset][keys[0]], "\(key) receives alice's video")
            print("\(key) gets alice's layer \(layer.current) (target \(layer.target)): \(b.width)x\(b.height), "
                + "\(Int((b.bytesReceived - a.bytesReceived) * 8 / interval / 1000)) kbit/s, "
                + "\(Int((b.framesDecoded - a.framesDecoded) / interval)) fps decoded, freezes \(Int(b.freezeCount)) / \(b.totalFreezesDuration) s")
        }
    }

    func testOnePageThroughImpairmentRelayCarriesItsMedia() throws {
        let server = try ServerProcess(settings: ["auth.dev_tokens": "true"])
        let relay = try relay(to: server)
        defer { relay.stop() }
        let chromium = try Chromium(loop: loop)
        defer { chromium.close() }
        let alice = try openClient(chromium, server, account: "alice", device: "laptop")
        let bob = try openClient(chromium, server, account: "bob", device: "phone", query: "?sfuCandidatePort=\(relay.port)")
        try joinAll([alice, bob], room: "relayed", keys: ["alice/laptop", "bob/phone"])
        try assertMediaFlows(bob, "bob (through the relay)")
        try assertMediaFlows(alice, "alice (direct)")

        // bob's selected pair ends at the relay; only bob has a relay mapping.
        let selected = try stats(bob).selected.filter { $0["pc"] as? String == "room" }
        XCTAssertEqual(selected.first?["remotePort"] as? Int, Int(relay.port), "bob's remote candidate is the relay: \(selected)")
        // One mapping per local candidate of bob's that checked the relay (loopback and any
        // other local address Chromium gathers); alice's page knows nothing of the relay.
        XCTAssertFalse(relay.mappings.isEmpty, "bob's ICE checks reached the server through the relay")
        let aliceSelected = try stats(alice).selected.filter { $0["pc"] as? String == "room" }
        XCTAssertEqual(aliceSelected.first?["remotePort"] as? Int, Int(try mediaPort(server)), "alice talks to the server directly")

        let a = relay.counters
        let interval = 2.0
        Thread.sleep(forTimeInterval: interval)
        let b = relay.counters
        XCTAssertGreaterThan(b.uplink.sent, a.uplink.sent, "bob → server through the relay")
        XCTAssertGreaterThan(b.downlink.sent, a.downlink.sent, "server → bob through the relay")
        XCTAssertEqual(b.downlink.dropped + b.uplink.dropped, 0, "an unimpaired relay drops nothing")
        let down = Double(b.downlink.sentBytes - a.downlink.sentBytes) * 8 / interval / 1000
        let up = Double(b.uplink.sentBytes - a.uplink.sentBytes) * 8 / interval / 1000
        print("relay: server→bob \(Int(down)) kbit/s (\(Int(Double(b.downlink.sent - a.downlink.sent) / interval)) packets/s), "
            + "bob→server \(Int(up)) kbit/s")
    }
}
