import XCTest
@testable import RTP

/// Prints the cost of the forwarding hot path pieces. Figures only, no timing assertions;
/// run with `-c release` for meaningful numbers (debug builds are ~15× slower).
final class ForwardingBenchmarkTests: XCTestCase {
    func testPrintForwardingHotPathCost() throws {
        var packet = Fixtures.chromiumOpus
        let iterations = 200_000
        let absSendTime: [UInt8] = [0x01, 0x02, 0x03]
        let clock = ContinuousClock()
        var checksum = 0
        try absSendTime.withUnsafeBytes { value in
            try packet.withUnsafeMutableBytes { buffer in
                let readOnly = UnsafeRawBufferPointer(buffer)
                let parse = try clock.measure {
                    for _ in 0..<iterations { checksum &+= try RTPPacketView(readOnly).payloadRange.count }
                }
                let full = try clock.measure {
                    var sequence = SequenceRewriter(firstOutput: 1000)
                    var timestamps = TimestampRewriter()
                    for index in 0..<iterations {
                        let view = try RTPPacketView(readOnly)
                        let seq = sequence.rewrite(view.sequenceNumber &+ UInt16(truncatingIfNeeded: index), source: view.ssrc) ?? 0
                        let ts = timestamps.rewrite(view.timestamp, source: view.ssrc)
                        try RTPPacketRewriter.setSequenceNumber(seq, in: buffer)
                        try RTPPacketRewriter.setTimestamp(ts, in: buffer)
                        try RTPPacketRewriter.setSSRC(0xCAFE_F00D, in: buffer)
                        try RTPPacketRewriter.replaceExtensionValue(id: 2, with: value, in: buffer)
                        checksum &+= Int(seq)
                    }
                }
                print("RTP parse: \(parse / iterations) per packet; parse + seq/ts/SSRC rewrite + abs-send-time replace: \(full / iterations) per packet (\(iterations) packets, checksum \(checksum))")
            }
        }
        XCTAssertEqual(try parseRTP(packet).ssrc, 0xCAFE_F00D)
        XCTAssertEqual(try parseRTP(packet).extensions[2], absSendTime)
    }
}
