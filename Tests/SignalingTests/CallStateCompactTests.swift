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
    private let caller = DeviceKey(account: "alice", device: "phone")
    private let offer = SessionDescription(sdp: "v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=\"quoted\" \\ back\tslash\r\na=ice-ufrag:abcd\r\n")
    private let answer = SessionDescription(sdp: "v=0\r\na=ice-ufrag:wxyz\r\nu=caf\u{e9} \u{1F600}\r\n")

    private func everyCase() -> [CallState] {
        let d0 = DeviceKey(account: "bob", device: "d0")
        var participation: [DeviceKey: DeviceParticipation] = [caller: .callerDevice,
                                                               DeviceKey(account: "alice", device: "tab"): .inProgressElsewhere,
                                                               d0: .answered,
                                                               DeviceKey(account: "bob", device: "d1"): .ringingAcknowledged,
                                                               DeviceKey(account: "bob", device: "d2"): .ringing]
        for (index, reason) in StopReason.allCases.enumerated() {
            participation[DeviceKey(account: "bob", device: "s\(index)")] = .stopped(reason)
        }
        var states: [CallState] = []
        for phase in CallPhase.allCases {
            for media in CallMedia.allCases {
                for reason in CallEndReason.allCases.prefix(phase == .ended ? CallEndReason.allCases.count : 1) {
                    states.append(CallState(
                        callID: "c\u{2028}\u{0}", revision: Int64.max, phaseRevision: Int64.min, phase: phase, caller: caller,
                        callee: "bob", participation: participation, pushedDevices: [DeviceKey(account: "bob", device: "d2"), d0],
                        answeredBy: d0, endReason: reason, endedBy: caller, createdAt: -1, endedAt: 2,
                        deadlines: CallDeadlines(ring: 3, inviteExpiry: 4, connect: 5, reconnect: 6),
                        negotiation: Negotiation(
                            generation: 7,
                            pendingOffer: NegotiatedDescription(side: .callee, generation: 7, description: answer),
                            lastAnswer: NegotiatedDescription(side: .caller, generation: 6, description: offer),
                            callerUfrag: "abcd", calleeUfrag: "wxyz", politeSide: .callee,
                            buffered: [d0: CandidateBuffer(generation: 7, candidates: [
                                IceCandidate(candidate: "a", sdpMid: "1", sdpMLineIndex: 1, usernameFragment: "u"),
                                IceCandidate(candidate: "", sdpMLineIndex: Int.min)]),
                                       caller: CandidateBuffer(generation: 6, candidates: [])]),
                        media: media))
                }
            }
        }
        states.append(CallState(callID: "c", revision: 1, phaseRevision: 1, phase: .ringing, caller: caller, callee: "bob",
                                participation: [:], createdAt: 0))
        return states
    }

    func testEveryStateAndCaseRoundTrips() throws {
        for state in CallStateSamples.setupStates() + everyCase() {
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
        for state in CallStateSamples.setupStates() + everyCase() {
            let json = CallStateJSON.encode(state, omittingSDP: true)
            XCTAssertFalse(CallStateCompact.isCompact(json))
            XCTAssertEqual(try CallStateCodec.decode(json), try CallStateCompact.decode(CallStateCompact.encode(state, omittingSDP: true)))
        }
    }

    func testEqualStatesEncodeToEqualBytes() {
        for state in CallStateSamples.setupStates() + everyCase() {
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
        XCTAssertThrowsError(try CallStateCompact.decode(Data(w.bytes)))
    }
}
