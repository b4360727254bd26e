import CallCore
import Foundation
import Storage

extension SignalingHub {
    /// Appends durable events that belong to no call state (room ringing) to the devices'
    /// outboxes in one transaction, and returns the sends for the devices connected now.
    /// Payloads must start with `{"v":1,` (the stream position is spliced in when sent).
    ///
    /// The commit's scope key starts with `#`, which no callID can contain, so the
    /// revision check of the store ("no such call") always holds.
    public func deliverDurable(_ payloads: [(DeviceKey, String)], scope: String, time: HubTime) -> [HubAction] {
        guard !payloads.isEmpty else { return [] }
        do {
            let entries = try store.commit(StepCommit(
                callID: "#" + scope, expectedRevision: nil,
                outbox: payloads.map { (StoredDeviceKey($0.0), Data($0.1.utf8)) }, now: time.wall))
            var actions: [HubAction] = []
            for entry in entries {
                let device = DeviceKey(account: entry.device.account, device: entry.device.device)
                guard let connection = liveByDevice[device] else { continue }
                actions.append(.send(connection, frame(entry, for: device, time: time, live: true)))
                counters.eventsDelivered += 1
            }
            return actions
        } catch {
            log.error("durable delivery failed", ["scope": .string(scope), "error": .string("\(error)")])
            return []
        }
    }

    /// The registered devices of an account and whether each is connected now.
    public func devices(of account: String) -> [(device: DeviceKey, online: Bool)] {
        let ids = (try? store.devices(of: account)) ?? []
        return ids.map { id in
            let key = DeviceKey(account: account, device: id)
            return (key, liveByDevice[key] != nil)
        }
    }

    /// Whether the account is a party of a live 1:1 call (the busy rule of call-design §4
    /// case 11, applied to group-call ringing too).
    public func isInLiveCall(_ account: String) -> Bool {
        guard let calls = try? store.activeCalls(involving: account) else { return false }
        return calls.contains { stored in
            guard let state = try? loadState(stored.callID) else { return false }
            return !state.phase.isTerminal && state.phase != .ringing && state.isParty(account)
        }
    }
}
