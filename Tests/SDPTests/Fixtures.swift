import Foundation
import XCTest
@testable import SDP
import SplitMix

/// Loads the offers in `Fixtures/` (see Fixtures/README.md for their origin).
enum Fixture: String, CaseIterable {
    case chromiumSimulcast = "chromium-156-simulcast-offer"
    case chromiumGathered = "chromium-156-gathered-offer"
    case aiortc = "aiortc-1.16.0-offer"
    case firefox = "firefox-128-modelled-offer"
    /// Answers by real stacks to ``SFUOfferBuilder``'s subscriber offer (see check-*.html/py).
    case chromiumSubscriberAnswer = "chromium-156-subscriber-answer"
    case aiortcSubscriberAnswer = "aiortc-1.16.0-subscriber-answer"

    static let offers: [Fixture] = [.chromiumSimulcast, .chromiumGathered, .aiortc, .firefox]

    func text() throws -> String {
        let url = try XCTUnwrap(Bundle.module.url(forResource: rawValue, withExtension: "sdp", subdirectory: "Fixtures"))
        return try String(contentsOf: url, encoding: .utf8)
    }

    func parsed() throws -> SessionDescription {
        try SessionDescription(parsing: text())
    }
}

/// Server transport used across tests: a real-looking SHA-256 fingerprint and the shared port.
let serverTransport = SFUTransportParameters(
    iceUfrag: "sfu1", icePwd: "0123456789abcdefghijkl",
    fingerprint: Fingerprint(hashFunction: "sha-256", bytes: (0..<32).map { UInt8($0 * 7 & 0xFF) }),
    address: "127.0.0.1", port: 40000)
