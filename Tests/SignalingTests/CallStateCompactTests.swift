import CallCore
import Foundation
@testable import Signaling
import Storage
import XCTest

/// The compact stored form of a call state (``CallStateCompact``): every state the reducer
/// makes and every optional and case round-trip, equal states give equal bytes, the SDP
/// bodies stay out of the row, rows of older builds (JSON) are still read, and bad bytes
/// are a typed error.
final class CallStateCompactTests: XCTestCase {
    func testEveryStateAndCaseRoundTrips() throws {
        for state in CallStateSamples.setupStates() + CallStateSamples.everyCase() {
            let bytes = CallStateCompact.encode(state, omittingSDP: false)
            XCTAssertTrue(CallStateCompact.isCompact(bytes))
            XCTAssertEqual(try CallStateCompact.decode(bytes), state, "revision \(state.revision)")
            XCTAssertEqual(try CallStateCodec.decode(bytes), state)
        }
    }

    /// The stored form leaves the bodies out (``CallDescriptions`` holds them) and is a
    /// fraction of the JSON row.
    func testTheStoredRowHasNoSDPAndIsSmallerThanTheJSON() throws {
        var sizes: [(compact: Int, json: Int)] = []
        defer { print("call rows along a setup, compact against JSON bytes: \(sizes.map { "\($0.compact)/\($0.json)" })") }
        for state in CallStateSamples.setupStates() {
            let encoded = CallStateCodec.encodeForStore(state)
            XCTAssertFalse(String(decoding: encoded.state, as: UTF8.self).contains("ice-ufrag"))
            XCTAssertEqual(try CallStateCodec.decode(encoded.state, descriptions: encoded.descriptions), state)
            let json = CallStateJSON.encode(state, omittingSDP: true)
            XCTAssertLessThan(encoded.state.count * 2, json.count, "\(encoded.state.count) against \(json.count) bytes")
            sizes.append((encoded.state.count, json.count))
        }
    }

    /// Rows written by older builds hold the JSON; they are read as before.
    func testJSONRowsOfOlderBuildsAreStillRead() throws {
        for state in CallStateSamples.setupStates() + CallStateSamples.everyCase() {
            let json = CallStateJSON.encode(state, omittingSDP: true)
            XCTAssertFalse(CallStateCompact.isCompact(json))
            XCTAssertEqual(try CallStateCodec.decode(json), try CallStateCompact.decode(CallStateCompact.encode(state, omittingSDP: true)))
        }
    }

    func testEqualStatesEncodeToEqualBytes() {
        for state in CallStateSamples.setupStates() + CallStateSamples.everyCase() {
            var copy = state
            copy.participation = Dictionary(uniqueKeysWithValues: state.participation.reversed())
            copy.pushedDevices = Set(state.pushedDevices.reversed())
            copy.negotiation.buffered = Dictionary(uniqueKeysWithValues: state.negotiation.buffered.reversed())
            XCTAssertEqual(CallStateCompact.encode(copy, omittingSDP: true), CallStateCompact.encode(state, omittingSDP: true))
        }
    }

    /// Every truncation and a trailing byte: `Malformed`, never a trap; so is a count past
    /// any call's devices.
    func testBadBytesAreATypedError() {
        for state in CallStateSamples.setupStates().prefix(4) {
            let bytes = [UInt8](CallStateCompact.encode(state, omittingSDP: false))
            for end in 1 ..< bytes.count {
                XCTAssertThrowsError(try CallStateCompact.decode(Data(bytes[..<end])), "cut at \(end)") { error in
                    XCTAssertEqual(error as? CompactReader.Malformed, CompactReader.Malformed())
                }
            }
            XCTAssertThrowsError(try CallStateCompact.decode(Data(bytes + [0])), "a trailing byte")
        }
        var w = CompactWriter()
        w.byte(CallStateCompact.formatTag)
        w.string("c"); w.int(1); w.int(1); w.string("ringing"); w.string("a"); w.string("p"); w.string("b")
        w.varint(1 << 40)
        let bytes = w.record()
        XCTAssertThrowsError(try CallStateCompact.decode(bytes))
    }
}
