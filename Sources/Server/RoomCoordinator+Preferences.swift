import CallCore
import Signaling

/// `sfu.preferences` (docs/protocol.md §9): a subscriber tells the SFU how large it renders
/// one video track it receives; the SFU then forwards the lowest simulcast layer covering
/// that size (and at most `maxLayer`), within what the subscriber's downlink estimate allows.
/// Only the device itself sets its preferences: the subscriber is always the authenticated
/// device of the request.
extension RoomCoordinator {
    func setPreferences(_ request: MediaRequest, room: String, _ preferences: SFUPreferences) {
        let member = request.device
        guard roomOf[member] == room else { return reject(request, room, .notInRoom) }
        guard preferences.publisher != member, rooms[room]?.contains(preferences.publisher) == true else {
            return reject(request, room, .unknownPublisher)
        }
        guard let media else { return reject(request, room, .mediaUnavailable) }
        media.setPreferences(member: member, preferences: preferences) { [weak self] result in
            self?.loop.execute {
                guard let self else { return }
                switch result {
                case .success:
                    self.reply(request, RoomJSON.accepted(request, room: room, serverTime: self.now))
                    self.log.debug("sfu preferences", [
                        "room": .string(room), "account": .string(member.account), "device": .string(member.device),
                        "publisher": .string(preferences.publisher.description), "mid": .string(preferences.mid),
                        "maxWidth": .int(preferences.maxWidth), "maxHeight": .int(preferences.maxHeight),
                        "maxLayer": preferences.maxLayer.map { .int($0) } ?? .string("none"),
                    ])
                case .failure(let error):
                    self.reject(request, room, error)
                }
            }
        }
    }

    func reject(_ request: MediaRequest, _ room: String, _ error: SFUPreferencesError) {
        reject(request, room, error.code, error.message)
    }
}
