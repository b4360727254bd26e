import Auth
import CallCore
import Foundation
import Logging
@testable import Signaling
import Storage
import XCTest

/// The SDP bodies live apart from the call row (`StoredCall.descriptions`): the row
/// rewritten on every step carries none, the bodies are written only by steps that change
/// them, and a row written before schema 3 (bodies inline) keeps them.
final class CallDescriptionsTests: XCTestCase {
    private let caller = DeviceKey(account: "alice", device: "phone")
    private let offer = "v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=\"q\" \\ \t\r\na=ice-ufrag:abcd\r\n" + String(repeating: "a=x\r\n", count: 400)
    private let answer = "v=0\r\na=ice-ufrag:wxyz\r\nu=caf\u{e9} \u{1F600}\r\n"

    /// Records what each commit asked of the store, and passes it on.
    private final class RecordingStore: CallStore {
        let inner: SQLiteCallStore
        var commits: [StepCommit] = []
        init(_ inner: SQLiteCallStore) { self.inner = inner }
        func loadCall(_ callID: String) throws -> StoredCall? { try inner.loadCall(callID) }
        func activeCalls(involving account: String) throws -> [StoredCall] { try inner.activeCalls(involving: account) }
        func processedEvent(account: String, device: String, eventID: String) throws -> ProcessedEvent? {
            try inner.processedEvent(account: account, device: device, eventID: eventID)
        }
        func commit(_ step: StepCommit) throws -> [OutboxEntry] { commits.append(step); return try inner.commit(step) }
        func outbox(for device: StoredDeviceKey, after seq: Int64, limit: Int) throws -> [OutboxEntry] {
            try inner.outbox(for: device, after: seq, limit: limit)
        }
        func lastSeq(for device: StoredDeviceKey) throws -> Int64 { try inner.lastSeq(for: device) }
        func acknowledge(device: StoredDeviceKey, upTo seq: Int64) throws { try inner.acknowledge(device: device, upTo: seq) }
        func registerDevice(_ device: StoredDeviceKey, now: Int64) throws { try inner.registerDevice(device, now: now) }
        func devices(of account: String) throws -> [String] { try inner.devices(of: account) }
        func dueDeadlines(atOrBefore now: Int64, limit: Int) throws -> [Deadline] { try inner.dueDeadlines(atOrBefore: now, limit: limit) }
        func nextDeadline() throws -> Deadline? { try inner.nextDeadline() }
        func allDeadlines() throws -> [Deadline] { try inner.allDeadlines() }
        func purge(terminalCallsUpdatedBefore: Int64, eventsProcessedBefore: Int64) throws -> PurgeCounts {
            try inner.purge(terminalCallsUpdatedBefore: terminalCallsUpdatedBefore, eventsProcessedBefore: eventsProcessedBefore)
        }
        func batch<T>(_ body: () throws -> T) throws -> T { try inner.batch(body) }
    }

    private var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("descriptions-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        if let directory { try? FileManager.default.removeItem(at: directory) }
    }

    private func hub(_ store: CallStore) -> SignalingHub {
        SignalingHub(store: store, tokens: TokenSigner(secret: HubHarness.secret), turn: nil, config: HubConfig(),
                     log: Logger(subsystem: "test", sink: LogSink.collecting(), minimumLevel: .debug))
    }

    private func connect(_ hub: SignalingHub, _ id: ConnectionID, _ account: String, _ device: String, time: HubTime) {
        hub.connectionOpened(id, time: time)
        let now = time.wall / 1000
        let token = TokenSigner(secret: HubHarness.secret).mint(try! TokenClaims(account: account, device: device, issuedAt: now, expiresAt: now + 3600))
        _ = hub.received(#"{"v":1,"type":"hello","token":"\#(token)"}"#, on: id, time: time)
    }

    private func send(_ hub: SignalingHub, _ id: ConnectionID, _ object: [String: Any], time: HubTime) -> [String: Any]? {
        var object = object
        object["v"] = 1
        let text = String(decoding: try! JSONSerialization.data(withJSONObject: object), as: UTF8.self)
        return HubHarness.frames(hub.received(text, on: id, time: time), to: id).first
    }

    func testStoreEncodingCarriesNoSDPAndRoundTrips() throws {
        var state = try XCTUnwrap(reduce(nil, .invite(CallInvite(callID: "c1", caller: caller, callee: "bob",
                                                                   calleeDevices: ["d0": true], offer: SessionDescription(sdp: offer))),
                                         now: 1_000, config: CallConfig()).state)
        state.negotiation.lastAnswer = NegotiatedDescription(side: .callee, generation: 0, description: SessionDescription(sdp: answer))
        let encoded = CallStateCodec.encodeForStore(state)
        XCTAssertFalse(String(decoding: encoded.state, as: UTF8.self).contains("ice-ufrag"), "no SDP in the row")
        XCTAssertLessThan(encoded.state.count, 1_000, "the row fits a page without the SDP")
        XCTAssertEqual(try CallStateCodec.decode(encoded.state, descriptions: encoded.descriptions), state)
        // Rows written before schema 3: SDP inline, no descriptions.
        XCTAssertEqual(try CallStateCodec.decode(CallStateCodec.encode(state), descriptions: Data()), state)
        // No descriptions at all: no row.
        state.negotiation.pendingOffer = nil
        state.negotiation.lastAnswer = nil
        XCTAssertEqual(CallStateCodec.encodeForStore(state).descriptions, Data())
        print("call row without SDP: \(encoded.state.count) bytes, descriptions \(encoded.descriptions.count) bytes")
    }

    func testHubWritesDescriptionsOnlyWhenTheyChange() throws {
        let sqlite = try SQLiteCallStore(path: directory.appendingPathComponent("db.sqlite").path)
        defer { sqlite.close() }
        let store = RecordingStore(sqlite)
        let hub = hub(store)
        var time = HubTime(wall: 1_800_000_000_000, mono: 10_000)
        connect(hub, 1, "alice", "phone", time: time)
        connect(hub, 2, "bob", "d0", time: time)
        connect(hub, 3, "bob", "d1", time: time)
        let invite = try XCTUnwrap(send(hub, 1, ["type": "call.invite", "eventID": "i1", "callee": "bob", "sdp": offer], time: time))
        let callID = try XCTUnwrap(invite["callID"] as? String)
        time.wall += 10
        XCTAssertEqual(send(hub, 2, ["type": "call.ringing", "eventID": "r0", "callID": callID], time: time)?["status"] as? String, "accepted")
        XCTAssertEqual(send(hub, 3, ["type": "call.ringing", "eventID": "r1", "callID": callID], time: time)?["status"] as? String, "accepted")
        let ringing = try XCTUnwrap(send(hub, 2, ["type": "call.get", "eventID": "g1", "callID": callID], time: time)?["revision"] as? Int)
        XCTAssertEqual(send(hub, 2, ["type": "call.answer", "eventID": "a0", "callID": callID, "revision": ringing, "sdp": answer],
                            time: time)?["status"] as? String, "accepted")
        XCTAssertEqual(send(hub, 1, ["type": "call.hangup", "eventID": "h1", "callID": callID], time: time)?["status"] as? String, "accepted")

        let writes = store.commits.filter { $0.call != nil }
        XCTAssertEqual(writes.count, 5, "invite, 2 × ringing, answer, hangup")
        XCTAssertEqual(writes.map(\.descriptionsChanged), [true, false, false, true, true], "the hangup deletes them")
        for write in writes {
            XCTAssertFalse(String(decoding: write.call?.state ?? Data(), as: UTF8.self).contains("ice-ufrag"))
        }
        // The bodies' literals come from the hub's memo (the frame's literal or an escape
        // made for a notice): the bytes are those of a fresh encoding.
        for write in writes.dropLast() where write.descriptionsChanged {
            let call = try XCTUnwrap(write.call)
            let state = try CallStateCodec.decode(call.state, descriptions: call.descriptions)
            XCTAssertEqual(call.descriptions, CallDescriptions(state).encoded())
            XCTAssertFalse(call.descriptions.isEmpty)
        }
        XCTAssertEqual(writes.last?.call?.isTerminal, true)
        XCTAssertEqual(writes.last?.call?.descriptions, Data())
        let stored = try XCTUnwrap(try sqlite.loadCall(callID))
        XCTAssertEqual(stored.descriptions, Data(), "no row for an ended call")
        let state = try CallStateCodec.decode(stored.state, descriptions: stored.descriptions)
        XCTAssertEqual(state.phase, .ended)
        XCTAssertNil(state.negotiation.pendingOffer)
        // The negotiation's side and generation stay in the call row; only the body goes.
        XCTAssertEqual(state.negotiation.lastAnswer?.side, .callee)
        XCTAssertEqual(state.negotiation.lastAnswer?.description.sdp, "")
    }

    func testARowWithInlineSDPKeepsItsBodiesOnItsNextWrite() throws {
        let sqlite = try SQLiteCallStore(path: directory.appendingPathComponent("db.sqlite").path)
        defer { sqlite.close() }
        let time = HubTime(wall: 1_800_000_000_000, mono: 10_000)
        // A call as a schema-2 build stored it: the whole state, SDP included, in the row.
        let invited = try XCTUnwrap(reduce(nil, .invite(CallInvite(callID: "c1", caller: caller, callee: "bob",
                                                                     calleeDevices: ["d0": true], offer: SessionDescription(sdp: offer))),
                                           now: time.wall, config: CallConfig()).state)
        try sqlite.commit(StepCommit(callID: "c1", expectedRevision: nil,
                                     call: StoredCall(callID: "c1", revision: invited.revision, state: try CallStateCodec.encode(invited),
                                                      isTerminal: false, participants: ["alice", "bob"],
                                                      createdAt: invited.createdAt, updatedAt: time.wall),
                                     now: time.wall))
        let hub = hub(sqlite)
        connect(hub, 2, "bob", "d0", time: time)
        XCTAssertEqual(send(hub, 2, ["type": "call.ringing", "eventID": "r0", "callID": "c1"], time: time)?["status"] as? String, "accepted")
        let stored = try XCTUnwrap(try sqlite.loadCall("c1"))
        XCTAssertGreaterThan(stored.revision, invited.revision)
        XCTAssertFalse(String(decoding: stored.state, as: UTF8.self).contains("ice-ufrag"), "rewritten without the SDP")
        XCTAssertEqual(try CallStateCodec.decode(stored.state, descriptions: stored.descriptions).negotiation.pendingOffer?.description.sdp,
                       offer, "the offer moved to its own row")
    }
}
