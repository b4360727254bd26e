import Auth
import CallCore
import Foundation
import Logging
import Signaling
import Storage
import XCTest

/// Drives a ``SignalingHub`` sans I/O: connections are numbers, time is a value the test
/// moves, the store is a real SQLite file in a temporary directory.
final class HubHarness {
    static let secret = Array(repeating: UInt8(3), count: 32)
    let directory: URL
    let store: SQLiteCallStore
    let hub: SignalingHub
    let logs = LogSink.collecting()
    var time = HubTime(wall: 1_800_000_000_000, mono: 10_000)
    private var nextConnection: ConnectionID = 1

    init(config: HubConfig = HubConfig()) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("hub-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        store = try SQLiteCallStore(path: directory.appendingPathComponent("db.sqlite").path)
        hub = SignalingHub(store: store, tokens: TokenSigner(secret: Self.secret), turn: nil, config: config,
                           log: Logger(subsystem: "test", sink: logs, minimumLevel: .debug))
    }

    deinit {
        store.close()
        try? FileManager.default.removeItem(at: directory)
    }

    func token(_ account: String, _ device: String, ttl: Int64 = 3600) -> String {
        let now = time.wall / 1000
        return TokenSigner(secret: Self.secret).mint(try! TokenClaims(account: account, device: device, issuedAt: now, expiresAt: now + ttl))
    }

    func open() -> ConnectionID {
        let id = nextConnection
        nextConnection += 1
        hub.connectionOpened(id, time: time)
        return id
    }

    /// Opens a connection and says hello; returns it with the frames sent back.
    func connect(_ account: String, _ device: String, cursor: Int64? = nil, ttl: Int64 = 3600) -> (ConnectionID, [HubAction]) {
        let id = open()
        var hello = #"{"v":1,"type":"hello","token":"\#(token(account, device, ttl: ttl))""#
        if let cursor { hello += #","cursor":"\#(cursor)""# }
        return (id, hub.received(hello + "}", on: id, time: time))
    }

    func send(_ id: ConnectionID, _ object: [String: Any]) -> [HubAction] {
        var object = object
        object["v"] = 1
        let text = String(decoding: try! JSONSerialization.data(withJSONObject: object), as: UTF8.self)
        return hub.received(text, on: id, time: time)
    }

    func advance(ms: Int64) {
        time.wall += ms
        time.mono += ms
    }

    func tick() -> [HubAction] { hub.tick(time: time) }

    static func frames(_ actions: [HubAction], to id: ConnectionID) -> [[String: Any]] {
        actions.compactMap { action in
            guard case .send(let target, let text) = action, target == id else { return nil }
            return try? JSONSerialization.jsonObject(with: Data(text.bytes)) as? [String: Any]
        }
    }

    static func types(_ actions: [HubAction], to id: ConnectionID) -> [String] {
        frames(actions, to: id).compactMap { $0["type"] as? String }
    }

    static func closes(_ actions: [HubAction]) -> [ConnectionID: UInt16] {
        var result: [ConnectionID: UInt16] = [:]
        for case .close(let id, let code, _) in actions { result[id] = code }
        return result
    }
}
