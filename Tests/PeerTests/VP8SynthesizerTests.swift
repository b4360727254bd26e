import Peer
import XCTest

final class VP8SynthesizerTests: XCTestCase {
    func testKeyframesEveryNFramesWithValidHeaders() throws {
        var synth = try VP8Synthesizer(keyframeInterval: 5, width: 640, height: 360, keyframeBytes: 3000,
                                       deltaFrameBytes: 900, maxPayloadBytes: 1100, seed: 42)
        var lastPictureID: UInt16?
        for index in 0..<12 {
            let frame = synth.nextFramePayloads()
            XCTAssertEqual(frame.keyframe, index % 5 == 0, "frame \(index)")
            XCTAssertEqual(frame.payloads.count, frame.keyframe ? 3 : 1, "3000 B over 1096 B chunks")
            var reassembled: [UInt8] = []
            var pictureID: UInt16?
            for (n, payload) in frame.payloads.enumerated() {
                XCTAssertLessThanOrEqual(payload.count, 1100)
                let descriptor = try XCTUnwrap(payload.withUnsafeBytes { VP8PayloadDescriptor(parsing: $0) })
                XCTAssertEqual(descriptor.startOfPartition, n == 0)
                XCTAssertEqual(descriptor.partitionIndex, 0)
                XCTAssertEqual(descriptor.length, 4)
                if let pictureID { XCTAssertEqual(descriptor.pictureID, pictureID, "same picture id within a frame") }
                pictureID = descriptor.pictureID
                XCTAssertEqual(payload.withUnsafeBytes { VP8PayloadDescriptor.isKeyframeStart($0) }, frame.keyframe && n == 0)
                reassembled += payload.dropFirst(4)
            }
            XCTAssertEqual(reassembled.count, frame.keyframe ? 3000 : 900)
            // RFC 6386 §9.1 frame tag: P bit, show_frame, first partition size.
            XCTAssertEqual(reassembled[0] & 1, frame.keyframe ? 0 : 1)
            XCTAssertEqual(reassembled[0] & 0x10, 0x10)
            let partition = (UInt32(reassembled[0]) | UInt32(reassembled[1]) << 8 | UInt32(reassembled[2]) << 16) >> 5
            XCTAssertEqual(Int(partition), reassembled.count - (frame.keyframe ? 10 : 3))
            if frame.keyframe {
                XCTAssertEqual(Array(reassembled[3..<6]), [0x9D, 0x01, 0x2A])
                XCTAssertEqual(UInt16(reassembled[6]) | UInt16(reassembled[7]) << 8, 640)
                XCTAssertEqual(UInt16(reassembled[8]) | UInt16(reassembled[9]) << 8, 360)
            }
            if let lastPictureID, let pictureID { XCTAssertEqual(pictureID, (lastPictureID + 1) & 0x7FFF) }
            lastPictureID = pictureID
        }
    }

    func testPictureIDWrapsAt15Bits() throws {
        var synth = try VP8Synthesizer(keyframeInterval: 100, deltaFrameBytes: 10, seed: 0x7FFF)
        XCTAssertEqual(synth.pictureID, 0x7FFF)
        let first = synth.nextFramePayloads().payloads[0]
        XCTAssertEqual(Array(first[0..<4]), [0x90, 0x80, 0xFF, 0xFF], "X|S, I, M|0x7F, 0xFF")
        XCTAssertEqual(synth.pictureID, 0)
    }

    /// Descriptors other stacks send: 7-bit PictureID, TL0PICIDX and TID bytes (RFC 7741 §4.2).
    func testParsesOtherDescriptorShapesAndRejectsTruncated() {
        let short: [UInt8] = [0x90, 0xE0, 0x11, 0x05, 0x40, 0x00]  // X,S | I,L,T | pid 0x11 | tl0 | tid
        let parsed = short.withUnsafeBytes { VP8PayloadDescriptor(parsing: $0) }
        XCTAssertEqual(parsed?.pictureID, 0x11)
        XCTAssertEqual(parsed?.length, 5)
        XCTAssertEqual(parsed?.startOfPartition, true)
        let minimal: [UInt8] = [0x10, 0x00]
        XCTAssertEqual(minimal.withUnsafeBytes { VP8PayloadDescriptor(parsing: $0) }?.length, 1)
        XCTAssertTrue(minimal.withUnsafeBytes { VP8PayloadDescriptor.isKeyframeStart($0) })
        for truncated: [UInt8] in [[], [0x80], [0x80, 0x80], [0x80, 0x80, 0x80], [0x90, 0xC0, 0x01]] {
            XCTAssertNil(truncated.withUnsafeBytes { VP8PayloadDescriptor(parsing: $0) }, "\(truncated)")
            XCTAssertFalse(truncated.withUnsafeBytes { VP8PayloadDescriptor.isKeyframeStart($0) })
        }
        XCTAssertThrowsError(try VP8Synthesizer(keyframeInterval: 0))
        XCTAssertThrowsError(try VP8Synthesizer(width: 0))
    }
}
