import Foundation

/// µs from a batch's ``WebSocketSendBatch/submit()`` on the hub's loop until a shard has
/// written its part (the hop to the shard, its wait behind the shard's other work, the
/// writes): the part of a frame's path after ``HubTimings/carryOut``. Recorded on the shard
/// threads, hence the lock.
final class ShardWriteTimes: @unchecked Sendable {
    private let lock = NSLock()
    private var histogram = LatencyHistogram(bounds: LatencyHistogram.microsecondBounds)

    func record(_ micros: Int64) {
        lock.lock(); histogram.record(micros); lock.unlock()
    }

    func expositionLines() -> [String] {
        lock.lock(); let copy = histogram; lock.unlock()
        return copy.exposition(name: "switchboard_shard_write_microseconds",
                               help: "Time from the hub's submission of a batch's sends until a shard has written its part.")
    }
}
