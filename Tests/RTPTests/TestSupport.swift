import XCTest
@testable import RTP
import SplitMix

/// Snapshot of a parsed view, so assertions can run outside `withUnsafeBytes`.
struct ParsedRTP: Equatable {
    var marker: Bool
    var payloadType: UInt8
    var sequenceNumber: UInt16
    var timestamp: UInt32
    var ssrc: UInt32
    var csrcs: [UInt32]
    var extensionProfile: UInt16?
    var extensions: [UInt8: [UInt8]]
    var payload: [UInt8]
    var paddingLength: Int
}

func parseRTP(_ bytes: [UInt8]) throws(RTPError) -> ParsedRTP {
    let result: Result<ParsedRTP, RTPError> = bytes.withUnsafeBytes { buffer in
        do throws(RTPError) {
            let view = try RTPPacketView(buffer)
            XCTAssertEqual(view.version, 2)
            var extensions: [UInt8: [UInt8]] = [:]
            for element in view.headerExtensions {
                extensions[element.id] = Array(buffer[element.valueRange])
            }
            return .success(ParsedRTP(
                marker: view.marker, payloadType: view.payloadType, sequenceNumber: view.sequenceNumber,
                timestamp: view.timestamp, ssrc: view.ssrc, csrcs: view.csrcs,
                extensionProfile: view.extensionProfile, extensions: extensions,
                payload: Array(view.payload), paddingLength: view.paddingLength))
        } catch {
            return .failure(error)
        }
    }
    return try result.get()
}

func assertRTPError(_ bytes: [UInt8], _ expected: RTPError, file: StaticString = #filePath, line: UInt = #line) {
    do {
        _ = try parseRTP(bytes)
        XCTFail("expected \(expected), parsed fine", file: file, line: line)
    } catch {
        XCTAssertEqual(error, expected, file: file, line: line)
    }
}
