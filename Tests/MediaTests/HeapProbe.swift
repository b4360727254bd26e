import CAllocationCounter
import Foundation
import Glibc
@testable import Media

/// Process memory figures for the memory benchmark (issue 3: "< 500 KB per participant").
///
/// The load generator runs in the same process as the server, so process-wide figures
/// (`heap`, `residentKB`) hold both. The server's share is isolated by glibc arena: every
/// `SFUServer` call runs on its loop thread (join, answers, DTLS, libsrtp, router), and glibc
/// gives each thread its own arena (malloc(3), "arenas"; chunks go back to the arena they came
/// from, whichever thread frees them), while the generator runs on the test thread (main
/// arena). `install()` raises the mmap threshold to 32 MB (glibc's maximum for non-main
/// arenas, HEAP_MAX_SIZE / 2) so large blocks (retransmission rings, batch buffers) come from
/// the allocating thread's arena too instead of an mmap that belongs to none.
final class HeapProbe {
    struct Snapshot {
        /// mallinfo2 uordblks + hblkhd: every live malloc byte in the process.
        var heap: Int
        /// VmRSS (/proc/self/status), KB.
        var residentKB: Int
        /// In-use bytes of the server loop thread's arena.
        var server: Int
        /// In-use bytes of the main arena (the test thread: the generator).
        var main: Int
    }

    /// 32 MB: the largest M_MMAP_THRESHOLD glibc accepts on 64-bit (HEAP_MAX_SIZE / 2).
    static let mmapThreshold: Int32 = 32 << 20
    /// Size of the block the loop thread allocates to reveal its arena: far above any noise.
    static let probeBytes = 8 << 20

    let server: SFUServer
    /// Index of the loop thread's arena in `sb_heap_arenas_in_use` order.
    let serverArena: Int

    /// Call before the server and generator allocate (see the type comment).
    static func install() {
        _ = sb_heap_set_mmap_threshold(mmapThreshold)
    }

    /// Finds the loop thread's arena: it allocates `probeBytes` there and the arena whose in-use
    /// figure grew by that much is its own.
    init(server: SFUServer) throws {
        self.server = server
        let before = Self.arenas()
        let block = server.loop.sync { _ -> UInt in
            let pointer = malloc(Self.probeBytes)
            return UInt(bitPattern: pointer)
        }
        let after = Self.arenas()
        _ = server.loop.sync { _ in free(UnsafeMutableRawPointer(bitPattern: block)) }
        guard let index = after.indices.first(where: { $0 < before.count ? after[$0] - before[$0] >= Self.probeBytes : after[$0] >= Self.probeBytes }),
              index != 0 else {
            throw BenchSetupError(reason: "the loop thread's arena was not found (before \(before), after \(after))")
        }
        serverArena = index
    }

    /// In-use bytes per arena (0 = main).
    static func arenas() -> [Int] {
        var figures = [Int](repeating: 0, count: 64)  // size_t imports as Int
        let count = sb_heap_arenas_in_use(&figures, 64)
        return Array(figures.prefix(max(0, min(Int(count), 64))))
    }

    static func residentKilobytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return line.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        }
        return 0
    }

    /// Figures now, once the loop has run everything queued before (it stays idle between
    /// the benchmark's steps, so its arena does not move while it is read).
    func snapshot() -> Snapshot {
        _ = server.loop.sync { _ in 0 }
        let arenas = Self.arenas()
        return Snapshot(heap: sb_heap_in_use(), residentKB: Self.residentKilobytes(),
                        server: serverArena < arenas.count ? arenas[serverArena] : 0, main: arenas.first ?? 0)
    }

    /// Heap bytes held by what `make` builds (kept alive until measured), per instance:
    /// `count` instances, so allocator rounding and noise average out.
    static func footprint<T>(count: Int = 20, _ make: () throws -> T) rethrows -> Int {
        var kept: [T] = []
        kept.reserveCapacity(count)
        let before = sb_heap_in_use()
        for _ in 0..<count { kept.append(try make()) }
        let after = sb_heap_in_use()
        withExtendedLifetime(kept) {}
        return (after - before) / count
    }
}
