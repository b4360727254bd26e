import Foundation
import Glibc
import ICE
import XCTest
@testable import Media

/// Kernel receive timestamps (SO_TIMESTAMPNS) through `UDPReceiveBatch`: what the transport-cc
/// feedback stamps arrivals with, so the loop's scheduling does not read as path delay.
final class UDPReceiveTimestampTests: XCTestCase {
    /// Five datagrams sent over loopback 20 ms apart and read in one batch afterwards: each has
    /// a kernel timestamp, in send order, on the monotonic clock between the first send and the
    /// end of the read — although the loop would have stamped all five with the same time.
    func testDatagramsCarryKernelArrivalTimesInOrder() throws {
        let sender = try UDPSocket(host: "127.0.0.1", port: 0)
        let receiver = try UDPSocket(host: "127.0.0.1", port: 0)
        XCTAssertTrue(UDPReceiveBatch.enableKernelTimestamps(on: receiver))
        let send = UDPSendBatch()
        let receive = UDPReceiveBatch(capacity: 8)
        var fd = pollfd(fd: receiver.fileDescriptor, events: Int16(POLLIN), revents: 0)
        // The first socket to ask for timestamps turns on the kernel's timestamping from a
        // deferred work item (net_enable_timestamp); a datagram arriving before that is
        // stamped when it is read. One warm-up datagram and 50 ms let it settle.
        [UInt8]([0x80, 0x60, 0, 0xFF]).withUnsafeBytes { _ = send.enqueue($0, to: receiver.localAddress, on: sender) }
        XCTAssertEqual(send.flush(on: sender).sent, 1)
        usleep(50_000)
        _ = poll(&fd, 1, 1_000)
        XCTAssertEqual(receive.receive(from: receiver), 1)
        let before = monotonicMicros()
        for index in 0..<5 {
            [UInt8]([0x80, 0x60, 0, UInt8(index)]).withUnsafeBytes {
                XCTAssertEqual(send.enqueue($0, to: receiver.localAddress, on: sender), .queued)
            }
            XCTAssertEqual(send.flush(on: sender).sent, 1)
            usleep(20_000)
        }
        var order: [UInt8] = []
        var arrivals: [Int64?] = []
        let deadline = Date().addingTimeInterval(5)
        while order.count < 5 && Date() < deadline {
            _ = poll(&fd, 1, 100)
            let count = receive.receive(from: receiver)
            for index in 0..<max(0, count) {
                order.append(receive.datagram(at: index).bytes[3])
                arrivals.append(receive.arrivalMicros(at: index))
            }
        }
        let after = monotonicMicros()
        XCTAssertEqual(order, [0, 1, 2, 3, 4])
        let stamps = arrivals.compactMap { $0 }
        XCTAssertEqual(stamps.count, 5, "every datagram has a kernel timestamp: \(arrivals)")
        XCTAssertEqual(stamps, stamps.sorted(), "kernel timestamps follow the arrival order")
        XCTAssertEqual(Set(stamps).count, 5, "datagrams sent 20 ms apart have distinct timestamps: \(stamps)")
        for stamp in stamps {
            XCTAssertGreaterThanOrEqual(stamp, before, "on CLOCK_MONOTONIC, not before the first send")
            XCTAssertLessThanOrEqual(stamp, after, "on CLOCK_MONOTONIC, not after the read")
        }
    }

    /// Without SO_TIMESTAMPNS there is no timestamp: the caller falls back to its own clock.
    func testSocketWithoutTimestampsGivesNone() throws {
        let sender = try UDPSocket(host: "127.0.0.1", port: 0)
        let receiver = try UDPSocket(host: "127.0.0.1", port: 0)
        let send = UDPSendBatch()
        [UInt8]([0x80, 0x60, 0, 1]).withUnsafeBytes { _ = send.enqueue($0, to: receiver.localAddress, on: sender) }
        XCTAssertEqual(send.flush(on: sender).sent, 1)
        let receive = UDPReceiveBatch(capacity: 2)
        var fd = pollfd(fd: receiver.fileDescriptor, events: Int16(POLLIN), revents: 0)
        _ = poll(&fd, 1, 5_000)
        XCTAssertEqual(receive.receive(from: receiver), 1)
        XCTAssertNil(receive.arrivalMicros(at: 0))
    }

    private func monotonicMicros() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec) * 1_000_000 + Int64(time.tv_nsec) / 1_000
    }
}
