extension SessionDescription {
    /// Parses a session description (RFC 8866 §5, §9 grammar).
    ///
    /// Lines may end in CRLF or LF; blank lines are skipped. Lines must appear in the order
    /// RFC 8866 §5 gives; unknown type letters are rejected, unknown attributes are kept.
    /// Never traps: every malformed input yields an ``SDPError`` naming the line.
    public init(parsing text: String) throws(SDPError) {
        var parser = SDPParser()
        var lineNumber = 0
        // Swift treats CRLF as one Character, so splitting on newlines handles CRLF and LF alike.
        for line in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
            lineNumber += 1
            if line.isEmpty { continue }
            try parser.consume(line, lineNumber: lineNumber)
        }
        self = try parser.finish()
    }
}

/// Line-by-line state machine behind ``SessionDescription/init(parsing:)``.
struct SDPParser {
    private var version: Int?
    private var origin: Origin?
    private var sessionName: String?
    private var information: String?
    private var uri: String?
    private var emails: [String] = []
    private var phones: [String] = []
    private var connection: Connection?
    private var bandwidths: [Bandwidth] = []
    private var timings: [Timing] = []
    private var timeZones: String?
    private var encryptionKey: String?
    private var attributes: [SDPAttribute] = []
    private var media: [MediaDescription] = []
    /// Position of the last line in RFC 8866 §5 order, so out-of-order lines are caught.
    private var rank = -1

    /// RFC 8866 §5 session-level order; `t=` and `r=` share a rank because they interleave.
    private static let sessionRank: [Character: Int] = [
        "v": 0, "o": 1, "s": 2, "i": 3, "u": 4, "e": 5, "p": 6, "c": 7, "b": 8,
        "t": 9, "r": 9, "z": 11, "k": 12, "a": 13,
    ]
    /// RFC 8866 §5 media-level order after `m=`.
    private static let mediaRank: [Character: Int] = ["i": 1, "c": 2, "b": 3, "k": 4, "a": 5]
    /// Types that may appear at most once in their section.
    private static let single: Set<Character> = ["v", "o", "s", "i", "u", "c", "z", "k"]

    mutating func consume(_ line: Substring, lineNumber: Int) throws(SDPError) {
        guard line.count >= 2, let type = line.first, type.isASCII, type.isLowercase,
              line[line.index(after: line.startIndex)] == "="
        else { throw .malformedLine(line: lineNumber) }
        let value = line.dropFirst(2)
        let typeName = String(type)
        if type == "m" {
            guard version != nil, origin != nil, sessionName != nil else {
                throw .unexpectedLine(line: lineNumber, type: typeName)
            }
            media.append(try Self.parseMedia(value, lineNumber: lineNumber))
            rank = 0
            return
        }
        if media.isEmpty {
            guard let typeRank = Self.sessionRank[type] else {
                throw Self.isKnown(type)
                    ? .unexpectedLine(line: lineNumber, type: typeName)
                    : .unknownLineType(line: lineNumber, type: typeName)
            }
            // v= first; then o=, s= exactly once in order; single lines never repeat.
            if typeRank < rank || (typeRank == rank && Self.single.contains(type))
                || (type != "v" && version == nil) || (typeRank > 1 && origin == nil)
                || (typeRank > 2 && sessionName == nil) || (type == "r" && timings.isEmpty) {
                throw .unexpectedLine(line: lineNumber, type: typeName)
            }
            rank = typeRank
            try consumeSession(type, value, lineNumber: lineNumber)
        } else {
            guard let typeRank = Self.mediaRank[type] else {
                throw Self.isKnown(type)
                    ? .unexpectedLine(line: lineNumber, type: typeName)
                    : .unknownLineType(line: lineNumber, type: typeName)
            }
            if typeRank < rank || (typeRank == rank && type != "c" && Self.single.contains(type)) {
                throw .unexpectedLine(line: lineNumber, type: typeName)
            }
            rank = typeRank
            try consumeMedia(type, value, lineNumber: lineNumber)
        }
    }

    private static func isKnown(_ type: Character) -> Bool {
        sessionRank[type] != nil || type == "m"
    }

    private mutating func consumeSession(_ type: Character, _ value: Substring, lineNumber: Int) throws(SDPError) {
        switch type {
        case "v":
            guard let number = Int(value), number >= 0 else { throw .invalidField(line: lineNumber, field: "version") }
            version = number
        case "o":
            let fields = value.split(separator: " ")
            guard fields.count == 6 else { throw .invalidField(line: lineNumber, field: "origin") }
            origin = Origin(
                username: String(fields[0]), sessionID: String(fields[1]), sessionVersion: String(fields[2]),
                networkType: String(fields[3]), addressType: String(fields[4]), address: String(fields[5]))
        case "s": sessionName = String(value)
        case "i": information = String(value)
        case "u": uri = String(value)
        case "e": emails.append(String(value))
        case "p": phones.append(String(value))
        case "c": connection = try Self.parseConnection(value, lineNumber: lineNumber)
        case "b": bandwidths.append(try Self.parseBandwidth(value, lineNumber: lineNumber))
        case "t":
            let fields = value.split(separator: " ")
            guard fields.count == 2, let start = UInt64(fields[0]), let stop = UInt64(fields[1]) else {
                throw .invalidField(line: lineNumber, field: "timing")
            }
            timings.append(Timing(start: start, stop: stop))
        case "r":
            timings[timings.count - 1].repeats.append(String(value))
        case "z": timeZones = String(value)
        case "k": encryptionKey = String(value)
        default: attributes.append(SDPAttribute(parsing: value, line: lineNumber))
        }
    }

    private mutating func consumeMedia(_ type: Character, _ value: Substring, lineNumber: Int) throws(SDPError) {
        let index = media.count - 1
        switch type {
        case "i": media[index].information = String(value)
        case "c": media[index].connections.append(try Self.parseConnection(value, lineNumber: lineNumber))
        case "b": media[index].bandwidths.append(try Self.parseBandwidth(value, lineNumber: lineNumber))
        case "k": media[index].encryptionKey = String(value)
        default: media[index].attributes.append(SDPAttribute(parsing: value, line: lineNumber))
        }
    }

    private static func parseConnection(_ value: Substring, lineNumber: Int) throws(SDPError) -> Connection {
        let fields = value.split(separator: " ")
        guard fields.count == 3 else { throw .invalidField(line: lineNumber, field: "connection") }
        return Connection(networkType: String(fields[0]), addressType: String(fields[1]), address: String(fields[2]))
    }

    private static func parseBandwidth(_ value: Substring, lineNumber: Int) throws(SDPError) -> Bandwidth {
        guard let colon = value.firstIndex(of: ":"), colon != value.startIndex,
              let amount = UInt64(value[value.index(after: colon)...])
        else { throw .invalidField(line: lineNumber, field: "bandwidth") }
        return Bandwidth(type: String(value[..<colon]), value: amount)
    }

    private static func parseMedia(_ value: Substring, lineNumber: Int) throws(SDPError) -> MediaDescription {
        let fields = value.split(separator: " ")
        guard fields.count >= 4 else { throw .invalidField(line: lineNumber, field: "media") }
        let portParts = fields[1].split(separator: "/", omittingEmptySubsequences: false)
        guard portParts.count <= 2, let port = UInt16(portParts[0]) else {
            throw .invalidField(line: lineNumber, field: "port")
        }
        var count: Int?
        if portParts.count == 2 {
            guard let number = Int(portParts[1]), number > 0 else { throw .invalidField(line: lineNumber, field: "port") }
            count = number
        }
        return MediaDescription(
            media: String(fields[0]), port: port, numberOfPorts: count, proto: String(fields[2]),
            formats: fields[3...].map(String.init))
    }

    func finish() throws(SDPError) -> SessionDescription {
        guard let version else {
            throw origin == nil && media.isEmpty && attributes.isEmpty ? .empty : .missingLine(type: "v")
        }
        guard let origin else { throw .missingLine(type: "o") }
        guard let sessionName else { throw .missingLine(type: "s") }
        guard !timings.isEmpty else { throw .missingLine(type: "t") }
        return SessionDescription(
            version: version, origin: origin, sessionName: sessionName, information: information, uri: uri,
            emails: emails, phones: phones, connection: connection, bandwidths: bandwidths, timings: timings,
            timeZones: timeZones, encryptionKey: encryptionKey, attributes: attributes, media: media)
    }
}
