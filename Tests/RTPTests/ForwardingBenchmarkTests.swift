import XCTest
@testable import RTP

/// Prints the cost of the forwarding hot path (parse + rewrite SSRC/seq/ts + replace one
/// extension). Figures only, no timing assertions; debug builds are several times slower.
final class ForwardingBenchmarkTests: XCTestCase {
    func testPrintForwardingHotPathCost() throws {
        var packet = Fixtures.chromiumOpus
        var rewriter = SequenceRewriter(firstOutput: 1000)
        var timestamps = TimestampRewriter()
        let iterations = 200_000
        let absSendTime: [UInt8] = [0x01, 0x02, 0x03]
        let clock = ContinuousClock()
        var checksum: UInt64 = 0
        let elapsed = try absSendTime.withUnsafeBytes { value in
            try packet.withUnsafeMutableBytes { buffer in
                try clock.measure {
                    for index in 0..<iterations {
                        let view = try RTPPacketView(UnsafeRawBufferPointer(buffer))
                        let seq = rewriter.rewrite(view.sequenceNumber &+ UInt16(truncatingIfNeeded: index), source: view.ssrc) ?? 0
                        let ts = timestamps.rewrite(view.timestamp, source: view.ssrc)
                        try RTPPacketRewriter.setSequenceNumber(seq, in: buffer)
                        try RTPPacketRewriter.setTimestamp(ts, in: buffer)
                        try RTPPacketRewriter.setSSRC(0xCAFE_F00D, in: buffer)
                        try RTPPacketRewriter.replaceExtensionValue(id: 2, with: value, in: buffer)
                        checksum &+= UInt64(seq)
                    }
                }
            }
        }
        let nanoseconds = Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9
        print("forwarding hot path: \(Int(nanoseconds / Double(iterations))) ns/packet over \(iterations) packets (checksum \(checksum))")
        XCTAssertEqual(try parseRTP(packet).ssrc, 0xCAFE_F00D)
        XCTAssertEqual(try parseRTP(packet).extensions[2], absSendTime)
    }
}
