import Auth
import CallCore
import Foundation
import Logging
import Storage

/// The IM channel's brain: authenticates devices, turns frames into reducer events, commits
/// every step durably, and says what to send to which connection.
///
/// Sans-I/O apart from the store: every input comes with the time, every output is a
/// ``HubAction`` for the adapter (Server) to carry out. Not thread-safe by design: one
/// event-loop thread owns it, which also serialises answer arbitration inside a process; the
/// store's revision compare-and-set does it across processes.
public final class SignalingHub {
    let store: CallStore
    let tokens: TokenSigner
    let turn: TURNCredentialIssuer?
    public let config: HubConfig
    let log: Logger

    var connections: [ConnectionID: Connection] = [:]
    var liveByDevice: [DeviceKey: ConnectionID] = [:]
    /// Non-terminal calls kept decoded, so the hot path does not decode JSON per command.
    /// The store stays the truth: a revision conflict drops the entry and reloads.
    var callCache: [String: CallState] = [:]
    /// Calls whose stored row still holds the SDP bodies inline (written before schema 3):
    /// their next write stores the bodies apart (``CallDescriptions``).
    var descriptionsInline: Set<String> = []
    /// The last call snapshot rendered for a result or notice, reused while the next one is
    /// equal (a step's result and notices carry the same snapshot).
    var snapshotJSON = SnapshotJSONMemo()
    /// The last SDP bodies as JSON literals: each is escaped at most once (or not at all
    /// when the device sent it in the writer's form), not once per notice and once more
    /// for storage.
    var quotedSDPs = QuotedSDPMemo()
    var lastHousekeepingMono: Int64 = .min / 4  // "long ago" without overflow in subtraction
    /// When each connection's hello, idle and token check is next due (``IdleCheckSchedule``).
    var idleChecks = IdleCheckSchedule()
    /// Frames of a connection that never reach ``received(_:on:time:)``: heartbeats the
    /// transport answers itself (the server answers an authenticated connection's `ping` on
    /// its shard thread). Returns the monotonic time (ms, the clock of `HubTime.mono`) of the
    /// last such frame, or 0. The idle check asks it only for a connection that looks idle.
    public var lastFrameElsewhere: ((ConnectionID) -> Int64)?
    /// Counters for /metrics-style reporting and tests.
    public internal(set) var counters = HubCounters()

    public init(store: CallStore, tokens: TokenSigner, turn: TURNCredentialIssuer?, config: HubConfig, log: Logger) {
        self.store = store
        self.tokens = tokens
        self.turn = turn
        self.config = config
        self.log = log
    }

    public var connectionCount: Int { connections.count }

    /// The live connection of a device, if any (the media coordinator sends through it).
    public func connection(for device: DeviceKey) -> ConnectionID? {
        liveByDevice[device]
    }

    /// The device authenticated on a connection, if any.
    public func device(on connection: ConnectionID) -> DeviceKey? {
        connections[connection]?.device
    }

    /// After a failed batch commit the cache may hold states that never became durable.
    public func discardCachedState() {
        callCache.removeAll()
    }
    public var liveDeviceCount: Int { liveByDevice.count }

    // MARK: Connection lifecycle

    public func connectionOpened(_ id: ConnectionID, time: HubTime) {
        connections[id] = Connection(id: id, openedAtMono: time.mono, lastFrameMono: time.mono)
        // The earliest a connection can be due: its hello timeout, or its idle timeout if its
        // hello comes at once (the check then finds its next time itself).
        scheduleCheck(id, atMono: time.mono + min(config.helloTimeoutMs, config.idleTimeoutMs) + 1)
    }

    /// Puts `id`'s next housekeeping check at `dueMono` (``IdleCheckSchedule``). An earlier
    /// pending one is superseded: the pass skips a connection whose `checkDueMono` is later.
    func scheduleCheck(_ id: ConnectionID, atMono dueMono: Int64) {
        connections[id]?.checkDueMono = dueMono
        idleChecks.schedule(id, atMono: dueMono)
    }

    public func connectionClosed(_ id: ConnectionID, time: HubTime) {
        guard let connection = connections.removeValue(forKey: id) else { return }
        if let device = connection.device, liveByDevice[device] == id {
            liveByDevice[device] = nil
            log.debug("device disconnected", ["account": .string(device.account), "device": .string(device.device)])
        }
    }

    /// One text frame from a connection.
    public func received(_ text: String, prepared: PreparedFrame? = nil, on id: ConnectionID, time: HubTime) -> [HubAction] {
        // In place: a copy of the connection out and back would retain and release each of
        // its strings.
        guard let index = connections.index(forKey: id) else { return [] }
        connections.values[index].lastFrameMono = time.mono
        // Frames between the limit and the transport's hard cap (``HubConfig/hardFrameLimit``)
        // get a typed error and the connection lives on; libsoup drops larger ones (1009).
        // The size check and the parse come from the shard when it prepared the frame.
        let frame = prepared.flatMap { $0.maxMessageBytes == config.maxMessageBytes ? $0 : nil }
            ?? PreparedFrame(text, maxMessageBytes: config.maxMessageBytes)
        let quotedSDP = frame.quotedSDP
        switch frame.message {
        case .failure(let error):
            return malformed(error, on: id)
        case .success(let message):
            connections.values[index].malformedStreak = 0
            guard let device = connections.values[index].device else {
                guard case .hello(let token, let cursor) = message else {
                    return [.close(id, code: CloseCode.protocolViolation, reason: "hello expected")]
                }
                return hello(token: token, cursor: cursor, on: id, time: time)
            }
            switch message {
            case .hello:
                return [errorFrame(id, code: "protocolViolation", message: "already authenticated")]
            case .ping:
                return [.send(id, Self.pong(serverTime: time.wall))]
            case .ack(let cursor):
                do { try store.acknowledge(device: StoredDeviceKey(device), upTo: cursor) } catch {
                    log.error("ack failed", ["error": .string("\(error)")])
                }
                return []
            case .command(let command):
                if let quotedSDP, let sdp = command.kind.callSDP { quotedSDPs.remember(sdp, quoted: quotedSDP) }
                return handle(command, from: device, on: id, time: time)
            }
        }
    }

    /// The answer to `ping` (docs/protocol.md §1). Also built by the server's shard threads,
    /// which answer heartbeats of authenticated connections themselves.
    public static func pong(serverTime: Int64) -> WireText {
        var w = JSONWriter()
        w.field("v", 1); w.field("type", "pong"); w.field("serverTime", serverTime)
        return w.finishFrame()
    }

    private func malformed(_ error: WireError, on id: ConnectionID) -> [HubAction] {
        counters.malformedFrames += 1
        connections[id]?.malformedStreak += 1
        guard let connection = connections[id] else { return [] }
        if connection.device == nil {
            return [.close(id, code: CloseCode.protocolViolation, reason: "hello expected")]
        }
        if connection.malformedStreak > config.maxMalformedStreak {
            return [.close(id, code: CloseCode.protocolViolation, reason: "too many malformed frames")]
        }
        return [errorFrame(id, code: error.code, message: error.message)]
    }

    func errorFrame(_ id: ConnectionID, code: String, message: String) -> HubAction {
        var w = JSONWriter()
        w.field("v", 1); w.field("type", "error"); w.field("code", code); w.field("message", message)
        return .send(id, w.finishFrame())
    }

    // MARK: Hello

    private func hello(token: String, cursor: Int64?, on id: ConnectionID, time: HubTime) -> [HubAction] {
        let claims: TokenClaims
        do {
            claims = try tokens.verify(token, now: time.wall / 1000)
        } catch {
            counters.authFailures += 1
            let expired = error == .expired
            log.info("hello refused", ["reason": .string(error.code)])
            return [errorFrame(id, code: expired ? "tokenExpired" : "unauthorized", message: "token \(error.code)"),
                    .close(id, code: expired ? CloseCode.tokenExpired : CloseCode.unauthorized,
                           reason: expired ? "token expired" : "unauthorized")]
        }
        let device = DeviceKey(account: claims.account, device: claims.device)
        var actions: [HubAction] = []
        do {
            let known = try store.devices(of: device.account)
            if !known.contains(device.device), known.count >= config.maxDevicesPerAccount {
                return [errorFrame(id, code: "tooManyDevices", message: "account has \(known.count) devices"),
                        .close(id, code: CloseCode.tooManyDevices, reason: "too many devices")]
            }
            try store.registerDevice(StoredDeviceKey(device), now: time.wall)
        } catch {
            log.error("device registration failed", ["error": .string("\(error)")])
            return [.close(id, code: 1011, reason: "storage unavailable")]
        }
        if let old = liveByDevice[device], old != id {
            connections[old]?.device = nil
            connections[old]?.replaced = true
            actions.append(.close(old, code: CloseCode.replaced, reason: "replaced by a newer connection"))
        }
        liveByDevice[device] = id
        connections[id]?.device = device
        // Saturating: a validly signed token may still carry an absurd `exp`.
        let (expiresAtMs, overflow) = claims.expiresAt.multipliedReportingOverflow(by: 1000)
        let expiresAtWall = overflow ? Int64.max : expiresAtMs
        connections[id]?.tokenExpiresAtWall = expiresAtWall
        // A token that expires before the connection's next check moves the check forward
        // (capped at a day: only an expiry sooner than the pending check matters).
        let expiryDue = time.mono + min(max(0, expiresAtWall - time.wall), 86_400_000) + 1
        if let pending = connections[id]?.checkDueMono, expiryDue < pending { scheduleCheck(id, atMono: expiryDue) }
        connections[id]?.bucket = TokenBucket(ratePerSecond: config.commandsPerSecond, burst: config.commandBurst, now: time.mono)

        let latest = (try? store.lastSeq(for: StoredDeviceKey(device))) ?? 0
        let from = min(cursor ?? 0, latest)
        var w = JSONWriter()
        w.field("v", 1); w.field("type", "welcome"); w.field("serverTime", time.wall)
        w.field("account", device.account); w.field("device", device.device)
        w.field("cursor", String(from)); w.field("latestSeq", String(latest))
        w.raw("heartbeat", "{\"intervalMs\":\(config.heartbeatIntervalMs),\"idleTimeoutMs\":\(config.idleTimeoutMs)}")
        w.raw("limits", "{\"maxMessageBytes\":\(config.maxMessageBytes),\"commandsPerSecond\":\(Int(config.commandsPerSecond)),\"candidatesPerCall\":\(config.call.candidateBufferLimit)}")
        actions.append(.send(id, w.finishFrame()))
        actions += replay(to: device, on: id, after: from, time: time)
        actions += ringPushedCalls(for: device, on: id, time: time)
        var done = JSONWriter()
        done.field("v", 1); done.field("type", "caughtUp"); done.field("latestSeq", String(latest))
        actions.append(.send(id, done.finishFrame()))
        log.info("device connected", ["account": .string(device.account), "device": .string(device.device),
                                      "cursor": .int(from), "latestSeq": .int(latest)])
        return actions
    }
}

/// What the hub tracks per WebSocket connection.
struct Connection {
    let id: ConnectionID
    let openedAtMono: Int64
    var lastFrameMono: Int64
    var device: DeviceKey?
    var tokenExpiresAtWall: Int64 = .max
    var malformedStreak = 0
    var replaced = false
    var closing = false
    var bucket = TokenBucket(ratePerSecond: 0, burst: 0, now: 0)
    /// When its housekeeping check is due (``SignalingHub/scheduleCheck(_:atMono:)``); `.max`
    /// when none is.
    var checkDueMono: Int64 = .max
}

/// Running totals, reported by the server's metrics and used by tests.
public struct HubCounters: Sendable, Equatable {
    public var commands = 0
    public var accepted = 0
    public var rejected = 0
    public var duplicates = 0
    public var rateLimited = 0
    public var malformedFrames = 0
    public var authFailures = 0
    public var deadlinesFired = 0
    public var revisionConflicts = 0
    public var eventsDelivered = 0
    /// Connections looked at by housekeeping passes (hello, idle and token checks).
    public var idleChecks = 0
}

extension StoredDeviceKey {
    init(_ key: DeviceKey) { self.init(account: key.account, device: key.device) }
}
