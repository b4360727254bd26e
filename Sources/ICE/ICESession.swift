/// State of one ICE-lite session. A class so the libnice validater can hand libnice a
/// stable pointer to the password (`localPassword`) for the duration of one check.
final class ICESession {
    let id: ICESessionID
    var localUfrag: String
    var remoteUfrag: String
    var remotePassword: String?
    /// Short-term credential (RFC 8489 §9.1): the key of MESSAGE-INTEGRITY. Owned here,
    /// freed in deinit; libnice keeps a pointer to it only inside one `handleSTUN` call.
    private(set) var localPassword: UnsafeMutableBufferPointer<UInt8>
    /// Validated remote addresses → time of the last authenticated check from each.
    var validated: [SocketAddress: Int64] = [:]
    /// The nominated address media is sent to.
    var selected: SocketAddress?
    /// Time of the last authenticated check (or of registration/restart).
    var lastConsent: Int64
    /// Consent expired (RFC 7675 §5.1): terminal until `restart`.
    var expired = false

    init(id: ICESessionID, localUfrag: String, localPassword: String, remoteUfrag: String, remotePassword: String?, now: Int64) {
        self.id = id
        self.localUfrag = localUfrag
        self.remoteUfrag = remoteUfrag
        self.remotePassword = remotePassword
        self.localPassword = Self.copy(localPassword)
        self.lastConsent = now
    }

    deinit { localPassword.deallocate() }

    func replacePassword(_ password: String) {
        localPassword.deallocate()
        localPassword = Self.copy(password)
    }

    private static func copy(_ text: String) -> UnsafeMutableBufferPointer<UInt8> {
        let utf8 = Array(text.utf8)
        let buffer = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(utf8.count, 1))
        _ = buffer.initialize(from: utf8)
        return UnsafeMutableBufferPointer(rebasing: buffer[0..<utf8.count])
    }
}
