import Glibc
import ICE

/// Which worker of an `SFUWorkerPool` owns a session, shared by all workers' loop threads.
///
/// All workers' sockets share one UDP port (SO_REUSEPORT), and the kernel picks the socket
/// for a datagram by a hash of its 4-tuple, not by room. A loop that receives a datagram
/// it does not own asks here: STUN by the local ICE ufrag (first USERNAME fragment,
/// RFC 8445 §7.2.2), DTLS/RTP/RTCP by the source address of a validated check (the
/// 5-tuple: the local side is the same for every worker).
///
/// The owning worker writes: its ufrag when it registers (or restarts) an ICE session, each
/// address its agent validates, and removes them all when the session goes. Readers take a
/// read lock (pthread rwlock) and hash a ufrag `String` (stored inline up to 15 bytes) or a
/// `SocketAddress` (plain words): no allocation. Only datagrams that arrive at a non-owner,
/// and STUN (a few checks per peer per second), read it; the owner's own traffic never does.
final class MediaSessionDirectory {
    private let lock: UnsafeMutablePointer<pthread_rwlock_t>
    private var ufrags: [String: Int] = [:]
    private var tuples: [SocketAddress: Int] = [:]

    init() {
        lock = .allocate(capacity: 1)
        lock.initialize(to: pthread_rwlock_t())
        pthread_rwlock_init(lock, nil)
    }

    deinit {
        pthread_rwlock_destroy(lock)
        lock.deallocate()
    }

    /// Claims `ufrag` for `worker`; false when another worker holds it (the caller refuses
    /// the registration, as its own agent refuses a duplicate).
    func claim(ufrag: String, worker: Int) -> Bool {
        write {
            if let owner = ufrags[ufrag], owner != worker { return false }
            ufrags[ufrag] = worker
            return true
        }
    }

    /// Releases `ufrag` if `worker` holds it.
    func release(ufrag: String, worker: Int) {
        write { if ufrags[ufrag] == worker { ufrags[ufrag] = nil } }
    }

    /// Records that datagrams from `address` belong to `worker` (the last worker whose agent
    /// validated a check from it wins, like the agent's own 5-tuple table).
    func claim(address: SocketAddress, worker: Int) {
        write { tuples[address] = worker }
    }

    /// Forgets `address` if `worker` holds it (another worker may have claimed it since).
    func release(address: SocketAddress, worker: Int) {
        write { if tuples[address] == worker { tuples[address] = nil } }
    }

    /// The worker whose session has local ufrag `ufrag`.
    func owner(ufrag: String) -> Int? {
        read { ufrags[ufrag] }
    }

    /// The worker that validated `address`.
    func owner(of address: SocketAddress) -> Int? {
        read { tuples[address] }
    }

    /// Entries (tests, stats).
    var counts: (ufrags: Int, addresses: Int) { read { (ufrags.count, tuples.count) } }

    private func read<T>(_ body: () -> T) -> T {
        pthread_rwlock_rdlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return body()
    }

    private func write<T>(_ body: () -> T) -> T {
        pthread_rwlock_wrlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return body()
    }
}
