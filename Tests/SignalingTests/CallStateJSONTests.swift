import CallCore
import Foundation
@testable import Signaling
import XCTest

/// The hand-written `CallState` encoding must be read back by the synthesized `Codable`
/// decoder (what `CallStateCodec.decode` and every stored row rely on) into an equal state,
/// and have the synthesized encoder's shape.
final class CallStateJSONTests: XCTestCase {
    private let caller = DeviceKey(account: "alice", device: "phone")
    private let offer = SessionDescription(sdp: "v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=\"quoted\" \\ back\tslash\r\na=ice-ufrag:abcd\r\n")
    private let answer = SessionDescription(sdp: "v=0\r\na=ice-ufrag:wxyz\r\nu=caf\u{e9} \u{1F600}\r\n")

    private func setupStates() -> [CallState] { CallStateSamples.setupStates() }

    func testReducerStatesRoundTripThroughTheSynthesizedDecoder() throws {
        let states = setupStates()
        XCTAssertGreaterThanOrEqual(states.count, 8)
        XCTAssertTrue(states.contains { !$0.negotiation.buffered.isEmpty }, "a state with buffered candidates")
        XCTAssertTrue(states.contains { !$0.pushedDevices.isEmpty }, "a state with a pushed device")
        XCTAssertTrue(states.contains { $0.participation.values.contains { if case .stopped = $0 { return true } else { return false } } })
        XCTAssertTrue(states.contains { $0.phase == .ended && $0.endedAt != nil && $0.endReason != nil })
        for state in states {
            let decoded = try JSONDecoder().decode(CallState.self, from: CallStateJSON.encode(state))
            XCTAssertEqual(decoded, state, "revision \(state.revision)")
            XCTAssertEqual(try CallStateCodec.decode(CallStateCodec.encode(state)), state)
        }
    }

    func testEveryOptionalAndCaseRoundTrips() throws {
        for state in CallStateSamples.everyCase() {
            XCTAssertEqual(try JSONDecoder().decode(CallState.self, from: CallStateJSON.encode(state)), state)
        }
    }

    /// Same JSON value as `JSONEncoder` (compared as parsed objects; with one entry per
    /// dictionary and set, element order cannot differ).
    func testSameJSONValueAsTheSynthesizedEncoder() throws {
        let d0 = DeviceKey(account: "bob", device: "d0")
        let state = CallState(
            callID: "call-1", revision: 5, phaseRevision: 4, phase: .connecting, caller: caller, callee: "bob",
            participation: [d0: .stopped(.answeredElsewhere)], pushedDevices: [d0], answeredBy: d0,
            createdAt: 10, deadlines: CallDeadlines(connect: 99),
            negotiation: Negotiation(generation: 1, pendingOffer: NegotiatedDescription(side: .caller, generation: 1, description: offer),
                                     callerUfrag: "abcd",
                                     buffered: [caller: CandidateBuffer(generation: 1, candidates: [IceCandidate(candidate: "x", sdpMLineIndex: 0)])]),
            media: .sfu)
        let ours = try JSONSerialization.jsonObject(with: CallStateJSON.encode(state)) as? NSDictionary
        let theirs = try JSONSerialization.jsonObject(with: JSONEncoder().encode(state)) as? NSDictionary
        XCTAssertNotNil(ours)
        XCTAssertEqual(ours, theirs)
    }

    func testEqualStatesEncodeToEqualBytes() {
        for state in setupStates() {
            var copy = state
            // Rebuild the dictionaries so their iteration order may differ.
            copy.participation = Dictionary(uniqueKeysWithValues: state.participation.reversed())
            copy.pushedDevices = Set(state.pushedDevices.reversed())
            XCTAssertEqual(CallStateJSON.encode(copy), CallStateJSON.encode(state))
        }
    }
}
